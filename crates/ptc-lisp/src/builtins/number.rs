//! Numbers: arithmetic, comparison, conversion and parsing, and the `Math/`, `Integer/`, `Long/`
//! and `Double/` functions programs call.
//!
//! Integers are 64-bit and overflow is an error, never a silent wrap (the promoting `+'` `-'`
//! `*'` give a big integer instead). A division of integers that is not exact gives a ratio
//! (`(/ 7 2)` is `7/2`), as in Clojure; big integers, ratios and big decimals follow Clojure's
//! tower (see `eval::numbers`). There are no 32-bit floats: `(float x)` is `(double x)`. `Math/`
//! functions accept any number (Java would refuse `(Math/round 7)`).

use super::args::{Arg, Call};
pub(crate) use crate::eval::numbers::{add, div, mul, sub};

/// 2^63: Java's long range is [-2^63, 2^63).
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

use super::{Builtin, builtin, got};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::numbers::{Op, not_a_number, tower};
use crate::eval::{Ctx, EvalResult};
use crate::value::{BigKind, BigNumber, Value, compare_numbers, to_bigint, to_rational};
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};
use std::cmp::Ordering;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("+", plus, "(+ x y & more)", "Sum of numbers; (+) is 0.", "(+ 1 2 3.5)" => "6.5"),
    builtin!("-", minus, "(- x) (- x y & more)", "Negation, or subtraction from the first number.", "(- 10 1 2)" => "7"),
    builtin!("*", times, "(* x y & more)", "Product of numbers; (*) is 1.", "(* 2 3 4)" => "24"),
    builtin!("/", divide, "(/ x) (/ x y & more)", "Division; integers that do not divide exactly give a ratio.", "[(/ 6 2) (/ 7 2) (/ 7.0 2)]" => "[3 7/2 3.5]"),
    builtin!("quot", quot, "(quot n d)", "Quotient of dividing n by d, rounded toward zero.", "(quot 7 2)" => "3"),
    builtin!("rem", rem, "(rem n d)", "Remainder of (quot n d); has the sign of n.", "(rem -7 2)" => "-1"),
    builtin!("mod", modulo, "(mod n d)", "Modulus of n and d; has the sign of d.", "(mod -7 2)" => "1"),
    builtin!("inc", inc, "(inc x)", "x plus one.", "(inc 41)" => "42"),
    builtin!("dec", dec, "(dec x)", "x minus one.", "(dec 43)" => "42"),
    builtin!("abs", abs, "(abs x)", "Absolute value.", "(abs -2.5)" => "2.5"),
    builtin!("max", max, "(max x & more)", "Greatest of the numbers.", "(max 1 5 3)" => "5"),
    builtin!("min", min, "(min x & more)", "Least of the numbers.", "(min 4 2 8)" => "2"),
    builtin!("=", equal, "(= x y & more)", "True if all values are equal (1 and 1.0 are not; [1 2] and '(1 2) are).", "(= [1 2] '(1 2))" => "true"),
    builtin!("not=", not_equal, "(not= x y & more)", "(not (= x y ...)).", "(not= 1 2)" => "true"),
    builtin!("==", numeric_equal, "(== x y & more)", "True if all numbers are numerically equal (1 and 1.0 are).", "(== 1 1.0)" => "true"),
    builtin!("<", less, "(< x y & more)", "True if the numbers are strictly increasing.", "(< 1 2 3)" => "true"),
    builtin!(">", greater, "(> x y & more)", "True if the numbers are strictly decreasing.", "(> 3 2 2)" => "false"),
    builtin!("<=", less_equal, "(<= x y & more)", "True if the numbers never decrease.", "(<= 1 2 2)" => "true"),
    builtin!(">=", greater_equal, "(>= x y & more)", "True if the numbers never increase.", "(>= 3 3 1)" => "true"),
    builtin!("compare", compare, "(compare x y)", "-1, 0 or 1 as x sorts before, with or after y (numbers, strings, keywords, vectors by length then items).", "(compare \"a\" \"b\")" => "-1"),
    builtin!("zero?", is_zero, "(zero? x)", "True if x is zero.", "(zero? 0.0)" => "true"),
    builtin!("pos?", is_pos, "(pos? x)", "True if x is greater than zero.", "(pos? 3)" => "true"),
    builtin!("neg?", is_neg, "(neg? x)", "True if x is less than zero.", "(neg? -1)" => "true"),
    builtin!("even?", is_even, "(even? n)", "True if the integer n is even.", "(even? 4)" => "true"),
    builtin!("odd?", is_odd, "(odd? n)", "True if the integer n is odd.", "(odd? 4)" => "false"),
    builtin!("nat-int?", is_nat_int, "(nat-int? x)", "True if x is an integer of 0 or more.", "[(nat-int? 0) (nat-int? -1) (nat-int? 1.0)]" => "[true false false]"),
    builtin!("pos-int?", is_pos_int, "(pos-int? x)", "True if x is an integer greater than 0.", "[(pos-int? 1) (pos-int? 0)]" => "[true false]"),
    builtin!("neg-int?", is_neg_int, "(neg-int? x)", "True if x is an integer less than 0.", "(neg-int? -1)" => "true"),
    builtin!("NaN?", is_nan, "(NaN? x)", "True if the number x is NaN (not a number).", "[(NaN? (Math/sqrt -1)) (NaN? 1.0)]" => "[true false]"),
    builtin!("infinite?", is_infinite, "(infinite? x)", "True if the number x is positive or negative infinity.", "(infinite? (/ 1.0 0))" => "true"),
    builtin!("int", int, "(int x)", "x as an integer: floats are truncated toward zero, chars give their code; must fit in 32 bits.", "[(int 3.7) (int -3.7) (int \\A)]" => "[3 -3 65]"),
    builtin!("long", long, "(long x)", "x as an integer: floats are truncated toward zero, chars give their code.", "(long 9.99)" => "9"),
    builtin!("double", double, "(double x)", "x as a float.", "(double 3)" => "3.0"),
    builtin!("float", double, "(float x)", "x as a float (always 64-bit: there are no 32-bit floats).", "(float 1)" => "1.0"),
    builtin!("parse-long", parse_long, "(parse-long s)", "The integer written in s (optional sign, digits only), or nil.", "[(parse-long \"42\") (parse-long \"4.2\") (parse-long \" 4\")]" => "[42 nil nil]"),
    builtin!("parse-double", parse_double, "(parse-double s)", "The float written in s (Java syntax: 1.5, -2, .5, 1e3, NaN, Infinity), or nil.", "[(parse-double \"3.14\") (parse-double \"1e3\") (parse-double \"abc\")]" => "[3.14 1000.0 nil]"),
    builtin!("parse-boolean", parse_boolean, "(parse-boolean s)", "true for \"true\", false for \"false\", nil for anything else.", "[(parse-boolean \"true\") (parse-boolean \"yes\")]" => "[true nil]"),
    builtin!("Integer/parseInt", parse_int, "(Integer/parseInt s) (Integer/parseInt s radix)", "The 32-bit integer written in s; an error (NumberFormatException) if s is not one.", "[(Integer/parseInt \"12\") (Integer/parseInt \"ff\" 16)]" => "[12 255]"),
    builtin!("Long/parseLong", parse_long_strict, "(Long/parseLong s) (Long/parseLong s radix)", "The integer written in s; an error (NumberFormatException) if s is not one.", "(Long/parseLong \"-9\")" => "-9"),
    builtin!("Double/parseDouble", parse_double_strict, "(Double/parseDouble s)", "The float written in s (surrounding whitespace allowed); an error (NumberFormatException) if s is not one.", "(Double/parseDouble \" 1.5 \")" => "1.5"),
    builtin!("Integer/valueOf", parse_int, "(Integer/valueOf s)", "Same as Integer/parseInt.", "(Integer/valueOf \"7\")" => "7"),
    builtin!("Long/valueOf", parse_long_strict, "(Long/valueOf s)", "Same as Long/parseLong.", "(Long/valueOf \"7\")" => "7"),
    builtin!("Double/valueOf", parse_double_strict, "(Double/valueOf s)", "Same as Double/parseDouble.", "(Double/valueOf \"2\")" => "2.0"),
    builtin!("Math/floor", math_floor, "(Math/floor x)", "The largest whole number not above x, as a float.", "[(Math/floor 2.7) (Math/floor -2.5)]" => "[2.0 -3.0]"),
    builtin!("Math/ceil", math_ceil, "(Math/ceil x)", "The smallest whole number not below x, as a float.", "[(Math/ceil 2.1) (Math/ceil -2.5)]" => "[3.0 -2.0]"),
    builtin!("Math/round", math_round, "(Math/round x)", "x rounded to the nearest integer, halves rounding up (toward positive infinity).", "[(Math/round 2.5) (Math/round -2.5) (Math/round 2.4)]" => "[3 -2 2]"),
    builtin!("Math/rint", math_rint, "(Math/rint x)", "x rounded to the nearest whole number as a float, halves to even.", "[(Math/rint 2.5) (Math/rint 3.5)]" => "[2.0 4.0]"),
    builtin!("Math/sqrt", math_sqrt, "(Math/sqrt x)", "Square root of x (NaN for negative x).", "(Math/sqrt 16)" => "4.0"),
    builtin!("Math/cbrt", math_cbrt, "(Math/cbrt x)", "Cube root of x.", "(Math/cbrt 27)" => "3.0"),
    builtin!("Math/pow", math_pow, "(Math/pow x y)", "x raised to the power y, as a float.", "(Math/pow 2 10)" => "1024.0"),
    builtin!("Math/abs", abs, "(Math/abs x)", "Absolute value (an integer stays an integer).", "[(Math/abs -5) (Math/abs -5.5)]" => "[5 5.5]"),
    builtin!("Math/log", math_log, "(Math/log x)", "Natural logarithm of x.", "(Math/log 1)" => "0.0"),
    builtin!("Math/log10", math_log10, "(Math/log10 x)", "Base-10 logarithm of x.", "(Math/log10 1000)" => "3.0"),
    builtin!("Math/exp", math_exp, "(Math/exp x)", "e raised to the power x.", "(Math/exp 0)" => "1.0"),
    builtin!("Math/signum", math_signum, "(Math/signum x)", "-1.0, 0.0 or 1.0 by the sign of x.", "(Math/signum -3.2)" => "-1.0"),
    builtin!("Math/max", math_max, "(Math/max x y)", "The greater of x and y (integers if both are integers).", "(Math/max 1 2)" => "2"),
    builtin!("Math/min", math_min, "(Math/min x y)", "The lesser of x and y (integers if both are integers).", "(Math/min 1.5 2.5)" => "1.5"),
    builtin!("Math/floorDiv", math_floor_div, "(Math/floorDiv n d)", "Integer division rounding toward negative infinity.", "(Math/floorDiv -7 2)" => "-4"),
    builtin!("Math/floorMod", math_floor_mod, "(Math/floorMod n d)", "Integer modulus with the sign of d (like mod).", "(Math/floorMod -7 2)" => "1"),
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

