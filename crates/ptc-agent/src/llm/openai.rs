//! The OpenAI Chat Completions API and the servers that copy it.

use std::fmt;
use std::time::Duration;

use crate::wire;
use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use tracing::Instrument;

use super::http::{self, CallContext, DEFAULT_TIMEOUT};
use super::sampling::{self, json_f32};
use super::{
    DEFAULT_MAX_TOKENS, FunctionTool, Llm, LlmError, LlmRequest, LlmResponse, RetryPolicy,
    TokenUsage, ToolChoice,
};

/// OpenAI's API root.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// A model behind `POST {base_url}/chat/completions`: OpenAI itself, or a server speaking the
/// same API (Ollama at `http://localhost:11434/v1`, vLLM, llama.cpp's server, OpenRouter).
///
/// The system prompt goes first as a `system` message. [`LlmRequest::cache_breakpoints`] are
/// checked but otherwise unused: these servers cache prompt prefixes without being told, so
/// what matters is that a request starts with the same bytes as the one before it, which the
/// body keeps (messages are sent exactly as rendered, nothing varies from call to call). OpenAI
/// routes requests with the same [`prompt_cache_key`](Self::with_prompt_cache_key) to the same
/// cache, which raises the hit rate when many runs share a prefix. Every request carries a
/// reply limit: the request's own, else [`with_default_max_tokens`](Self::with_default_max_tokens), so that no reply runs on until
/// the server's context is full.
///
/// ```no_run
/// # async fn demo() -> Result<(), ptc_agent::llm::LlmError> {
/// use ptc_agent::llm::{Llm, LlmRequest, OpenAiCompatible};
/// use ptc_turn::Message;
///
/// let llm = OpenAiCompatible::new("http://localhost:11434/v1", "llama3")?;
/// let reply = llm
///     .complete(&LlmRequest::new("Answer briefly.", vec![Message::user("2+2?")]))
///     .await?;
/// println!("{} ({} tokens in)", reply.content, reply.usage.input_tokens);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct OpenAiCompatible {
    base_url: String,
    model: String,
    api_key: Option<String>,
    timeout: Duration,
    retry: RetryPolicy,
    max_tokens_field: String,
    prompt_cache_key: Option<String>,
    default_max_tokens: u32,
    stream: bool,
    headers: Vec<(HeaderName, HeaderValue)>,
    client: reqwest::Client,
}

impl fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("max_tokens_field", &self.max_tokens_field)
            .field("prompt_cache_key", &self.prompt_cache_key)
            .field("default_max_tokens", &self.default_max_tokens)
            .field("stream", &self.stream)
            .field("headers", &http::header_names(&self.headers))
            .finish()
    }
}

