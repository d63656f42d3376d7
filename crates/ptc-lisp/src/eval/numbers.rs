//! The arithmetic the evaluator does itself (the steps of a lazy range) and shares with the
//! number builtins. Two 64-bit integers give an integer and overflow is an error (the
//! promoting operators `+'` `-'` `*'` give a big integer instead); a float on either side makes
//! a float. Anything else goes up Clojure's tower: an operation is done in the greater kind of
//! its operands (integer < big integer < ratio < big decimal < float), and a ratio that comes
//! out whole is a big integer.

use super::got;
use crate::error::{Error, Result};
use crate::value::{
    BigKind, BigNumber, Decimal, NumberKind, Value, to_bigint, to_f64, to_rational,
};
use num_bigint::BigInt;
use num_rational::BigRational;

/// An arithmetic operation of the tower.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
        }
    }
}

#[cold]
pub(crate) fn not_a_number(name: impl std::fmt::Display, v: &Value) -> Error {
    Error::type_error(format!("{name} expects numbers, got {}", got(v)))
}

pub(crate) fn overflow(op: impl std::fmt::Display, a: &Value, b: &Value) -> Error {
    Error::arithmetic(format!(
        "integer overflow: ({op} {} {}) does not fit in 64 bits; use the promoting {op}' or a \
         big integer (1N) for very large numbers",
        crate::format::pr_str(a),
        crate::format::pr_str(b)
    ))
}

pub(crate) fn divide_by_zero() -> Error {
    Error::arithmetic("Divide by zero")
}

#[inline(always)]
fn arith(
    op: Op,
    a: &Value,
    b: &Value,
    ints: fn(i64, i64) -> Option<i64>,
    floats: fn(f64, f64) -> f64,
) -> Result<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => ints(*x, *y)
            .map(Value::Int)
            .ok_or_else(|| overflow(op.name(), a, b)),
        (Value::Float(x), Value::Float(y)) => Ok(Value::Float(floats(*x, *y))),
        (Value::Int(x), Value::Float(y)) => Ok(Value::Float(floats(*x as f64, *y))),
        (Value::Float(x), Value::Int(y)) => Ok(Value::Float(floats(*x, *y as f64))),
        _ => tower(op, a, b),
    }
}

pub(crate) fn add(a: &Value, b: &Value) -> Result<Value> {
    arith(Op::Add, a, b, i64::checked_add, |x, y| x + y)
}

pub(crate) fn sub(a: &Value, b: &Value) -> Result<Value> {
    arith(Op::Sub, a, b, i64::checked_sub, |x, y| x - y)
}

pub(crate) fn mul(a: &Value, b: &Value) -> Result<Value> {
    arith(Op::Mul, a, b, i64::checked_mul, |x, y| x * y)
}

/// `(op a b)` where 64-bit integer overflow gives a big integer (`+'` and its kin).
pub(crate) fn promoting(op: Op, a: &Value, b: &Value) -> Result<Value> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        let exact = match op {
            Op::Add => x.checked_add(*y),
            Op::Sub => x.checked_sub(*y),
            Op::Mul => x.checked_mul(*y),
            Op::Div => return div(a, b),
        };
        return Ok(match exact {
            Some(i) => Value::Int(i),
            None => integers(op, BigInt::from(*x), BigInt::from(*y)),
        });
    }
    tower(op, a, b)
}

/// `(/ a b)`: two integers give an integer when the division is exact, else a ratio.
pub(crate) fn div(a: &Value, b: &Value) -> Result<Value> {
    match (a, b) {
        (Value::Int(_), Value::Int(0)) => Err(divide_by_zero()),
        // Clojure's answer, which wraps: there is no positive 2^63 in 64 bits.
        (Value::Int(i64::MIN), Value::Int(-1)) => Ok(Value::Int(i64::MIN)),
        (Value::Int(x), Value::Int(y)) if x % y == 0 => Ok(Value::Int(x / y)),
        (Value::Int(x), Value::Int(y)) => {
            BigNumber::ratio(BigInt::from(*x), BigInt::from(*y)).ok_or_else(divide_by_zero)
        }
        (Value::Float(x), Value::Float(y)) => Ok(Value::Float(x / y)),
        (Value::Int(x), Value::Float(y)) => Ok(Value::Float(*x as f64 / y)),
        (Value::Float(x), Value::Int(y)) => Ok(Value::Float(x / *y as f64)),
        _ => tower(Op::Div, a, b),
    }
}

