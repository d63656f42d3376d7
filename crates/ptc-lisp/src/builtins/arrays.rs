//! Java arrays and primitive vectors, as plain vectors.
//!
//! Programs written for Clojure build arrays to pass them on or read them back (`(vec
//! (int-array 3))`, `(aget arr i)`, `(areduce ...)`); every reading operation works the same on
//! a vector, so an "array" here is a vector whose items were converted to the element type.
//! Writing into one in place (`aset`) is refused: there is no mutable state. `vector-of`
//! converts its items the same way and gives an ordinary vector, so a later `conj` is not
//! checked against the type.

use super::args::{Call, Seqable, Truncated};
use super::{Builtin, builtin};
use crate::error::{Error, Result};
use crate::eval::{Ctx, EvalResult};
use crate::value::Value;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("to-array", to_array, "(to-array coll)", "The items of coll as an array (a vector: PTC-Lisp has no Java arrays).", "(to-array '(1 2))" => "[1 2]"),
    builtin!("to-array-2d", to_array_2d, "(to-array-2d colls)", "An array of arrays (vectors) of the items of each collection.", "(to-array-2d ['(1 2) [3]])" => "[[1 2] [3]]"),
    builtin!("into-array", into_array, "(into-array coll) (into-array type coll)", "The items of coll as an array (a vector), converted to type (e.g. Integer/TYPE) if given.", "(into-array Double/TYPE [1 2])" => "[1.0 2.0]"),
    builtin!("object-array", object_array, "(object-array size-or-coll)", "An array (vector) of size nils, or of coll's items.", "(object-array 2)" => "[nil nil]"),
    builtin!("int-array", int_array, "(int-array size-or-coll) (int-array size init-or-coll)", "An array (vector) of 32-bit integers: size zeros, coll's items, or size items from init or coll.", "(int-array 3 [7])" => "[7 0 0]"),
    builtin!("long-array", long_array, "(long-array size-or-coll) (long-array size init-or-coll)", "An array (vector) of integers, as int-array.", "(long-array [1 2])" => "[1 2]"),
    builtin!("short-array", short_array, "(short-array size-or-coll) (short-array size init-or-coll)", "An array (vector) of 16-bit integers, as int-array.", "(short-array 2 5)" => "[5 5]"),
    builtin!("byte-array", byte_array, "(byte-array size-or-coll) (byte-array size init-or-coll)", "An array (vector) of 8-bit integers, as int-array.", "(byte-array [1 -2])" => "[1 -2]"),
    builtin!("double-array", double_array, "(double-array size-or-coll) (double-array size init-or-coll)", "An array (vector) of floats, as int-array.", "(double-array [1 2])" => "[1.0 2.0]"),
    builtin!("float-array", float_array, "(float-array size-or-coll) (float-array size init-or-coll)", "An array (vector) of floats, as double-array.", "(float-array 2)" => "[0.0 0.0]"),
    builtin!("boolean-array", boolean_array, "(boolean-array size-or-coll) (boolean-array size init-or-coll)", "An array (vector) of booleans, false by default.", "(boolean-array 2)" => "[false false]"),
    builtin!("char-array", char_array, "(char-array size-or-coll) (char-array size init-or-coll)", "An array (vector) of characters; a string gives its characters.", "(char-array \"hi\")" => "[\\h \\i]"),
    builtin!("make-array", make_array, "(make-array type dim & dims)", "An array (vector) of dim default items of type (Long/TYPE gives zeros, other types nils); more dims nest.", "(make-array Long/TYPE 2 2)" => "[[0 0] [0 0]]"),
    builtin!("aget", aget, "(aget array i & is)", "The item at index i of an array (a vector); more indexes reach into nested arrays.", "(aget (to-array [:a :b]) 1)" => ":b"),
    builtin!("alength", alength, "(alength array)", "The number of items of an array (a vector).", "(alength (int-array 5))" => "5"),
    builtin!("aclone", aclone, "(aclone array)", "A copy of an array: the same vector, as values never change.", "(aclone (int-array [1 2]))" => "[1 2]"),
    builtin!("vector-of", vector_of, "(vector-of type & items)", "A vector of items converted to type (:int :long :float :double :byte :short :char :boolean); a later conj is not checked.", "(vector-of :double 1 2)" => "[1.0 2.0]"),
];

