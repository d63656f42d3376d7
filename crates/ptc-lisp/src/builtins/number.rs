//! Arithmetic and comparison.
//!
//! Integers are 64-bit and overflow is an error, never a silent wrap. There are no ratios: a
//! division that is not exact gives a float (`(/ 7 2)` is `3.5`, `(/ 6 2)` is `3`).

use super::{Builtin, builtin, got};
use crate::error::{Error, Result};
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
];

fn expect_number<'v>(name: &str, v: &'v Value) -> Result<&'v Value> {
    match v {
        Value::Int(_) | Value::Float(_) => Ok(v),
        other => Err(Error::type_error(format!(
            "{name} expects numbers, got {}",
            got(other)
        ))),
    }
}

fn overflow(op: &str, a: &Value, b: &Value) -> Error {
    Error::arithmetic(format!(
        "integer overflow: ({op} {} {}) does not fit in 64 bits; use a float (e.g. 1.0) for \
         very large numbers",
        crate::format::pr_str(a),
        crate::format::pr_str(b)
    ))
}

fn unary_overflow(op: &str, x: i64) -> Error {
    Error::arithmetic(format!(
        "integer overflow: ({op} {x}) does not fit in 64 bits; use a float (e.g. 1.0) for very \
         large numbers"
    ))
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

fn arith(
    op: &str,
    a: &Value,
    b: &Value,
    ints: fn(i64, i64) -> Option<i64>,
    floats: fn(f64, f64) -> f64,
) -> Result<Value> {
    expect_number(op, a)?;
    expect_number(op, b)?;
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => ints(*x, *y)
            .map(Value::Int)
            .ok_or_else(|| overflow(op, a, b)),
        _ => Ok(Value::Float(floats(as_f64(a), as_f64(b)))),
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