/// A number argument.
#[derive(Clone, Copy)]
pub(crate) enum Num<'a> {
    Int(i64),
    Float(f64),
    Big(&'a BigNumber),
}

impl<'a> Arg<'a> for Num<'a> {
    #[inline(always)]
    fn from_arg(call: Call, value: &'a Value) -> Result<Self> {
        match value {
            Value::Int(i) => Ok(Num::Int(*i)),
            Value::Float(f) => Ok(Num::Float(*f)),
            Value::Big(b) => Ok(Num::Big(b)),
            other => Err(not_a_number(call, other)),
        }
    }
}

impl Num<'_> {
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
            Num::Big(b) => b.to_f64(),
        }
    }
}

impl From<Num<'_>> for Value {
    fn from(n: Num) -> Value {
        match n {
            Num::Int(i) => Value::Int(i),
            Num::Float(f) => Value::Float(f),
            Num::Big(b) => Value::Big(b.clone()),
        }
    }
}

fn unary_overflow(op: Call, x: i64) -> Error {
    Error::arithmetic(format!(
        "integer overflow: ({op} {x}) does not fit in 64 bits; use {op}' or a big integer (1N) \
         for very large numbers"
    ))
}

/// Limbs (64-bit words) of a number's digits: the unit of the work big arithmetic costs.
fn limbs(v: &Value) -> u64 {
    match v {
        Value::Big(b) => (b.heap_bytes() as u64).div_ceil(8),
        _ => 1,
    }
}

