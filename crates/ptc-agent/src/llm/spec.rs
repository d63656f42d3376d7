//! Choosing a model from a command-line string.

use std::sync::Arc;

use super::{Anthropic, Llm, LlmError, OpenAiCompatible, ReplayLlm};

/// Builds a model from a spec string:
///
/// | spec | model |
/// |---|---|
/// | `openai:MODEL` | [`OpenAiCompatible::openai`] (key from `OPENAI_API_KEY`) |
/// | `anthropic:MODEL` | [`Anthropic::from_env`] (key from `ANTHROPIC_API_KEY`) |
/// | `openai-compatible:URL:MODEL` | [`OpenAiCompatible::new`], with the key from `OPENAI_COMPATIBLE_API_KEY` when that is set |
/// | `replay:FILE` | [`ReplayLlm::from_file`] |
///
/// The OpenAI key is deliberately not sent to other servers, hence the separate variable.
///
/// A URL has colons of its own, so `openai-compatible` splits at the last colon: the model name
/// cannot contain one (write Ollama's `llama3:latest` as `llama3`).
///
/// ```
/// use ptc_agent::llm::parse_llm_spec;
///
/// let llm = parse_llm_spec("openai-compatible:http://localhost:11434/v1:llama3").unwrap();
/// assert_eq!(llm.describe(), "openai-compatible:http://localhost:11434/v1:llama3");
/// assert!(parse_llm_spec("gemini:pro").is_err());
/// ```
pub fn parse_llm_spec(spec: &str) -> Result<Arc<dyn Llm>, LlmError> {
    let spec = spec.trim();
    let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let missing = |what: &str| {
        LlmError::Configuration(format!(
            "the model spec `{spec}` has no {what}; write {kind}:{}",
            what.to_uppercase().replace(' ', "_")
        ))
    };
    match kind {
        "openai" => {
            if rest.is_empty() {
                return Err(missing("model"));
            }
            Ok(Arc::new(OpenAiCompatible::openai(rest)?))
        }
        "anthropic" => {
            if rest.is_empty() {
                return Err(missing("model"));
            }
            Ok(Arc::new(Anthropic::from_env(rest)?))
        }
        "openai-compatible" => {
            let Some((url, model)) = rest.rsplit_once(':').filter(|(_, m)| !m.is_empty()) else {
                return Err(LlmError::Configuration(format!(
                    "the model spec `{spec}` needs a URL and a model; write \
                     openai-compatible:URL:MODEL, e.g. \
                     openai-compatible:http://localhost:11434/v1:llama3"
                )));
            };
            let mut llm = OpenAiCompatible::new(url, model)?;
            if let Some(key) = std::env::var("OPENAI_COMPATIBLE_API_KEY")
                .ok()
                .filter(|key| !key.trim().is_empty())
            {
                llm = llm.with_api_key(key);
            }
            Ok(Arc::new(llm))
        }
        "replay" => {
            if rest.is_empty() {
                return Err(missing("file"));
            }
            Ok(Arc::new(ReplayLlm::from_file(rest)?))
        }
        _ => Err(LlmError::Configuration(format!(
            "unknown model spec `{spec}`; use openai:MODEL, anthropic:MODEL, \
             openai-compatible:URL:MODEL or replay:FILE"
        ))),
    }
}
