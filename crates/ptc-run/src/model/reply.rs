//! A model's reply, as data.

use ptc_turn::{Message, MessageToolCall, TokenUsage};
use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::request::LlmRequest;
#[cfg(doc)]
use ptc_turn::Role;

/// A model's reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmResponse {
    /// The reply's text.
    pub content: String,
    /// The tokens the provider counted for the request and the reply; all 0 when it reported
    /// none.
    #[serde(default)]
    pub usage: TokenUsage,
    /// The model that answered, as the provider names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Why the model stopped, in the provider's words (`stop`, `length`, `end_turn`,
    /// `max_tokens`, ...); see [`is_cut_off`](LlmResponse::is_cut_off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The requests sent to get this reply: 1, plus the retries an HTTP provider made on its
    /// own after transient failures. The agent counts these in
    /// [`Usage::llm_requests`](ptc_turn::Usage::llm_requests).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub attempts: u32,
    /// The native tool calls of the reply, when the request offered
    /// [`tools`](LlmRequest::tools); each has the provider's id, which the answering
    /// [`Role::Tool`] message repeats.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<MessageToolCall>,
    /// Whether [`usage`](LlmResponse::usage) is an estimate made by the client (a provider
    /// answered by hand through files or a terminal reports none) rather than the provider's
    /// count.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub usage_estimated: bool,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl Default for LlmResponse {
    fn default() -> LlmResponse {
        LlmResponse {
            content: String::new(),
            usage: TokenUsage::default(),
            model: None,
            stop_reason: None,
            attempts: 1,
            tool_calls: Vec::new(),
            usage_estimated: false,
        }
    }
}

impl LlmResponse {
    /// A reply with just this text.
    pub fn text(content: impl Into<String>) -> LlmResponse {
        LlmResponse {
            content: content.into(),
            ..LlmResponse::default()
        }
    }

    /// Sets [`usage`](LlmResponse::usage).
    pub fn with_usage(mut self, usage: TokenUsage) -> Self {
        self.usage = usage;
        self
    }

    /// Sets [`stop_reason`](LlmResponse::stop_reason).
    pub fn with_stop_reason(mut self, stop_reason: impl Into<String>) -> Self {
        self.stop_reason = Some(stop_reason.into());
        self
    }

    /// Adds native tool calls.
    pub fn with_tool_calls(mut self, tool_calls: Vec<MessageToolCall>) -> Self {
        self.tool_calls = tool_calls;
        self
    }

    /// The reply as the assistant message a history keeps: its text and its tool calls.
    pub fn to_message(&self) -> Message {
        let mut message = Message::assistant(self.content.clone());
        message.tool_calls = self.tool_calls.clone();
        message
    }

    /// Whether the reply stopped at the reply token limit instead of ending on its own
    /// (`length` from OpenAI-compatible servers, `max_tokens` from Anthropic).
    pub fn is_cut_off(&self) -> bool {
        self.stop_reason
            .as_deref()
            .is_some_and(ptc_turn::is_cut_off)
    }
}