/// `(op a b)` of two numbers, at least one of them big, or promoting: checked against the
/// budgets first, since one multiplication of huge numbers can take longer than any timeout
/// and a result can be larger than the memory budget. The work counts as steps (a product
/// costs the product of the sizes); the result's digits are charged to the memory budget.
pub(crate) fn big_arith(
    ctx: &mut Ctx,
    op: Op,
    a: &Value,
    b: &Value,
    compute: impl FnOnce(&Value, &Value) -> Result<Value>,
) -> EvalResult {
    let (x, y) = (limbs(a), limbs(b));
    let (result_limbs, work) = match op {
        Op::Add | Op::Sub => (x.max(y) + 1, x + y),
        Op::Mul | Op::Div => (x + y, x + y + x.saturating_mul(y) / 16),
    };
    if result_limbs.saturating_mul(8) > ctx.memory_left() as u64 {
        return Err(ctx.memory_limit_error().into());
    }
    ctx.tick_n(work as usize)?;
    let value = compute(a, b)?;
    if let Value::Big(n) = &value {
        ctx.charge(n.heap_bytes())?;
    }
    Ok(value)
}

/// One step of `+`, `-`, `*` or `/` over many arguments.
#[inline(always)]
fn step(ctx: &mut Ctx, op: Op, a: &Value, b: &Value) -> EvalResult {
    let compute = match op {
        Op::Add => add,
        Op::Sub => sub,
        Op::Mul => mul,
        Op::Div => div,
    };
    if matches!(a, Value::Big(_)) || matches!(b, Value::Big(_)) {
        return big_arith(ctx, op, a, b, compute);
    }
    Ok(compute(a, b)?)
}

