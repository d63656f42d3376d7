//! Numbers: arithmetic, comparison, conversion and parsing, and the `Math/`, `Integer/`, `Long/`
//! and `Double/` functions programs call.
//!
//! Integers are 64-bit and overflow is an error, never a silent wrap. There are no ratios: a
//! division that is not exact gives a float (`(/ 7 2)` is `3.5`, `(/ 6 2)` is `3`). There are no
//! 32-bit floats either: `(float x)` is `(double x)`. `Math/` functions accept integers and floats
//! alike (Java would refuse `(Math/round 7)`).

pub(crate) use crate::eval::numbers::{add, mul, sub};

use super::{Builtin, builtin, expect_int, got};
use crate::error::{Error, Result};
use crate::eval::numbers::{arith, as_f64, not_a_number, overflow};
use crate::eval::{Ctx, EvalResult};
use crate::value::{Value, compare_numbers};
use std::cmp::Ordering;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("+", [0..], plus, "(+ x y & more)", "Sum of numbers; (+) is 0.", "(+ 1 2 3.5)" => "6.5"),
    builtin!("-", [1..], minus, "(- x) (- x y & more)", "Negation, or subtraction from the first number.", "(- 10 1 2)" => "7"),
    builtin!("*", [0..], times, "(* x y & more)", "Product of numbers; (*) is 1.", "(* 2 3 4)" => "24"),
    builtin!("/", [1..], divide, "(/ x) (/ x y & more)", "Division; exact integer division stays an integer, otherwise a float (no ratios).", "[(/ 6 2) (/ 7 2)]" => "[3 3.5]"),
    builtin!("quot", [2], quot, "(quot n d)", "Quotient of dividing n by d, rounded toward zero.", "(quot 7 2)" => "3"),
    builtin!("rem", [2], rem, "(rem n d)", "Remainder of (quot n d); has the sign of n.", "(rem -7 2)" => "-1"),
    builtin!("mod", [2], modulo, "(mod n d)", "Modulus of n and d; has the sign of d.", "(mod -7 2)" => "1"),
    builtin!("inc", [1], inc, "(inc x)", "x plus one.", "(inc 41)" => "42"),
    builtin!("dec", [1], dec, "(dec x)", "x minus one.", "(dec 43)" => "42"),
    builtin!("abs", [1], abs, "(abs x)", "Absolute value.", "(abs -2.5)" => "2.5"),
    builtin!("max", [1..], max, "(max x & more)", "Greatest of the numbers.", "(max 1 5 3)" => "5"),
    builtin!("min", [1..], min, "(min x & more)", "Least of the numbers.", "(min 4 2 8)" => "2"),
    builtin!("=", [1..], equal, "(= x y & more)", "True if all values are equal (1 and 1.0 are not; [1 2] and '(1 2) are).", "(= [1 2] '(1 2))" => "true"),
    builtin!("not=", [1..], not_equal, "(not= x y & more)", "(not (= x y ...)).", "(not= 1 2)" => "true"),
    builtin!("==", [1..], numeric_equal, "(== x y & more)", "True if all numbers are numerically equal (1 and 1.0 are).", "(== 1 1.0)" => "true"),
    builtin!("<", [1..], less, "(< x y & more)", "True if the numbers are strictly increasing.", "(< 1 2 3)" => "true"),
    builtin!(">", [1..], greater, "(> x y & more)", "True if the numbers are strictly decreasing.", "(> 3 2 2)" => "false"),
    builtin!("<=", [1..], less_equal, "(<= x y & more)", "True if the numbers never decrease.", "(<= 1 2 2)" => "true"),
    builtin!(">=", [1..], greater_equal, "(>= x y & more)", "True if the numbers never increase.", "(>= 3 3 1)" => "true"),
    builtin!("compare", [2], compare, "(compare x y)", "-1, 0 or 1 as x sorts before, with or after y (numbers, strings, keywords, vectors by length then items).", "(compare \"a\" \"b\")" => "-1"),
    builtin!("zero?", [1], is_zero, "(zero? x)", "True if x is zero.", "(zero? 0.0)" => "true"),
    builtin!("pos?", [1], is_pos, "(pos? x)", "True if x is greater than zero.", "(pos? 3)" => "true"),
    builtin!("neg?", [1], is_neg, "(neg? x)", "True if x is less than zero.", "(neg? -1)" => "true"),
    builtin!("even?", [1], is_even, "(even? n)", "True if the integer n is even.", "(even? 4)" => "true"),
    builtin!("odd?", [1], is_odd, "(odd? n)", "True if the integer n is odd.", "(odd? 4)" => "false"),
    builtin!("nat-int?", [1], is_nat_int, "(nat-int? x)", "True if x is an integer of 0 or more.", "[(nat-int? 0) (nat-int? -1) (nat-int? 1.0)]" => "[true false false]"),
    builtin!("pos-int?", [1], is_pos_int, "(pos-int? x)", "True if x is an integer greater than 0.", "[(pos-int? 1) (pos-int? 0)]" => "[true false]"),
    builtin!("neg-int?", [1], is_neg_int, "(neg-int? x)", "True if x is an integer less than 0.", "(neg-int? -1)" => "true"),
    builtin!("NaN?", [1], is_nan, "(NaN? x)", "True if the number x is NaN (not a number).", "[(NaN? (Math/sqrt -1)) (NaN? 1.0)]" => "[true false]"),
    builtin!("infinite?", [1], is_infinite, "(infinite? x)", "True if the number x is positive or negative infinity.", "(infinite? (/ 1.0 0))" => "true"),
    builtin!("int", [1], int, "(int x)", "x as an integer: floats are truncated toward zero, chars give their code; must fit in 32 bits.", "[(int 3.7) (int -3.7) (int \\A)]" => "[3 -3 65]"),
    builtin!("long", [1], long, "(long x)", "x as an integer: floats are truncated toward zero, chars give their code.", "(long 9.99)" => "9"),
    builtin!("double", [1], double, "(double x)", "x as a float.", "(double 3)" => "3.0"),
    builtin!("float", [1], double, "(float x)", "x as a float (always 64-bit: there are no 32-bit floats).", "(float 1)" => "1.0"),
    builtin!("parse-long", [1], parse_long, "(parse-long s)", "The integer written in s (optional sign, digits only), or nil.", "[(parse-long \"42\") (parse-long \"4.2\") (parse-long \" 4\")]" => "[42 nil nil]"),
    builtin!("parse-double", [1], parse_double, "(parse-double s)", "The float written in s (Java syntax: 1.5, -2, .5, 1e3, NaN, Infinity), or nil.", "[(parse-double \"3.14\") (parse-double \"1e3\") (parse-double \"abc\")]" => "[3.14 1000.0 nil]"),
    builtin!("parse-boolean", [1], parse_boolean, "(parse-boolean s)", "true for \"true\", false for \"false\", nil for anything else.", "[(parse-boolean \"true\") (parse-boolean \"yes\")]" => "[true nil]"),
    builtin!("Integer/parseInt", [1..=2], parse_int, "(Integer/parseInt s) (Integer/parseInt s radix)", "The 32-bit integer written in s; an error (NumberFormatException) if s is not one.", "[(Integer/parseInt \"12\") (Integer/parseInt \"ff\" 16)]" => "[12 255]"),
    builtin!("Long/parseLong", [1..=2], parse_long_strict, "(Long/parseLong s) (Long/parseLong s radix)", "The integer written in s; an error (NumberFormatException) if s is not one.", "(Long/parseLong \"-9\")" => "-9"),
    builtin!("Double/parseDouble", [1], parse_double_strict, "(Double/parseDouble s)", "The float written in s (surrounding whitespace allowed); an error (NumberFormatException) if s is not one.", "(Double/parseDouble \" 1.5 \")" => "1.5"),
    builtin!("Integer/valueOf", [1..=2], parse_int, "(Integer/valueOf s)", "Same as Integer/parseInt.", "(Integer/valueOf \"7\")" => "7"),
    builtin!("Long/valueOf", [1..=2], parse_long_strict, "(Long/valueOf s)", "Same as Long/parseLong.", "(Long/valueOf \"7\")" => "7"),
    builtin!("Double/valueOf", [1], parse_double_strict, "(Double/valueOf s)", "Same as Double/parseDouble.", "(Double/valueOf \"2\")" => "2.0"),
    builtin!("Math/floor", [1], math_floor, "(Math/floor x)", "The largest whole number not above x, as a float.", "[(Math/floor 2.7) (Math/floor -2.5)]" => "[2.0 -3.0]"),
    builtin!("Math/ceil", [1], math_ceil, "(Math/ceil x)", "The smallest whole number not below x, as a float.", "[(Math/ceil 2.1) (Math/ceil -2.5)]" => "[3.0 -2.0]"),
    builtin!("Math/round", [1], math_round, "(Math/round x)", "x rounded to the nearest integer, halves rounding up (toward positive infinity).", "[(Math/round 2.5) (Math/round -2.5) (Math/round 2.4)]" => "[3 -2 2]"),
    builtin!("Math/rint", [1], math_rint, "(Math/rint x)", "x rounded to the nearest whole number as a float, halves to even.", "[(Math/rint 2.5) (Math/rint 3.5)]" => "[2.0 4.0]"),
    builtin!("Math/sqrt", [1], math_sqrt, "(Math/sqrt x)", "Square root of x (NaN for negative x).", "(Math/sqrt 16)" => "4.0"),
    builtin!("Math/cbrt", [1], math_cbrt, "(Math/cbrt x)", "Cube root of x.", "(Math/cbrt 27)" => "3.0"),
    builtin!("Math/pow", [2], math_pow, "(Math/pow x y)", "x raised to the power y, as a float.", "(Math/pow 2 10)" => "1024.0"),
    builtin!("Math/abs", [1], math_abs, "(Math/abs x)", "Absolute value (an integer stays an integer).", "[(Math/abs -5) (Math/abs -5.5)]" => "[5 5.5]"),
    builtin!("Math/log", [1], math_log, "(Math/log x)", "Natural logarithm of x.", "(Math/log 1)" => "0.0"),
    builtin!("Math/log10", [1], math_log10, "(Math/log10 x)", "Base-10 logarithm of x.", "(Math/log10 1000)" => "3.0"),
    builtin!("Math/exp", [1], math_exp, "(Math/exp x)", "e raised to the power x.", "(Math/exp 0)" => "1.0"),
    builtin!("Math/signum", [1], math_signum, "(Math/signum x)", "-1.0, 0.0 or 1.0 by the sign of x.", "(Math/signum -3.2)" => "-1.0"),
    builtin!("Math/max", [2], math_max, "(Math/max x y)", "The greater of x and y (integers if both are integers).", "(Math/max 1 2)" => "2"),
    builtin!("Math/min", [2], math_min, "(Math/min x y)", "The lesser of x and y (integers if both are integers).", "(Math/min 1.5 2.5)" => "1.5"),
    builtin!("Math/floorDiv", [2], math_floor_div, "(Math/floorDiv n d)", "Integer division rounding toward negative infinity.", "(Math/floorDiv -7 2)" => "-4"),
    builtin!("Math/floorMod", [2], math_floor_mod, "(Math/floorMod n d)", "Integer modulus with the sign of d (like mod).", "(Math/floorMod -7 2)" => "1"),
];

