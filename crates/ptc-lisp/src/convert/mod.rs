//! Converting between values and Rust types through serde: [`to_value()`] and [`from_value()`].
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

mod from_value;
mod to_value;

use crate::error::{Error, ErrorKind, Result};
use crate::format::pr_str;
use crate::reader::VALUE_TOKEN;
use crate::value::Value;
use from_value::FromValue;
use serde::de;
use serde::ser::{self, Serialize};
use std::fmt;
use to_value::ToValue;

/// The value of `value`, a Rust value of any type that implements [`Serialize`].
///
/// ```
/// use ptc_lisp::{Value, pr_str, to_value};
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

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// A conversion failure and where in the value it happened, outermost step last.
#[derive(Debug)]
pub(super) struct Failure {
    message: String,
    path: Vec<Value>,
}

impl Failure {
    pub(super) fn new(message: impl fmt::Display) -> Failure {
        Failure {
            message: message.to_string(),
            path: Vec::new(),
        }
    }

    /// The same failure, one step deeper inside `step` (a map key or a position).
    pub(super) fn within(mut self, step: Value) -> Failure {
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

/// A position in a sequence, as a path step.
fn position(i: usize) -> Value {
    Value::Int(i64::try_from(i).unwrap_or(i64::MAX))
}