impl OpenAiCompatible {
    /// A model on the server at `base_url` (the part before `/chat/completions`), without an
    /// API key; add one with [`with_api_key`](Self::with_api_key) if the server wants it.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Result<Self, LlmError> {
        let base_url = normalize_base_url(base_url.into())?;
        let model = model.into();
        if model.trim().is_empty() {
            return Err(LlmError::Configuration(
                "the model name is empty; name the model the server should run".into(),
            ));
        }
        Ok(OpenAiCompatible {
            base_url,
            model,
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
            max_tokens_field: "max_tokens".into(),
            prompt_cache_key: None,
            default_max_tokens: DEFAULT_MAX_TOKENS,
            stream: false,
            headers: Vec::new(),
            client: http::build_client()?,
        })
    }

    /// An OpenAI model, with the API key from `OPENAI_API_KEY`, at OpenAI's API or, when
    /// `OPENAI_BASE_URL` is set, at that URL (a proxy or a gateway, as OpenAI's own clients
    /// allow).
    ///
    /// OpenAI's current models take the reply limit as `max_completion_tokens`, so that is the
    /// field used (see [`with_max_tokens_field`](Self::with_max_tokens_field)).
    pub fn openai(model: impl Into<String>) -> Result<Self, LlmError> {
        let key = std::env::var("OPENAI_API_KEY")
            .ok()
            .filter(|key| !key.trim().is_empty())
            .ok_or_else(|| {
                LlmError::Configuration(
                    "OPENAI_API_KEY is not set; export your OpenAI API key in it".into(),
                )
            })?;
        let base_url = std::env::var("OPENAI_BASE_URL")
            .ok()
            .filter(|url| !url.trim().is_empty())
            .unwrap_or_else(|| OPENAI_BASE_URL.to_string());
        Ok(OpenAiCompatible::new(base_url, model)?
            .with_api_key(key)
            .with_max_tokens_field("max_completion_tokens"))
    }

    /// Sends `Authorization: Bearer {key}` with every request.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The longest a request may take, retries not counted (default 120 s).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How failed requests are retried (default [`RetryPolicy::default`]: 3 retries with
    /// growing, jittered waits).
    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The body field carrying [`LlmRequest::max_tokens`]: `max_tokens` (the default, which
    /// self-hosted servers understand) or `max_completion_tokens`.
    pub fn with_max_tokens_field(mut self, field: impl Into<String>) -> Self {
        self.max_tokens_field = field.into();
        self
    }

    /// Sends `prompt_cache_key` with every request: OpenAI sends requests with the same key
    /// and prefix to the same cache. Use one key per kind of task (e.g. per agent), so runs that
    /// share a system prompt and tools share their cache; none is sent unless set.
    pub fn with_prompt_cache_key(mut self, key: impl Into<String>) -> Self {
        self.prompt_cache_key = Some(key.into());
        self
    }

    /// The reply limit for requests that set none (default
    /// [`super::DEFAULT_MAX_TOKENS`]).
    pub fn with_default_max_tokens(mut self, max_tokens: u32) -> Self {
        self.default_max_tokens = max_tokens;
        self
    }

    /// Asks for every reply as a stream of server-sent events (`"stream": true`, with
    /// `stream_options.include_usage` so that servers which can report the usage at the end of
    /// a stream do) and puts it together before returning it; the reply is the same. What
    /// streaming changes is what happens when the client stops waiting (the request timed out,
    /// the run's deadline passed, the run was stopped): the connection closes, and a server
    /// that streams stops writing the reply at its next token instead of finishing it for
    /// nobody, so the retry, or the next run, does not queue behind it. Local servers that
    /// serve one request at a time (llama.cpp's, llama-cpp-python's, Ollama) need this; some
    /// (llama-cpp-python) report no token usage for streamed replies, which then counts as 0.
    pub fn with_streaming(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// Sends the header `name: value` with every request, for gateways and proxies that want
    /// their own (Azure's `api-key`, OpenRouter's `HTTP-Referer` and `X-Title`, a routing
    /// header). A custom header replaces the provider's header of the same name
    /// (`Authorization` from [`with_api_key`](Self::with_api_key), `Content-Type`); giving a
    /// name twice keeps the last value. Values are never logged nor shown by
    /// [`describe`](Llm::describe) or `Debug`, since they may hold credentials.
    ///
    /// An invalid name (spaces, a colon) or value (a line break) is an
    /// [`LlmError::Configuration`] naming the header.
    ///
    /// ```
    /// use ptc_agent::llm::OpenAiCompatible;
    ///
    /// let llm = OpenAiCompatible::new("https://openrouter.ai/api/v1", "openai/gpt-4o-mini")?
    ///     .with_header("HTTP-Referer", "https://example.com")?
    ///     .with_header("X-Title", "Example")?;
    /// assert!(OpenAiCompatible::new("http://localhost:8000/v1", "m")?
    ///     .with_header("X Title", "Example")
    ///     .is_err());
    /// # Ok::<(), ptc_agent::llm::LlmError>(())
    /// ```
    pub fn with_header(mut self, name: &str, value: &str) -> Result<Self, LlmError> {
        self.headers.push(http::custom_header(name, value)?);
        Ok(self)
    }

    /// The API root requests go to, without a trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The model every request names.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The JSON body sent for `request`.
    pub fn request_body(&self, request: &LlmRequest) -> Result<Value, LlmError> {
        request.validate()?;
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !request.system.is_empty() {
            messages.push(json!({"role": "system", "content": request.system}));
        }
        messages.extend(wire::openai::messages_to_json(&request.messages));
        let mut body = Map::new();
        body.insert("model".into(), Value::from(self.model.as_str()));
        body.insert("messages".into(), Value::Array(messages));
        body.insert(
            self.max_tokens_field.clone(),
            Value::from(request.max_tokens.unwrap_or(self.default_max_tokens)),
        );
        if let Some(temperature) = request.temperature {
            body.insert("temperature".into(), json_f32(temperature));
        }
        sampling::write_openai(&request.sampling, &mut body);
        if !request.tools.is_empty() {
            body.insert(
                "tools".into(),
                request
                    .tools
                    .iter()
                    .map(FunctionTool::openai_json)
                    .collect(),
            );
            if request.tool_choice == ToolChoice::Required {
                body.insert("tool_choice".into(), Value::from("required"));
            }
            if let Some(parallel) = request.sampling.parallel_tool_calls {
                body.insert("parallel_tool_calls".into(), Value::Bool(parallel));
            }
        }
        if let Some(key) = &self.prompt_cache_key {
            body.insert("prompt_cache_key".into(), Value::from(key.as_str()));
        }
        if self.stream {
            body.insert("stream".into(), Value::Bool(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Ok(Value::Object(body))
    }

    fn parse_response(&self, value: &Value) -> Result<LlmResponse, LlmError> {
        let invalid = |message: String| LlmError::InvalidResponse {
            provider: self.describe(),
            message,
        };
        let choice = value
            .pointer("/choices/0")
            .ok_or_else(|| invalid("the response has no `choices[0]`".into()))?;
        let message = choice
            .get("message")
            .ok_or_else(|| invalid("`choices[0]` has no `message`".into()))?;
        let message = wire::openai::message_from_json(message)
            .map_err(|e| invalid(format!("`choices[0].message` is malformed: {e}")))?;
        let count = |pointer: &str| value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
        // `prompt_tokens` includes the cached ones; TokenUsage keeps the parts apart.
        let cached = count("/usage/prompt_tokens_details/cached_tokens");
        Ok(LlmResponse {
            content: message.content,
            usage: TokenUsage {
                input_tokens: count("/usage/prompt_tokens").saturating_sub(cached),
                output_tokens: count("/usage/completion_tokens"),
                cache_read_tokens: cached,
                cache_write_tokens: 0,
            },
            model: value.get("model").and_then(Value::as_str).map(String::from),
            stop_reason: choice
                .get("finish_reason")
                .and_then(Value::as_str)
                .map(String::from),
            // Set by the HTTP exchange, which counts the retries.
            attempts: 1,
            tool_calls: message.tool_calls,
            usage_estimated: false,
        })
    }
}

#[async_trait]
impl Llm for OpenAiCompatible {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let span = tracing::info_span!(
            "llm_call",
            gen_ai.provider.name = %self.provider_name(),
            gen_ai.request.model = %self.model
        );
        self.send(request).instrument(span).await
    }

    /// `openai:MODEL` for OpenAI itself, `openai-compatible:URL:MODEL` for other servers: the
    /// spec [`parse_llm_spec`](super::parse_llm_spec) reads.
    fn describe(&self) -> String {
        if self.base_url == OPENAI_BASE_URL {
            format!("openai:{}", self.model)
        } else {
            format!("openai-compatible:{}:{}", self.base_url, self.model)
        }
    }

    /// OpenAI's automatic prefix caching; servers that copy the API cache prefixes the same
    /// way or at no charge.
    fn pricing(&self) -> Option<ptc_compression::PricingKind> {
        Some(ptc_compression::PricingKind::OpenAi)
    }

    fn provider_name(&self) -> String {
        if self.base_url == OPENAI_BASE_URL {
            "openai".into()
        } else {
            "openai-compatible".into()
        }
    }

    fn model_name(&self) -> String {
        self.model.clone()
    }
}

impl OpenAiCompatible {
    async fn send(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let body = self.request_body(request)?;
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.api_key {
            http::insert(
                &mut headers,
                "authorization",
                http::header_value("Authorization", &format!("Bearer {key}"))?,
            );
        }
        http::add_custom(&mut headers, &self.headers);
        let label = self.describe();
        let provider = self.provider_name();
        let ctx = CallContext {
            client: &self.client,
            label: &label,
            provider: &provider,
            model: &self.model,
            timeout: self.timeout,
            retry: &self.retry,
            decode: if self.stream {
                decode_event_stream
            } else {
                http::decode_json
            },
        };
        let url = format!("{}/chat/completions", self.base_url);
        http::call_model(&ctx, &url, headers, &body, |value| {
            self.parse_response(value)
        })
        .await
    }
}

/// A streamed reply (`data: {chunk}` lines ending with `data: [DONE]`) as the one completion
/// it adds up to: the content of every chunk's `delta`, the last `finish_reason`, and the
/// usage and model the chunks carry. Lines that are not `data:` (comments, `event:`, `id:`)
/// are skipped. A chunk with an `error`, a chunk that is not JSON, and a stream that ends
/// before any chunk gave a finish reason or `[DONE]` came are errors.
fn decode_event_stream(text: &str) -> Result<Value, String> {
    let mut content = String::new();
    // Tool calls arrive in pieces: the first delta of a call (by `index`) has its id and name,
    // later ones add to its arguments' text.
    let mut calls: Vec<(String, String, String)> = Vec::new();
    let mut finish_reason = Value::Null;
    let mut usage = None;
    let mut model = None;
    let mut done = false;
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            done = true;
            break;
        }
        if data.is_empty() {
            continue;
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            format!(
                "a streamed chunk is not valid JSON ({e}): {}",
                http::quote(data)
            )
        })?;
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), String::from);
            return Err(format!(
                "the server reported an error mid-stream: {message}"
            ));
        }
        if let Some(choice) = chunk.pointer("/choices/0") {
            if let Some(piece) = choice.pointer("/delta/content").and_then(Value::as_str) {
                content.push_str(piece);
            }
            if let Some(deltas) = choice
                .pointer("/delta/tool_calls")
                .and_then(Value::as_array)
            {
                for delta in deltas {
                    add_tool_call_delta(&mut calls, delta)?;
                }
            }
            if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
                finish_reason = reason.clone();
            }
        }
        if let Some(found) = chunk.get("usage").filter(|u| !u.is_null()) {
            usage = Some(found.clone());
        }
        if let Some(found) = chunk.get("model").and_then(Value::as_str) {
            model = Some(found.to_string());
        }
    }
    if !done && finish_reason.is_null() {
        return Err(format!(
            "the stream ended before the reply was complete (no finish reason, no [DONE]); it \
             starts with: {}",
            http::quote(text)
        ));
    }
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = calls
            .into_iter()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function",
                       "function": {"name": name, "arguments": arguments}})
            })
            .collect();
    }
    let mut completion = json!({
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": finish_reason
        }]
    });
    if let Some(usage) = usage {
        completion["usage"] = usage;
    }
    if let Some(model) = model {
        completion["model"] = Value::from(model);
    }
    Ok(completion)
}

