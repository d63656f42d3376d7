//! The shape of a value: enough to label it in a summary without keeping it.

use super::Value;
use serde::{Deserialize, Serialize};

/// The shape of a value: its kind and, for collections, its size. Enough to label it in a
/// summary (`list[5]`) without keeping the value itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "len")]
pub enum ValueShape {
    /// `nil`.
    Nil,
    /// A boolean.
    Boolean,
    /// An integer.
    Integer,
    /// A float.
    Float,
    /// A string.
    String,
    /// A character.
    Char,
    /// A keyword.
    Keyword,
    /// A symbol.
    Symbol,
    /// Lists and vectors.
    List(usize),
    /// A map with this many entries.
    Map(usize),
    /// A set with this many items.
    Set(usize),
    /// A function.
    Function,
    /// A regular expression.
    Regex,
    /// A var (`#'name`).
    Var,
    /// An unbounded lazy sequence.
    LazySeq,
    /// A date or an instant.
    Date,
    /// A ratio (`1/3`).
    Ratio,
    /// A big decimal (`1.50M`).
    Decimal,
    /// A UUID.
    Uuid,
    /// A tagged literal kept as data (`#tag form`).
    TaggedLiteral,
}

impl ValueShape {
    /// The shape of `value`.
    pub fn of(value: &Value) -> ValueShape {
        match value {
            Value::Nil => ValueShape::Nil,
            Value::Bool(_) => ValueShape::Boolean,
            Value::Int(_) => ValueShape::Integer,
            Value::Float(_) => ValueShape::Float,
            Value::Str(_) => ValueShape::String,
            Value::Char(_) => ValueShape::Char,
            Value::Keyword(_) => ValueShape::Keyword,
            Value::Symbol(_) => ValueShape::Symbol,
            Value::List(s) | Value::Vector(s) => ValueShape::List(s.len()),
            Value::Map(m) => ValueShape::Map(m.len()),
            Value::Set(s) => ValueShape::Set(s.len()),
            Value::Fn(_) => ValueShape::Function,
            Value::Regex(_) => ValueShape::Regex,
            Value::Var(_) => ValueShape::Var,
            Value::Lazy(_) => ValueShape::LazySeq,
            Value::Date(_) => ValueShape::Date,
            Value::Big(b) => match b.kind() {
                super::BigKind::Int(_) => ValueShape::Integer,
                super::BigKind::Ratio(_) => ValueShape::Ratio,
                super::BigKind::Decimal(_) => ValueShape::Decimal,
            },
            Value::Uuid(_) => ValueShape::Uuid,
            Value::Tagged(_) => ValueShape::TaggedLiteral,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_count_collections() {
        assert_eq!(
            ValueShape::of(&Value::vector([1.into(), 2.into()])),
            ValueShape::List(2)
        );
        assert_eq!(ValueShape::of(&Value::Nil), ValueShape::Nil);
    }
}
