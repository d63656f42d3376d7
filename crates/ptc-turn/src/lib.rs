#![deny(missing_docs)]

//! The record of an agent run: [`Message`]s exchanged with the model, the immutable `Turn`s the
//! loop appends (one per program run), and the `Step` that ends a run.

// The modules, in layer order: each may use only the modules declared above it (`cargo xtask
// layers`, part of `cargo xtask ci`, checks it). Each has a comment line of its own, so that
// formatting keeps the order.

// The stable kind of an error.
mod error_kind;
// Chat messages.
mod message;
// Values as a run shows them to the model.
mod preview;
// What a turn or a run cost.
mod usage;
// One turn, and the append-only list of turns.
mod turn;
// The record of a whole run.
mod step;
// A human-readable view of a run.
mod trace;
// Which runs keep their turns.
mod trace_mode;
// How a run ended and what it used, as report fields.
mod report;

pub use error_kind::ErrorKind;
pub use message::{Message, MessageToolCall, Role};

pub use preview::{preview, push_cut_note, push_preview};
pub use report::{ErrorReport, JSON_SCHEMA, OutcomeReport, StepReport, UsageReport};
pub use step::{DEFAULT_MAX_TURNS, FailureKind, Step, StepOutcome, Task};
pub use trace_mode::TraceMode;
pub use turn::{Turn, TurnError, TurnOrderError, TurnResult, Turns, is_cut_off};
pub use usage::{TokenUsage, Usage};

/// One tool call a program made, under the one name it has everywhere: name, arguments, result
/// or error, and duration.
pub use ptc_lisp::ToolCallRecord;
pub use ptc_lisp::ToolOutcome;
