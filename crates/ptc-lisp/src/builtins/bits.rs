//! Bit operations on 64-bit integers and the `unchecked-` arithmetic that wraps around instead
//! of failing on overflow, as Java's `long` and `int` do.

use super::args::{Arg, Call};
use super::number::Num;
use super::{Builtin, builtin};
use crate::error::Result;
use crate::eval::numbers::{divide_by_zero, not_a_number};
use crate::eval::{Ctx, EvalResult};
use crate::value::Value;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("bit-and", bit_and, "(bit-and x y & more)", "Bitwise and of integers.", "(bit-and 12 10)" => "8"),
    builtin!("bit-or", bit_or, "(bit-or x y & more)", "Bitwise or of integers.", "(bit-or 12 10)" => "14"),
    builtin!("bit-xor", bit_xor, "(bit-xor x y & more)", "Bitwise exclusive or of integers.", "(bit-xor 12 10)" => "6"),
    builtin!("bit-and-not", bit_and_not, "(bit-and-not x y & more)", "x with the bits of y (and more) cleared.", "(bit-and-not 15 5)" => "10"),
    builtin!("bit-not", bit_not, "(bit-not x)", "Bitwise complement.", "(bit-not 5)" => "-6"),
    builtin!("bit-shift-left", shift_left, "(bit-shift-left x n)", "x shifted left by n bits (n taken modulo 64, as Java does).", "(bit-shift-left 1 10)" => "1024"),
    builtin!("bit-shift-right", shift_right, "(bit-shift-right x n)", "x shifted right by n bits, keeping the sign.", "(bit-shift-right -16 2)" => "-4"),
    builtin!("unsigned-bit-shift-right", unsigned_shift_right, "(unsigned-bit-shift-right x n)", "x shifted right by n bits, filling with zeros.", "(unsigned-bit-shift-right -1 60)" => "15"),
    builtin!("bit-test", bit_test, "(bit-test x n)", "True if bit n of x is set.", "(bit-test 5 2)" => "true"),
    builtin!("bit-set", bit_set, "(bit-set x n)", "x with bit n set.", "(bit-set 0 3)" => "8"),
    builtin!("bit-clear", bit_clear, "(bit-clear x n)", "x with bit n cleared.", "(bit-clear 15 0)" => "14"),
    builtin!("bit-flip", bit_flip, "(bit-flip x n)", "x with bit n flipped.", "(bit-flip 0 4)" => "16"),
    builtin!("unchecked-add", unchecked_add, "(unchecked-add x y)", "x + y, wrapping around on 64-bit overflow.", "(unchecked-add Long/MAX_VALUE 1)" => "-9223372036854775808"),
    builtin!("unchecked-subtract", unchecked_subtract, "(unchecked-subtract x y)", "x - y, wrapping around on 64-bit overflow.", "(unchecked-subtract Long/MIN_VALUE 1)" => "9223372036854775807"),
    builtin!("unchecked-multiply", unchecked_multiply, "(unchecked-multiply x y)", "x * y, wrapping around on 64-bit overflow.", "(unchecked-multiply Long/MAX_VALUE 2)" => "-2"),
    builtin!("unchecked-inc", unchecked_inc, "(unchecked-inc x)", "x + 1, wrapping around on 64-bit overflow.", "(unchecked-inc 1)" => "2"),
    builtin!("unchecked-dec", unchecked_dec, "(unchecked-dec x)", "x - 1, wrapping around on 64-bit overflow.", "(unchecked-dec 1)" => "0"),
    builtin!("unchecked-negate", unchecked_negate, "(unchecked-negate x)", "-x, wrapping around on 64-bit overflow.", "(unchecked-negate 5)" => "-5"),
    builtin!("unchecked-add-int", unchecked_add_int, "(unchecked-add-int x y)", "x + y in 32 bits, wrapping around.", "(unchecked-add-int Integer/MAX_VALUE 1)" => "-2147483648"),
    builtin!("unchecked-subtract-int", unchecked_subtract_int, "(unchecked-subtract-int x y)", "x - y in 32 bits, wrapping around.", "(unchecked-subtract-int 5 7)" => "-2"),
    builtin!("unchecked-multiply-int", unchecked_multiply_int, "(unchecked-multiply-int x y)", "x * y in 32 bits, wrapping around.", "(unchecked-multiply-int 65536 65536)" => "0"),
    builtin!("unchecked-inc-int", unchecked_inc_int, "(unchecked-inc-int x)", "x + 1 in 32 bits, wrapping around.", "(unchecked-inc-int 1)" => "2"),
    builtin!("unchecked-dec-int", unchecked_dec_int, "(unchecked-dec-int x)", "x - 1 in 32 bits, wrapping around.", "(unchecked-dec-int 1)" => "0"),
    builtin!("unchecked-negate-int", unchecked_negate_int, "(unchecked-negate-int x)", "-x in 32 bits, wrapping around.", "(unchecked-negate-int 7)" => "-7"),
    builtin!("unchecked-divide-int", unchecked_divide_int, "(unchecked-divide-int x y)", "x / y in 32 bits, rounded toward zero.", "(unchecked-divide-int -7 2)" => "-3"),
    builtin!("unchecked-remainder-int", unchecked_remainder_int, "(unchecked-remainder-int x y)", "Remainder of x / y in 32 bits.", "(unchecked-remainder-int -7 2)" => "-1"),
    builtin!("unchecked-int", unchecked_int, "(unchecked-int x)", "x as a 32-bit integer, keeping the low 32 bits.", "(unchecked-int 3000000000)" => "-1294967296"),
    builtin!("unchecked-long", unchecked_long, "(unchecked-long x)", "x as a 64-bit integer (floats truncated).", "(unchecked-long 3.99)" => "3"),
    builtin!("unchecked-short", unchecked_short, "(unchecked-short x)", "x as a 16-bit integer, keeping the low 16 bits.", "(unchecked-short 40000)" => "-25536"),
    builtin!("unchecked-byte", unchecked_byte, "(unchecked-byte x)", "x as an 8-bit integer, keeping the low 8 bits.", "(unchecked-byte 200)" => "-56"),
    builtin!("unchecked-char", unchecked_char, "(unchecked-char x)", "The character of the low 16 bits of x.", "(unchecked-char 65)" => "\\A"),
    builtin!("unchecked-double", unchecked_double, "(unchecked-double x)", "x as a float.", "(unchecked-double 3)" => "3.0"),
    builtin!("unchecked-float", unchecked_double, "(unchecked-float x)", "x as a float (64-bit, as every float).", "(unchecked-float 3)" => "3.0"),
];

