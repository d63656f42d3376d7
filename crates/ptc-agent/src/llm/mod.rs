//! Language-model access: the [`Llm`] trait the agent loop calls, the request and response types,
//! and the providers.
//!
//! * [`OpenAiCompatible`]: the OpenAI Chat Completions API and the servers that copy it (Ollama,
//!   vLLM, llama.cpp's server, OpenRouter).
//! * [`Anthropic`]: the Anthropic Messages API, with prompt-cache breakpoints.
//! * [`ScriptedLlm`]: canned replies for tests, recording every request.
//! * [`ReplayLlm`]: replies read from a JSONL transcript.
//! * [`RecordingLlm`]: another model's replies, kept to be saved as such a transcript.
//! * [`FileLlm`]: requests written to a directory, replies read from files written there by
//!   whoever answers (a person, or a model given only the request files).
//! * [`HumanLlm`]: a person at a terminal.
//!
//! [`parse_llm_spec`] builds one of them from a command-line string such as
//! `anthropic:claude-sonnet-4-5` or `openai-compatible:http://localhost:11434/v1:llama3`.
//!
//! The HTTP providers retry transient failures (connection errors, timeouts, HTTP 408, 429 and
//! server errors other than 501, 505, 506, 508, 510 and 511) as their [`RetryPolicy`] says, and
//! fail at once on anything else. A request that timed out is retried once at most, as the
//! server is likely still writing the reply nobody waits for any more.

mod anthropic;
mod closure;
mod error;
mod file;
mod function;
pub(crate) mod http;
mod human;
mod openai;
mod readable;
mod recording;
mod replay;
mod retry;
mod sampling;
mod scripted;
mod spec;

use std::sync::Arc;

use async_trait::async_trait;
use ptc_compression::{PricingKind, PromptRequest};
use ptc_turn::{Message, MessageToolCall, Role};
use serde::{Deserialize, Serialize};

pub use anthropic::Anthropic;
pub use closure::{FnLlm, llm_fn};
pub use error::LlmError;
pub use file::{FILE_REPLY_TIMEOUT, FileLlm};
pub use function::{FunctionTool, ToolChoice, tools_prompt_text};
pub use http::WAIT_TARGET;
pub use human::{END_OF_REPLY, HumanLlm};
pub use openai::OpenAiCompatible;
/// Token counts of a call: the same type the turn record keeps.
pub use ptc_turn::TokenUsage;
pub use recording::{RecordingLlm, transcript_jsonl};
pub use replay::ReplayLlm;
pub use retry::{RetryPolicy, parse_retry_after};
pub use sampling::{ResponseFormat, Sampling};
pub use scripted::ScriptedLlm;
pub use spec::{ProviderOptions, parse_llm_spec, parse_llm_spec_with};

/// The reply limit, in tokens, sent with every request that sets none: the agent's default for
/// each turn, and the HTTP providers' for requests without [`LlmRequest::max_tokens`]. It is
/// far more than a PTC-Lisp program needs, and bounds a reply that would otherwise run on until
/// the model's context is full. Models that think before answering count their thinking in it:
/// raise it for them.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A language model that completes a conversation.
#[async_trait]
pub trait Llm: Send + Sync {
    /// Sends `request` and returns the model's reply.
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError>;

    /// Which provider and model this is, for logs (e.g. `anthropic:claude-sonnet-4-5`).
    fn describe(&self) -> String;

    /// The provider's prompt-caching rules and prices, when known: the default compression
    /// strategy decides when to compact its history with them. `None` (the default) for a
    /// model whose provider is unknown, such as a replayed transcript.
    fn pricing(&self) -> Option<PricingKind> {
        None
    }

    /// The provider, as the OpenTelemetry field `gen_ai.provider.name` names it (`openai`,
    /// `anthropic`, ...). By default the part of [`describe`](Llm::describe) before its first
    /// colon.
    fn provider_name(&self) -> String {
        let description = self.describe();
        description
            .split_once(':')
            .map_or(description.as_str(), |(provider, _)| provider)
            .to_string()
    }

    /// The model asked for, as the OpenTelemetry field `gen_ai.request.model` names it. By
    /// default the part of [`describe`](Llm::describe) after its first colon.
    fn model_name(&self) -> String {
        let description = self.describe();
        description
            .split_once(':')
            .map_or(description.as_str(), |(_, model)| model)
            .to_string()
    }
}