fn fold(ctx: &mut Ctx, args: &[Value], init: Value, op: Op) -> EvalResult {
    let mut acc = init;
    for x in args {
        acc = step(ctx, op, &acc, x)?;
    }
    ctx.tick_n(args.len() / 8)?;
    Ok(acc)
}

fn plus(ctx: &mut Ctx, call: Call, xs: &[Value]) -> EvalResult {
    match xs {
        [a, b] => step(ctx, Op::Add, a, b),
        [a] => Ok(number(call, a)?.clone()),
        _ => fold(ctx, xs, Value::Int(0), Op::Add),
    }
}

fn minus(ctx: &mut Ctx, call: Call, (x, more): (&Value, &[Value])) -> EvalResult {
    match more {
        [] => match x {
            Value::Int(i) => i
                .checked_neg()
                .map(Value::Int)
                .ok_or_else(|| unary_overflow(call, *i).into()),
            // Negated, not subtracted from 0: (- 0.0) is -0.0, as in Clojure.
            Value::Float(f) => Ok(Value::Float(-f)),
            _ => step(ctx, Op::Sub, &Value::Int(0), x),
        },
        [y] => step(ctx, Op::Sub, x, y),
        _ => fold(ctx, more, number(call, x)?.clone(), Op::Sub),
    }
}

fn times(ctx: &mut Ctx, _: Call, xs: &[Value]) -> EvalResult {
    match xs {
        [a, b] => step(ctx, Op::Mul, a, b),
        _ => fold(ctx, xs, Value::Int(1), Op::Mul),
    }
}

fn divide(ctx: &mut Ctx, call: Call, (x, more): (&Value, &[Value])) -> EvalResult {
    match more {
        // Clojure's (/ x) divides 1 by a boxed x, which refuses any zero (the float one too).
        [] if matches!(x, Value::Float(f) if *f == 0.0) => {
            Err(call.error(ErrorKind::Arithmetic, "divide by zero").into())
        }
        [] => step(ctx, Op::Div, &Value::Int(1), x),
        _ => fold(ctx, more, number(call, x)?.clone(), Op::Div),
    }
}

/// The quotient of `n / d` rounded toward zero, for any two numbers, as Clojure computes it in
/// the greater kind of the two: with floats, a float integer (never -0.0; an infinite or NaN
/// quotient has no integer part: an error); with a big decimal, Java's `divideToIntegralValue`
/// (its scale is the dividend's minus the divisor's when that is enough: (quot 2.5M 2) is
/// 1.0M); otherwise a whole number.
fn truncated_quotient(call: Call, n: Num, d: Num) -> Result<Value> {
    if is_zero_num(d) {
        return Err(call.error(ErrorKind::Arithmetic, "divide by zero"));
    }
    let (nv, dv): (Value, Value) = (n.into(), d.into());
    match (n, d) {
        // Clojure's answer, which wraps: there is no positive 2^63 in 64 bits.
        (Num::Int(x), Num::Int(y)) => Ok(Value::Int(x.wrapping_div(y))),
        (Num::Float(_), _) | (_, Num::Float(_)) => {
            let q = n.as_f64() / d.as_f64();
            if !q.is_finite() {
                return Err(call.error(
                    ErrorKind::Arithmetic,
                    format_args!(
                        "{} has no integer quotient: the quotient of {} by {} is {}",
                        call,
                        crate::format::pr_str(&nv),
                        crate::format::pr_str(&dv),
                        crate::format::format_float(q)
                    ),
                ));
            }
            Ok(Value::Float(java_long_part(q)))
        }
        _ if is_decimal(n) || is_decimal(d) => {
            let x = crate::eval::numbers::to_decimal(Op::Div, &nv)?;
            let y = crate::eval::numbers::to_decimal(Op::Div, &dv)?;
            Ok(BigNumber::from_decimal(x.divide_to_integral(&y)))
        }
        _ => {
            let (x, y) = (exact(n), exact(d));
            Ok(BigNumber::int((x / y).trunc().to_integer()))
        }
    }
}

