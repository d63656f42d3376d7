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
mod file;
pub(crate) mod http;
mod human;
mod openai;
mod readable;
mod recording;
mod replay;
pub(crate) mod retry;
mod sampling;
mod scripted;
mod spec;

use std::sync::Arc;

use async_trait::async_trait;
use ptc_compression::PricingKind;

pub use anthropic::Anthropic;
pub use closure::{FnLlm, llm_fn};
pub use file::{FILE_REPLY_TIMEOUT, FileLlm};
pub use http::WAIT_TARGET;
pub use human::{END_OF_REPLY, HumanLlm};
pub use openai::OpenAiCompatible;
/// The request and the reply as data, with the errors of a call: the run crate's, which the
/// run core builds and reads without any I/O.
pub use ptc_run::model::{
    CacheBreakpoint, DEFAULT_MAX_TOKENS, FunctionTool, LlmError, LlmRequest, LlmResponse,
    ResponseFormat, Sampling, ToolChoice, tools_prompt_text,
};
/// Token counts of a call: the same type the turn record keeps.
pub use ptc_turn::TokenUsage;
pub use recording::{RecordingLlm, transcript_jsonl};
pub use replay::ReplayLlm;
pub use retry::{RetryPolicy, parse_retry_after};
pub use scripted::ScriptedLlm;
pub use spec::{ProviderOptions, parse_llm_spec, parse_llm_spec_with};

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
}
