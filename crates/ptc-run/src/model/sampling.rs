//! The sampling parameters most providers share, beyond the reply token limit and the
//! temperature.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::LlmError;

/// Sampling parameters passed through to the providers that accept them. Each is left to the
/// provider's default when unset.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sampling {
    /// Nucleus sampling: only the most likely tokens whose probabilities add up to this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Texts that end the reply when the model writes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// A seed for sampling, for replies that repeat (OpenAI-compatible servers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The shape of the reply (OpenAI-compatible servers only). A PTC agent expects its
    /// program in a code block, so this is for model calls made outside the loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    /// An id of the end user on whose behalf the request is made, for the provider's abuse
    /// monitoring (OpenAI `user`, Anthropic `metadata.user_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Whether the model may call several native tools in one reply (both providers allow it
    /// by default): `Some(false)` asks for one call at most. Sent only with a request that
    /// offers tools (OpenAI `parallel_tool_calls`, Anthropic
    /// `tool_choice.disable_parallel_tool_use`); a PTC program runs its own calls in parallel
    /// with `pmap`, so this matters for LLM tools and the `run_program` reply form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
}

/// The shape asked of a reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ResponseFormat {
    /// Free text (the providers' default).
    Text,
    /// Any JSON object.
    JsonObject,
    /// JSON matching a schema.
    JsonSchema {
        /// The schema's name.
        name: String,
        /// The JSON Schema.
        schema: Value,
    },
}

impl Sampling {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == Sampling::default()
    }

    /// Checks what every provider relies on: `top_p` above 0 and at most 1.
    pub fn validate(&self) -> Result<(), LlmError> {
        if let Some(top_p) = self.top_p
            && !(top_p.is_finite() && top_p > 0.0 && top_p <= 1.0)
        {
            return Err(LlmError::InvalidRequest(format!(
                "top_p must be a number above 0 and at most 1, not {top_p}"
            )));
        }
        Ok(())
    }
}
