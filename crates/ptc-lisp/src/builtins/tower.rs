//! The numeric tower: the promoting operators, big integers, ratios and big decimals, and the
//! narrowing conversions (`char`, `byte`, `short`).

use super::args::Call;
use super::number::{Num, big_arith};
use super::{Builtin, builtin};
use crate::error::{ErrorKind, Result};
use crate::eval::numbers::{Op, not_a_number, promoting};
use crate::eval::{Ctx, EvalResult};
use crate::value::{BigKind, BigNumber, Decimal, Value};
use num_bigint::BigInt;
use num_traits::ToPrimitive;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("+'", plus_promoting, "(+' x y & more)", "Sum; integers too large for 64 bits become big integers instead of failing.", "(+' Long/MAX_VALUE 1)" => "9223372036854775808N"),
    builtin!("-'", minus_promoting, "(-' x) (-' x y & more)", "Subtraction that becomes a big integer instead of overflowing.", "(-' Long/MIN_VALUE 1)" => "-9223372036854775809N"),
    builtin!("*'", times_promoting, "(*' x y & more)", "Product that becomes a big integer instead of overflowing.", "(reduce *' (range 1 22))" => "51090942171709440000N"),
    builtin!("inc'", inc_promoting, "(inc' x)", "x plus one, promoting to a big integer.", "(inc' Long/MAX_VALUE)" => "9223372036854775808N"),
    builtin!("dec'", dec_promoting, "(dec' x)", "x minus one, promoting to a big integer.", "(dec' Long/MIN_VALUE)" => "-9223372036854775809N"),
    builtin!("bigint", bigint, "(bigint x)", "x as a big integer (printed with N): numbers truncated toward zero, strings of digits read.", "[(bigint 5) (bigint 3.9) (bigint \"12345678901234567890\")]" => "[5N 3N 12345678901234567890N]"),
    builtin!("biginteger", biginteger, "(biginteger x)", "Like bigint; a value that fits in 64 bits stays a plain integer.", "(biginteger 42)" => "42"),
    builtin!("bigdec", bigdec, "(bigdec x)", "x as a big decimal (printed with M): exact, keeping the digits written.", "[(bigdec \"1.10\") (bigdec 0.1) (/ 1M 4)]" => "[1.10M 0.1M 0.25M]"),
    builtin!("num", num, "(num x)", "x, which must be a number.", "(num 5)" => "5"),
    builtin!("numerator", numerator, "(numerator r)", "The numerator of a ratio.", "(numerator 6/8)" => "3"),
    builtin!("denominator", denominator, "(denominator r)", "The denominator of a ratio.", "(denominator 6/8)" => "4"),
    builtin!("rationalize", rationalize, "(rationalize x)", "The exact ratio a float's decimal digits denote; other numbers unchanged.", "[(rationalize 0.1) (rationalize 1.5)]" => "[1/10 3/2]"),
    builtin!("ratio?", is_ratio, "(ratio? x)", "True if x is a ratio.", "[(ratio? 1/2) (ratio? 0.5)]" => "[true false]"),
    builtin!("rational?", is_rational, "(rational? x)", "True if x is an integer, ratio or big decimal.", "[(rational? 1/2) (rational? 1) (rational? 0.5)]" => "[true true false]"),
    builtin!("decimal?", is_decimal, "(decimal? x)", "True if x is a big decimal.", "[(decimal? 1.5M) (decimal? 1.5)]" => "[true false]"),
    builtin!("char", char_of, "(char x)", "The character with code x (a number), or x itself for a character.", "(char 65)" => "\\A"),
    builtin!("byte", byte, "(byte x)", "x as an integer that must fit in 8 bits (floats truncated).", "(byte 100)" => "100"),
    builtin!("short", short, "(short x)", "x as an integer that must fit in 16 bits (floats truncated).", "(short 1000)" => "1000"),
];

/// One step of a promoting operation, charged as big arithmetic when it leaves 64 bits.
fn promoting_step(ctx: &mut Ctx, op: Op, a: &Value, b: &Value) -> EvalResult {
    let result = promoting(op, a, b);
    match (&result, a, b) {
        (Ok(Value::Big(_)), _, _) | (_, Value::Big(_), _) | (_, _, Value::Big(_)) => {
            big_arith(ctx, op, a, b, |a, b| promoting(op, a, b))
        }
        _ => Ok(result?),
    }
}

