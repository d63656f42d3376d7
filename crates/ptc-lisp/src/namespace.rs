//! The `user/` namespace as seen from outside a run: what a program defined, in definition order.

use crate::value::{Value, ValueShape};
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

#[cfg(test)]
mod tests {
    use super::*;

    // DEF-007
    #[test]
    fn docstrings_lose_every_semicolon() {
        assert_eq!(sanitize_docstring("a; b;; c"), "a b c");
    }
}
