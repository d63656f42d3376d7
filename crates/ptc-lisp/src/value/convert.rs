//! Converting between values and Rust types through serde: [`to_value`] and [`from_value`].
//!
//! The mapping follows the one JSON data gets ([`crate::json`]), so that a record a tool returns
//! and the struct it was made from convert alike:
//!
//! | Rust | value |
//! |---|---|
//! | `bool`, `char`, `String` / `&str` | boolean, char, string |
//! | integers | integer (64-bit; a larger one is an error, never rounded) |
//! | `f32`, `f64` | float (NaN and the infinities included) |
//! | `Option<T>` | nil, or the value of `T` |
//! | `()`, unit structs | nil |
//! | sequences, tuples, tuple structs, byte strings | vector |
//! | maps | map; string keys become keywords, as JSON object keys do |
//! | structs | map from keyword field names (`{:name "Ann" :age 41}`) |
//! | enums | a unit variant is a keyword (`:Active`), any other a one-entry map from its keyword (`{:Circle {:radius 2.0}}`) |
//! | [`Value`] | itself |
//!
//! Reading accepts what programs naturally produce: a keyword or symbol reads as a string (its
//! text without the colon) and a string as an enum variant; a float with no fractional part
//! reads as an integer, as the builtins accept it; nil reads as an empty sequence or map, as
//! `nil` is the empty collection in PTC-Lisp; lists and sets read as sequences; dates read as
//! their ISO text. Functions, vars and lazy sequences have no Rust counterpart: reading one is
//! an error. Every failure is a [`ErrorKind::Type`] error that says where in the value it
//! happened (`at [:items 2 :price]: invalid type: string "9.5", expected f64`); nothing
//! panics.

use super::{DateKind, Keyword, Map, Value, read_value};
use crate::error::{Error, ErrorKind, Result};
use crate::format::pr_str;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};
use serde::ser::{self, Serialize, Serializer};
use std::fmt;

/// The value of `value`, a Rust value of any type that implements [`Serialize`].
///
/// ```
/// use ptc_lisp::{Value, format::pr_str, to_value};
///
/// #[derive(serde::Serialize)]
/// struct Order {
///     id: u32,
///     items: Vec<&'static str>,
///     paid: Option<f64>,
/// }
///
/// let order = to_value(&Order { id: 7, items: vec!["tea"], paid: None }).unwrap();
/// assert_eq!(pr_str(&order), r#"{:id 7, :items ["tea"], :paid nil}"#);
/// ```
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value> {
    value.serialize(ToValue).map_err(Failure::into_error)
}

