//! Rust to value: the serializer behind [`to_value`](super::to_value()).

use super::{Converted, Failure, VALUE_TOKEN, position};
use crate::reader::read_value;
use crate::value::{Keyword, Map, Value};
use serde::ser::{self, Serialize, Serializer};
use std::fmt;

/// Serializes into a [`Value`].
pub(super) struct ToValue;

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
        Variant::new(variant, self.serialize_seq(Some(len)))
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
        Variant::new(variant, self.serialize_map(Some(len)))
    }
}

/// The items of a sequence being serialized.
pub(super) struct Items(Vec<Value>);

impl Items {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Converted<()> {
        let step = position(self.0.len());
        let item = crate::stack::with_stack_room(|| value.serialize(ToValue));
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
                    Ok(self.into_value())
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
pub(super) struct Entries {
    map: Map,
    /// A key given with `serialize_key`, waiting for its value.
    key: Option<Value>,
}

impl Entries {
    fn insert<T: Serialize + ?Sized>(&mut self, key: Value, value: &T) -> Converted<()> {
        let value = crate::stack::with_stack_room(|| value.serialize(ToValue))
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
        Ok(self.into_value())
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
        Ok(self.into_value())
    }
}

/// A sequence or map being serialized, made into its value when it ends.
pub(super) trait Content {
    fn into_value(self) -> Value;
}

impl Content for Items {
    fn into_value(self) -> Value {
        Value::vector(self.0)
    }
}

impl Content for Entries {
    fn into_value(self) -> Value {
        Value::Map(self.map)
    }
}

/// The content of an enum variant being serialized, which ends up under the variant's keyword.
pub(super) struct Variant<C> {
    name: &'static str,
    content: C,
}

impl<C: Content> Variant<C> {
    fn new(name: &'static str, content: Converted<C>) -> Converted<Variant<C>> {
        Ok(Variant {
            name,
            content: content?,
        })
    }

    fn finish(self) -> Converted<Value> {
        Ok(variant_map(self.name, self.content.into_value()))
    }
}

impl ser::SerializeTupleVariant for Variant<Items> {
    type Ok = Value;
    type Error = Failure;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Converted<()> {
        self.content.push(value)
    }

    fn end(self) -> Converted<Value> {
        self.finish()
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
        self.finish()
    }
}
