//! What a run reports while it goes: each turn, for the agent's `on_turn`, and the library's
//! log events (each turn, the notices of a model request still waiting, retries), for Python's
//! `logging` (logger `ptc`). Both reach the run's driver as events, so that Python code runs
//! on the thread (or event loop) driving the run, in the order the run reported them.

use std::fmt::Write as _;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

use ptc_agent::RunObserver;
use ptc_turn::Turn;

use super::dispatch::Dispatch;
use super::step::PyTurn;

/// Hands each recorded turn to the driver, which calls `on_turn` with it.
pub(crate) struct TurnReporter {
    pub(crate) on_turn: Py<PyAny>,
    pub(crate) dispatch: Arc<Dispatch>,
}

impl RunObserver for TurnReporter {
    fn on_turn(&self, turn: &Turn) {
        let turn = turn.clone();
        self.dispatch.notify(|py| {
            PyTuple::new(
                py,
                [
                    PyString::new(py, "turn").into_any(),
                    self.on_turn.bind(py).clone(),
                    Py::new(py, PyTurn::new(turn))?.into_bound(py).into_any(),
                ],
            )
        });
    }
}

/// The `logging` level of a `tracing` level.
fn python_level(level: &Level) -> u32 {
    match *level {
        Level::ERROR => 40,
        Level::WARN => 30,
        Level::INFO => 20,
        _ => 10,
    }
}

/// A `tracing` subscriber for one run: the library's events at or above the `ptc` logger's
/// level become `("log", level, message)` events of the run's driver. Spans are not followed.
pub(crate) struct LogForwarder {
    /// The least `logging` level the `ptc` logger handles.
    pub(crate) level: u32,
    pub(crate) dispatch: Arc<Dispatch>,
}

/// The message of an event: its `message` field, as the text it formats.
#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        }
    }
}

impl Subscriber for LogForwarder {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        // Asked each time: each run's subscriber has the level its logger had.
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event()
            && metadata.target().starts_with("ptc")
            && python_level(metadata.level()) >= self.level
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        if !self.enabled(event.metadata()) {
            return;
        }
        let mut message = Message::default();
        event.record(&mut message);
        let level = python_level(event.metadata().level());
        self.dispatch.notify(|py| {
            PyTuple::new(
                py,
                [
                    PyString::new(py, "log").into_any(),
                    level.into_pyobject(py)?.into_any(),
                    PyString::new(py, &message.0).into_any(),
                ],
            )
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
