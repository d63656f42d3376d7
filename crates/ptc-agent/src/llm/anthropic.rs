//! The Anthropic Messages API.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::wire;
use async_trait::async_trait;
use ptc_compression::anthropic_breakpoints;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use tracing::Instrument;

use super::http::{self, CallContext, DEFAULT_TIMEOUT};
use super::openai::normalize_base_url;
use super::sampling::{self, json_f32};
use super::{
    DEFAULT_MAX_TOKENS, FunctionTool, Llm, LlmError, LlmRequest, LlmResponse, RetryPolicy,
    TokenUsage, ToolChoice,
};

/// Anthropic's API root.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// The API version this client speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A Claude model behind `POST {base_url}/v1/messages`.
///
/// Prompt caching, as a client should place it: the system prompt is sent as a text block marked
/// `"cache_control": {"type": "ephemeral"}`, and each of the request's
/// [`CacheBreakpoint`](super::CacheBreakpoint)s splits its user message into text blocks with the
/// mark on the block that ends there: the stable `tool/` and `data/` prefix, and the newest
/// message the next request repeats (a rolling breakpoint, so that every earlier turn of a
/// growing history is a cache read on the next request). A request never carries more than the
/// four marks the API allows: past three breakpoints, the first and the newest two are kept
/// ([`ptc_compression::anthropic_breakpoints`], which the `anthropic` pricing profile prices
/// the same way).
///
/// ```no_run
/// # async fn demo() -> Result<(), ptc_agent::llm::LlmError> {
/// use ptc_agent::llm::{Anthropic, Llm, LlmRequest};
/// use ptc_turn::Message;
///
/// let llm = Anthropic::from_env("claude-sonnet-4-5")?;
/// let prompt = ";; === tool/ ===\n(tool/search query)\n;; === user/ ===\n";
/// let request = LlmRequest::new("Write one PTC-Lisp program.", vec![Message::user(prompt)])
///     // Cache everything up to the user/ section.
///     .with_cache_breakpoint(0, prompt.find(";; === user/").unwrap_or(0));
/// let reply = llm.complete(&request).await?;
/// println!("{} ({} tokens from cache)", reply.content, reply.usage.cache_read_tokens);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Anthropic {
    base_url: String,
    model: String,
    api_key: String,
    timeout: Duration,
    retry: RetryPolicy,
    default_max_tokens: u32,
    headers: Vec<(HeaderName, HeaderValue)>,
    client: reqwest::Client,
}

impl fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Anthropic")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &"<redacted>")
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("default_max_tokens", &self.default_max_tokens)
            .field("headers", &http::header_names(&self.headers))
            .finish()
    }
}

impl Anthropic {
    /// A model with the given API key.
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Result<Self, LlmError> {
        let model = model.into();
        if model.trim().is_empty() {
            return Err(LlmError::Configuration(
                "the model name is empty; name a Claude model, e.g. claude-sonnet-4-5".into(),
            ));
        }
        Ok(Anthropic {
            base_url: ANTHROPIC_BASE_URL.into(),
            model,
            api_key: api_key.into(),
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
            default_max_tokens: DEFAULT_MAX_TOKENS,
            headers: Vec::new(),
            client: http::build_client()?,
        })
    }

    /// A model with the API key from `ANTHROPIC_API_KEY`, at Anthropic's API or, when
    /// `ANTHROPIC_BASE_URL` is set, at that URL.
    pub fn from_env(model: impl Into<String>) -> Result<Self, LlmError> {
        let key = std::env::var("ANTHROPIC_API_KEY")
            .ok()
            .filter(|key| !key.trim().is_empty())
            .ok_or_else(|| {
                LlmError::Configuration(
                    "ANTHROPIC_API_KEY is not set; export your Anthropic API key in it".into(),
                )
            })?;
        let llm = Anthropic::new(model, key)?;
        match std::env::var("ANTHROPIC_BASE_URL") {
            Ok(url) if !url.trim().is_empty() => llm.with_base_url(url),
            _ => Ok(llm),
        }
    }

    /// Talks to another host than Anthropic's (a proxy, a gateway, a test server); the URL is
    /// the part before `/v1/messages`.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Result<Self, LlmError> {
        self.base_url = normalize_base_url(base_url.into())?;
        Ok(self)
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

