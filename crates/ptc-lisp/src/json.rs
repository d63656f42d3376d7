//! JSON in and out.
//!
//! JSON objects become maps with keyword keys, arrays become vectors, integers that fit in 64
//! bits stay integers, other numbers become floats. Records that share the same keys in the same
//! order share one key array, so a large data set costs little more than its values.

use crate::error::{Error, ErrorKind, Result};
use crate::format::pr_str;
use crate::value::{Keyword, Map, Seq, Value};
use rustc_hash::FxHashMap;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::sync::Arc;

/// Convert parsed JSON into a value.
pub fn from_json(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::string(s),
        serde_json::Value::Array(items) => Value::vector(items.iter().map(from_json)),
        serde_json::Value::Object(fields) => Value::map(
            fields
                .iter()
                .map(|(k, v)| (Value::Keyword(Keyword::new(k)), from_json(v))),
        ),
    }
}

/// Parse JSON text straight into a value, without an intermediate document.
pub fn from_json_str(text: &str) -> Result<Value> {
    let mut shapes = Shapes::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let value = JsonSeed {
        shapes: &mut shapes,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|_| v))
    .map_err(|e| Error::new(ErrorKind::Argument, format!("invalid JSON: {e}")))?;
    Ok(value)
}

/// Convert a value to JSON: keywords become their names, sets and lists become arrays, map keys
/// become strings, non-finite floats become null, functions their printed form.
pub fn to_json(value: &Value) -> serde_json::Value {
    crate::value::nested(value.depth(), || to_json_here(value))
}