/// Static fields programs read as values (`Math/PI`, `Long/MAX_VALUE`, ...).
pub(crate) fn constant(name: &str) -> Option<Value> {
    let canonical =
        name.strip_prefix("java.lang.")
            .unwrap_or(name)
            .replacen("StrictMath/", "Math/", 1);
    Some(match canonical.as_str() {
        "Math/PI" => Value::Float(std::f64::consts::PI),
        "Math/E" => Value::Float(std::f64::consts::E),
        "Long/MAX_VALUE" => Value::Int(i64::MAX),
        "Long/MIN_VALUE" => Value::Int(i64::MIN),
        "Integer/MAX_VALUE" => Value::Int(i32::MAX as i64),
        "Integer/MIN_VALUE" => Value::Int(i32::MIN as i64),
        "Double/MAX_VALUE" => Value::Float(f64::MAX),
        "Double/MIN_VALUE" => Value::Float(f64::from_bits(1)),
        "Double/POSITIVE_INFINITY" => Value::Float(f64::INFINITY),
        "Double/NEGATIVE_INFINITY" => Value::Float(f64::NEG_INFINITY),
        "Double/NaN" => Value::Float(f64::NAN),
        _ => return None,
    })
}

fn expect_number<'v>(name: &str, v: &'v Value) -> Result<&'v Value> {
    match v {
        Value::Int(_) | Value::Float(_) => Ok(v),
        other => Err(not_a_number(name, other)),
    }
}

