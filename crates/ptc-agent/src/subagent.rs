//! Agents as tools of other agents.

use async_trait::async_trait;
use ptc_lisp::Value;
use ptc_turn::StepOutcome;

use crate::agent::Agent;
use crate::caller::{calling_llm, count_in_calling_turn};
use crate::run::RunOptions;
use crate::tool::named_arguments;
use crate::tool::{AsyncTool, ToolError};
use ptc_run::signature::Param;

/// An agent that a parent agent's programs call as a tool; see [`Agent::as_tool`].
#[derive(Debug, Clone)]
pub struct AgentTool {
    agent: Agent,
    name: String,
    description: String,
}

impl Agent {
    /// This agent as a tool named `name`. A call runs the agent to completion and returns its
    /// value, or fails with its failure reason. The arguments become the run's input data: one
    /// map argument gives its keys (`(tool/summarize {:text t})`), positional arguments are
    /// named by the parameters of the agent's signature (`(tool/summarize t)` with
    /// `(text :string) -> :string`).
    ///
    /// What the run spends (tokens, model requests) counts in the usage of the calling turn,
    /// whether it returned or failed.
    ///
    /// Firewalled fields of the value (those named `_...`) reach the calling program whole, so
    /// it can pass them on (a token, an internal id), while every message to the calling
    /// agent's model shows them as `"[hidden]"`. Build the sub-agent with
    /// [`Agent::sub_agent`] to inherit the parent's settings and model: a sub-agent not given
    /// a model of its own then asks the model of the run that calls it, which is another one
    /// when that run was given one ([`RunOptions::with_llm`]).
    pub fn as_tool(&self, name: impl Into<String>, description: impl Into<String>) -> AgentTool {
        AgentTool {
            agent: self.clone(),
            name: name.into(),
            description: description.into(),
        }
    }
}

#[async_trait]
impl AsyncTool for AgentTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn signature(&self) -> Option<&str> {
        self.agent.signature().map(|s| s.source())
    }

    /// A sub-agent asks its model on every call.
    fn uses_model(&self) -> bool {
        true
    }

    async fn call(&self, args: Vec<Value>) -> Result<Value, ToolError> {
        let params: &[Param] = self.agent.signature().map_or(&[], |s| s.params());
        let mut options = RunOptions::new();
        // A model inherited from the parent follows the parent's run to the model it asks.
        if self.agent.inner.follows_caller
            && let Some(llm) = calling_llm()
        {
            options = options.with_llm_arc(llm);
        }
        for (name, value) in named_arguments(params, args)? {
            options = options.with_data_value(name, value);
        }
        let step = self
            .agent
            .run_with(options)
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        count_in_calling_turn(step.usage.clone());
        match step.outcome {
            // Firewalled fields reach the calling program whole; renderings hide them.
            StepOutcome::Returned { value } => Ok(value),
            StepOutcome::Failed { kind, reason, .. } => Err(ToolError::new(format!(
                "the sub-agent failed ({}) after {} turn(s): {reason}",
                kind.as_str(),
                step.turns.len()
            ))),
        }
    }
}