/// A finite float quotient's integer part as Clojure takes it: through a Java `long` when it
/// fits (so -0.5 gives 0.0, not -0.0), else the float itself (already whole).
fn java_long_part(q: f64) -> f64 {
    if (-TWO_POW_63..TWO_POW_63).contains(&q) {
        q.trunc() as i64 as f64
    } else {
        q
    }
}

fn is_decimal(n: Num) -> bool {
    matches!(n, Num::Big(b) if matches!(b.kind(), BigKind::Decimal(_)))
}

fn is_zero_num(n: Num) -> bool {
    match n {
        Num::Int(i) => i == 0,
        Num::Float(f) => f == 0.0,
        Num::Big(b) => b.to_rational().is_zero(),
    }
}

fn exact(n: Num) -> num_rational::BigRational {
    to_rational(&n.into()).unwrap_or_default()
}

fn quot(_: &mut Ctx, call: Call, (n, d): (Num, Num)) -> EvalResult {
    Ok(truncated_quotient(call, n, d)?)
}

/// `n - d * (quot n d)`: the remainder with the sign of `n`.
fn remainder(call: Call, n: Num, d: Num) -> Result<Value> {
    let q = truncated_quotient(call, n, d)?;
    match (n, d, &q) {
        (Num::Int(x), Num::Int(y), _) => Ok(Value::Int(x.wrapping_rem(y))),
        (_, _, Value::Float(q)) => Ok(Value::Float(n.as_f64() - q * d.as_f64())),
        // Java's BigDecimal remainder: n - q * d, with the scales that arithmetic gives.
        (_, _, Value::Big(b)) if matches!(b.kind(), BigKind::Decimal(_)) => {
            let x = crate::eval::numbers::to_decimal(Op::Sub, &n.into())?;
            let y = crate::eval::numbers::to_decimal(Op::Sub, &d.into())?;
            let BigKind::Decimal(q) = b.kind() else {
                unreachable!("matched a decimal")
            };
            Ok(BigNumber::from_decimal(x.add(&q.mul(&y).neg())))
        }
        _ => tower(Op::Sub, &n.into(), &tower(Op::Mul, &d.into(), &q)?),
    }
}

fn rem(_: &mut Ctx, call: Call, (n, d): (Num, Num)) -> EvalResult {
    Ok(remainder(call, n, d)?)
}

fn modulo(_: &mut Ctx, call: Call, (n, d): (Num, Num)) -> EvalResult {
    if let (Num::Int(x), Num::Int(y)) = (n, d) {
        if y == 0 {
            return Err(call.error(ErrorKind::Arithmetic, "divide by zero").into());
        }
        let r = x.wrapping_rem(y);
        return Ok(Value::Int(if r != 0 && ((r < 0) != (y < 0)) {
            r + y
        } else {
            r
        }));
    }
    let m = remainder(call, n, d)?;
    let sign = |v: &Value| compare_numbers(v, &Value::Int(0));
    let zero = sign(&m) == Some(Ordering::Equal);
    let same_sign = (sign(&n.into()) == Some(Ordering::Greater))
        == (sign(&d.into()) == Some(Ordering::Greater));
    if zero || same_sign {
        Ok(m)
    } else {
        Ok(tower(Op::Add, &m, &d.into())?)
    }
}

fn inc(ctx: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    match x {
        Value::Int(i) => i
            .checked_add(1)
            .map(Value::Int)
            .ok_or_else(|| unary_overflow(call, *i).into()),
        Value::Float(f) => Ok(Value::Float(f + 1.0)),
        Value::Big(_) => big_arith(ctx, Op::Add, x, &Value::Int(1), add),
        other => Err(not_a_number(call, other).into()),
    }
}

fn dec(ctx: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    match x {
        Value::Int(i) => i
            .checked_sub(1)
            .map(Value::Int)
            .ok_or_else(|| unary_overflow(call, *i).into()),
        Value::Float(f) => Ok(Value::Float(f - 1.0)),
        Value::Big(_) => big_arith(ctx, Op::Sub, x, &Value::Int(1), sub),
        other => Err(not_a_number(call, other).into()),
    }
}

fn abs(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    match x {
        // Clojure's answer, which wraps: there is no positive 2^63 in 64 bits.
        Num::Int(i) => Ok(Value::Int(i.wrapping_abs())),
        Num::Float(f) => Ok(Value::Float(f.abs())),
        Num::Big(b) => Ok(match b.kind() {
            BigKind::Int(i) => BigNumber::int(i.abs()),
            BigKind::Ratio(r) => BigNumber::from_rational(r.abs()),
            BigKind::Decimal(d) => BigNumber::from_decimal(d.abs()),
        }),
    }
}

