//! The run of a PTC agent as a sans-IO core: every decision of a run, and no I/O.
//!
//! A [`RunCore`] answers each [`Event`] (the world's answer: a reply, tool answers, a history
//! within its policy) with the next [`Action`] (render, ask the model this request, answer these
//! tool calls, this turn is recorded, the run is over). It awaits nothing and sends nothing:
//! a driver carries the actions out, on any runtime or none. A run that keeps an intent log is
//! given what the log held when it started ([`RecordedIntents`]), and the core plans each tool
//! call from it ([`PlannedCall`]): its [`IdempotencyKey`], and whether it is made (recorded
//! first) or answered from the log. Around it, the parts of a run
//! that are data and pure functions: taking the program out of a reply ([`extract_program`]),
//! judging a program's outcome ([`Rules`]), signatures, the limit on what a run keeps between
//! turns, rounding a returned value's floats, `*1 *2 *3 *e`, the model request and reply as
//! data ([`model`]), and the settings that shape a run ([`RunSettings`]).
//!
//! It depends on `ptc-lisp`, `ptc-turn` and `ptc-compression` only: no async runtime, no
//! HTTP client. Time comes in as an argument of [`RunCore::advance`]; a deadline and a turn
//! budget shared with other runs are data the core was given.
//!
//! A run driven by hand, with no runtime: the model's two replies and the tool's answer are
//! written out, and every action is answered with its event.
//!
//! ```
//! use std::time::{Duration, Instant};
//!
//! use ptc_compression::CompressionConfig;
//! use ptc_lisp::{ToolAnswer, ToolSpec, Value};
//! use ptc_run::model::LlmResponse;
//! use ptc_run::{Action, Event, ModelTurns, Rules, RunCore, RunSettings, Source, Start, runtime_for};
//! use ptc_turn::{Task, Usage};
//!
//! let task = Task {
//!     mission: "Add the fee of 2 to the price of an apple".into(),
//!     tools: vec![ToolSpec::new("price", "The price of an item")],
//!     max_turns: 3,
//!     ..Task::default()
//! };
//! let settings = RunSettings::default();
//! let compression = CompressionConfig::default();
//! let source = Source::Model(ModelTurns {
//!     settings: &settings,
//!     strategy: compression.build_for(None),
//!     render_limits: compression.limits(),
//!     history_policy: false,
//!     shared_turn_budget: None,
//! });
//! let rules = Rules::for_run(None, &settings, task.max_turns);
//! let runtime = runtime_for(&settings.limits, &task);
//! let mut core = RunCore::new(task, Start::new(), Instant::now(), runtime, rules, source);
//!
//! let mut replies = [
//!     "```clojure\n(def price (tool/price \"apple\"))\n```",
//!     "```clojure\n(return (+ price 2))\n```",
//! ]
//! .into_iter();
//! let mut asked = Vec::new();
//! let mut event = Event::Next;
//! loop {
//!     event = match core.advance(event, Instant::now()) {
//!         Action::Rendered { .. } | Action::Recorded => Event::Next,
//!         Action::Ask(request) => {
//!             asked.push(request.turn);
//!             let reply = replies.next().expect("a reply for each request");
//!             Event::Replied { result: Ok(LlmResponse::text(reply)), spent: Usage::default() }
//!         }
//!         Action::CallTools { calls, .. } => {
//!             assert_eq!(calls[0].request.name, "price");
//!             let answers = calls
//!                 .iter()
//!                 .map(|_| ToolAnswer::new(Ok(Value::Int(40)), Duration::ZERO))
//!                 .collect();
//!             Event::ToolsAnswered { answers, spent: Usage::default() }
//!         }
//!         // No shared turn budget and no history policy were given.
//!         Action::TakeTurn | Action::ApplyHistory(_) => unreachable!(),
//!         Action::Finished => break,
//!     };
//! }
//! let step = core.into_step(Duration::ZERO);
//! assert_eq!(asked, [Some(1), Some(2)]);
//! assert_eq!(step.value(), Some(&Value::Int(42)));
//! assert_eq!(step.turns.len(), 2);
//! ```

#![deny(missing_docs)]

// The modules, in layer order: each may use only the modules declared above it (`cargo xtask
// layers` checks it). Each has a comment line of its own, so that formatting keeps the order.

// Durations and token counts in words.
mod in_words;
// Typographic characters in programs, made readable.
mod normalize;
// Taking the program out of a reply.
mod extract;
// Signatures: the shapes of inputs and of the returned value.
pub mod signature;
// Rounding the floats of a returned value.
mod float_precision;
// The limit on what a run keeps between turns.
mod kept;
// `*1 *2 *3 *e`: the values of earlier turns.
mod recent_values;
// A model call as data: request, reply, error.
pub mod model;
// How the model hands over its program: a fenced block or a native tool call.
mod reply_form;
// The intent log as a run sees it: keys, recorded calls.
mod intent_log;
// What the run words itself for the model.
mod feedback;
// The settings that shape a run.
mod settings;
// What a program's outcome makes of its turn and of the run.
mod outcome;
// The sandbox a run's programs run in.
mod sandbox;
// Every decision of a run: events in, actions out.
mod core;

pub use crate::core::{
    Action, CallPlan, Event, ModelTurns, PlannedCall, RecordedIntents, Restored, RunCore, Source,
    Start, chained_failure, depth_exceeded, request_for, restore_namespace, resumed_goes_on,
    was_interrupted,
};
pub use extract::extract_program;
pub use feedback::{NO_PROGRAM, call_not_recorded};
pub use in_words::{HumanDuration, micros, tokens_text};
pub use intent_log::{IdempotencyKey, RecordedCall, answer_from_log};
pub use normalize::normalize_program;
pub use outcome::{Ending, Judged, Rules, run_outcome};
pub use recent_values::{error_value, last_error};
pub use reply_form::{RUN_PROGRAM, ReplyForm};
pub use sandbox::{awaited_tools, runtime_for};
pub use settings::{DEFAULT_MAX_KEPT_BYTES, RunSettings};
pub use signature::{Field, Mismatch, Param, Signature, SignatureError, Type};
