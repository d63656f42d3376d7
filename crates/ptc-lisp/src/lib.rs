//! PTC-Lisp: a safe, sandboxed subset of Clojure for programmatic tool calling.

// Values hash and compare by content, never through the interior mutability some functions hold
// (memoization caches), so using them as map keys is sound.
#![allow(clippy::mutable_key_type)]
#![deny(missing_docs)]

// The modules, in layer order: each may use only the modules declared above it (`cargo xtask
// layers`, part of `cargo xtask ci`, checks every `crate::` path against this order). Each has
// a comment line of its own, so that formatting keeps the order.

// Source positions.
mod span;
// Native stack growth for deep walks.
mod stack;
// Values: data only; functions are opaque handles.
mod value;
// Firewalled map entries (`_` keys) hidden from what the model sees.
mod firewall;
// Printing values.
mod format;
// The one error type.
mod error;
// Text to forms; forms and printed text to values; regex syntax.
mod reader;
// JSON to and from values.
mod json;
// Rust types to and from values, through serde.
mod convert;
// The user namespace as seen after a run.
mod namespace;
// What earlier runs left for the next: `*1 *2 *3 *e`.
mod recent_values;
// The context of one run: its state and limits, host tools, what a builtin is.
mod context;
// The resolved program and the functions it makes.
mod ir;
// Forms to the resolved program: the language catalogue, names, special and macro-like forms.
mod analyze;
// The interpreter loop, calls, collections, exceptions, comprehensions.
mod eval;
// The builtin functions.
mod builtins;
// Programs, runtimes and outcomes: the embedder's entry points.
mod engine;
// The generated language reference.
pub mod reference;

pub use context::interrupt::Interrupt;
pub use context::limits::Limits;
pub use context::tool_call::{panic_text, tool_panicked};
pub use context::tools::{
    SyncTool, ToolAnswer, ToolCallRecord, ToolError, ToolOutcome, ToolRequest, ToolSpec, Tools,
};
pub use convert::{from_value, to_value};
pub use engine::{
    Outcome, Program, Progress, RunOutcome, RunStats, Runtime, SuspendedRun, UserNamespace,
    data_entries, eval_str,
};
pub use error::{Error, ErrorKind, Result};
pub use firewall::{HIDDEN, hide_firewalled, is_firewalled_key, is_firewalled_name};
pub use format::{
    CollectionCut, Compact, CompactText, Rendering, pr_str, print_str, render_within,
};
pub use json::{from_json, from_json_str, to_json};
pub use namespace::Definition;
/// The big integer and ratio types inside a [`BigNumber`].
pub use num_bigint::BigInt;
/// The big integer and ratio types inside a [`BigNumber`].
pub use num_rational::BigRational;
pub use reader::{Form, FormKind, ReadLimits, read_value};
pub use recent_values::RecentValues;
pub use span::{Pos, Span};
pub use value::{
    BigKind, BigNumber, Date, DateKind, Decimal, Function, Keyword, LazySeq, Map, MapIter, Regex,
    Seq, SeqIter, Set, SetIter, Symbol, Uuid, Value, ValueShape,
};

/// The former name of [`RecentValues`].
#[deprecated(note = "renamed `RecentValues`")]
pub type History = RecentValues;