#[async_trait]
impl<T: Llm + ?Sized> Llm for Arc<T> {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        (**self).complete(request).await
    }

    fn describe(&self) -> String {
        (**self).describe()
    }

    fn pricing(&self) -> Option<PricingKind> {
        (**self).pricing()
    }

    fn provider_name(&self) -> String {
        (**self).provider_name()
    }

    fn model_name(&self) -> String {
        (**self).model_name()
    }
}

#[async_trait]
impl<T: Llm + ?Sized> Llm for Box<T> {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        (**self).complete(request).await
    }

    fn describe(&self) -> String {
        (**self).describe()
    }

    fn pricing(&self) -> Option<PricingKind> {
        (**self).pricing()
    }

    fn provider_name(&self) -> String {
        (**self).provider_name()
    }

    fn model_name(&self) -> String {
        (**self).model_name()
    }
}

/// One call to a model.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LlmRequest {
    /// The system prompt; empty for none.
    pub system: String,
    /// The conversation, oldest first.
    pub messages: Vec<Message>,
    /// Where stable parts of the prompt end, in order, for providers with explicit prompt
    /// caching: the `tool/` and `data/` prefix, and the newest message that the next request
    /// will repeat. The system prompt is always cacheable on its own and needs no point.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_breakpoints: Vec<CacheBreakpoint>,
    /// The most tokens the reply may have; the provider's default ([`DEFAULT_MAX_TOKENS`]
    /// for the HTTP providers) when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature; the provider's default when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// The other sampling parameters (top-p, stop sequences, seed, response format, user).
    #[serde(default, skip_serializing_if = "Sampling::is_empty")]
    pub sampling: Sampling,
    /// The turn of the run this request is for (1 for the first); `None` for requests made
    /// outside a turn, such as history summaries. Not sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// The names of the tools the program may call, in the order shown to the model. Not
    /// sent as provider tools: programs call them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_names: Vec<String>,
    /// Tools the model may call natively, in the provider's own format: the reply then carries
    /// [`LlmResponse::tool_calls`]. Empty for a PTC run whose programs call the tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<FunctionTool>,
    /// Whether the model must call one of [`tools`](LlmRequest::tools).
    #[serde(default, skip_serializing_if = "ToolChoice::is_auto")]
    pub tool_choice: ToolChoice,
}

/// The end of a stable part of a prompt: the system prompt, every message before
/// `message_index`, and the first `byte_offset` bytes of that message. Everything before it can
/// be served from a provider's prompt cache on the next request. `message_index` counts
/// [`LlmRequest::messages`] and must point at a user message or a tool result; `byte_offset`
/// must fall on a character boundary.
pub type CacheBreakpoint = ptc_compression::CachePoint;

impl LlmRequest {
    /// A request with a system prompt and messages, and no other settings.
    pub fn new(system: impl Into<String>, messages: Vec<Message>) -> LlmRequest {
        LlmRequest {
            system: system.into(),
            messages,
            ..LlmRequest::default()
        }
    }

    /// The request a compression strategy rendered: its system prompt, messages and cache
    /// points.
    pub fn from_prompt(prompt: PromptRequest) -> LlmRequest {
        LlmRequest {
            system: prompt.system,
            messages: prompt.messages,
            cache_breakpoints: prompt.cache_points,
            ..LlmRequest::default()
        }
    }

    /// The prompt of this request as the cost model prices it. Native tools count too: their
    /// definitions ([`tools_prompt_text`]) come before the system prompt, where the providers
    /// put them.
    pub fn prompt(&self) -> PromptRequest {
        let system = if self.tools.is_empty() {
            self.system.clone()
        } else {
            tools_prompt_text(&self.tools) + &self.system
        };
        PromptRequest {
            system,
            messages: self.messages.clone(),
            cache_points: self.cache_breakpoints.clone(),
        }
    }

    /// Offers these native tools, with this choice.
    pub fn with_tools(mut self, tools: Vec<FunctionTool>, choice: ToolChoice) -> Self {
        self.tools = tools;
        self.tool_choice = choice;
        self
    }

    /// Adds a cache breakpoint (see [`CacheBreakpoint`]).
    pub fn with_cache_breakpoint(mut self, message_index: usize, byte_offset: usize) -> Self {
        self.cache_breakpoints
            .push(CacheBreakpoint::new(message_index, byte_offset));
        self
    }