    /// Sends the header `name: value` with every request, for gateways and proxies that want
    /// their own (a routing header, a gateway's key). A custom header replaces the provider's
    /// header of the same name (`x-api-key`, `anthropic-version`, `Content-Type`); giving a
    /// name twice keeps the last value. Values are never logged nor shown by
    /// [`describe`](Llm::describe) or `Debug`, since they may hold credentials.
    ///
    /// An invalid name (spaces, a colon) or value (a line break) is an
    /// [`LlmError::Configuration`] naming the header.
    ///
    /// ```
    /// use ptc_agent::llm::Anthropic;
    ///
    /// let llm = Anthropic::new("claude-sonnet-4-5", "sk-ant-example")?
    ///     .with_base_url("https://gateway.example.com/anthropic")?
    ///     .with_header("X-Route", "team-a")?;
    /// assert!(Anthropic::new("claude-sonnet-4-5", "sk-ant-example")?
    ///     .with_header("X-Route", "a\nb")
    ///     .is_err());
    /// # Ok::<(), ptc_agent::llm::LlmError>(())
    /// ```
    pub fn with_header(mut self, name: &str, value: &str) -> Result<Self, LlmError> {
        self.headers.push(http::custom_header(name, value)?);
        Ok(self)
    }

    /// The reply limit for requests that set none (default
    /// [`super::DEFAULT_MAX_TOKENS`]); the API requires one.
    pub fn with_default_max_tokens(mut self, max_tokens: u32) -> Self {
        self.default_max_tokens = max_tokens;
        self
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
    ///
    /// System messages at the start of [`LlmRequest::messages`] become further system blocks
    /// after [`LlmRequest::system`]; the last system block carries the cache mark.
    pub fn request_body(&self, request: &LlmRequest) -> Result<Value, LlmError> {
        request.validate()?;
        let conversation = wire::anthropic::to_anthropic(&request.messages)
            .map_err(|e| LlmError::InvalidRequest(e.to_string()))?;
        let mut messages = conversation.messages;
        // `validate` made sure each breakpoint is in a user message, which maps to exactly one
        // wire message with string content.
        let mut offsets: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for breakpoint in anthropic_breakpoints(&request.cache_breakpoints) {
            if let Some(position) = conversation
                .positions
                .get(breakpoint.message_index)
                .copied()
                .flatten()
            {
                offsets
                    .entry(position)
                    .or_default()
                    .push(breakpoint.byte_offset);
            }
        }
        for (position, offsets) in offsets {
            if let Some(message) = messages.get_mut(position) {
                split_at_breakpoints(message, &offsets);
            }
        }

        let mut system_texts = Vec::with_capacity(conversation.system.len() + 1);
        if !request.system.is_empty() {
            system_texts.push(request.system.clone());
        }
        system_texts.extend(conversation.system);
        let mut system = wire::anthropic::system_to_json(&system_texts);

        let mut body = Map::new();
        body.insert("model".into(), Value::from(self.model.as_str()));
        body.insert(
            "max_tokens".into(),
            Value::from(request.max_tokens.unwrap_or(self.default_max_tokens)),
        );
        if let Some(last) = system.as_array_mut().and_then(|blocks| blocks.last_mut()) {
            mark_cacheable(last);
            body.insert("system".into(), system);
        }
        body.insert("messages".into(), Value::Array(messages));
        if let Some(temperature) = request.temperature {
            body.insert("temperature".into(), json_f32(temperature));
        }
        sampling::write_anthropic(&request.sampling, &mut body)?;
        if !request.tools.is_empty() {
            body.insert(
                "tools".into(),
                request
                    .tools
                    .iter()
                    .map(FunctionTool::anthropic_json)
                    .collect(),
            );
            let kind = match request.tool_choice {
                ToolChoice::Required => "any",
                ToolChoice::Auto => "auto",
            };
            if request.sampling.parallel_tool_calls == Some(false) {
                body.insert(
                    "tool_choice".into(),
                    json!({"type": kind, "disable_parallel_tool_use": true}),
                );
            } else if request.tool_choice == ToolChoice::Required {
                // Several calls in one reply are Anthropic's default.
                body.insert("tool_choice".into(), json!({"type": kind}));
            }
        }
        Ok(Value::Object(body))
    }

    fn parse_response(&self, value: &Value) -> Result<LlmResponse, LlmError> {
        let invalid = |message: String| LlmError::InvalidResponse {
            provider: self.describe(),
            message,
        };
        let content = value
            .get("content")
            .ok_or_else(|| invalid("the response has no `content`".into()))?;
        let messages =
            wire::anthropic::message_from_json(&json!({"role": "assistant", "content": content}))
                .map_err(|e| invalid(format!("the response content is malformed: {e}")))?;
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        for message in messages {
            text.push_str(&message.content);
            tool_calls.extend(message.tool_calls);
        }
        let count = |pointer: &str| value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
        Ok(LlmResponse {
            content: text,
            usage: TokenUsage {
                input_tokens: count("/usage/input_tokens"),
                output_tokens: count("/usage/output_tokens"),
                cache_read_tokens: count("/usage/cache_read_input_tokens"),
                cache_write_tokens: count("/usage/cache_creation_input_tokens"),
            },
            model: value.get("model").and_then(Value::as_str).map(String::from),
            stop_reason: value
                .get("stop_reason")
                .and_then(Value::as_str)
                .map(String::from),
            // Set by the HTTP exchange, which counts the retries.
            attempts: 1,
            tool_calls,
            usage_estimated: false,
        })
    }
}

fn mark_cacheable(block: &mut Value) {
    if let Some(obj) = block.as_object_mut() {
        obj.insert("cache_control".into(), json!({"type": "ephemeral"}));
    }
}

/// Turns a user message's string content into text blocks that end at `offsets` (in order),
/// each marked for the cache, and a last unmarked block with the rest. Empty blocks are left
/// out, as the API rejects them; a breakpoint at 0 marks nothing.
fn split_at_breakpoints(message: &mut Value, offsets: &[usize]) {
    // A tool result (a program's feedback when programs come as tool calls): the last block of
    // the user message holds it, and its own content is split the same way.
    if let Some(block) = message
        .get_mut("content")
        .and_then(Value::as_array_mut)
        .and_then(|blocks| blocks.last_mut())
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
    {
        let whole = block
            .get("content")
            .and_then(Value::as_str)
            .map_or(0, str::len);
        if offsets.iter().all(|&o| o >= whole) {
            mark_cacheable(block);
        } else {
            split_at_breakpoints(block, offsets);
        }
        return;
    }
    let Some(text) = message.get("content").and_then(Value::as_str) else {
        return;
    };
    let mut blocks = Vec::with_capacity(offsets.len() + 1);
    let mut start = 0;
    for &end in offsets {
        let Some(part) = text.get(start..end).filter(|part| !part.is_empty()) else {
            continue;
        };
        blocks.push(json!({
            "type": "text",
            "text": part,
            "cache_control": {"type": "ephemeral"},
        }));
        start = end;
    }
    if blocks.is_empty() {
        return;
    }
    if let Some(rest) = text.get(start..).filter(|rest| !rest.is_empty()) {
        blocks.push(json!({"type": "text", "text": rest}));
    }
    if let Some(obj) = message.as_object_mut() {
        obj.insert("content".into(), Value::Array(blocks));
    }
}

#[async_trait]
impl Llm for Anthropic {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let span = tracing::info_span!(
            "llm_call",
            gen_ai.provider.name = "anthropic",
            gen_ai.request.model = %self.model
        );
        self.send(request).instrument(span).await
    }

    fn describe(&self) -> String {
        format!("anthropic:{}", self.model)
    }

    fn pricing(&self) -> Option<ptc_compression::PricingKind> {
        Some(ptc_compression::PricingKind::Anthropic)
    }

    fn provider_name(&self) -> String {
        "anthropic".into()
    }

    fn model_name(&self) -> String {
        self.model.clone()
    }
}

impl Anthropic {
    async fn send(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let body = self.request_body(request)?;
        let mut headers = HeaderMap::new();
        http::insert(
            &mut headers,
            "x-api-key",
            http::header_value("x-api-key", &self.api_key)?,
        );
        http::insert(
            &mut headers,
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        http::add_custom(&mut headers, &self.headers);
        let label = self.describe();
        let ctx = CallContext {
            client: &self.client,
            label: &label,
            provider: "anthropic",
            model: &self.model,
            timeout: self.timeout,
            retry: &self.retry,
            decode: http::decode_json,
        };
        let url = format!("{}/v1/messages", self.base_url);
        http::call_model(&ctx, &url, headers, &body, |value| {
            self.parse_response(value)
        })
        .await
    }
}