/// A 64-bit integer operand of a bit operation: floats and big integers are refused, as in
/// Clojure.
#[derive(Clone, Copy)]
struct Bits(i64);

impl Arg<'_> for Bits {
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        match value {
            Value::Int(i) => Ok(Bits(*i)),
            other => Err(call.expected("a 64-bit integer (bit operations take no floats)", other)),
        }
    }
}

fn fold_bits(
    (Bits(x), Bits(y), more): (Bits, Bits, &[Value]),
    call: Call,
    op: fn(i64, i64) -> i64,
) -> EvalResult {
    let mut acc = op(x, y);
    for v in more {
        let Bits(z) = call.arg(v)?;
        acc = op(acc, z);
    }
    Ok(Value::Int(acc))
}

fn bit_and(_: &mut Ctx, call: Call, args: (Bits, Bits, &[Value])) -> EvalResult {
    fold_bits(args, call, |x, y| x & y)
}

fn bit_or(_: &mut Ctx, call: Call, args: (Bits, Bits, &[Value])) -> EvalResult {
    fold_bits(args, call, |x, y| x | y)
}

fn bit_xor(_: &mut Ctx, call: Call, args: (Bits, Bits, &[Value])) -> EvalResult {
    fold_bits(args, call, |x, y| x ^ y)
}

