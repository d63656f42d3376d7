//! The agent's own model and tools carrying out the run core's [`Action::Ask`] and
//! [`Action::CallTools`], for a driver of its own ([`Agent::run_core`]): the same calls, with
//! the same retries, timeouts and spans, as [`Agent::run_with`]'s runs make.
//!
//! [`Action::Ask`]: ptc_run::Action::Ask
//! [`Action::CallTools`]: ptc_run::Action::CallTools

use ptc_lisp::{ToolAnswer, ToolRequest};
use ptc_turn::Usage;

use crate::agent::Agent;
use crate::live_tools::LiveTools;
use crate::llm::{LlmError, LlmRequest, LlmResponse};

use super::model_call::call_llm;

impl Agent {
    /// Sends turn `turn`'s `request` to the agent's model, retrying transient failures as its
    /// retry policy says, and adds the requests and their time to `spent`.
    pub async fn ask_model(
        &self,
        turn: u32,
        request: &LlmRequest,
        spent: &mut Usage,
    ) -> Result<LlmResponse, LlmError> {
        let inner = &self.inner;
        call_llm(&*inner.llm, &inner.settings.retry, turn, request, spent).await
    }

    /// The agent's tools answering `requests` concurrently, each within the sandbox's tool
    /// timeout, under the current span; the answers are in the order of the requests. Tools
    /// that ask the model of the run calling them (LLM tools, sub-agents) find no calling run
    /// here.
    pub async fn call_tools(&self, requests: Vec<ToolRequest>) -> Vec<ToolAnswer> {
        let inner = &self.inner;
        LiveTools {
            tools: &inner.tools,
            timeout: inner.settings.run.limits.tool_timeout,
            parent: tracing::Span::current(),
        }
        .answer(requests)
        .await
    }
}
