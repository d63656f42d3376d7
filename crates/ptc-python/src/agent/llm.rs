//! A Python function as the agent's model, as the agent describes it: the function itself is
//! called by the Python loop driving each run (`ptc/_drive.py`), with the messages (the system
//! prompt first, as dicts of `role` and `content`), and returns the reply's text; it may be
//! `async def`.

use async_trait::async_trait;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use ptc_agent::{Llm, LlmError, LlmRequest, LlmResponse};

/// What the function is called, in logs and in the step.
pub(crate) const DESCRIPTION: &str = "python:function";

/// The model of an agent whose replies come from a Python function. Each run's Python loop
/// calls the function for the run's requests (`run.rs`); the agent holds this only to
/// describe its model, so a request that reaches it was sent by another driver and is refused.
pub(crate) struct FunctionModel;

#[async_trait]
impl Llm for FunctionModel {
    async fn complete(&self, _request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        Err(failed(
            "the Python function answers only the runs its agent's Python loop drives".into(),
        ))
    }

    fn describe(&self) -> String {
        DESCRIPTION.to_string()
    }
}

/// The error of a reply the function did not give.
pub(crate) fn failed(message: String) -> LlmError {
    LlmError::InvalidResponse {
        provider: DESCRIPTION.to_string(),
        message,
    }
}

/// The messages of `request` as the function gets them: dicts of `role` and `content`, the
/// system prompt first.
pub(crate) fn messages<'py>(py: Python<'py>, request: &LlmRequest) -> PyResult<Bound<'py, PyAny>> {
    let list = PyList::empty(py);
    let push = |role: &str, content: &str| -> PyResult<()> {
        let message = PyDict::new(py);
        message.set_item("role", role)?;
        message.set_item("content", content)?;
        list.append(message)
    };
    if !request.system.is_empty() {
        push("system", &request.system)?;
    }
    for message in &request.messages {
        push(message.role.as_str(), &message.content)?;
    }
    Ok(list.into_any())
}