/// The general case: at least one operand is a big number (or an operation on 64-bit integers
/// promotes). Done in the greater kind of the two.
#[cold]
pub(crate) fn tower(op: Op, a: &Value, b: &Value) -> Result<Value> {
    let ka = NumberKind::of(a).ok_or_else(|| not_a_number(op.name(), a))?;
    let kb = NumberKind::of(b).ok_or_else(|| not_a_number(op.name(), b))?;
    match ka.max(kb) {
        NumberKind::Double => {
            let (x, y) = (to_f64(a), to_f64(b));
            Ok(Value::Float(match op {
                Op::Add => x + y,
                Op::Sub => x - y,
                Op::Mul => x * y,
                Op::Div => x / y,
            }))
        }
        NumberKind::Decimal => {
            let (x, y) = (to_decimal(op, a)?, to_decimal(op, b)?);
            let context = super::precision::current();
            let exact = match op {
                Op::Add => x.add(&y),
                Op::Sub => x.add(&y.neg()),
                Op::Mul => x.mul(&y),
                Op::Div if y.is_zero() => return Err(divide_by_zero()),
                Op::Div => match context {
                    Some(mc) => super::precision::divide(&x, &y, mc)?,
                    None => x.div(&y).ok_or_else(|| non_terminating(a, b))?,
                },
            };
            Ok(BigNumber::from_decimal(match context {
                Some(mc) => super::precision::round(exact, mc)?,
                None => exact,
            }))
        }
        NumberKind::Ratio => {
            let (x, y) = (exact(a)?, exact(b)?);
            rationals(op, x, y)
        }
        NumberKind::BigInt | NumberKind::Long => match (to_bigint(a), to_bigint(b)) {
            (Some(x), Some(y)) if op != Op::Div => Ok(integers(op, x, y)),
            (Some(x), Some(y)) => BigNumber::ratio(x, y).ok_or_else(divide_by_zero),
            _ => Err(not_a_number(op.name(), a)),
        },
    }
}

fn integers(op: Op, x: BigInt, y: BigInt) -> Value {
    BigNumber::int(match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Div => x / y,
    })
}

fn rationals(op: Op, x: BigRational, y: BigRational) -> Result<Value> {
    Ok(BigNumber::from_rational(match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Div if num_traits::Zero::is_zero(&y) => return Err(divide_by_zero()),
        Op::Div => x / y,
    }))
}

fn exact(v: &Value) -> Result<BigRational> {
    to_rational(v).ok_or_else(|| not_a_number("/", v))
}

/// An integer, ratio or decimal as a decimal (a ratio only when its expansion ends).
pub(crate) fn to_decimal(op: Op, v: &Value) -> Result<Decimal> {
    match v {
        Value::Big(b) => match b.kind() {
            BigKind::Decimal(d) => Ok(d.clone()),
            BigKind::Int(i) => Ok(Decimal::of_int(i.clone())),
            BigKind::Ratio(r) => Decimal::of_rational(r, 0).ok_or_else(|| {
                Error::arithmetic(format!(
                    "{} has no exact decimal value (its expansion does not end); use (double x) \
                     for a float",
                    crate::format::pr_str(v)
                ))
            }),
        },
        Value::Int(i) => Ok(Decimal::of_int((*i).into())),
        other => Err(not_a_number(op.name(), other)),
    }
}

fn non_terminating(a: &Value, b: &Value) -> Error {
    Error::arithmetic(format!(
        "(/ {} {}) has no exact decimal result (non-terminating decimal expansion); divide \
         floats instead, or ratios of integers, or round with (with-precision 10 (/ a b))",
        crate::format::pr_str(a),
        crate::format::pr_str(b)
    ))
}

/// Clojure's numeric comparison (`<`, `==` and the bounds of a `range`): in the greater kind of
/// the two, so that a ratio compared with a big decimal is first made a decimal, which fails
/// for a ratio whose expansion does not end, as in Clojure. `None` when either is NaN.
pub(crate) fn compare(a: &Value, b: &Value) -> Result<Option<std::cmp::Ordering>> {
    let kinds = (NumberKind::of(a), NumberKind::of(b));
    if let (Some(x), Some(y)) = kinds
        && x.max(y) == NumberKind::Decimal
        && (x == NumberKind::Ratio || y == NumberKind::Ratio)
    {
        to_decimal(Op::Sub, a)?;
        to_decimal(Op::Sub, b)?;
    }
    Ok(crate::value::compare_numbers(a, b))
}

/// Whether `x` is still an item of a range towards `end` by `step`: below the end for a
/// positive step, above it otherwise (NaN compares neither way, and never ends a range, as in
/// Clojure).
pub(crate) fn range_continues(x: &Value, step: &Value, end: &Value) -> Result<bool> {
    let positive = compare(step, &Value::Int(0))? == Some(std::cmp::Ordering::Greater);
    Ok(match compare(x, end)? {
        Some(std::cmp::Ordering::Less) => positive,
        Some(std::cmp::Ordering::Greater) => !positive,
        Some(std::cmp::Ordering::Equal) => false,
        None => true,
    })
}
