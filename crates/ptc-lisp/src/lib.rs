//! PTC-Lisp: a safe, sandboxed subset of Clojure for programmatic tool calling.

// Values hash and compare by content, never through the interior mutability some functions hold
// (memoization caches), so using them as map keys is sound.
#![allow(clippy::mutable_key_type)]

mod analyze;
pub mod builtins;
pub mod error;
pub mod eval;
pub mod format;
pub mod json;
pub mod limits;
pub mod namespace;
pub mod reader;
pub mod reference;
mod runtime;
pub mod span;
pub mod tools;
pub mod value;

pub use error::{Error, ErrorKind, Result};
pub use limits::Limits;
pub use namespace::{Definition, ValueShape};
pub use runtime::{Outcome, Program, RunOutcome, RunStats, Runtime, UserNamespace, eval_str};
pub use span::{Pos, Span};
pub use tools::{Tool, ToolCallRecord, ToolError, ToolOutcome, ToolSpec, Tools};
pub use value::{Value, from_value, to_value};