fn unary_overflow(op: &str, x: i64) -> Error {
    Error::arithmetic(format!(
        "integer overflow: ({op} {x}) does not fit in 64 bits; use a float (e.g. 1.0) for very \
         large numbers"
    ))
}

pub(crate) fn div(a: &Value, b: &Value) -> Result<Value> {
    expect_number("/", a)?;
    expect_number("/", b)?;
    match (a, b) {
        (Value::Int(_), Value::Int(0)) => Err(Error::arithmetic("divide by zero")),
        (Value::Int(x), Value::Int(y)) => match x.checked_rem(*y) {
            Some(0) => x
                .checked_div(*y)
                .map(Value::Int)
                .ok_or_else(|| overflow("/", a, b)),
            _ => Ok(Value::Float(*x as f64 / *y as f64)),
        },
        _ => Ok(Value::Float(as_f64(a) / as_f64(b))),
    }
}

fn fold(
    ctx: &mut Ctx,
    args: &[Value],
    init: Value,
    op: fn(&Value, &Value) -> Result<Value>,
) -> EvalResult {
    let mut acc = init;
    for x in args {
        acc = op(&acc, x)?;
    }
    ctx.tick_n(args.len() / 8)?;
    Ok(acc)
}

fn plus(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match args {
        [a, b] => Ok(add(a, b)?),
        [a] => Ok(expect_number("+", a)?.clone()),
        _ => fold(ctx, args, Value::Int(0), add),
    }
}

