//! A run as one self-contained HTML page: each turn's program, tool calls, output, value or
//! error and definitions, beside the request that produced it (what the model saw, its tokens
//! and its modelled bill under each pricing profile), with the outcome and the signature check
//! above. The page fetches nothing: its style and script are inline, and its content reads with
//! the script off.
//!
//! ```
//! use ptc_lisp::Value;
//! use ptc_turn::{Step, StepOutcome, Task, Turn, Turns};
//! use ptc_view::{PageOptions, run_page};
//!
//! let mut turns = Turns::new();
//! turns.push(Turn::success(1, "(return 42)", Value::Int(42))).unwrap();
//! let step = Step {
//!     outcome: StepOutcome::Returned { value: Value::Int(42) },
//!     task: Task::new("Answer."),
//!     turns,
//!     usage: Default::default(),
//! };
//! let page = run_page(&step, &PageOptions::default());
//! assert!(page.starts_with("<!DOCTYPE html>"));
//! assert!(page.contains("<section class=\"turn\" id=\"turn-1\""));
//! ```

// Layers, lowest first: a module uses only the modules above it (`cargo xtask layers`). Each
// has a comment line of its own, so that formatting keeps the order.

// HTML escaping and bounded text.
pub mod escape;
// PTC-Lisp marked up for the style sheet.
pub mod highlight;
// The inline style sheet and script.
pub mod assets;
// Every number a page shows, computed from the step.
pub mod figures;
// A turn's program and what it did.
pub mod turn;
// A request: tokens, bill, messages.
pub mod request;
// The documents.
pub mod page;

pub use figures::{RequestFigures, RunFigures, SignatureCheck};
pub use page::{PageOptions, notebook_frame, program_page, run_page};