/// The type of an array's items, with how a value converts to it.
#[derive(Clone, Copy, PartialEq)]
enum Element {
    Long,
    Int,
    Short,
    Byte,
    Double,
    Boolean,
    Char,
    Object,
}

impl Element {
    /// The type a class constant (`Long/TYPE` reads as the symbol `long`) or a `vector-of`
    /// keyword names; any other value is an array of objects.
    fn named(value: &Value) -> Option<Element> {
        let name = match value {
            Value::Symbol(s) => s.as_str(),
            Value::Keyword(k) => k.as_str(),
            _ => return None,
        };
        Some(match name {
            "long" => Element::Long,
            "int" => Element::Int,
            "short" => Element::Short,
            "byte" => Element::Byte,
            "double" | "float" => Element::Double,
            "boolean" => Element::Boolean,
            "char" => Element::Char,
            _ => return None,
        })
    }

    fn default_value(self) -> Value {
        match self {
            Element::Long | Element::Int | Element::Short | Element::Byte => Value::Int(0),
            Element::Double => Value::Float(0.0),
            Element::Boolean => Value::Bool(false),
            Element::Char => Value::Char('\0'),
            Element::Object => Value::Nil,
        }
    }

    /// `value` converted as Java stores it in an array of this type: numbers are cast to
    /// integers as Java casts them (a float truncated toward zero and held within `int`, an
    /// integer keeping its low bits), and booleans and characters are not converted.
    fn store(self, call: Call, value: &Value) -> Result<Value> {
        self.convert(call, value, false)
    }

    /// `value` converted for `vector-of`, which refuses an integer out of the type's range.
    fn checked(self, call: Call, value: &Value) -> Result<Value> {
        self.convert(call, value, true)
    }

    fn convert(self, call: Call, value: &Value, checked: bool) -> Result<Value> {
        let integer = |bits: u32| -> Result<Value> {
            let n = match value {
                Value::Int(i) => *i,
                // Java casts a double to a narrower integer through `int`, saturating.
                Value::Float(f) if bits < 64 => i64::from(*f as i32),
                Value::Float(f) => *f as i64,
                Value::Big(b) if checked => b.to_i64().ok_or_else(|| out_of_range(call, value))?,
                Value::Big(b) => low_bits(b),
                other => return Err(call.expected("a number", other)),
            };
            let shift = 64 - bits;
            let wrapped = (n << shift) >> shift;
            if checked && wrapped != n {
                return Err(out_of_range(call, value));
            }
            Ok(Value::Int(wrapped))
        };
        match self {
            Element::Long => integer(64),
            Element::Int => integer(32),
            Element::Short => integer(16),
            Element::Byte => integer(8),
            Element::Double => match value {
                Value::Int(i) => Ok(Value::Float(*i as f64)),
                Value::Float(f) => Ok(Value::Float(*f)),
                Value::Big(b) => Ok(Value::Float(b.to_f64())),
                other => Err(call.expected("a number", other)),
            },
            Element::Boolean => match value {
                Value::Bool(_) => Ok(value.clone()),
                other => Err(call.expected("a boolean", other)),
            },
            Element::Char => match value {
                Value::Char(_) => Ok(value.clone()),
                other => Err(call.expected("a character", other)),
            },
            Element::Object => Ok(value.clone()),
        }
    }
}

/// Java's `longValue` of a big number: its integer part (toward zero), keeping the low 64
/// bits.
fn low_bits(b: &crate::value::BigNumber) -> i64 {
    let integer = b.to_rational().to_integer();
    let (sign, digits) = integer.to_u64_digits();
    let low = digits.first().copied().unwrap_or(0) as i64;
    if sign == num_bigint::Sign::Minus {
        low.wrapping_neg()
    } else {
        low
    }
}

