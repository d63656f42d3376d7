//! Standard library pipelines over 1,000 JSON records: the filtering, grouping and aggregation
//! programs write most, with `where`, transducers and the aggregation helpers.

use criterion::{Criterion, criterion_group, criterion_main};
use ptc_lisp::{Outcome, Program, Runtime, UserNamespace};
use std::hint::black_box;

fn orders() -> String {
    let rows: Vec<String> = (0..1000)
        .map(|i| {
            format!(
                r#"{{"id": {i}, "customer": "c{}", "status": "{}", "amount": {}.5, "tags": ["t{}"]}}"#,
                i % 37,
                if i % 3 == 0 { "refunded" } else { "paid" },
                (i * 7919) % 500,
                i % 5
            )
        })
        .collect();
    format!(r#"{{"orders": [{}]}}"#, rows.join(","))
}

const PROGRAMS: &[(&str, &str)] = &[
    (
        "stdlib/closure-filter-reduce",
        r#"(->> data/orders (filter #(= (:status %) "paid")) (map :amount) (reduce +))"#,
    ),
    (
        "stdlib/where-sum-by",
        r#"(->> data/orders (filter (where :status = "paid")) (sum-by :amount))"#,
    ),
    (
        "stdlib/group-by-update-vals",
        "(-> (group-by :customer data/orders) (update-vals #(sum-by :amount %)))",
    ),
    (
        "stdlib/into-transducer",
        "(into [] (comp (filter #(> (:amount %) 250)) (map :id) (take 100)) data/orders)",
    ),
    (
        "stdlib/partition-all-sums",
        "(->> data/orders (map :amount) (partition-all 10) (mapv #(reduce + %)))",
    ),
    (
        "stdlib/frequencies-top",
        "(->> data/orders (map :customer) frequencies (sort-by val >) (take 5))",
    ),
    (
        "stdlib/distinct-mapcat",
        "(count (distinct (mapcat :tags data/orders)))",
    ),
];

fn bench_stdlib(c: &mut Criterion) {
    let data = ptc_lisp::from_json_str(&orders()).expect("fixture JSON");
    let runtime = Runtime::new()
        .with_data_map(&data)
        .expect("fixture data is a map");
    let memory = UserNamespace::new();
    for (name, src) in PROGRAMS {
        let program = Program::parse(src).expect("benchmark programs parse");
        let check = runtime.run(&program, &memory);
        assert!(
            matches!(check.outcome, Outcome::Value(_)),
            "{name} must run: {:?}",
            check.outcome
        );
        c.bench_function(name, |b| {
            b.iter(|| runtime.run(black_box(&program), &memory))
        });
    }
}

criterion_group!(benches, bench_stdlib);
criterion_main!(benches);