fn bit_and_not(_: &mut Ctx, call: Call, args: (Bits, Bits, &[Value])) -> EvalResult {
    fold_bits(args, call, |x, y| x & !y)
}

fn bit_not(_: &mut Ctx, _: Call, Bits(x): Bits) -> EvalResult {
    Ok(Value::Int(!x))
}

/// Java uses the low six bits of a shift distance.
fn distance(n: i64) -> u32 {
    (n & 63) as u32
}

fn shift_left(_: &mut Ctx, _: Call, (Bits(x), Bits(n)): (Bits, Bits)) -> EvalResult {
    Ok(Value::Int(x.wrapping_shl(distance(n))))
}

fn shift_right(_: &mut Ctx, _: Call, (Bits(x), Bits(n)): (Bits, Bits)) -> EvalResult {
    Ok(Value::Int(x.wrapping_shr(distance(n))))
}

fn unsigned_shift_right(_: &mut Ctx, _: Call, (Bits(x), Bits(n)): (Bits, Bits)) -> EvalResult {
    Ok(Value::Int(((x as u64) >> distance(n)) as i64))
}

fn bit_test(_: &mut Ctx, _: Call, (Bits(x), Bits(n)): (Bits, Bits)) -> EvalResult {
    Ok(Value::Bool((x >> distance(n)) & 1 == 1))
}

fn bit_set(_: &mut Ctx, _: Call, (Bits(x), Bits(n)): (Bits, Bits)) -> EvalResult {
    Ok(Value::Int(x | (1 << distance(n))))
}

fn bit_clear(_: &mut Ctx, _: Call, (Bits(x), Bits(n)): (Bits, Bits)) -> EvalResult {
    Ok(Value::Int(x & !(1 << distance(n))))
}

fn bit_flip(_: &mut Ctx, _: Call, (Bits(x), Bits(n)): (Bits, Bits)) -> EvalResult {
    Ok(Value::Int(x ^ (1 << distance(n))))
}

/// `(op x y)` wrapping on 64-bit integers; with a float, the float operation.
fn unchecked(
    call: Call,
    (x, y): (Num, Num),
    ints: fn(i64, i64) -> i64,
    floats: fn(f64, f64) -> f64,
) -> EvalResult {
    match (x, y) {
        (Num::Int(a), Num::Int(b)) => Ok(Value::Int(ints(a, b))),
        (Num::Big(_), _) | (_, Num::Big(_)) => Err(call
            .expected(
                "64-bit integers or floats",
                &Value::from(if matches!(x, Num::Big(_)) { x } else { y }),
            )
            .into()),
        _ => Ok(Value::Float(floats(x.as_f64(), y.as_f64()))),
    }
}

fn unchecked_add(_: &mut Ctx, call: Call, xy: (Num, Num)) -> EvalResult {
    unchecked(call, xy, i64::wrapping_add, |a, b| a + b)
}

fn unchecked_subtract(_: &mut Ctx, call: Call, xy: (Num, Num)) -> EvalResult {
    unchecked(call, xy, i64::wrapping_sub, |a, b| a - b)
}

fn unchecked_multiply(_: &mut Ctx, call: Call, xy: (Num, Num)) -> EvalResult {
    unchecked(call, xy, i64::wrapping_mul, |a, b| a * b)
}

fn unchecked_inc(_: &mut Ctx, call: Call, x: Num) -> EvalResult {
    unchecked(call, (x, Num::Int(1)), i64::wrapping_add, |a, b| a + b)
}

fn unchecked_dec(_: &mut Ctx, call: Call, x: Num) -> EvalResult {
    unchecked(call, (x, Num::Int(1)), i64::wrapping_sub, |a, b| a - b)
}