fn minus(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match args {
        [a] => Ok(sub(&Value::Int(0), a)?),
        [a, b] => Ok(sub(a, b)?),
        [first, rest @ ..] => fold(ctx, rest, expect_number("-", first)?.clone(), sub),
        [] => unreachable!("arity checked"),
    }
}

fn times(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match args {
        [a, b] => Ok(mul(a, b)?),
        _ => fold(ctx, args, Value::Int(1), mul),
    }
}

fn divide(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match args {
        [a] => Ok(div(&Value::Int(1), a)?),
        [first, rest @ ..] => fold(ctx, rest, expect_number("/", first)?.clone(), div),
        [] => unreachable!("arity checked"),
    }
}

fn int_division(
    name: &str,
    args: &[Value],
    ints: fn(i64, i64) -> Option<i64>,
    floats: fn(f64, f64) -> f64,
) -> EvalResult {
    let (a, b) = (
        expect_number(name, &args[0])?,
        expect_number(name, &args[1])?,
    );
    if as_f64(b) == 0.0 {
        return Err(Error::arithmetic(format!("{name}: divide by zero")).into());
    }
    Ok(arith(name, a, b, ints, floats)?)
}

fn quot(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    int_division("quot", args, i64::checked_div, |x, y| (x / y).trunc())
}

fn rem(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    int_division("rem", args, i64::checked_rem, |x, y| x % y)
}

fn modulo(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    int_division(
        "mod",
        args,
        |x, y| {
            let r = x.checked_rem(y)?;
            Some(if r != 0 && ((r < 0) != (y < 0)) {
                r + y
            } else {
                r
            })
        },
        |x, y| {
            let r = x % y;
            if r != 0.0 && ((r < 0.0) != (y < 0.0)) {
                r + y
            } else {
                r
            }
        },
    )
}

fn inc(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Int(i) => i
            .checked_add(1)
            .map(Value::Int)
            .ok_or_else(|| unary_overflow("inc", *i).into()),
        other => Ok(add(other, &Value::Int(1))?),
    }
}

