//! One call to a model, as data.

use ptc_compression::PromptRequest;
use ptc_turn::{Message, Role};
use serde::{Deserialize, Serialize};

use super::error::LlmError;
use super::function::{FunctionTool, ToolChoice, tools_prompt_text};
use super::sampling::Sampling;

/// The reply limit, in tokens, sent with every request that sets none: the agent's default for
/// each turn, and the HTTP providers' for requests without [`LlmRequest::max_tokens`]. It is
/// far more than a PTC-Lisp program needs, and bounds a reply that would otherwise run on until
/// the model's context is full. Models that think before answering count their thinking in it:
/// raise it for them.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

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
    /// [`LlmResponse::tool_calls`](super::LlmResponse::tool_calls). Empty for a PTC run whose programs call the tools.
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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
