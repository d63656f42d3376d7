//! Metadata: a map attached to a collection or function that takes no part in its value.
//!
//! Lists, vectors, maps, sets and functions carry an optional metadata map in their own shared
//! allocation, so a [`Value`] stays 16 bytes and a value without metadata costs nothing but an
//! empty slot in that allocation. Equality, hashing, ordering and printing never look at it.

use super::{Map, Value};

impl Value {
    /// The metadata attached to the value with `with-meta` (or `^{...}` on a literal), if any.
    pub fn meta(&self) -> Option<&Map> {
        match self {
            Value::List(s) | Value::Vector(s) => s.meta(),
            Value::Map(m) => m.meta(),
            Value::Set(s) => s.meta(),
            Value::Fn(f) => f.meta(),
            _ => None,
        }
    }

    /// Whether values of this kind carry metadata: lists, vectors, maps, sets and functions.
    pub(crate) fn can_carry_meta(&self) -> bool {
        matches!(
            self,
            Value::List(_) | Value::Vector(_) | Value::Map(_) | Value::Set(_) | Value::Fn(_)
        )
    }

    /// The same value carrying `meta` instead of its own metadata, or `None` when values of its
    /// kind carry none (numbers, strings, keywords, ...).
    pub(crate) fn with_meta(&self, meta: Option<Map>) -> Option<Value> {
        Some(match self {
            Value::List(s) => Value::List(s.with_meta(meta)),
            Value::Vector(s) => Value::Vector(s.with_meta(meta)),
            Value::Map(m) => Value::Map(m.with_meta(meta)),
            Value::Set(s) => Value::Set(s.with_meta(meta)),
            Value::Fn(f) => Value::Fn(f.with_meta(meta)),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn metadata_is_kept_by_changes_and_ignored_by_equality() {
        let meta = Map::new().assoc(Value::keyword("a"), Value::Int(1));
        let plain = Value::vector([Value::Int(1)]);
        let tagged = plain
            .with_meta(Some(meta.clone()))
            .expect("a vector carries metadata");
        assert!(plain.meta().is_none());
        assert_eq!(
            tagged.meta().map(|m| Value::Map(m.clone())),
            Some(Value::Map(meta.clone()))
        );
        assert_eq!(tagged, plain);
        let Value::Vector(mut grown) = tagged.clone() else {
            unreachable!("with_meta keeps the kind")
        };
        grown.push_back(Value::Int(2));
        assert_eq!(
            grown.meta().map(|m| Value::Map(m.clone())),
            Some(Value::Map(meta))
        );
        assert!(grown.slice(1, 2).meta().is_none());
        assert_eq!(Value::Int(1).with_meta(None), None);
    }
}
