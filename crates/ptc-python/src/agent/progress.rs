//! The library's log events of one run (each turn, the notices of a model request still
//! waiting, retries), for Python's `logging` (logger `ptc`): a `tracing` subscriber of the
//! run's own keeps them, and the Python loop driving the run logs them (`_AgentRun._logs`)
//! on its thread, in the order the run wrote them.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// The records not logged yet: `logging` levels and messages.
pub(crate) type Records = Arc<Mutex<Vec<(u32, String)>>>;

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
/// level are kept as records for its Python loop. Spans are not followed.
pub(crate) struct LogForwarder {
    /// The least `logging` level the `ptc` logger handles.
    pub(crate) level: u32,
    pub(crate) records: Records,
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
        if let Ok(mut records) = self.records.lock() {
            records.push((level, message.0));
        }
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