fn out_of_range(call: Call, value: &Value) -> Error {
    call.expected_argument("a number within the range of the array's type", value)
}

/// The value `Integer/TYPE`, `Long/TYPE`, ... stands for: the primitive type's name, which the
/// array functions accept as a type.
pub(crate) fn constant(name: &str) -> Option<Value> {
    let class = name.strip_prefix("java.lang.").unwrap_or(name);
    let primitive = match class {
        "Long/TYPE" => "long",
        "Integer/TYPE" => "int",
        "Short/TYPE" => "short",
        "Byte/TYPE" => "byte",
        "Double/TYPE" => "double",
        "Float/TYPE" => "float",
        "Boolean/TYPE" => "boolean",
        "Character/TYPE" => "char",
        _ => return None,
    };
    Some(Value::symbol(primitive))
}

/// A size given to an array constructor: a non-negative integer (a float is truncated).
fn size(ctx: &mut Ctx, call: Call, value: &Value) -> EvalResult<usize> {
    let Truncated(n) = call.arg(value)?;
    let n =
        usize::try_from(n).map_err(|_| call.expected_argument("a size of zero or more", value))?;
    ctx.charge_items(n)?;
    Ok(n)
}

fn is_size(value: &Value) -> bool {
    matches!(value, Value::Int(_) | Value::Float(_) | Value::Big(_))
}

/// `(xxx-array size-or-coll)` and `(xxx-array size init-or-coll)`.
fn typed_array(
    ctx: &mut Ctx,
    call: Call,
    element: Element,
    (first, second): (&Value, Option<&Value>),
) -> EvalResult {
    match second {
        None if is_size(first) => {
            let n = size(ctx, call, first)?;
            Ok(Value::vector(vec![element.default_value(); n]))
        }
        None => {
            let items = call.collect(ctx, first)?;
            converted(call, element, items.iter())
        }
        Some(init) => {
            let n = size(ctx, call, first)?;
            if call.arg::<Seqable>(init).is_ok() && !matches!(init, Value::Str(_)) {
                // At most `n` items of the collection, then defaults.
                let mut items = call.items(init)?;
                let mut out = Vec::with_capacity(n);
                while out.len() < n {
                    match items.next(ctx)? {
                        Some(item) => out.push(element.store(call, &item)?),
                        None => break,
                    }
                }
                out.resize(n, element.default_value());
                Ok(Value::vector(out))
            } else {
                let init = element.store(call, init)?;
                Ok(Value::vector(vec![init; n]))
            }
        }
    }
}

fn converted<'v>(
    call: Call,
    element: Element,
    items: impl Iterator<Item = &'v Value>,
) -> EvalResult {
    let items = items
        .map(|item| element.store(call, item))
        .collect::<Result<Vec<_>>>()?;
    Ok(Value::vector(items))
}

fn to_array(ctx: &mut Ctx, call: Call, coll: Seqable) -> EvalResult {
    Ok(Value::vector(call.collect(ctx, &coll)?))
}

fn to_array_2d(ctx: &mut Ctx, call: Call, colls: Seqable) -> EvalResult {
    let rows = call.collect(ctx, &colls)?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        out.push(Value::vector(call.collect(ctx, row)?));
    }
    Ok(Value::vector(out))
}

fn into_array(ctx: &mut Ctx, call: Call, (a, b): (&Value, Option<&Value>)) -> EvalResult {
    match b {
        None => Ok(Value::vector(call.collect(ctx, a)?)),
        Some(coll) => {
            let element = Element::named(a).unwrap_or(Element::Object);
            let items = call.collect(ctx, coll)?;
            converted(call, element, items.iter())
        }
    }
}

fn object_array(ctx: &mut Ctx, call: Call, size_or_coll: &Value) -> EvalResult {
    typed_array(ctx, call, Element::Object, (size_or_coll, None))
}