fn unchecked_negate(_: &mut Ctx, call: Call, x: Num) -> EvalResult {
    unchecked(call, (Num::Int(0), x), i64::wrapping_sub, |a, b| a - b)
}

/// A 32-bit integer operand of an `-int` operation: the low 32 bits of an integer.
#[derive(Clone, Copy)]
struct Int32(i32);

impl Arg<'_> for Int32 {
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        match value {
            Value::Int(i) => Ok(Int32(*i as i32)),
            Value::Char(c) => Ok(Int32(*c as i32)),
            other => Err(not_a_number(call, other)),
        }
    }
}

fn int32(x: i32) -> EvalResult {
    Ok(Value::Int(x.into()))
}

fn unchecked_add_int(_: &mut Ctx, _: Call, (Int32(x), Int32(y)): (Int32, Int32)) -> EvalResult {
    int32(x.wrapping_add(y))
}

fn unchecked_subtract_int(
    _: &mut Ctx,
    _: Call,
    (Int32(x), Int32(y)): (Int32, Int32),
) -> EvalResult {
    int32(x.wrapping_sub(y))
}

fn unchecked_multiply_int(
    _: &mut Ctx,
    _: Call,
    (Int32(x), Int32(y)): (Int32, Int32),
) -> EvalResult {
    int32(x.wrapping_mul(y))
}

fn unchecked_inc_int(_: &mut Ctx, _: Call, Int32(x): Int32) -> EvalResult {
    int32(x.wrapping_add(1))
}

fn unchecked_dec_int(_: &mut Ctx, _: Call, Int32(x): Int32) -> EvalResult {
    int32(x.wrapping_sub(1))
}

fn unchecked_negate_int(_: &mut Ctx, _: Call, Int32(x): Int32) -> EvalResult {
    int32(x.wrapping_neg())
}

fn unchecked_divide_int(_: &mut Ctx, _: Call, (Int32(x), Int32(y)): (Int32, Int32)) -> EvalResult {
    if y == 0 {
        return Err(divide_by_zero().into());
    }
    int32(x.wrapping_div(y))
}

fn unchecked_remainder_int(
    _: &mut Ctx,
    _: Call,
    (Int32(x), Int32(y)): (Int32, Int32),
) -> EvalResult {
    if y == 0 {
        return Err(divide_by_zero().into());
    }
    int32(x.wrapping_rem(y))
}

/// The 64-bit integer of a number as Java's narrowing casts take it: floats truncated toward
/// zero (saturating), big numbers by their low 64 bits, characters by their code.
fn low_bits(call: Call, x: &Value) -> Result<i64> {
    match x {
        Value::Int(i) => Ok(*i),
        Value::Float(f) => Ok(*f as i64),
        Value::Char(c) => Ok(*c as i64),
        Value::Big(b) => {
            let whole = b.to_rational().trunc().to_integer();
            let (sign, digits) = whole.to_u64_digits();
            let low = digits.first().copied().unwrap_or(0) as i64;
            Ok(if sign == num_bigint::Sign::Minus {
                low.wrapping_neg()
            } else {
                low
            })
        }
        other => Err(not_a_number(call, other)),
    }
}

fn unchecked_int(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(Value::Int(low_bits(call, x)? as i32 as i64))
}

fn unchecked_long(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(Value::Int(low_bits(call, x)?))
}

fn unchecked_short(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(Value::Int(low_bits(call, x)? as i16 as i64))
}

fn unchecked_byte(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    Ok(Value::Int(low_bits(call, x)? as i8 as i64))
}

fn unchecked_char(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    let unit = low_bits(call, x)? as u16;
    // A lone surrogate is no character: PTC-Lisp characters are Unicode scalar values.
    Ok(char::from_u32(unit.into()).map_or(Value::Char(char::REPLACEMENT_CHARACTER), Value::Char))
}

fn unchecked_double(_: &mut Ctx, _: Call, x: Num) -> EvalResult {
    Ok(Value::Float(x.as_f64()))
}
