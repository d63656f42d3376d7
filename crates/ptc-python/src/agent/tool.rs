//! A Python function as an agent tool, as the agent describes it to the model: its calls are
//! answered by the Python loop driving each run (`run.rs`), which calls the function.

use async_trait::async_trait;

use ptc_agent::{AsyncTool, Signature, SignatureError, ToolError};
use ptc_lisp::{ToolSpec, Value};

/// One Python tool of an agent.
pub(crate) struct PyAgentTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) signature: Option<String>,
    /// The parameter names shown when there is no signature to take them from.
    pub(crate) params: Vec<String>,
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

    /// Refused: only the run's Python loop calls the function, and this call came from
    /// another driver.
    async fn call(&self, _args: Vec<Value>) -> Result<Value, ToolError> {
        Err(ToolError::new(format!(
            "tool/{} is a Python function: only the agent's Python loop calls it",
            self.name
        )))
    }
}
