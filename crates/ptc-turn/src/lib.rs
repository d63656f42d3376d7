#![deny(missing_docs)]

//! The record of an agent run: [`Message`]s exchanged with the model, the immutable `Turn`s the
//! loop appends (one per program run), and the `Step` that ends a run.

mod message;

pub use message::{Message, MessageToolCall, Role};

mod preview;
mod step;
mod trace;
mod turn;
mod usage;

pub use preview::{preview, push_cut_note, push_preview};
pub use step::{DEFAULT_MAX_TURNS, FailureKind, Step, StepOutcome, Task};
pub use turn::{Turn, TurnError, TurnOrderError, TurnResult, Turns, is_cut_off};
pub use usage::{TokenUsage, Usage};

/// One tool call a program made: name, arguments, result or error, and duration.
pub use ptc_lisp::ToolCallRecord as ToolCall;
pub use ptc_lisp::ToolOutcome;