/// `value` as a Rust value of type `T`, which may borrow strings from it.
///
/// ```
/// use ptc_lisp::{eval_str, from_value};
///
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct Total {
///     category: String,
///     sum: f64,
/// }
///
/// let value = eval_str(r#"[{:category "tea" :sum 12.5} {:category :coffee :sum 3}]"#).unwrap();
/// let totals: Vec<Total> = from_value(&value).unwrap();
/// assert_eq!(totals[1], Total { category: "coffee".into(), sum: 3.0 });
///
/// let wrong = from_value::<Vec<Total>>(&eval_str(r#"[{:category "tea" :sum "12"}]"#).unwrap());
/// assert_eq!(
///     wrong.unwrap_err().message,
///     r#"at [0 :sum]: invalid type: string "12", expected f64"#
/// );
/// ```
pub fn from_value<'de, T: de::Deserialize<'de>>(value: &'de Value) -> Result<T> {
    T::deserialize(FromValue(value)).map_err(Failure::into_error)
}

/// The name under which [`Value`]'s own `Serialize` and `Deserialize` wrap its printed text, so
/// that a value inside a converted struct converts as itself.
pub(crate) const VALUE_TOKEN: &str = "$ptc_lisp::Value";

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// A conversion failure and where in the value it happened, outermost step last.
#[derive(Debug)]
struct Failure {
    message: String,
    path: Vec<Value>,
}

impl Failure {
    fn new(message: impl fmt::Display) -> Failure {
        Failure {
            message: message.to_string(),
            path: Vec::new(),
        }
    }

    /// The same failure, one step deeper inside `step` (a map key or a position).
    fn within(mut self, step: Value) -> Failure {
        self.path.push(step);
        self
    }

    fn into_error(self) -> Error {
        let message = if self.path.is_empty() {
            self.message
        } else {
            let steps: Vec<String> = self.path.iter().rev().map(pr_str).collect();
            format!("at [{}]: {}", steps.join(" "), self.message)
        };
        Error::new(ErrorKind::Type, message)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

impl ser::Error for Failure {
    fn custom<T: fmt::Display>(msg: T) -> Failure {
        Failure::new(msg)
    }
}

impl de::Error for Failure {
    fn custom<T: fmt::Display>(msg: T) -> Failure {
        Failure::new(msg)
    }
}

type Converted<T> = std::result::Result<T, Failure>;

fn position(i: usize) -> Value {
    Value::Int(i64::try_from(i).unwrap_or(i64::MAX))
}

// ---------------------------------------------------------------------------------------------
// Rust to value
// ---------------------------------------------------------------------------------------------

/// Serializes into a [`Value`].
struct ToValue;

fn integer(n: impl TryInto<i64> + fmt::Display + Copy) -> Converted<Value> {
    n.try_into().map(Value::Int).map_err(|_| {
        Failure::new(format_args!(
            "{n} does not fit a PTC-Lisp integer (64 bits, signed)"
        ))
    })
}

fn variant_map(variant: &str, content: Value) -> Value {
    Value::map([(Value::keyword(variant), content)])
}

/// Serializer methods for integer types, each converting exactly or failing.
macro_rules! integers {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(
            fn $method(self, v: $ty) -> Converted<Value> {
                integer(v)
            }
        )*
    };
}

impl Serializer for ToValue {
    type Ok = Value;
    type Error = Failure;
    type SerializeSeq = Items;
    type SerializeTuple = Items;
    type SerializeTupleStruct = Items;
    type SerializeTupleVariant = Variant<Items>;
    type SerializeMap = Entries;
    type SerializeStruct = Entries;
    type SerializeStructVariant = Variant<Entries>;

    fn serialize_bool(self, v: bool) -> Converted<Value> {
        Ok(Value::Bool(v))
    }

    integers! {
        serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128,
    }

    fn serialize_f32(self, v: f32) -> Converted<Value> {
        Ok(Value::Float(f64::from(v)))
    }

    fn serialize_f64(self, v: f64) -> Converted<Value> {
        Ok(Value::Float(v))
    }

    fn serialize_char(self, v: char) -> Converted<Value> {
        Ok(Value::Char(v))
    }

    fn serialize_str(self, v: &str) -> Converted<Value> {
        Ok(Value::string(v))
    }

    fn serialize_bytes(self, v: &[u8]) -> Converted<Value> {
        Ok(Value::vector(v.iter().map(|b| Value::Int(i64::from(*b)))))
    }

    fn serialize_none(self) -> Converted<Value> {
        Ok(Value::Nil)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Converted<Value> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Converted<Value> {
        Ok(Value::Nil)
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Converted<Value> {
        Ok(Value::Nil)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Converted<Value> {
        Ok(Value::keyword(variant))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Converted<Value> {
        let converted = value.serialize(self)?;
        match converted {
            // A value in the data serializes as its printed text, which reads back as itself.
            Value::Str(text) if name == VALUE_TOKEN => {
                read_value(&text).map_err(|e| Failure::new(e.message))
            }
            other => Ok(other),
        }
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Converted<Value> {
        Ok(variant_map(variant, value.serialize(self)?))
    }

    fn serialize_seq(self, len: Option<usize>) -> Converted<Items> {
        Ok(Items(Vec::with_capacity(len.unwrap_or(0))))
    }

    fn serialize_tuple(self, len: usize) -> Converted<Items> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Converted<Items> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Converted<Variant<Items>> {
        Ok(Variant {
            name: variant,
            content: self.serialize_seq(Some(len))?,
        })
    }

    fn serialize_map(self, _len: Option<usize>) -> Converted<Entries> {
        Ok(Entries {
            map: Map::new(),
            key: None,
        })
    }

    fn serialize_struct(self, _name: &'static str, len: usize) -> Converted<Entries> {
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Converted<Variant<Entries>> {
        Ok(Variant {
            name: variant,
            content: self.serialize_map(Some(len))?,
        })
    }
}

/// The items of a sequence being serialized.
struct Items(Vec<Value>);

impl Items {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Converted<()> {
        let step = position(self.0.len());
        let item = super::with_stack_room(|| value.serialize(ToValue));
        self.0.push(item.map_err(|e| e.within(step))?);
        Ok(())
    }
}

/// The three ways of serializing a sequence, which all make a vector.
macro_rules! sequence {
    ($($kind:ident :: $method:ident),*) => {
        $(
            impl ser::$kind for Items {
                type Ok = Value;
                type Error = Failure;

                fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Converted<()> {
                    self.push(value)
                }

                fn end(self) -> Converted<Value> {
                    Ok(Value::vector(self.0))
                }
            }
        )*
    };
}

sequence!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field
);

/// The entries of a map or struct being serialized.
struct Entries {
    map: Map,
    /// A key given with `serialize_key`, waiting for its value.
    key: Option<Value>,
}

impl Entries {
    fn insert<T: Serialize + ?Sized>(&mut self, key: Value, value: &T) -> Converted<()> {
        let value = super::with_stack_room(|| value.serialize(ToValue))
            .map_err(|e| e.within(key.clone()))?;
        self.map.assoc_mut(key, value);
        Ok(())
    }
}

/// A map key: strings become keywords, as the keys of JSON objects do.
fn map_key<T: Serialize + ?Sized>(key: &T) -> Converted<Value> {
    Ok(match key.serialize(ToValue)? {
        Value::Str(s) => Value::Keyword(Keyword::new(&s)),
        other => other,
    })
}

impl ser::SerializeMap for Entries {
    type Ok = Value;
    type Error = Failure;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Converted<()> {
        self.key = Some(map_key(key)?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Converted<()> {
        match self.key.take() {
            Some(key) => self.insert(key, value),
            None => Err(Failure::new("a map value was given before its key")),
        }
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Converted<()> {
        let key = map_key(key)?;
        self.insert(key, value)
    }

    fn end(self) -> Converted<Value> {
        Ok(Value::Map(self.map))
    }
}

impl ser::SerializeStruct for Entries {
    type Ok = Value;
    type Error = Failure;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Converted<()> {
        self.insert(Value::keyword(key), value)
    }

    fn end(self) -> Converted<Value> {
        Ok(Value::Map(self.map))
    }
}

/// The content of an enum variant being serialized, which ends up under the variant's keyword.
struct Variant<C> {
    name: &'static str,
    content: C,
}

impl ser::SerializeTupleVariant for Variant<Items> {
    type Ok = Value;
    type Error = Failure;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Converted<()> {
        self.content.push(value)
    }

    fn end(self) -> Converted<Value> {
        Ok(variant_map(self.name, Value::vector(self.content.0)))
    }
}

impl ser::SerializeStructVariant for Variant<Entries> {
    type Ok = Value;
    type Error = Failure;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Converted<()> {
        self.content.insert(Value::keyword(key), value)
    }

    fn end(self) -> Converted<Value> {
        Ok(variant_map(self.name, Value::Map(self.content.map)))
    }
}

// ---------------------------------------------------------------------------------------------
// Value to Rust
// ---------------------------------------------------------------------------------------------

/// Deserializes from a borrowed [`Value`].
#[derive(Clone, Copy)]
struct FromValue<'de>(&'de Value);

impl<'de> FromValue<'de> {
    /// The error for a value no Rust type reads.
    fn unreadable(self) -> Failure {
        let (what, hint) = match self.0 {
            Value::Fn(_) => ("a function", ""),
            Value::Var(_) => ("a var", ""),
            Value::Lazy(_) => (
                "a lazy sequence",
                "; realize it in the program first, e.g. with (vec (take 100 s))",
            ),
            _ => ("this value", ""),
        };
        Failure::new(format_args!(
            "{what} cannot be converted to a Rust value: {}{hint}",
            short(self.0)
        ))
    }

    fn unexpected(self) -> de::Unexpected<'de> {
        match self.0 {
            Value::Nil => de::Unexpected::Unit,
            Value::Bool(b) => de::Unexpected::Bool(*b),
            Value::Int(i) => de::Unexpected::Signed(*i),
            Value::Float(f) => de::Unexpected::Float(*f),
            Value::Str(s) => de::Unexpected::Str(s),
            Value::Char(c) => de::Unexpected::Char(*c),
            Value::Keyword(_) => de::Unexpected::Other("a keyword"),
            Value::Symbol(_) => de::Unexpected::Other("a symbol"),
            Value::List(_) | Value::Vector(_) | Value::Set(_) | Value::Lazy(_) => {
                de::Unexpected::Seq
            }
            Value::Map(_) => de::Unexpected::Map,
            Value::Fn(_) => de::Unexpected::Other("a function"),
            Value::Regex(_) => de::Unexpected::Other("a regex"),
            Value::Var(_) => de::Unexpected::Other("a var"),
            Value::Date(_) => de::Unexpected::Other("a date"),
        }
    }

    /// Walk a collection, on a stack with room for its nesting.
    fn nested<R>(self, f: impl FnOnce() -> R) -> R {
        super::nested(self.0.depth(), f)
    }

    /// A whole float read as an integer, as the builtins read it.
    fn whole_number<V: Visitor<'de>>(self, visitor: V) -> Converted<V::Value> {
        match self.0 {
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => visitor.visit_i64(*f as i64),
            _ => self.deserialize_any(visitor),
        }
    }
}

/// A value shown in a message, shortened.
fn short(value: &Value) -> String {
    crate::format::to_clojure_within(value, Some(5), Some(40), 200)
}

/// The text a keyword, symbol or string stands for.
fn text_of(value: &Value) -> Option<&str> {
    match value {
        Value::Str(s) => Some(s),
        Value::Keyword(k) => Some(k.as_str()),
        Value::Symbol(s) => Some(s.as_str()),
        _ => None,
    }
}

macro_rules! whole_numbers {
    ($($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Converted<V::Value> {
                self.whole_number(visitor)
            }
        )*
    };
}

impl<'de> Deserializer<'de> for FromValue<'de> {
    type Error = Failure;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Converted<V::Value> {
        match self.0 {
            Value::Nil => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Int(i) => visitor.visit_i64(*i),
            Value::Float(f) => visitor.visit_f64(*f),
            Value::Str(s) => visitor.visit_borrowed_str(s),
            Value::Char(c) => visitor.visit_char(*c),
            Value::Keyword(k) => visitor.visit_borrowed_str(k.as_str()),
            Value::Symbol(s) => visitor.visit_borrowed_str(s.as_str()),
            Value::Regex(r) => visitor.visit_borrowed_str(r.as_str()),
            Value::Date(d) => visitor.visit_string(match d.kind() {
                DateKind::Day(_) => d.iso_day(),
                DateKind::Instant(_) => d.inst_text().replace("-00:00", "Z"),
            }),
            Value::List(items) | Value::Vector(items) => {
                self.nested(|| visitor.visit_seq(Elements::new(items.iter())))
            }
            Value::Set(items) => self.nested(|| visitor.visit_seq(Elements::new(items.iter()))),
            Value::Map(m) => self.nested(|| visitor.visit_map(Fields::new(m))),
            Value::Fn(_) | Value::Var(_) | Value::Lazy(_) => Err(self.unreadable()),
        }
    }

    whole_numbers! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Converted<V::Value> {
        match self.0 {
            Value::Nil => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Converted<V::Value> {
        match self.0 {
            Value::Nil => visitor.visit_unit(),
            _ => Err(de::Error::invalid_type(self.unexpected(), &visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Converted<V::Value> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Converted<V::Value> {
        if name == VALUE_TOKEN {
            // A value in the data: handed over as its printed text, which it reads back from.
            return visitor.visit_newtype_struct(pr_str(self.0).into_deserializer());
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Converted<V::Value> {
        match self.0 {
            Value::Nil => visitor.visit_seq(Elements::new(std::iter::empty())),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Converted<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Converted<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Converted<V::Value> {
        match self.0 {
            Value::Nil => visitor.visit_map(Fields::empty()),
            Value::Map(_) => self.deserialize_any(visitor),
            _ => Err(de::Error::invalid_type(self.unexpected(), &visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Converted<V::Value> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Converted<V::Value> {
        if let Some(variant) = text_of(self.0) {
            return visitor.visit_enum(Choice {
                variant,
                content: None,
            });
        }
        if let Value::Map(m) = self.0
            && m.len() == 1
            && let Some((key, content)) = m.iter().next()
            && let Some(variant) = text_of(key)
        {
            return visitor
                .visit_enum(Choice {
                    variant,
                    content: Some(content),
                })
                .map_err(|e| e.within(key.clone()));
        }
        Err(de::Error::invalid_type(
            self.unexpected(),
            &"a keyword naming a variant, or a map of one variant keyword to its content",
        ))
    }

    serde::forward_to_deserialize_any! {
        bool f32 f64 char str string bytes byte_buf identifier ignored_any
    }
}

/// The items of a sequence being read.
struct Elements<I> {
    items: I,
    next: usize,
}

impl<I> Elements<I> {
    fn new(items: I) -> Elements<I> {
        Elements { items, next: 0 }
    }
}

impl<'de, I: Iterator<Item = &'de Value>> SeqAccess<'de> for Elements<I> {
    type Error = Failure;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Converted<Option<T::Value>> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let step = position(self.next);
        self.next += 1;
        seed.deserialize(FromValue(item))
            .map(Some)
            .map_err(|e| e.within(step))
    }

    fn size_hint(&self) -> Option<usize> {
        None
    }
}

/// The entries of a map being read.
struct Fields<'de> {
    entries: Vec<(&'de Value, &'de Value)>,
    next: usize,
}

impl<'de> Fields<'de> {
    fn new(map: &'de Map) -> Fields<'de> {
        Fields {
            entries: map.iter().collect(),
            next: 0,
        }
    }

    fn empty() -> Fields<'de> {
        Fields {
            entries: Vec::new(),
            next: 0,
        }
    }

    fn current(&self) -> Option<(&'de Value, &'de Value)> {
        self.next
            .checked_sub(1)
            .and_then(|i| self.entries.get(i).copied())
    }
}

impl<'de> MapAccess<'de> for Fields<'de> {
    type Error = Failure;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Converted<Option<K::Value>> {
        let Some((key, _)) = self.entries.get(self.next).copied() else {
            return Ok(None);
        };
        self.next += 1;
        seed.deserialize(FromValue(key))
            .map(Some)
            .map_err(|e| e.within(key.clone()))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Converted<V::Value> {
        match self.current() {
            Some((key, value)) => seed
                .deserialize(FromValue(value))
                .map_err(|e| e.within(key.clone())),
            None => Err(Failure::new("a map value was asked for before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len() - self.next.min(self.entries.len()))
    }
}

/// The variant of an enum being read, and its content (none for a keyword).
struct Choice<'de> {
    variant: &'de str,
    content: Option<&'de Value>,
}

impl<'de> EnumAccess<'de> for Choice<'de> {
    type Error = Failure;
    type Variant = Self;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Converted<(T::Value, Self)> {
        let variant = seed.deserialize(de::value::BorrowedStrDeserializer::new(self.variant))?;
        Ok((variant, self))
    }
}

impl<'de> VariantAccess<'de> for Choice<'de> {
    type Error = Failure;

    fn unit_variant(self) -> Converted<()> {
        match self.content {
            None | Some(Value::Nil) => Ok(()),
            Some(other) => Err(Failure::new(format_args!(
                "the variant {} has no content, got {}",
                self.variant,
                short(other)
            ))),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Converted<T::Value> {
        match self.content {
            Some(content) => seed.deserialize(FromValue(content)),
            None => Err(self.missing_content()),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Converted<V::Value> {
        match self.content {
            Some(content) => FromValue(content).deserialize_seq(visitor),
            None => Err(self.missing_content()),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Converted<V::Value> {
        match self.content {
            Some(content) => FromValue(content).deserialize_map(visitor),
            None => Err(self.missing_content()),
        }
    }
}

impl Choice<'_> {
    fn missing_content(&self) -> Failure {
        Failure::new(format_args!(
            "the variant {} needs content: write it as {{:{} ...}}",
            self.variant, self.variant
        ))
    }
}
