//! `(reduced v)`: the wrapper that ends a reduction early, seen by `reduce`, the transducers
//! and lazy `reductions`.

use crate::value::{Map, Value};
use std::sync::OnceLock;

fn reduced_key() -> &'static Value {
    static KEY: OnceLock<Value> = OnceLock::new();
    KEY.get_or_init(|| Value::keyword("ptc/reduced"))
}

/// `(reduced v)`.
pub(crate) fn make_reduced(v: Value) -> Value {
    let mut m = Map::new();
    m.assoc_mut(reduced_key().clone(), v);
    Value::Map(m)
}

/// The value inside a `(reduced v)`, if `v` is one.
#[inline]
pub(crate) fn as_reduced(v: &Value) -> Option<&Value> {
    match v {
        Value::Map(m) if m.len() == 1 => m.get(reduced_key()),
        _ => None,
    }
}

/// `v` without its `reduced` wrapper.
pub(crate) fn unreduced(v: Value) -> Value {
    match as_reduced(&v) {
        Some(inner) => inner.clone(),
        None => v,
    }
}