/// `value` if it is a number, else the error naming `call`.
#[inline(always)]
fn number(call: Call, value: &Value) -> Result<&Value> {
    match value {
        Value::Int(_) | Value::Float(_) | Value::Big(_) => Ok(value),
        other => Err(not_a_number(call, other)),
    }
}

fn extreme(call: Call, (first, more): (&Value, &[Value]), keep: Ordering) -> EvalResult {
    let mut best = number(call, first)?;
    for x in more {
        number(call, x)?;
        if let Value::Float(f) = x
            && f.is_nan()
        {
            return Ok(x.clone());
        }
        // Clojure keeps the later argument on a tie: (max 2 2.0) is 2.0.
        if crate::eval::numbers::compare(x, best)?
            .is_some_and(|o| o == keep || o == Ordering::Equal)
        {
            best = x;
        }
    }
    Ok(best.clone())
}

fn max(_: &mut Ctx, call: Call, xs: (&Value, &[Value])) -> EvalResult {
    extreme(call, xs, Ordering::Greater)
}

fn min(_: &mut Ctx, call: Call, xs: (&Value, &[Value])) -> EvalResult {
    extreme(call, xs, Ordering::Less)
}

/// Whether `related` holds between each argument and the next one.
#[inline(always)]
fn each_pair((first, more): (&Value, &[Value]), related: impl Fn(&Value, &Value) -> bool) -> bool {
    let mut previous = first;
    for x in more {
        if !related(previous, x) {
            return false;
        }
        previous = x;
    }
    true
}

fn equal(_: &mut Ctx, _: Call, xs: (&Value, &[Value])) -> EvalResult {
    Ok(Value::Bool(each_pair(xs, |a, b| a == b)))
}

fn not_equal(_: &mut Ctx, _: Call, xs: (&Value, &[Value])) -> EvalResult {
    Ok(Value::Bool(!each_pair(xs, |a, b| a == b)))
}

fn chain(call: Call, xs: (&Value, &[Value]), ok: fn(Ordering) -> bool) -> EvalResult {
    number(call, xs.0)?;
    for x in xs.1 {
        number(call, x)?;
    }
    // Pair by pair, stopping at the first that fails, as Clojure does; a ratio and a big
    // decimal compare as decimals, which fails for a ratio without one (as in Clojure).
    let mut previous = xs.0;
    for x in xs.1 {
        if !crate::eval::numbers::compare(previous, x)?.is_some_and(ok) {
            return Ok(Value::Bool(false));
        }
        previous = x;
    }
    Ok(Value::Bool(true))
}

fn numeric_equal(_: &mut Ctx, call: Call, xs: (&Value, &[Value])) -> EvalResult {
    chain(call, xs, |o| o == Ordering::Equal)
}

fn less(_: &mut Ctx, call: Call, xs: (&Value, &[Value])) -> EvalResult {
    chain(call, xs, |o| o == Ordering::Less)
}

fn greater(_: &mut Ctx, call: Call, xs: (&Value, &[Value])) -> EvalResult {
    chain(call, xs, |o| o == Ordering::Greater)
}

fn less_equal(_: &mut Ctx, call: Call, xs: (&Value, &[Value])) -> EvalResult {
    chain(call, xs, |o| o != Ordering::Greater)
}

fn greater_equal(_: &mut Ctx, call: Call, xs: (&Value, &[Value])) -> EvalResult {
    chain(call, xs, |o| o != Ordering::Less)
}

/// Clojure's `compare`: numbers by value, strings/keywords/symbols/chars lexicographically,
/// booleans false first, nil before everything, vectors by length then element by element.
pub(crate) fn clojure_compare(a: &Value, b: &Value) -> Result<Ordering> {
    use Value::*;
    Ok(match (a, b) {
        (Nil, Nil) => Ordering::Equal,
        (Nil, _) => Ordering::Less,
        (_, Nil) => Ordering::Greater,
        (Int(_) | Float(_) | Big(_), Int(_) | Float(_) | Big(_)) => {
            crate::eval::numbers::compare(a, b)?.unwrap_or(Ordering::Equal)
        }
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

/// `(compare a b)`.
pub(crate) fn compare_values(a: &Value, b: &Value) -> Result<Value> {
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

fn compare(_: &mut Ctx, _: Call, (a, b): (&Value, &Value)) -> EvalResult {
    Ok(compare_values(a, b)?)
}

fn sign_test(x: Num, ok: fn(Ordering) -> bool) -> EvalResult {
    Ok(Value::Bool(
        compare_numbers(&x.into(), &Value::Int(0)).is_some_and(ok),
    ))
}

fn is_zero(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    sign_test(x, |o| o == Ordering::Equal)
}

fn is_pos(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    sign_test(x, |o| o == Ordering::Greater)
}

fn is_neg(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    sign_test(x, |o| o == Ordering::Less)
}

fn parity(call: Call, v: &Value) -> Result<bool> {
    match v {
        Value::Int(i) => Ok(i % 2 == 0),
        Value::Big(b) if matches!(b.kind(), BigKind::Int(_)) => {
            Ok(to_bigint(v).is_some_and(|i| i.is_even()))
        }
        other => Err(call.expected_argument("an integer", other)),
    }
}

fn is_even(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(parity(call, x)?))
}

fn is_odd(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(!parity(call, x)?))
}

fn is_nat_int(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(matches!(x, Value::Int(i) if *i >= 0)))
}

fn is_pos_int(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(matches!(x, Value::Int(i) if *i > 0)))
}