fn dec(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Int(i) => i
            .checked_sub(1)
            .map(Value::Int)
            .ok_or_else(|| unary_overflow("dec", *i).into()),
        other => Ok(sub(other, &Value::Int(1))?),
    }
}

fn abs(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match expect_number("abs", &args[0])? {
        Value::Int(i) => i
            .checked_abs()
            .map(Value::Int)
            .ok_or_else(|| Error::arithmetic("integer overflow in abs").into()),
        Value::Float(f) => Ok(Value::Float(f.abs())),
        _ => unreachable!("checked above"),
    }
}

fn extreme(name: &str, args: &[Value], keep: Ordering) -> EvalResult {
    let mut best = expect_number(name, &args[0])?;
    for x in &args[1..] {
        expect_number(name, x)?;
        if let Value::Float(f) = x
            && f.is_nan()
        {
            return Ok(x.clone());
        }
        // Clojure keeps the later argument on a tie: (max 2 2.0) is 2.0.
        if compare_numbers(x, best).is_some_and(|o| o == keep || o == Ordering::Equal) {
            best = x;
        }
    }
    Ok(best.clone())
}

fn max(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    extreme("max", args, Ordering::Greater)
}

fn min(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    extreme("min", args, Ordering::Less)
}

fn equal(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(args.windows(2).all(|w| w[0] == w[1])))
}

fn not_equal(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(!args.windows(2).all(|w| w[0] == w[1])))
}

fn chain(name: &str, args: &[Value], ok: fn(Ordering) -> bool) -> EvalResult {
    for a in args {
        expect_number(name, a)?;
    }
    Ok(Value::Bool(
        args.windows(2)
            .all(|w| compare_numbers(&w[0], &w[1]).is_some_and(ok)),
    ))
}

fn numeric_equal(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    chain("==", args, |o| o == Ordering::Equal)
}

fn less(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    chain("<", args, |o| o == Ordering::Less)
}

fn greater(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    chain(">", args, |o| o == Ordering::Greater)
}

fn less_equal(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    chain("<=", args, |o| o != Ordering::Greater)
}

fn greater_equal(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    chain(">=", args, |o| o != Ordering::Less)
}

/// Clojure's `compare`: numbers by value, strings/keywords/symbols/chars lexicographically,
/// booleans false first, nil before everything, vectors by length then element by element.
pub(crate) fn clojure_compare(a: &Value, b: &Value) -> Result<Ordering> {
    use Value::*;
    Ok(match (a, b) {
        (Nil, Nil) => Ordering::Equal,
        (Nil, _) => Ordering::Less,
        (_, Nil) => Ordering::Greater,
        (Int(_) | Float(_), Int(_) | Float(_)) => compare_numbers(a, b).unwrap_or(Ordering::Equal),
        (Str(x), Str(y)) => x.cmp(y),
        (Keyword(x), Keyword(y)) => x.cmp(y),
        (Symbol(x), Symbol(y)) => x.cmp(y),
        (Char(x), Char(y)) => x.cmp(y),
        (Bool(x), Bool(y)) => x.cmp(y),
        (Date(x), Date(y)) => match x.compare(*y) {
            Some(o) => o,
            None => {
                return Err(Error::type_error(format!(
                    "cannot compare {} with {}: a LocalDate and a java.util.Date are different \
                     types; convert one of them first",
                    got(a),
                    got(b)
                )));
            }
        },
        (Vector(x), Vector(y)) => {
            let by_len = x.len().cmp(&y.len());
            if by_len != Ordering::Equal {
                return Ok(by_len);
            }
            // Past the walking budget any order will do: the run is ending (see value::meter).
            if x.ptr_eq(y) || !crate::value::meter::spend(x.len()) {
                return Ok(Ordering::Equal);
            }
            for (p, q) in x.iter().zip(y.iter()) {
                let o = clojure_compare(p, q)?;
                if o != Ordering::Equal {
                    return Ok(o);
                }
            }
            Ordering::Equal
        }
        _ => {
            return Err(Error::type_error(format!(
                "cannot compare {} with {}",
                got(a),
                got(b)
            )));
        }
    })
}