fn int_array(ctx: &mut Ctx, call: Call, args: (&Value, Option<&Value>)) -> EvalResult {
    typed_array(ctx, call, Element::Int, args)
}

fn long_array(ctx: &mut Ctx, call: Call, args: (&Value, Option<&Value>)) -> EvalResult {
    typed_array(ctx, call, Element::Long, args)
}

fn short_array(ctx: &mut Ctx, call: Call, args: (&Value, Option<&Value>)) -> EvalResult {
    typed_array(ctx, call, Element::Short, args)
}

fn byte_array(ctx: &mut Ctx, call: Call, args: (&Value, Option<&Value>)) -> EvalResult {
    typed_array(ctx, call, Element::Byte, args)
}

fn double_array(ctx: &mut Ctx, call: Call, args: (&Value, Option<&Value>)) -> EvalResult {
    typed_array(ctx, call, Element::Double, args)
}

fn float_array(ctx: &mut Ctx, call: Call, args: (&Value, Option<&Value>)) -> EvalResult {
    typed_array(ctx, call, Element::Double, args)
}

fn boolean_array(ctx: &mut Ctx, call: Call, args: (&Value, Option<&Value>)) -> EvalResult {
    typed_array(ctx, call, Element::Boolean, args)
}

fn char_array(ctx: &mut Ctx, call: Call, args: (&Value, Option<&Value>)) -> EvalResult {
    typed_array(ctx, call, Element::Char, args)
}

fn make_array(
    ctx: &mut Ctx,
    call: Call,
    (class, dim, dims): (&Value, &Value, &[Value]),
) -> EvalResult {
    let element = Element::named(class).unwrap_or(Element::Object);
    let mut sizes = vec![size(ctx, call, dim)?];
    for d in dims {
        sizes.push(size(ctx, call, d)?);
    }
    // Innermost first: each level repeats the one inside it (sharing it costs nothing).
    let mut level = element.default_value();
    for n in sizes.into_iter().rev() {
        level = Value::vector(vec![level; n]);
    }
    Ok(level)
}

/// An array argument: a vector (what the constructors here give) or another sequential
/// collection.
fn array_items(call: Call, value: &Value) -> Result<&crate::value::Seq> {
    value
        .as_seq()
        .ok_or_else(|| call.expected("an array (a vector)", value))
}

fn aget(
    _: &mut Ctx,
    call: Call,
    (array, index, more): (&Value, Truncated, &[Value]),
) -> EvalResult {
    let mut current = element_at(call, array, index.0)?;
    for i in more {
        let Truncated(i) = call.arg(i)?;
        current = element_at(call, &current, i)?;
    }
    Ok(current)
}

fn element_at(call: Call, array: &Value, index: i64) -> Result<Value> {
    let items = array_items(call, array)?;
    usize::try_from(index)
        .ok()
        .and_then(|i| items.get(i))
        .cloned()
        .ok_or_else(|| {
            Error::index(format!(
                "{call}: index {index} out of bounds for length {}",
                items.len()
            ))
        })
}

fn alength(_: &mut Ctx, call: Call, array: &Value) -> EvalResult {
    Ok(Value::from(array_items(call, array)?.len()))
}

fn aclone(_: &mut Ctx, call: Call, array: &Value) -> EvalResult {
    array_items(call, array)?;
    Ok(array.clone())
}

fn vector_of(ctx: &mut Ctx, call: Call, (kind, items): (&Value, &[Value])) -> EvalResult {
    let element = match kind {
        Value::Keyword(_) => Element::named(kind).filter(|e| *e != Element::Object),
        _ => None,
    }
    .ok_or_else(|| {
        call.expected_argument(
            "a type keyword (:int :long :float :double :byte :short :char :boolean)",
            kind,
        )
    })?;
    ctx.charge_items(items.len())?;
    let items = items
        .iter()
        .map(|item| element.checked(call, item))
        .collect::<Result<Vec<_>>>()?;
    Ok(Value::vector(items))
}
