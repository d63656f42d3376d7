//! Comparing JSON values as the checks do: numbers within a tolerance, arrays in order or as
//! multisets, map keys with `-` and `_` alike.

use serde_json::Value as Json;

/// Structural equality of JSON values; numbers (integer or not) are equal when they differ by
/// at most `tolerance`.
pub fn json_equal(a: &Json, b: &Json, tolerance: f64) -> bool {
    compare(a, b, tolerance, false)
}

/// Like [`json_equal`], with arrays at any depth compared as multisets.
pub fn json_equal_unordered(a: &Json, b: &Json, tolerance: f64) -> bool {
    compare(a, b, tolerance, true)
}

/// Whether `actual` has every key of the map `expected` with an equal value (as
/// [`json_equal`], or [`json_equal_unordered`] when `unordered`), whatever other keys it has:
/// how a record is compared, since the agent tells the model that extra keys are fine.
pub fn json_has_keys_of(expected: &Json, actual: &Json, tolerance: f64, unordered: bool) -> bool {
    match (expected, actual) {
        (Json::Object(xs), Json::Object(ys)) => xs
            .iter()
            .all(|(k, x)| lookup(ys, k).is_some_and(|y| compare(x, y, tolerance, unordered))),
        _ => compare(expected, actual, tolerance, unordered),
    }
}

fn compare(a: &Json, b: &Json, tolerance: f64, unordered: bool) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) if tolerance == 0.0 => i == j,
            _ => match (x.as_f64(), y.as_f64()) {
                (Some(f), Some(g)) => (f - g).abs() <= tolerance,
                _ => false,
            },
        },
        (Json::Array(xs), Json::Array(ys)) => {
            if xs.len() != ys.len() {
                return false;
            }
            if !unordered {
                return xs
                    .iter()
                    .zip(ys)
                    .all(|(x, y)| compare(x, y, tolerance, false));
            }
            // Greedy matching is enough: equality within a tolerance is not transitive, but
            // mission answers never hold numbers closer to each other than the tolerance.
            let mut used = vec![false; ys.len()];
            xs.iter().all(|x| {
                let found = ys
                    .iter()
                    .enumerate()
                    .find(|(j, y)| !used[*j] && compare(x, y, tolerance, true));
                match found {
                    Some((j, _)) => {
                        used[j] = true;
                        true
                    }
                    None => false,
                }
            })
        }
        (Json::Object(xs), Json::Object(ys)) => {
            xs.len() == ys.len()
                && xs.iter().all(|(k, x)| {
                    lookup(ys, k).is_some_and(|y| compare(x, y, tolerance, unordered))
                })
        }
        _ => a == b,
    }
}

/// The value of a map key, with `-` and `_` alike (as in signatures).
pub(crate) fn lookup<'v>(map: &'v serde_json::Map<String, Json>, key: &str) -> Option<&'v Json> {
    map.get(key).or_else(|| {
        let wanted = key.replace('_', "-");
        map.iter()
            .find(|(k, _)| k.replace('_', "-") == wanted)
            .map(|(_, v)| v)
    })
}