/// Java's `String.compareTo`: the difference of the first differing UTF-16 units, or of the
/// lengths. Clojure's `compare` on strings returns exactly this, not just -1/0/1.
fn java_string_compare(a: &str, b: &str) -> i64 {
    let mut x = a.encode_utf16();
    let mut y = b.encode_utf16();
    loop {
        match (x.next(), y.next()) {
            (Some(p), Some(q)) if p != q => return p as i64 - q as i64,
            (Some(_), Some(_)) => {}
            (None, None) => return 0,
            _ => return a.encode_utf16().count() as i64 - b.encode_utf16().count() as i64,
        }
    }
}

/// Clojure's `Symbol.compareTo` (also used for keywords): namespace first, then name.
fn java_name_compare(a: (Option<&str>, &str), b: (Option<&str>, &str)) -> i64 {
    match (a.0, b.0) {
        (None, Some(_)) => -1,
        (Some(_), None) => 1,
        (Some(x), Some(y)) if x != y => java_string_compare(x, y),
        _ => java_string_compare(a.1, b.1),
    }
}

fn compare(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (a, b) = (&args[0], &args[1]);
    Ok(Value::Int(match (a, b) {
        (Value::Str(x), Value::Str(y)) => java_string_compare(x, y),
        (Value::Char(x), Value::Char(y)) => *x as i64 - *y as i64,
        (Value::Keyword(x), Value::Keyword(y)) => {
            java_name_compare((x.namespace(), x.name()), (y.namespace(), y.name()))
        }
        (Value::Symbol(x), Value::Symbol(y)) => {
            java_name_compare((x.namespace(), x.name()), (y.namespace(), y.name()))
        }
        _ => match clojure_compare(a, b)? {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        },
    }))
}

fn sign_test(name: &str, v: &Value, ok: fn(Ordering) -> bool) -> EvalResult {
    expect_number(name, v)?;
    Ok(Value::Bool(
        compare_numbers(v, &Value::Int(0)).is_some_and(ok),
    ))
}

fn is_zero(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    sign_test("zero?", &args[0], |o| o == Ordering::Equal)
}

fn is_pos(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    sign_test("pos?", &args[0], |o| o == Ordering::Greater)
}

fn is_neg(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    sign_test("neg?", &args[0], |o| o == Ordering::Less)
}

fn parity(name: &str, v: &Value) -> Result<bool> {
    match v {
        Value::Int(i) => Ok(i % 2 == 0),
        other => Err(Error::argument(format!(
            "{name} expects an integer, got {}",
            got(other)
        ))),
    }
}

fn is_even(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(parity("even?", &args[0])?))
}

fn is_odd(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(!parity("odd?", &args[0])?))
}

fn is_nat_int(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(matches!(args[0], Value::Int(i) if i >= 0)))
}

fn is_pos_int(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(matches!(args[0], Value::Int(i) if i > 0)))
}

fn is_neg_int(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(matches!(args[0], Value::Int(i) if i < 0)))
}

fn is_nan(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(
        as_f64(expect_number("NaN?", &args[0])?).is_nan(),
    ))
}

fn is_infinite(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(
        as_f64(expect_number("infinite?", &args[0])?).is_infinite(),
    ))
}

/// `x` as an integer (truncating floats, chars as their code), if it is within `min..=max`.
fn to_integer(name: &str, kind: &str, x: &Value, min: i64, max: i64) -> Result<i64> {
    let out_of_range =
        |shown: String| Error::argument(format!("({name} {shown}): value out of range for {kind}"));
    match x {
        Value::Int(i) if (min..=max).contains(i) => Ok(*i),
        Value::Int(i) => Err(out_of_range(i.to_string())),
        Value::Float(f) if f.is_nan() => Ok(0),
        // Every float inside the range truncates to an integer inside it.
        Value::Float(f) if *f >= min as f64 && *f <= max as f64 => Ok(*f as i64),
        Value::Float(f) => Err(out_of_range(crate::format::format_float(*f))),
        Value::Char(c) => Ok(*c as i64),
        other => Err(Error::type_error(format!(
            "{name} expects a number or a char, got {}{}",
            got(other),
            if matches!(other, Value::Str(_)) {
                "; to read a number from text use parse-long or parse-double"
            } else {
                ""
            }
        ))),
    }
}