/// Adds one streamed piece of a tool call to the calls so far: a piece with a new `index`
/// starts a call (with its id and name), the others extend its arguments' text.
fn add_tool_call_delta(
    calls: &mut Vec<(String, String, String)>,
    delta: &Value,
) -> Result<(), String> {
    let index = delta
        .get("index")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .unwrap_or(calls.len().saturating_sub(1));
    if index > calls.len() {
        return Err(format!(
            "a streamed tool call skips from call {} to call {index}",
            calls.len()
        ));
    }
    if index == calls.len() {
        calls.push(Default::default());
    }
    let call = &mut calls[index];
    if let Some(id) = delta.get("id").and_then(Value::as_str) {
        call.0 = id.to_string();
    }
    if let Some(name) = delta.pointer("/function/name").and_then(Value::as_str) {
        call.1.push_str(name);
    }
    if let Some(piece) = delta.pointer("/function/arguments").and_then(Value::as_str) {
        call.2.push_str(piece);
    }
    Ok(())
}

/// Checks that `url` is an http(s) URL and drops trailing slashes, so paths can be appended.
pub(crate) fn normalize_base_url(url: String) -> Result<String, LlmError> {
    let trimmed = url.trim().trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"));
    match rest {
        Some(host) if !host.is_empty() => Ok(trimmed.to_string()),
        _ => Err(LlmError::Configuration(format!(
            "`{url}` is not an http:// or https:// URL; give the server's base URL, e.g. \
             http://localhost:11434/v1"
        ))),
    }
}