fn fold_promoting(ctx: &mut Ctx, call: Call, init: &Value, more: &[Value], op: Op) -> EvalResult {
    let mut acc = call.arg::<Num>(init)?.into();
    for x in more {
        acc = promoting_step(ctx, op, &acc, x)?;
    }
    Ok(acc)
}

fn plus_promoting(ctx: &mut Ctx, call: Call, xs: &[Value]) -> EvalResult {
    match xs {
        [] => Ok(Value::Int(0)),
        [first, more @ ..] => fold_promoting(ctx, call, first, more, Op::Add),
    }
}

fn minus_promoting(ctx: &mut Ctx, call: Call, (x, more): (&Value, &[Value])) -> EvalResult {
    match more {
        [] => promoting_step(ctx, Op::Sub, &Value::Int(0), x),
        _ => fold_promoting(ctx, call, x, more, Op::Sub),
    }
}

fn times_promoting(ctx: &mut Ctx, call: Call, xs: &[Value]) -> EvalResult {
    match xs {
        [] => Ok(Value::Int(1)),
        [first, more @ ..] => fold_promoting(ctx, call, first, more, Op::Mul),
    }
}

fn inc_promoting(ctx: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    promoting_step(ctx, Op::Add, x, &Value::Int(1))
}

fn dec_promoting(ctx: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    promoting_step(ctx, Op::Sub, x, &Value::Int(1))
}

/// The integer part of a number, or the integer a string of digits denotes.
fn whole(call: Call, x: &Value) -> Result<BigInt> {
    match x {
        Value::Int(i) => Ok((*i).into()),
        // Through the float's shortest text, as Clojure goes through BigDecimal.valueOf:
        // (bigint 1e300) is 1 followed by 300 zeros, not the float's binary value.
        Value::Float(f) if f.is_finite() => Ok(Decimal::parse(&crate::format::format_float(*f))
            .map(|d| d.to_rational().trunc().to_integer())
            .unwrap_or_else(|| num_traits::FromPrimitive::from_f64(f.trunc()).unwrap_or_default())),
        Value::Float(f) => Err(call.error(
            ErrorKind::Arithmetic,
            format_args!("{} has no integer part", crate::format::format_float(*f)),
        )),
        Value::Big(b) => Ok(match b.kind() {
            BigKind::Int(i) => i.clone(),
            _ => b.to_rational().trunc().to_integer(),
        }),
        Value::Str(s) => {
            let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
            match (digits.bytes().all(|c| c.is_ascii_digit()) && !digits.is_empty())
                .then(|| s.parse::<BigInt>().ok())
                .flatten()
            {
                Some(i) => Ok(i),
                None => Err(call.error(
                    ErrorKind::Argument,
                    format_args!(
                        "{} is not an integer (NumberFormatException)",
                        crate::format::pr_str(x)
                    ),
                )),
            }
        }
        other => Err(call.expected("a number or a string of digits", other)),
    }
}

fn bigint(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(BigNumber::int(whole(call, x)?))
}

fn biginteger(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(BigNumber::integer(whole(call, x)?))
}

fn bigdec(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    let decimal = match x {
        Value::Int(i) => Some(Decimal::new((*i).into(), 0)),
        // From the float's shortest text, as Java's BigDecimal.valueOf: 0.1 is 0.1M.
        Value::Float(f) if f.is_finite() => Decimal::parse(&crate::format::format_float(*f)),
        Value::Big(b) => match b.kind() {
            BigKind::Decimal(_) => return Ok(x.clone()),
            BigKind::Int(i) => Some(Decimal::new(i.clone(), 0)),
            BigKind::Ratio(r) => Some(Decimal::of_rational(r, 0).ok_or_else(|| {
                call.error(
                    ErrorKind::Arithmetic,
                    format_args!(
                        "{} has no exact decimal value (its expansion does not end)",
                        crate::format::pr_str(x)
                    ),
                )
            })?),
        },
        Value::Str(s) => Decimal::parse(s),
        Value::Float(_) => None,
        other => return Err(call.expected("a number or a string", other).into()),
    };
    match decimal {
        Some(d) => Ok(BigNumber::from_decimal(d)),
        None => Err(call
            .error(
                ErrorKind::Argument,
                format_args!(
                    "{} is not a decimal number (NumberFormatException)",
                    crate::format::pr_str(x)
                ),
            )
            .into()),
    }
}

