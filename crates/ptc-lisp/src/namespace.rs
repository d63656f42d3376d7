//! The `user/` namespace as seen from outside a run: what a program defined, in definition order.

use crate::value::{Value, ValueShape};
use serde::{Deserialize, Serialize};

/// One `def`/`defn` of the user namespace, as recorded after a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    /// The defined name, without the `user/` namespace.
    pub name: String,
    /// The docstring, as written.
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
    /// Whether the definition is a function.
    pub fn is_function(&self) -> bool {
        matches!(self.value, Value::Fn(_))
    }

    /// The estimated bytes the value takes, as the limit on what a run keeps counts them
    /// ([`UserNamespace::estimated_sizes`](crate::UserNamespace::estimated_sizes)), or a number
    /// above `max` when it takes more; found by walking no more than about `max / 16` elements.
    ///
    /// ```
    /// use ptc_lisp::{Runtime, UserNamespace};
    /// let out = Runtime::new().run_str("(def b [1 2])", &UserNamespace::new());
    /// assert_eq!(out.namespace.definitions()[0].estimated_size(1 << 20), 48);
    /// ```
    pub fn estimated_size(&self, max: usize) -> usize {
        self.value.estimated_size_up_to(max)
    }
}
