//! The warnings logged about each server, with the moment each was logged: a subscriber for
//! the whole test binary keeps every event at WARN or above that names a server.

use std::fmt::Debug;
use std::sync::{Mutex, Once, PoisonError};
use std::time::Instant;

use tracing::field::{Field, Visit};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};

/// A warning: when it was logged, and its message.
#[derive(Debug, Clone)]
pub struct Warning {
    pub at: Instant,
    pub message: String,
}

static KEPT: Mutex<Vec<(String, Warning)>> = Mutex::new(Vec::new());

/// Starts keeping warnings, once per test binary.
pub fn keep() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(Keeper))
            .expect("no other subscriber is set in the tests");
    });
}

/// The warnings logged about the server named `server`, oldest first.
pub fn warnings(server: &str) -> Vec<Warning> {
    KEPT.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter(|(name, _)| name == server)
        .map(|(_, warning)| warning.clone())
        .collect()
}

struct Keeper;

impl<S: tracing::Subscriber> Layer<S> for Keeper {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if *event.metadata().level() > tracing::Level::WARN {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        if let Some(server) = fields.server {
            KEPT.lock().unwrap_or_else(PoisonError::into_inner).push((
                server,
                Warning {
                    at: Instant::now(),
                    message: fields.message,
                },
            ));
        }
    }
}

#[derive(Default)]
struct Fields {
    server: Option<String>,
    message: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        match field.name() {
            "server" => self.server = Some(format!("{value:?}")),
            "message" => self.message = format!("{value:?}"),
            _ => {}
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "server" => self.server = Some(value.to_string()),
            "message" => self.message = value.to_string(),
            _ => {}
        }
    }
}
