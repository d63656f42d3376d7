//! A Python function as the agent's model: it gets the messages (the system prompt first, as
//! dicts of `role` and `content`) and returns the reply's text; it may be `async def`.

use std::sync::Arc;

use async_trait::async_trait;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use ptc_agent::{Llm, LlmError, LlmRequest, LlmResponse};

use super::dispatch::{Answer, Dispatch};

/// The model of one run, answered by the Python function `function` through the run's driver.
pub(crate) struct PyLlm {
    pub(crate) function: Py<PyAny>,
    pub(crate) dispatch: Arc<Dispatch>,
}

/// What the function is called, in logs and in the step.
const DESCRIPTION: &str = "python:function";

fn messages<'py>(py: Python<'py>, request: &LlmRequest) -> PyResult<Bound<'py, PyAny>> {
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

#[async_trait]
impl Llm for PyLlm {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let failed = |message: String| LlmError::InvalidResponse {
            provider: DESCRIPTION.to_string(),
            message,
        };
        match self
            .dispatch
            .complete(&self.function, |py| messages(py, request))
            .await
        {
            Answer::Text(text) => Ok(LlmResponse::text(text)),
            Answer::Failed(message) => Err(failed(message)),
            Answer::Value(value) => Err(failed(format!(
                "expected the reply's text, got {}",
                ptc_lisp::pr_str(&value)
            ))),
        }
    }

    fn describe(&self) -> String {
        DESCRIPTION.to_string()
    }
}
