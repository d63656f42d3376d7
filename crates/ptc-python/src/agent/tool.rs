//! A Python function as an agent tool, answered through the run's driver.

use std::sync::Arc;

use async_trait::async_trait;
use pyo3::prelude::*;

use ptc_agent::{AsyncTool, Signature, SignatureError, ToolError};
use ptc_lisp::{ToolSpec, Value};

use super::dispatch::{Answer, Dispatch};

/// One tool of one run.
pub(crate) struct PyAgentTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) signature: Option<String>,
    /// The parameter names shown when there is no signature to take them from.
    pub(crate) params: Vec<String>,
    pub(crate) function: Option<Py<PyAny>>,
    pub(crate) dispatch: Arc<Dispatch>,
}

#[async_trait]
impl AsyncTool for PyAgentTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn signature(&self) -> Option<&str> {
        self.signature.as_deref()
    }

    fn spec(&self) -> Result<ToolSpec, SignatureError> {
        match &self.signature {
            Some(signature) => {
                let parsed = Signature::parse(signature)?;
                Ok(ToolSpec::new(&self.name, &self.description)
                    .with_params(parsed.params().iter().map(|p| p.name.clone()))
                    .with_signature(parsed.to_string()))
            }
            None => {
                Ok(ToolSpec::new(&self.name, &self.description).with_params(self.params.clone()))
            }
        }
    }

    async fn call(&self, args: Vec<Value>) -> Result<Value, ToolError> {
        let Some(function) = &self.function else {
            return Err(ToolError::new(format!(
                "tool/{} has no function to call",
                self.name
            )));
        };
        match self.dispatch.call_tool(&self.name, function, &args).await {
            Answer::Value(value) => Ok(value),
            Answer::Failed(message) => Err(ToolError::new(message)),
            Answer::Text(text) => Ok(Value::string(text)),
        }
    }
}
