//! The original PTC-Lisp's math extensions, which are not in `clojure.core` (no name collides
//! with one): `floor`, `ceil`, `round` and `trunc` give integers, `sqrt` and `pow` floats.

use super::args::Call;
use super::number::Num;
use super::{Builtin, builtin};
use crate::error::{ErrorKind, Result};
use crate::eval::{Ctx, EvalResult};
use crate::value::{BigKind, BigNumber, Value};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::FromPrimitive;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("floor", floor, "(floor x)", "The largest integer not above x (an integer, unlike Math/floor).", "[(floor 3.7) (floor -3.2) (floor 7/2)]" => "[3 -4 3]"),
    builtin!("ceil", ceil, "(ceil x)", "The smallest integer not below x.", "[(ceil 3.2) (ceil -3.7)]" => "[4 -3]"),
    builtin!("round", round, "(round x)", "x rounded to the nearest integer, halves away from zero.", "[(round 2.5) (round -2.5) (round 2.4)]" => "[3 -3 2]"),
    builtin!("trunc", trunc, "(trunc x)", "x without its fractional part: an integer, rounded toward zero.", "[(trunc 3.7) (trunc -3.7)]" => "[3 -3]"),
    builtin!("sqrt", sqrt, "(sqrt x)", "Square root of x, as a float (NaN for negative x).", "(sqrt 16)" => "4.0"),
    builtin!("pow", pow, "(pow x y)", "x raised to the power y, as a float.", "(pow 2 10)" => "1024.0"),
];

/// `x` rounded to an integer by `whole` (applied to floats and to exact values alike).
fn to_integer(
    call: Call,
    x: Num,
    floats: fn(f64) -> f64,
    exact: fn(&BigRational) -> BigRational,
) -> Result<Value> {
    match x {
        Num::Int(i) => Ok(Value::Int(i)),
        Num::Float(f) if f.is_finite() => Ok(BigNumber::integer(
            BigInt::from_f64(floats(f)).unwrap_or_default(),
        )),
        Num::Float(f) => Err(call.error(
            ErrorKind::Arithmetic,
            format_args!("{} has no integer value", crate::format::format_float(f)),
        )),
        Num::Big(b) => Ok(match b.kind() {
            BigKind::Int(_) => Value::Big(b.clone()),
            _ => BigNumber::integer(exact(&b.to_rational()).to_integer()),
        }),
    }
}

fn floor(_: &mut Ctx, call: Call, x: Num) -> EvalResult {
    Ok(to_integer(call, x, f64::floor, BigRational::floor)?)
}

fn ceil(_: &mut Ctx, call: Call, x: Num) -> EvalResult {
    Ok(to_integer(call, x, f64::ceil, BigRational::ceil)?)
}

fn round(_: &mut Ctx, call: Call, x: Num) -> EvalResult {
    // Both round halves away from zero.
    Ok(to_integer(call, x, f64::round, BigRational::round)?)
}

fn trunc(_: &mut Ctx, call: Call, x: Num) -> EvalResult {
    Ok(to_integer(call, x, f64::trunc, BigRational::trunc)?)
}

fn sqrt(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Float(x.as_f64().sqrt()))
}

fn pow(_: &mut Ctx, _: Call, (base, exponent): (Num, Num)) -> EvalResult {
    Ok(Value::Float(base.as_f64().powf(exponent.as_f64())))
}