fn int(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Int(to_integer(
        "int",
        "a 32-bit int",
        &args[0],
        i32::MIN as i64,
        i32::MAX as i64,
    )?))
}

fn long(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Int(to_integer(
        "long",
        "a 64-bit integer",
        &args[0],
        i64::MIN,
        i64::MAX,
    )?))
}

fn double(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Int(i) => Ok(Value::Float(*i as f64)),
        Value::Float(_) => Ok(args[0].clone()),
        other => Err(Error::type_error(format!(
            "double expects a number, got {}{}",
            got(other),
            if matches!(other, Value::Str(_)) {
                "; to read a number from text use parse-double"
            } else {
                ""
            }
        ))
        .into()),
    }
}

fn parse_arg<'v>(name: &str, v: &'v Value) -> Result<&'v str> {
    match v {
        Value::Str(s) => Ok(s),
        other => Err(Error::argument(format!(
            "{name} expects a string, got {}",
            got(other)
        ))),
    }
}

/// Java's `Long.parseLong` in a radix: an optional sign, then digits only.
fn java_parse_integer(s: &str, radix: u32) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    i64::from_str_radix(s, radix).ok()
}

/// Java's `Double.parseDouble`: surrounding ASCII control characters and spaces are ignored;
/// `NaN`, `Infinity`, decimals with optional exponent and an optional `d`/`f` suffix.
fn java_parse_double(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c <= ' ');
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    let negative = t.starts_with('-');
    match unsigned {
        "NaN" => return Some(f64::NAN),
        "Infinity" => {
            return Some(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            });
        }
        _ => {}
    }
    let body = unsigned
        .strip_suffix(['d', 'D', 'f', 'F'])
        .unwrap_or(unsigned);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() && frac.is_empty() || !digits(int) || !digits(frac) {
        return None;
    }
    if let Some(e) = exponent {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        if e.is_empty() || !digits(e) {
            return None;
        }
    }
    let text = if exponent.is_some() {
        format!("{}{}", if negative { "-" } else { "" }, body)
    } else {
        format!("{}{}", if negative { "-" } else { "" }, mantissa)
    };
    text.parse::<f64>().ok()
}

fn parse_long(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = parse_arg("parse-long", &args[0])?;
    Ok(java_parse_integer(s, 10)
        .map(Value::Int)
        .unwrap_or_default())
}

fn parse_double(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = parse_arg("parse-double", &args[0])?;
    Ok(java_parse_double(s).map(Value::Float).unwrap_or_default())
}

fn parse_boolean(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(match parse_arg("parse-boolean", &args[0])? {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::Nil,
    })
}

fn number_format_error(name: &str, s: &str, hint: &str) -> Error {
    Error::argument(format!(
        "{name}: {} is not a number (NumberFormatException){hint}",
        crate::format::pr_str(&Value::string(s))
    ))
}

fn radix_arg(name: &str, args: &[Value]) -> Result<u32> {
    match args.get(1) {
        None => Ok(10),
        Some(r) => match expect_int(name, r)? {
            r @ 2..=36 => Ok(r as u32),
            r => Err(Error::argument(format!(
                "{name}: radix {r} is outside 2..36"
            ))),
        },
    }
}

fn parse_int_in(name: &str, args: &[Value], min: i64, max: i64) -> EvalResult {
    let s = parse_arg(name, &args[0])?;
    let radix = radix_arg(name, args)?;
    match java_parse_integer(s, radix) {
        Some(i) if (min..=max).contains(&i) => Ok(Value::Int(i)),
        _ => Err(
            number_format_error(name, s, "; use parse-long to get nil instead of an error").into(),
        ),
    }
}

fn parse_int(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    parse_int_in("Integer/parseInt", args, i32::MIN as i64, i32::MAX as i64)
}

fn parse_long_strict(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    parse_int_in("Long/parseLong", args, i64::MIN, i64::MAX)
}

