//! Value to Rust: the deserializer behind [`from_value`](super::from_value()).

use super::{Converted, Failure, VALUE_TOKEN, position};
use crate::format::pr_str;
use crate::value::{DateKind, Map, Value};
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};

/// Deserializes from a borrowed [`Value`].
#[derive(Clone, Copy)]
pub(super) struct FromValue<'de>(pub(super) &'de Value);

impl<'de> FromValue<'de> {
    /// The error for a value no Rust type reads.
    fn unreadable(self) -> Failure {
        let (what, hint) = match self.0 {
            Value::Fn(_) => ("a function", ""),
            Value::Var(_) => ("a var", ""),
            Value::Tagged(_) => ("a tagged literal", ""),
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
            Value::Uuid(_) => de::Unexpected::Other("a uuid"),
            Value::Tagged(_) => de::Unexpected::Other("a tagged literal"),
            Value::Big(b) => match b.to_i64() {
                Some(i) => de::Unexpected::Signed(i),
                None => de::Unexpected::Float(b.to_f64()),
            },
        }
    }

    /// Walk a collection, on a stack with room for its nesting.
    fn nested<R>(self, f: impl FnOnce() -> R) -> R {
        crate::value::nested(self.0.depth(), f)
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
    crate::format::message_text(value, 5, 40, 200)
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
            // A big integer that fits reads as an integer; other big numbers as the nearest
            // float (a Rust type of their precision is not among serde's data model).
            Value::Big(b) => match (b.to_i64(), b.to_u64()) {
                (Some(i), _) => visitor.visit_i64(i),
                (None, Some(u)) => visitor.visit_u64(u),
                _ => visitor.visit_f64(b.to_f64()),
            },
            Value::Str(s) => visitor.visit_borrowed_str(s),
            Value::Char(c) => visitor.visit_char(*c),
            Value::Keyword(k) => visitor.visit_borrowed_str(k.as_str()),
            Value::Symbol(s) => visitor.visit_borrowed_str(s.as_str()),
            Value::Regex(r) => visitor.visit_borrowed_str(r.as_str()),
            Value::Date(d) => visitor.visit_string(match d.kind() {
                DateKind::Day(_) => d.iso_day(),
                DateKind::Instant(_) => d.inst_text().replace("-00:00", "Z"),
            }),
            // A UUID reads as its text, as it goes out to JSON.
            Value::Uuid(u) => visitor.visit_string(u.to_text()),
            Value::List(items) | Value::Vector(items) => {
                self.nested(|| visitor.visit_seq(Elements::new(items.iter())))
            }
            Value::Set(items) => self.nested(|| visitor.visit_seq(Elements::new(items.iter()))),
            Value::Map(m) => self.nested(|| visitor.visit_map(Fields::new(m))),
            Value::Fn(_) | Value::Var(_) | Value::Lazy(_) | Value::Tagged(_) => {
                Err(self.unreadable())
            }
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