/// `(num x)`: x, a number, or nil (Clojure's cast to `Number` lets nil through).
fn num(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    match x {
        Value::Nil => Ok(Value::Nil),
        other => Ok(call.arg::<Num>(other)?.into()),
    }
}

fn ratio_parts(call: Call, x: &Value) -> Result<(&BigInt, &BigInt)> {
    match x {
        Value::Big(b) => match b.kind() {
            BigKind::Ratio(r) => Ok((r.numer(), r.denom())),
            _ => Err(call.expected("a ratio", x)),
        },
        other => Err(call.expected("a ratio", other)),
    }
}

// Clojure gives a `BigInteger`, which prints without the `N`: a plain integer when it fits.
fn numerator(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(BigNumber::integer(ratio_parts(call, x)?.0.clone()))
}

fn denominator(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(BigNumber::integer(ratio_parts(call, x)?.1.clone()))
}

fn rationalize(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    match x {
        Value::Nil | Value::Int(_) => Ok(x.clone()),
        Value::Float(f) if f.is_finite() => {
            let exact = Decimal::parse(&crate::format::format_float(*f))
                .map(|d| d.to_rational())
                .unwrap_or_default();
            Ok(BigNumber::from_rational(exact))
        }
        Value::Float(f) => Err(call
            .error(
                ErrorKind::Arithmetic,
                format_args!("{} has no exact value", crate::format::format_float(*f)),
            )
            .into()),
        Value::Big(b) => Ok(match b.kind() {
            BigKind::Decimal(d) => BigNumber::from_rational(d.to_rational()),
            _ => x.clone(),
        }),
        other => Err(not_a_number(call, other).into()),
    }
}

fn big_kind(x: &Value, test: fn(&BigKind) -> bool) -> Value {
    Value::Bool(matches!(x, Value::Big(b) if test(b.kind())))
}

fn is_ratio(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(big_kind(x, |k| matches!(k, BigKind::Ratio(_))))
}

fn is_rational(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(matches!(x, Value::Int(_) | Value::Big(_))))
}

fn is_decimal(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(big_kind(x, |k| matches!(k, BigKind::Decimal(_))))
}

/// A number narrowed to `min..=max`: floats, ratios and decimals truncated toward zero,
/// characters by their code; outside the range an error, as Java's checked casts.
fn narrowed(call: Call, x: &Value, kind: &str, min: i64, max: i64) -> Result<i64> {
    let value = match x {
        Value::Char(c) => Some(*c as i64),
        Value::Int(i) => Some(*i),
        Value::Float(f) => {
            (f.is_finite() && *f > i64::MIN as f64 && *f < i64::MAX as f64).then_some(*f as i64)
        }
        Value::Big(_) => whole(call, x)?.to_i64(),
        other => return Err(not_a_number(call, other)),
    };
    match value {
        Some(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(call.error(
            ErrorKind::Argument,
            format_args!(
                "value out of range for {kind}: {}",
                crate::format::pr_str(x)
            ),
        )),
    }
}

fn char_of(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    if let Value::Char(_) = x {
        return Ok(x.clone());
    }
    let code = narrowed(call, x, "char", 0, 0xFFFF)?;
    char::from_u32(code as u32).map(Value::Char).ok_or_else(|| {
        call.error(
            ErrorKind::Argument,
            format_args!("{code} is half of a UTF-16 surrogate pair, not a character of its own"),
        )
        .into()
    })
}

fn byte(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(Value::Int(narrowed(
        call,
        x,
        "byte",
        i8::MIN.into(),
        i8::MAX.into(),
    )?))
}

fn short(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(Value::Int(narrowed(
        call,
        x,
        "short",
        i16::MIN.into(),
        i16::MAX.into(),
    )?))
}
