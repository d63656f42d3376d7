//! A synthetic data set shaped like the input data PTC programs typically get: product records
//! with an id, a name, a category, a price, a stock count and a flag. Shared by the benchmarks
//! and the memory test.

/// `n` product records as the JSON object `{"products": [...]}`.
pub fn products_json(n: usize) -> String {
    let categories = [
        "electronics",
        "furniture",
        "garden",
        "toys",
        "books",
        "food",
        "sports",
        "tools",
    ];
    let items: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id": {i}, "name": "Product {i}", "category": "{}", "price": {:.2}, "stock": {}, "active": {}}}"#,
                categories[i % categories.len()],
                (i * 37 % 1000) as f64 / 7.0,
                i * 13 % 50,
                i % 3 != 0
            )
        })
        .collect();
    format!(r#"{{"products": [{}]}}"#, items.join(", "))
}