fn is_neg_int(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(matches!(x, Value::Int(i) if *i < 0)))
}

fn is_nan(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Bool(x.as_f64().is_nan()))
}

fn is_infinite(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Bool(x.as_f64().is_infinite()))
}

/// `x` as an integer (truncating floats, chars as their code), if it is within `min..=max`.
fn to_integer(call: Call, kind: &str, x: &Value, min: i64, max: i64) -> Result<i64> {
    let out_of_range =
        |shown: String| Error::argument(format!("({call} {shown}): value out of range for {kind}"));
    match x {
        Value::Int(i) if (min..=max).contains(i) => Ok(*i),
        Value::Int(i) => Err(out_of_range(i.to_string())),
        Value::Float(f) if f.is_nan() => Ok(0),
        // Every float inside the range truncates to an integer inside it.
        Value::Float(f) if *f >= min as f64 && *f <= max as f64 => Ok(*f as i64),
        Value::Float(f) => Err(out_of_range(crate::format::format_float(*f))),
        Value::Char(c) => Ok(*c as i64),
        Value::Big(b) => {
            // Ratios and decimals truncate toward zero, as floats do.
            let whole = match b.kind() {
                BigKind::Int(i) => i.clone(),
                _ => b.to_rational().trunc().to_integer(),
            };
            match whole.to_i64() {
                Some(i) if (min..=max).contains(&i) => Ok(i),
                _ => Err(out_of_range(crate::format::pr_str(x))),
            }
        }
        other => Err(call.expected_with(
            "a number or a char",
            other,
            if matches!(other, Value::Str(_)) {
                "; to read a number from text use parse-long or parse-double"
            } else {
                ""
            },
        )),
    }
}

fn int(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(Value::Int(to_integer(
        call,
        "a 32-bit int",
        x,
        i32::MIN as i64,
        i32::MAX as i64,
    )?))
}

fn long(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(Value::Int(to_integer(
        call,
        "a 64-bit integer",
        x,
        i64::MIN,
        i64::MAX,
    )?))
}

fn double(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    match x {
        Value::Int(i) => Ok(Value::Float(*i as f64)),
        Value::Float(_) => Ok(x.clone()),
        Value::Big(b) => Ok(Value::Float(b.to_f64())),
        other => Err(call
            .expected_with(
                "a number",
                other,
                if matches!(other, Value::Str(_)) {
                    "; to read a number from text use parse-double"
                } else {
                    ""
                },
            )
            .into()),
    }
}

/// The text a number is parsed from: a string (anything else is an argument error, as
/// Clojure's `IllegalArgumentException`).
struct ParseInput<'a>(&'a str);