fn parse_double_strict(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = parse_arg("Double/parseDouble", &args[0])?;
    match java_parse_double(s) {
        Some(f) => Ok(Value::Float(f)),
        None => Err(number_format_error(
            "Double/parseDouble",
            s,
            "; use parse-double to get nil instead of an error",
        )
        .into()),
    }
}

fn float_fn(name: &str, args: &[Value], f: fn(f64) -> f64) -> EvalResult {
    Ok(Value::Float(f(as_f64(expect_number(name, &args[0])?))))
}

fn math_floor(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    float_fn("Math/floor", args, f64::floor)
}

fn math_ceil(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    float_fn("Math/ceil", args, f64::ceil)
}

fn math_rint(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    float_fn("Math/rint", args, f64::round_ties_even)
}

fn math_sqrt(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    float_fn("Math/sqrt", args, f64::sqrt)
}

fn math_cbrt(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    float_fn("Math/cbrt", args, f64::cbrt)
}

fn math_log(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    float_fn("Math/log", args, f64::ln)
}

fn math_log10(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    float_fn("Math/log10", args, f64::log10)
}

fn math_exp(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    float_fn("Math/exp", args, f64::exp)
}

fn math_signum(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    float_fn("Math/signum", args, |x| {
        if x == 0.0 || x.is_nan() {
            x
        } else {
            x.signum()
        }
    })
}

fn math_pow(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let base = as_f64(expect_number("Math/pow", &args[0])?);
    let exponent = as_f64(expect_number("Math/pow", &args[1])?);
    Ok(Value::Float(base.powf(exponent)))
}

fn math_round(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match expect_number("Math/round", &args[0])? {
        Value::Int(i) => Ok(Value::Int(*i)),
        Value::Float(x) if x.is_nan() => Ok(Value::Int(0)),
        Value::Float(x) => {
            // Java rounds halves toward positive infinity; `x - floor(x)` is exact, so this is
            // right even for 0.49999999999999994. `as` saturates as Java does.
            let floor = x.floor();
            let rounded = if x - floor >= 0.5 { floor + 1.0 } else { floor };
            Ok(Value::Int(rounded as i64))
        }
        _ => unreachable!("checked above"),
    }
}

fn math_abs(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    expect_number("Math/abs", &args[0])?;
    abs(ctx, args)
}

fn math_extreme(name: &str, args: &[Value], keep: Ordering) -> EvalResult {
    let (a, b) = (
        expect_number(name, &args[0])?,
        expect_number(name, &args[1])?,
    );
    let pick = match (a, b) {
        (Value::Int(_), Value::Int(_)) => {
            if compare_numbers(a, b) == Some(keep) {
                a.clone()
            } else {
                b.clone()
            }
        }
        _ => {
            let (x, y) = (as_f64(a), as_f64(b));
            Value::Float(if x.is_nan() || y.is_nan() {
                f64::NAN
            } else if keep == Ordering::Greater {
                x.max(y)
            } else {
                x.min(y)
            })
        }
    };
    Ok(pick)
}

fn math_max(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    math_extreme("Math/max", args, Ordering::Greater)
}

fn math_min(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    math_extreme("Math/min", args, Ordering::Less)
}

fn integer_pair(name: &str, args: &[Value]) -> Result<(i64, i64)> {
    let n = expect_int(name, &args[0])?;
    let d = expect_int(name, &args[1])?;
    if d == 0 {
        return Err(Error::arithmetic(format!("{name}: divide by zero")));
    }
    Ok((n, d))
}

fn math_floor_div(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (n, d) = integer_pair("Math/floorDiv", args)?;
    let q = n
        .checked_div(d)
        .ok_or_else(|| Error::arithmetic("integer overflow in Math/floorDiv"))?;
    Ok(Value::Int(if (n % d != 0) && ((n < 0) != (d < 0)) {
        q - 1
    } else {
        q
    }))
}

fn math_floor_mod(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (n, d) = integer_pair("Math/floorMod", args)?;
    let r = n.checked_rem(d).unwrap_or(0);
    Ok(Value::Int(if r != 0 && ((r < 0) != (d < 0)) {
        r + d
    } else {
        r
    }))
}
