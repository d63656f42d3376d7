//! Choosing a model from a command-line string.

use std::sync::Arc;
use std::time::Duration;

use super::{
    Anthropic, FileLlm, HumanLlm, Llm, LlmError, OpenAiCompatible, ReplayLlm, RetryPolicy,
};

/// Settings [`parse_llm_spec_with`] gives the HTTP providers; `None` keeps a provider's
/// default (a 120 s request timeout and [`RetryPolicy::default`]). Replayed models ignore them
/// (a `file:` model takes the timeout).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderOptions {
    /// The longest one request may take, retries not counted.
    pub request_timeout: Option<Duration>,
    /// How failed requests are retried.
    pub retry: Option<RetryPolicy>,
    /// Whether OpenAI-compatible providers ask for streamed replies, so that a request the
    /// client gives up on stops the server's work on it
    /// ([`OpenAiCompatible::with_streaming`]). Anthropic's provider ignores it.
    pub stream: bool,
    /// Headers sent with every request, `(name, value)`, each replacing the provider's header
    /// of the same name ([`OpenAiCompatible::with_header`], [`Anthropic::with_header`]).
    /// Replayed, file and human models ignore them.
    pub headers: Vec<(String, String)>,
}

/// Builds a model from a spec string:
///
/// | spec | model |
/// |---|---|
/// | `openai:MODEL` | [`OpenAiCompatible::openai`] (key from `OPENAI_API_KEY`, base URL from `OPENAI_BASE_URL` when set) |
/// | `anthropic:MODEL` | [`Anthropic::from_env`] (key from `ANTHROPIC_API_KEY`, base URL from `ANTHROPIC_BASE_URL` when set) |
/// | `openai-compatible:URL:MODEL` | [`OpenAiCompatible::new`], with the key from `OPENAI_COMPATIBLE_API_KEY` when that is set |
/// | `replay:FILE` | [`ReplayLlm::from_file`] |
/// | `file:DIR` | [`FileLlm::new`]: requests written to DIR, replies read from files there; the request timeout is how long it waits for each (default 30 minutes) |
/// | `human` | [`HumanLlm::stdio`]: requests on standard error, replies typed on standard input |
///
/// The OpenAI key is deliberately not sent to other servers, hence the separate variable.
///
/// For `openai-compatible`, the URL is read as `http[s]://HOST[:PORT][/PATH]` and the model is
/// everything after the colon that follows it, so model names may contain colons of their own:
/// Ollama's `qwen2.5:7b`, OpenRouter's `meta-llama/llama-3.3-70b-instruct:free`. A port is
/// digits only, and the path ends at its first colon (base URLs have none). `HOST` may be an
/// IPv6 address in brackets.
///
/// ```
/// use ptc_agent::llm::parse_llm_spec;
///
/// let llm = parse_llm_spec("openai-compatible:http://localhost:11434/v1:qwen2.5:7b").unwrap();
/// assert_eq!(llm.describe(), "openai-compatible:http://localhost:11434/v1:qwen2.5:7b");
/// assert!(parse_llm_spec("gemini:pro").is_err());
/// // A URL after `openai:` would be sent to OpenAI as a model name.
/// assert!(parse_llm_spec("openai:http://localhost:8000/v1:m").is_err());
/// ```
pub fn parse_llm_spec(spec: &str) -> Result<Arc<dyn Llm>, LlmError> {
    parse_llm_spec_with(spec, &ProviderOptions::default())
}

/// [`parse_llm_spec`], with a request timeout, a retry policy, streaming and custom headers
/// for the HTTP providers. An invalid header is an [`LlmError::Configuration`] naming it.
///
/// ```
/// use std::time::Duration;
/// use ptc_agent::llm::{ProviderOptions, RetryPolicy, parse_llm_spec_with};
///
/// let options = ProviderOptions {
///     request_timeout: Some(Duration::from_secs(5)),
///     retry: Some(RetryPolicy { max_retries: 1, ..RetryPolicy::default() }),
///     stream: true,
///     headers: vec![("X-Title".into(), "Example".into())],
/// };
/// let llm = parse_llm_spec_with("openai-compatible:http://localhost:8000/v1:m", &options);
/// assert!(llm.is_ok());
///
/// let bad = ProviderOptions { headers: vec![("X Title".into(), "Example".into())], ..options };
/// let Err(err) = parse_llm_spec_with("openai-compatible:http://localhost:8000/v1:m", &bad) else {
///     panic!("a header name with a space is refused");
/// };
/// assert!(err.to_string().starts_with("`X Title` is not a valid HTTP header name"));
/// ```
pub fn parse_llm_spec_with(
    spec: &str,
    options: &ProviderOptions,
) -> Result<Arc<dyn Llm>, LlmError> {
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
            if rest.contains("://") {
                // The spec to write instead: the URL and its model, or the URL and a place
                // for the model's name when the spec had none.
                let example = match split_url_and_model(rest) {
                    Some((_, model)) if !model.is_empty() => format!("openai-compatible:{rest}"),
                    _ => format!(
                        "openai-compatible:{}:MODEL with the model's name for MODEL",
                        rest.trim_end_matches(':')
                    ),
                };
                return Err(LlmError::Configuration(format!(
                    "`{spec}` names a URL, but openai: takes a model name (the server is \
                     OpenAI's, or OPENAI_BASE_URL); for another server write \
                     openai-compatible:URL:MODEL, e.g. {example}"
                )));
            }
            Ok(Arc::new(openai_options(
                OpenAiCompatible::openai(rest)?,
                options,
            )?))
        }
        "anthropic" => {
            if rest.is_empty() {
                return Err(missing("model"));
            }
            let mut llm = Anthropic::from_env(rest)?;
            if let Some(timeout) = options.request_timeout {
                llm = llm.with_timeout(timeout);
            }
            if let Some(retry) = &options.retry {
                llm = llm.with_retry_policy(retry.clone());
            }
            for (name, value) in &options.headers {
                llm = llm.with_header(name, value)?;
            }
            Ok(Arc::new(llm))
        }
        "openai-compatible" => {
            let Some((url, model)) = split_url_and_model(rest).filter(|(_, m)| !m.is_empty())
            else {
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
            Ok(Arc::new(openai_options(llm, options)?))
        }
        "replay" => {
            if rest.is_empty() {
                return Err(missing("file"));
            }
            Ok(Arc::new(ReplayLlm::from_file(rest)?))
        }
        "file" => {
            if rest.is_empty() {
                return Err(missing("dir"));
            }
            let mut llm = FileLlm::new(rest)?;
            if let Some(timeout) = options.request_timeout {
                llm = llm.with_timeout(timeout);
            }
            Ok(Arc::new(llm))
        }
        "human" if rest.is_empty() => Ok(Arc::new(HumanLlm::stdio())),
        _ => Err(LlmError::Configuration(format!(
            "unknown model spec `{spec}`; use openai:MODEL, anthropic:MODEL, \
             openai-compatible:URL:MODEL, replay:FILE, file:DIR or human"
        ))),
    }
}

