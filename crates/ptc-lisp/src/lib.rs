//! PTC-Lisp: a safe, sandboxed subset of Clojure for programmatic tool calling.

// Values hash and compare by content, never through the interior mutability some functions hold
// (memoization caches), so using them as map keys is sound.
#![allow(clippy::mutable_key_type)]

// The modules, in layer order: each may use only the modules declared above it
// (`cargo xtask ci` checks every `crate::` path against this order).
mod analyze;
pub mod builtins;
mod engine;
pub mod error;
pub mod eval;
pub mod format;
mod ir;
pub mod json;
pub mod namespace;
pub mod reader;
pub mod reference;
mod runtime;
pub mod span;
mod stack;
pub mod value;

pub use engine::{Outcome, Program, RunOutcome, RunStats, Runtime, UserNamespace, eval_str};
pub use error::{Error, ErrorKind, Result};
pub use format::{pr_str, print_str, to_clojure};
pub use namespace::Definition;
pub use reader::read_value;
pub use runtime::limits::Limits;
pub use runtime::tools::{Tool, ToolCallRecord, ToolError, ToolOutcome, ToolSpec, Tools};
pub use span::{Pos, Span};
pub use value::{Function, Value, ValueShape};

/// The README's examples, compiled and run as doc tests so the README stays true.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
