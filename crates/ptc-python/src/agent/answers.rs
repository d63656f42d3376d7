//! What the Python loop driving an agent run answers, as the run's core takes it: a model
//! function's reply, a Python tool's answer, each `(ok, value, seconds)` (see `run.rs`);
//! and the waits of the run on the runtime, which a stop, the deadline or Ctrl-C end.

use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyString;
use tokio::sync::watch;

use ptc_agent::{LlmError, LlmResponse, tool_timed_out};
use ptc_lisp::{ToolAnswer, ToolError};
use ptc_turn::Usage;

use super::llm::failed;
use crate::convert::from_python;
use crate::errors::exception_text;

/// `(ok, value, seconds)`, a function's outcome as the loop settled it.
pub(super) type Settled<'py> = (Option<bool>, Bound<'py, PyAny>, f64);

/// The message of a failure the loop answered: a message, or the exception raised.
fn failure_text(py: Python<'_>, error: &Bound<'_, PyAny>) -> String {
    match error.cast::<PyString>() {
        Ok(text) => text.to_string(),
        Err(_) => exception_text(py, &PyErr::from_value(error.clone())),
    }
}

fn duration(seconds: f64) -> Duration {
    Duration::try_from_secs_f64(seconds).unwrap_or_default()
}

/// The answer of Python tool `name` the loop settled.
pub(super) fn tool_answer(
    py: Python<'_>,
    name: &str,
    settled: Settled<'_>,
    timeout: Option<Duration>,
) -> ToolAnswer {
    let (ok, value, seconds) = settled;
    let took = duration(seconds);
    let result = match (ok, timeout) {
        // Given up at the timeout, or answered after it (a plain function cannot be cut off):
        // no answer within the timeout, as for any other tool.
        (None, Some(limit)) => Err(tool_timed_out(limit)),
        (_, Some(limit)) if took > limit => Err(tool_timed_out(limit)),
        (None, None) => Err(tool_timed_out(took)),
        (Some(true), _) => from_python(py, &value, &format!("the value tool/{name} returned"))
            .map_err(|e| {
                ToolError::new(format!(
                    "it returned something that is not data: {}",
                    e.value(py).str().map(|s| s.to_string()).unwrap_or_default()
                ))
            }),
        (Some(false), _) => Err(ToolError::new(failure_text(py, &value))),
    };
    ToolAnswer::new(result, took)
}

/// The model function's reply the loop settled, and what it spent.
pub(super) fn reply(
    py: Python<'_>,
    settled: Settled<'_>,
) -> (Result<LlmResponse, LlmError>, Usage) {
    let (ok, value, seconds) = settled;
    let result = match ok {
        Some(true) => match value.cast::<PyString>() {
            Ok(text) => Ok(LlmResponse::text(text.to_string())),
            Err(_) => Err(failed(format!(
                "the llm function must return the reply's text (a str), got {}",
                value
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))),
        },
        _ => Err(failed(failure_text(py, &value))),
    };
    let spent = Usage {
        llm_requests: 1,
        llm_duration_us: ptc_run::micros(duration(seconds)),
        ..Usage::default()
    };
    (result, spent)
}

/// Resolves when `stop()` is called.
pub(super) async fn stop_requested(mut stopped: watch::Receiver<bool>) {
    if stopped.wait_for(|stop| *stop).await.is_err() {
        // Nobody can stop the run any more.
        std::future::pending::<()>().await;
    }
}

/// Resolves at `at`, if there is one.
pub(super) async fn deadline_at(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Resolves with the exception a signal handler raised (Ctrl-C), asked every 100 ms: Python
/// runs its handlers only between bytecodes, and the thread waits in Rust meanwhile.
pub(super) async fn signal_raised() -> PyErr {
    let mut every = tokio::time::interval(Duration::from_millis(100));
    loop {
        every.tick().await;
        if let Err(signal) = Python::attach(|py| py.check_signals()) {
            return signal;
        }
    }
}
