//! The `user/` namespace as seen from outside a run: what a program defined, in definition order.

use crate::value::Value;
use serde::{Deserialize, Serialize};

/// One `def`/`defn` of the user namespace, as recorded after a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    pub name: String,
    /// The docstring, with every `;` removed so it cannot break a `; ...` summary line (DEF-007).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// The defined value. A function serializes as `#fn[name]` and reads back as an opaque
    /// function that can be shown but not called.
    pub value: Value,
    /// For a function: the text of each arity's parameter vector as written (`["[x y]"]`,
    /// `["[x]", "[x & more]"]`). Empty for other values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<String>,
    /// For a function that has been called: the shape of its most recent return value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_return: Option<ValueShape>,
}

impl Definition {
    pub fn is_function(&self) -> bool {
        matches!(self.value, Value::Fn(_))
    }
}

/// Remove every `;` from a docstring (DEF-007).
pub fn sanitize_docstring(doc: &str) -> String {
    doc.replace(';', "")
}

/// The shape of a value: its kind and, for collections, its size. Enough to label it in a
/// summary (`list[5]`) without keeping the value itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "len")]
pub enum ValueShape {
    Nil,
    Boolean,
    Integer,
    Float,
    String,
    Char,
    Keyword,
    Symbol,
    /// Lists and vectors.
    List(usize),
    Map(usize),
    Set(usize),
    Function,
    Regex,
    Var,
    /// An unbounded lazy sequence.
    LazySeq,
    /// A date or an instant.
    Date,
}

impl ValueShape {
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // DEF-007
    #[test]
    fn docstrings_lose_every_semicolon() {
        assert_eq!(sanitize_docstring("a; b;; c"), "a b c");
    }

    #[test]
    fn shapes_count_collections() {
        assert_eq!(
            ValueShape::of(&Value::vector([1.into(), 2.into()])),
            ValueShape::List(2)
        );
        assert_eq!(ValueShape::of(&Value::Nil), ValueShape::Nil);
    }
}