impl<'a> Arg<'a> for ParseInput<'a> {
    fn from_arg(call: Call, value: &'a Value) -> Result<Self> {
        match value {
            Value::Str(s) => Ok(ParseInput(s)),
            other => Err(call.expected_argument("a string", other)),
        }
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

fn parse_long(_: &mut Ctx, _: Call, ParseInput(s): ParseInput) -> EvalResult {
    Ok(java_parse_integer(s, 10)
        .map(Value::Int)
        .unwrap_or_default())
}

fn parse_double(_: &mut Ctx, _: Call, ParseInput(s): ParseInput) -> EvalResult {
    Ok(java_parse_double(s).map(Value::Float).unwrap_or_default())
}

fn parse_boolean(_: &mut Ctx, _: Call, ParseInput(s): ParseInput) -> EvalResult {
    Ok(match s {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::Nil,
    })
}

fn number_format_error(call: Call, s: &str, hint: &str) -> Error {
    call.error(
        ErrorKind::Argument,
        format_args!(
            "{} is not a number (NumberFormatException){hint}",
            crate::format::pr_str(&Value::string(s))
        ),
    )
}

fn parse_int_in(
    call: Call,
    (ParseInput(s), radix): (ParseInput, Option<i64>),
    min: i64,
    max: i64,
) -> EvalResult {
    let radix = match radix {
        None => 10,
        Some(r @ 2..=36) => r as u32,
        Some(r) => {
            return Err(call
                .error(
                    ErrorKind::Argument,
                    format_args!("radix {r} is outside 2..36"),
                )
                .into());
        }
    };
    match java_parse_integer(s, radix) {
        Some(i) if (min..=max).contains(&i) => Ok(Value::Int(i)),
        _ => Err(
            number_format_error(call, s, "; use parse-long to get nil instead of an error").into(),
        ),
    }
}

fn parse_int(_: &mut Ctx, call: Call, args: (ParseInput, Option<i64>)) -> EvalResult {
    parse_int_in(call, args, i32::MIN as i64, i32::MAX as i64)
}

fn parse_long_strict(_: &mut Ctx, call: Call, args: (ParseInput, Option<i64>)) -> EvalResult {
    parse_int_in(call, args, i64::MIN, i64::MAX)
}

fn parse_double_strict(_: &mut Ctx, call: Call, ParseInput(s): ParseInput) -> EvalResult {
    match java_parse_double(s) {
        Some(f) => Ok(Value::Float(f)),
        None => {
            Err(
                number_format_error(call, s, "; use parse-double to get nil instead of an error")
                    .into(),
            )
        }
    }
}

fn math_floor(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Float(x.as_f64().floor()))
}

fn math_ceil(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Float(x.as_f64().ceil()))
}

fn math_rint(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Float(x.as_f64().round_ties_even()))
}

fn math_sqrt(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Float(x.as_f64().sqrt()))
}

fn math_cbrt(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Float(x.as_f64().cbrt()))
}

fn math_log(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Float(x.as_f64().ln()))
}

fn math_log10(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Float(x.as_f64().log10()))
}

fn math_exp(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Float(x.as_f64().exp()))
}

fn math_signum(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    let x = x.as_f64();
    Ok(Value::Float(if x == 0.0 || x.is_nan() {
        x
    } else {
        x.signum()
    }))
}

fn math_pow(_: &mut Ctx, _: Call, (base, exponent): (Num, Num)) -> EvalResult {
    Ok(Value::Float(base.as_f64().powf(exponent.as_f64())))
}

fn math_round(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    let x = match x {
        Num::Int(i) => return Ok(Value::Int(i)),
        other => other.as_f64(),
    };
    if x.is_nan() {
        return Ok(Value::Int(0));
    }
    // Java rounds halves toward positive infinity; `x - floor(x)` is exact, so this is right
    // even for 0.49999999999999994. `as` saturates as Java does.
    let floor = x.floor();
    let rounded = if x - floor >= 0.5 { floor + 1.0 } else { floor };
    Ok(Value::Int(rounded as i64))
}

fn math_extreme((a, b): (Num, Num), keep: Ordering) -> EvalResult {
    Ok(match (a, b) {
        (Num::Int(x), Num::Int(y)) => Value::Int(if x.cmp(&y) == keep { x } else { y }),
        _ => {
            let (x, y) = (a.as_f64(), b.as_f64());
            Value::Float(if x.is_nan() || y.is_nan() {
                f64::NAN
            } else if keep == Ordering::Greater {
                x.max(y)
            } else {
                x.min(y)
            })
        }
    })
}

fn math_max(_: &mut Ctx, _: Call, operands: (Num, Num)) -> EvalResult {
    math_extreme(operands, Ordering::Greater)
}

fn math_min(_: &mut Ctx, _: Call, operands: (Num, Num)) -> EvalResult {
    math_extreme(operands, Ordering::Less)
}

fn nonzero_divisor(call: Call, d: i64) -> Result<i64> {
    if d == 0 {
        return Err(call.error(ErrorKind::Arithmetic, "divide by zero"));
    }
    Ok(d)
}

fn math_floor_div(_: &mut Ctx, call: Call, (n, d): (i64, i64)) -> EvalResult {
    let d = nonzero_divisor(call, d)?;
    let q = n
        .checked_div(d)
        .ok_or_else(|| Error::arithmetic(format!("integer overflow in {call}")))?;
    Ok(Value::Int(if (n % d != 0) && ((n < 0) != (d < 0)) {
        q - 1
    } else {
        q
    }))
}

fn math_floor_mod(_: &mut Ctx, call: Call, (n, d): (i64, i64)) -> EvalResult {
    let d = nonzero_divisor(call, d)?;
    let r = n.checked_rem(d).unwrap_or(0);
    Ok(Value::Int(if r != 0 && ((r < 0) != (d < 0)) {
        r + d
    } else {
        r
    }))
}
