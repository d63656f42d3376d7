//! The arithmetic the evaluator does itself (the steps of a lazy range) and shares with the
//! number builtins: integers are 64-bit and overflow is an error, and a float on either side
//! makes a float.

use super::got;
use crate::error::{Error, Result};
use crate::value::Value;

#[cold]
pub(crate) fn not_a_number(name: impl std::fmt::Display, v: &Value) -> Error {
    Error::type_error(format!("{name} expects numbers, got {}", got(v)))
}

pub(crate) fn overflow(op: impl std::fmt::Display, a: &Value, b: &Value) -> Error {
    Error::arithmetic(format!(
        "integer overflow: ({op} {} {}) does not fit in 64 bits; use a float (e.g. 1.0) for \
         very large numbers",
        crate::format::pr_str(a),
        crate::format::pr_str(b)
    ))
}

pub(crate) fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}
#[inline(always)]
pub(crate) fn arith(
    op: &str,
    a: &Value,
    b: &Value,
    ints: fn(i64, i64) -> Option<i64>,
    floats: fn(f64, f64) -> f64,
) -> Result<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => ints(*x, *y)
            .map(Value::Int)
            .ok_or_else(|| overflow(op, a, b)),
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            Ok(Value::Float(floats(as_f64(a), as_f64(b))))
        }
        (Value::Int(_) | Value::Float(_), other) | (other, _) => Err(not_a_number(op, other)),
    }
}

pub(crate) fn add(a: &Value, b: &Value) -> Result<Value> {
    arith("+", a, b, i64::checked_add, |x, y| x + y)
}

pub(crate) fn sub(a: &Value, b: &Value) -> Result<Value> {
    arith("-", a, b, i64::checked_sub, |x, y| x - y)
}

pub(crate) fn mul(a: &Value, b: &Value) -> Result<Value> {
    arith("*", a, b, i64::checked_mul, |x, y| x * y)
}