fn to_json_here(value: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        Value::Nil => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        // An integer that fits 64 bits stays exact; other big numbers, ratios and decimals
        // become the nearest JSON float.
        Value::Big(b) => match (b.to_i64(), b.to_u64()) {
            (Some(i), _) => J::from(i),
            (None, Some(u)) => J::from(u),
            _ => serde_json::Number::from_f64(b.to_f64()).map_or(J::Null, J::Number),
        },
        Value::Str(s) => J::String(s.to_string()),
        Value::Char(c) => J::String(c.to_string()),
        Value::Keyword(k) => J::String(k.as_str().to_string()),
        Value::Symbol(s) => J::String(s.as_str().to_string()),
        Value::List(items) | Value::Vector(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Set(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Map(m) => J::Object(
            m.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Value::Str(s) => s.to_string(),
                        Value::Keyword(k) => k.as_str().to_string(),
                        other => pr_str(other),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Value::Date(d) => match d.kind() {
            crate::value::DateKind::Day(_) => J::String(d.iso_day()),
            crate::value::DateKind::Instant(_) => {
                // RFC 3339 in UTC, the form JSON APIs expect.
                J::String(d.inst_text().replace("-00:00", "Z"))
            }
        },
        // A UUID goes out as its text, as JSON APIs write one.
        Value::Uuid(u) => J::String(u.to_text()),
        other => J::String(pr_str(other)),
    }
}

/// Key arrays seen so far, by their keys, and short strings seen so far: data sets repeat field
/// values such as categories and statuses, and sharing them saves an allocation per record.
#[derive(Default)]
struct Shapes {
    by_keys: FxHashMap<Vec<Value>, Arc<[Value]>>,
    strings: FxHashMap<Box<str>, arcstr::ArcStr>,
}

/// Strings up to this length are shared while loading.
const SHARED_STRING_MAX: usize = 24;
/// At most this many distinct strings are remembered (unique names would only fill the table).
const SHARED_STRINGS_CAP: usize = 4096;

impl Shapes {
    fn string(&mut self, s: &str) -> Value {
        if s.len() > SHARED_STRING_MAX {
            return Value::string(s);
        }
        if let Some(shared) = self.strings.get(s) {
            return Value::Str(shared.clone());
        }
        let value = arcstr::ArcStr::from(s);
        if self.strings.len() < SHARED_STRINGS_CAP {
            self.strings.insert(Box::from(s), value.clone());
        }
        Value::Str(value)
    }
}

struct JsonSeed<'s> {
    shapes: &'s mut Shapes,
}

impl<'de> DeserializeSeed<'de> for JsonSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for JsonSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Nil)
    }
    fn visit_bool<E>(self, b: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, i: i64) -> std::result::Result<Value, E> {
        Ok(Value::Int(i))
    }
    fn visit_u64<E>(self, u: u64) -> std::result::Result<Value, E> {
        Ok(i64::try_from(u).map_or(Value::Float(u as f64), Value::Int))
    }
    fn visit_f64<E>(self, f: f64) -> std::result::Result<Value, E> {
        Ok(Value::Float(f))
    }
    fn visit_str<E>(self, s: &str) -> std::result::Result<Value, E> {
        Ok(self.shapes.string(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(JsonSeed {
            shapes: &mut *self.shapes,
        })? {
            items.push(item);
        }
        Ok(Value::Vector(Seq::from(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> std::result::Result<Value, A::Error> {
        let mut keys = Vec::new();
        let mut vals = Vec::new();
        while let Some(key) = access.next_key::<std::borrow::Cow<'de, str>>()? {
            let value = access.next_value_seed(JsonSeed {
                shapes: &mut *self.shapes,
            })?;
            let key = Value::Keyword(Keyword::new(&key));
            // A repeated key keeps its last value, as in every JSON library.
            match keys.iter().position(|k| *k == key) {
                Some(i) => vals[i] = value,
                None => {
                    keys.push(key);
                    vals.push(value);
                }
            }
        }
        if keys.len() > crate::value::SMALL_MAP_MAX {
            return Ok(Value::Map(Map::from_pairs(keys.into_iter().zip(vals))));
        }
        let shape = match self.shapes.by_keys.get(&keys) {
            Some(shape) => shape.clone(),
            None => {
                let shape: Arc<[Value]> = Arc::from(keys.clone());
                self.shapes.by_keys.insert(keys, shape.clone());
                shape
            }
        };
        Ok(Value::Map(Map::from_shape(shape, vals)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn uuids_become_their_text_and_read_back_from_it() {
        let uuid =
            crate::value::Uuid::parse("F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6").expect("a UUID");
        let value = Value::map([(Value::keyword("id"), Value::Uuid(uuid.clone()))]);
        assert_eq!(
            to_json(&value),
            serde_json::json!({"id": "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"})
        );
        let printed = crate::format::pr_str(&value);
        assert_eq!(
            printed,
            "{:id #uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"}"
        );
        assert_eq!(crate::read_value(&printed).ok(), Some(value));
        let text: String = crate::from_value(&Value::Uuid(uuid)).expect("a UUID reads as text");
        assert_eq!(text, "f81d4fae-7dec-11d0-a765-00a0c91e6bf6");
    }

    #[test]
    fn tagged_literals_print_and_read_back() {
        let t = Value::Tagged(crate::value::TaggedLiteral::new(
            crate::value::Symbol::new("my/tag"),
            Value::vector([Value::Int(1)]),
        ));
        assert_eq!(crate::format::pr_str(&t), "#my/tag [1]");
        assert_eq!(crate::read_value("#my/tag [1]").ok(), Some(t));
    }

    #[test]
    fn big_numbers_become_json_numbers() {
        use crate::value::BigNumber;
        let huge = BigNumber::int(num_bigint::BigInt::from(u64::MAX) * 4);
        let values = Value::vector([
            BigNumber::int(7),
            BigNumber::int(u64::MAX),
            huge,
            BigNumber::ratio(1.into(), 4.into()).expect("a ratio"),
            BigNumber::decimal(150, 2),
        ]);
        assert_eq!(
            to_json(&values).to_string(),
            "[7,18446744073709551615,7.378697629483821e+19,0.25,1.5]"
        );
    }

    #[test]
    fn json_objects_become_keyword_maps() {
        let v = from_json_str(
            r#"{"name": "Ann", "tags": ["a", 1, 2.5, null, true], "big": 18446744073709551615}"#,
        )
        .unwrap();
        assert_eq!(
            pr_str(&v),
            r#"{:name "Ann", :tags ["a" 1 2.5 nil true], :big 1.8446744073709552E19}"#
        );
        let parsed: serde_json::Value = serde_json::from_str(r#"{"a": {"b": [1]}}"#).unwrap();
        assert_eq!(pr_str(&from_json(&parsed)), "{:a {:b [1]}}");
    }

    #[test]
    fn values_become_json() {
        let v = Value::map([
            (Value::keyword("k"), Value::set([Value::keyword("x")])),
            (Value::Int(1), Value::Float(f64::NAN)),
        ]);
        assert_eq!(to_json(&v).to_string(), r#"{"1":null,"k":["x"]}"#);
    }

    #[test]
    fn invalid_json_is_an_error() {
        let err = from_json_str("{\"a\": ").unwrap_err();
        assert_eq!(err.kind, ErrorKind::Argument);
        assert!(
            err.message.starts_with("invalid JSON: EOF"),
            "{}",
            err.message
        );
    }
}