fn openai_options(
    mut llm: OpenAiCompatible,
    options: &ProviderOptions,
) -> Result<OpenAiCompatible, LlmError> {
    llm = llm.with_streaming(options.stream);
    if let Some(timeout) = options.request_timeout {
        llm = llm.with_timeout(timeout);
    }
    if let Some(retry) = &options.retry {
        llm = llm.with_retry_policy(retry.clone());
    }
    for (name, value) in &options.headers {
        llm = llm.with_header(name, value)?;
    }
    Ok(llm)
}

/// Splits `URL:MODEL` after the URL: the scheme, `://`, the host (a bracketed IPv6 address or
/// up to the next `:` or `/`), an optional all-digit port, and a path up to its first colon.
/// Without a scheme, at the first colon (the provider then rejects the URL with an
/// explanation). `None` when there is no colon after the URL.
fn split_url_and_model(spec: &str) -> Option<(&str, &str)> {
    let Some(scheme_end) = spec.find("://") else {
        return spec.split_once(':');
    };
    let authority_start = scheme_end + 3;
    let rest = &spec[authority_start..];
    let mut end = if rest.starts_with('[') {
        rest.find(']').map_or(rest.len(), |i| i + 1)
    } else {
        rest.find([':', '/']).unwrap_or(rest.len())
    };
    // A port: a colon followed by digits up to a `/`, a `:` or the end.
    if let Some(after) = rest[end..].strip_prefix(':') {
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let next = after.as_bytes().get(digits);
        if digits > 0 && matches!(next, None | Some(b'/' | b':')) {
            end += 1 + digits;
        }
    }
    if rest[end..].starts_with('/') {
        end += rest[end..].find(':').unwrap_or(rest.len() - end);
    }
    let url_end = authority_start + end;
    let model = spec[url_end..].strip_prefix(':')?;
    Some((&spec[..url_end], model))
}

#[cfg(test)]
mod tests {
    use super::split_url_and_model;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_model_is_everything_after_the_url() {
        let split = |spec| split_url_and_model(spec);
        assert_eq!(
            split("http://localhost:11434/v1:qwen2.5:7b"),
            Some(("http://localhost:11434/v1", "qwen2.5:7b"))
        );
        assert_eq!(
            split("https://openrouter.ai/api/v1:meta-llama/llama-3.3-70b-instruct:free"),
            Some((
                "https://openrouter.ai/api/v1",
                "meta-llama/llama-3.3-70b-instruct:free"
            ))
        );
        assert_eq!(
            split("http://localhost:8080:llama3:latest"),
            Some(("http://localhost:8080", "llama3:latest"))
        );
        assert_eq!(
            split("http://localhost:llama3:latest"),
            Some(("http://localhost", "llama3:latest"))
        );
        assert_eq!(
            split("http://[::1]:8000/v1:Qwen/Qwen2.5-Coder-32B-Instruct"),
            Some(("http://[::1]:8000/v1", "Qwen/Qwen2.5-Coder-32B-Instruct"))
        );
        assert_eq!(split("http://[::1]:m:1"), Some(("http://[::1]", "m:1")));
        // A port followed by nothing, and a path with no model after it.
        assert_eq!(split("http://localhost:8080"), None);
        assert_eq!(split("http://localhost:8080/v1"), None);
        assert_eq!(
            split("http://localhost:8080/v1:"),
            Some(("http://localhost:8080/v1", ""))
        );
        // No scheme: the first colon; the URL is rejected later.
        assert_eq!(split("localhost:8080:m"), Some(("localhost", "8080:m")));
        assert_eq!(split("llama3"), None);
    }
}