    /// Sets [`max_tokens`](LlmRequest::max_tokens).
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets [`temperature`](LlmRequest::temperature).
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The same request with these sampling parameters (top-p, stop sequences, seed, response
    /// format, user) in place of the ones it had.
    pub fn with_sampling(mut self, sampling: Sampling) -> Self {
        self.sampling = sampling;
        self
    }

    /// Marks the request as the one of turn `turn`, with these tools.
    pub fn with_turn(mut self, turn: u32, tool_names: Vec<String>) -> Self {
        self.turn = Some(turn);
        self.tool_names = tool_names;
        self
    }

    /// Checks the settings every HTTP provider relies on: each cache breakpoint points into a
    /// user message at a character boundary, and the temperature is a finite number.
    pub fn validate(&self) -> Result<(), LlmError> {
        self.sampling.validate()?;
        for tool in &self.tools {
            tool.validate()?;
        }
        if self.tool_choice == ToolChoice::Required && self.tools.is_empty() {
            return Err(LlmError::InvalidRequest(
                "the request requires a tool call but offers no tools".into(),
            ));
        }
        if let Some(temperature) = self.temperature
            && !temperature.is_finite()
        {
            return Err(LlmError::InvalidRequest(format!(
                "the temperature must be a finite number, not {temperature}"
            )));
        }
        self.cache_breakpoints
            .iter()
            .try_for_each(|b| self.validate_breakpoint(b))
    }

    fn validate_breakpoint(&self, breakpoint: &CacheBreakpoint) -> Result<(), LlmError> {
        let Some(message) = self.messages.get(breakpoint.message_index) else {
            return Err(LlmError::InvalidRequest(format!(
                "the cache breakpoint points at message {}, but the request has {} messages",
                breakpoint.message_index,
                self.messages.len()
            )));
        };
        if !matches!(message.role, Role::User | Role::Tool) {
            return Err(LlmError::InvalidRequest(format!(
                "the cache breakpoint points at message {}, whose role is {}; it must point into \
                 a user message or a tool result",
                breakpoint.message_index,
                message.role.as_str()
            )));
        }
        if breakpoint.byte_offset > message.content.len() {
            return Err(LlmError::InvalidRequest(format!(
                "the cache breakpoint's byte offset {} is past the end of message {} ({} bytes \
                 long)",
                breakpoint.byte_offset,
                breakpoint.message_index,
                message.content.len()
            )));
        }
        if !message.content.is_char_boundary(breakpoint.byte_offset) {
            return Err(LlmError::InvalidRequest(format!(
                "the cache breakpoint's byte offset {} is not a character boundary of message {} \
                 ({} bytes long)",
                breakpoint.byte_offset,
                breakpoint.message_index,
                message.content.len()
            )));
        }
        Ok(())
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn token_usage_parts_add_up() {
        let mut usage = TokenUsage {
            input_tokens: 93,
            output_tokens: 46,
            cache_read_tokens: 1024,
            cache_write_tokens: 7,
        };
        assert_eq!((usage.prompt_tokens(), usage.total()), (1124, 1170));
        usage += TokenUsage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_write_tokens: u64::MAX,
        };
        assert_eq!(
            usage,
            TokenUsage {
                input_tokens: 94,
                output_tokens: 48,
                cache_read_tokens: 1027,
                cache_write_tokens: u64::MAX,
            }
        );
        assert_eq!(usage.total(), u64::MAX);
    }

    #[test]
    fn partial_usage_json_reads_with_zeros() {
        let usage: TokenUsage = serde_json::from_str(r#"{"output_tokens": 5}"#).unwrap();
        assert_eq!(
            usage,
            TokenUsage {
                output_tokens: 5,
                ..TokenUsage::default()
            }
        );
    }

    #[test]
    fn requests_serialize_without_unset_options() {
        let request = LlmRequest::new("sys", vec![Message::user("hi")]);
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            serde_json::json!({"system": "sys", "messages": [{"role": "user", "content": "hi"}]})
        );
        let full = request.with_cache_breakpoint(0, 1).with_max_tokens(9);
        let back: LlmRequest =
            serde_json::from_value(serde_json::to_value(&full).unwrap()).unwrap();
        assert_eq!(back, full);
    }

    #[test]
    fn validate_accepts_good_breakpoints_and_rejects_bad_temperatures() {
        let request = LlmRequest::new("", vec![Message::user("héllo")]);
        for offset in [0, 1, 3, 6] {
            assert_eq!(
                request.clone().with_cache_breakpoint(0, offset).validate(),
                Ok(())
            );
        }
        assert_eq!(
            request.clone().with_cache_breakpoint(0, 7).validate(),
            Err(LlmError::InvalidRequest(
                "the cache breakpoint's byte offset 7 is past the end of message 0 (6 bytes long)"
                    .into()
            ))
        );
        assert_eq!(
            request.with_temperature(f32::NAN).validate(),
            Err(LlmError::InvalidRequest(
                "the temperature must be a finite number, not NaN".into()
            ))
        );
    }
}
