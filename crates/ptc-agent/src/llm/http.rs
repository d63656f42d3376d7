//! The HTTP exchange shared by the providers: one JSON POST, retried as the policy says.

use std::sync::Once;
use std::time::{Duration, Instant, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use serde_json::Value;

use super::LlmError;
use super::retry::{
    Attempt, Callee, Failure, RetryPolicy, millis, parse_retry_after, with_retries,
};
use ptc_run::HumanDuration;
use ptc_run::model::is_transient_status;

/// The default per-request timeout: long enough for a slow model writing a long reply (a
/// large model, or a local one on a CPU, can take a minute or more), short enough that a server
/// that accepted the request and went silent is given up on within minutes, not hours.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// The tracing target of the notices that a model request is still waiting for its answer,
/// so that a front end can show them without the rest of the library's information events
/// (`ptc` shows them by default).
pub const WAIT_TARGET: &str = "ptc_agent::wait";

/// When a request still waiting for its answer is reported: after 10 s, then every 30 s (30 s,
/// 60 s, 90 s, ...), so that a silent provider is noticed at once and a slow one does not fill
/// the log.
fn wait_notice(n: u32) -> Duration {
    match n {
        0 => Duration::from_secs(10),
        n => Duration::from_secs(30 * u64::from(n)),
    }
}

/// A duration of whole seconds as a notice shows it: `10 s`, `2 min 30 s`.
fn whole(d: Duration) -> String {
    let secs = d.as_secs();
    match (secs / 60, secs % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

/// The longest piece of a non-JSON error body quoted in an error.
const MAX_QUOTED_BODY: usize = 500;

/// Makes rustls's `ring` crypto provider the process's default, unless one already is: every
/// HTTP client of the library (the providers', the OTLP exporter's) needs one.
pub(crate) fn install_crypto_provider() {
    static INSTALL_PROVIDER: Once = Once::new();
    INSTALL_PROVIDER.call_once(|| {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Fails only when another thread installed one first, which is just as good.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
    });
}

/// An HTTP client for the providers, using rustls with the `ring` crypto provider.
pub(crate) fn build_client() -> Result<reqwest::Client, LlmError> {
    install_crypto_provider();
    reqwest::Client::builder()
        .user_agent(concat!("ptc-rs/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| {
            LlmError::Configuration(format!(
                "could not set up the HTTP client: {}",
                error_chain(&e)
            ))
        })
}

/// What a provider call needs besides the request itself.
pub(crate) struct CallContext<'a> {
    pub client: &'a reqwest::Client,
    /// Names the provider in errors, e.g. `anthropic:claude-sonnet-4-5`.
    pub label: &'a str,
    /// The provider kind and model, for tracing.
    pub provider: &'a str,
    pub model: &'a str,
    pub timeout: Duration,
    pub retry: &'a RetryPolicy,
    /// How a successful response body becomes the JSON value the provider parses:
    /// [`decode_json`], or a provider's reader of its streamed replies.
    pub decode: fn(&str) -> Result<Value, String>,
}

/// A response body that is one JSON document.
pub(crate) fn decode_json(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| {
        format!(
            "the body is not valid JSON ({e}); it starts with: {}",
            quote(text)
        )
    })
}

/// POSTs a request body (retrying transient failures), parses the reply with `parse`, records
/// the requests it took in [`LlmResponse::attempts`](super::LlmResponse::attempts), and logs
/// the call's token usage.
pub(crate) async fn call_model(
    ctx: &CallContext<'_>,
    url: &str,
    headers: HeaderMap,
    body: &Value,
    parse: impl FnOnce(&Value) -> Result<super::LlmResponse, LlmError>,
) -> Result<super::LlmResponse, LlmError> {
    let started = Instant::now();
    let (value, mut failed) = post_json(ctx, url, headers, body).await?;
    let attempts = u32::try_from(failed.len())
        .unwrap_or(u32::MAX)
        .saturating_add(1);
    let mut response = parse(&value).map_err(|error| {
        failed.push(error);
        LlmError::after_attempts(failed)
    })?;
    response.attempts = attempts;
    tracing::info!(
        gen_ai.provider.name = ctx.provider,
        gen_ai.request.model = ctx.model,
        gen_ai.usage.input_tokens = response.usage.prompt_tokens(),
        gen_ai.usage.output_tokens = response.usage.output_tokens,
        gen_ai.usage.cache_read.input_tokens = response.usage.cache_read_tokens,
        gen_ai.usage.cache_creation.input_tokens = response.usage.cache_write_tokens,
        duration_ms = millis(started.elapsed()),
        "model call completed in {}",
        HumanDuration(started.elapsed())
    );
    Ok(response)
}

/// POSTs `body` to `url` and returns the JSON answer and the failures of the attempts before
/// it, retrying transient failures. Logs an event per attempt; the caller's span names the
/// call. A failure after more than one request is a [`LlmError::RetriesExhausted`] holding
/// every attempt's error.
pub(crate) async fn post_json(
    ctx: &CallContext<'_>,
    url: &str,
    headers: HeaderMap,
    body: &Value,
) -> Result<(Value, Vec<LlmError>), LlmError> {
    let bytes = serde_json::to_vec(body).map_err(|e| {
        LlmError::InvalidRequest(format!("could not encode the request as JSON: {e}"))
    })?;
    let callee = Callee {
        provider: ctx.provider,
        model: ctx.model,
        log_last_failure: true,
    };
    let mut post = Post {
        ctx,
        url,
        headers: &headers,
        body: &bytes,
    };
    with_retries(ctx.retry, &callee, &mut post).await
}

/// One POST of a request body.
struct Post<'a> {
    ctx: &'a CallContext<'a>,
    url: &'a str,
    headers: &'a HeaderMap,
    body: &'a [u8],
}

impl Attempt for Post<'_> {
    type Output = Value;

    /// Sends the body, reporting a long wait while it lasts (a silent provider otherwise shows
    /// nothing until the request timeout runs out), and logs a success.
    async fn make(&mut self, attempt: u32) -> Result<Value, Failure> {
        let ctx = self.ctx;
        let started = Instant::now();
        let request = attempt_once(ctx, self.url, self.headers, self.body.to_vec());
        tokio::pin!(request);
        let mut notice = 0;
        let (status, value) = loop {
            let at = wait_notice(notice);
            if at >= ctx.timeout {
                break request.await;
            }
            match tokio::time::timeout_at((started + at).into(), &mut request).await {
                Ok(outcome) => break outcome,
                Err(_) => {
                    tracing::info!(
                        target: WAIT_TARGET,
                        attempt,
                        waited_ms = millis(at),
                        "waiting for the model: {} (attempt {attempt}; abandoned at {})",
                        whole(at),
                        whole(ctx.timeout)
                    );
                    notice += 1;
                }
            }
        }?;
        tracing::debug!(
            gen_ai.provider.name = ctx.provider,
            gen_ai.request.model = ctx.model,
            attempt,
            status,
            duration_ms = millis(started.elapsed()),
            "model call attempt {attempt} succeeded"
        );
        Ok(value)
    }
}

async fn attempt_once(
    ctx: &CallContext<'_>,
    url: &str,
    headers: &HeaderMap,
    body: Vec<u8>,
) -> Result<(u16, Value), Failure> {
    let transport = |e: reqwest::Error| Failure {
        error: classify(ctx, url, &e),
        retry_after: None,
    };
    let response = ctx
        .client
        .post(url)
        .timeout(ctx.timeout)
        .headers(with_json_content_type(headers))
        .body(body)
        .send()
        .await
        .map_err(transport)?;
    let status = response.status();
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_retry_after(v, SystemTime::now()));
    let text = response.text().await.map_err(transport)?;
    if status.is_success() {
        return (ctx.decode)(&text)
            .map(|value| (status.as_u16(), value))
            .map_err(|message| Failure {
                error: LlmError::InvalidResponse {
                    provider: ctx.label.to_string(),
                    message,
                },
                retry_after: None,
            });
    }
    let message = provider_message(&text, status);
    let error = if status == StatusCode::TOO_MANY_REQUESTS {
        LlmError::RateLimited {
            provider: ctx.label.to_string(),
            message,
            retry_after,
        }
    } else {
        LlmError::Http {
            provider: ctx.label.to_string(),
            status: status.as_u16(),
            message,
        }
    };
    Err(Failure {
        retry_after: retry_after.filter(|_| is_transient_status(status.as_u16())),
        error,
    })
}

fn classify(ctx: &CallContext<'_>, url: &str, e: &reqwest::Error) -> LlmError {
    if e.is_timeout() {
        LlmError::Timeout {
            provider: ctx.label.to_string(),
            timeout: ctx.timeout,
        }
    } else if e.is_connect() {
        LlmError::Connect {
            provider: ctx.label.to_string(),
            url: url.to_string(),
            message: root_cause(e),
        }
    } else if e.is_builder() {
        LlmError::Configuration(format!(
            "cannot send a request to {url}: {}; check the base URL",
            error_chain(e)
        ))
    } else {
        LlmError::Transport {
            provider: ctx.label.to_string(),
            message: cause_chain(e),
        }
    }
}

/// The innermost cause, which names what went wrong ("Connection refused (os error 111)").
fn root_cause(e: &dyn std::error::Error) -> String {
    let mut cause = e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}

/// The causes of a transport error; its own text only repeats the URL.
fn cause_chain(e: &dyn std::error::Error) -> String {
    match e.source() {
        Some(cause) => error_chain(cause),
        None => e.to_string(),
    }
}

/// An error and its causes, which is where the useful part ("Connection refused") usually is.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The provider's explanation of an error response: `error.message` in the JSON body as OpenAI
/// and Anthropic send it, or the shapes other servers use (`error` as a string, `message`,
/// `detail`), else the body itself.
pub(crate) fn provider_message(body: &str, status: StatusCode) -> String {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        let found = value
            .pointer("/error/message")
            .or_else(|| value.get("error"))
            .or_else(|| value.get("message"))
            .or_else(|| value.get("detail"))
            .and_then(Value::as_str);
        if let Some(message) = found {
            return message.to_string();
        }
    }
    if body.trim().is_empty() {
        status
            .canonical_reason()
            .unwrap_or("no error message")
            .to_string()
    } else {
        quote(body)
    }
}

pub(crate) fn quote(body: &str) -> String {
    let body = body.trim();
    let mut quoted: String = body.chars().take(MAX_QUOTED_BODY).collect();
    if quoted.len() < body.len() {
        quoted.push_str("...");
    }
    quoted
}

/// A header value from configuration, such as an API key.
pub(crate) fn header_value(name: &str, value: &str) -> Result<HeaderValue, LlmError> {
    let mut value = HeaderValue::from_str(value).map_err(|_| {
        LlmError::Configuration(format!(
            "the value for the {name} header contains characters that cannot be sent in an HTTP \
             header (such as a line break); check the API key"
        ))
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// The request's headers, with `Content-Type: application/json` unless a custom header set it.
fn with_json_content_type(headers: &HeaderMap) -> HeaderMap {
    let mut headers = headers.clone();
    if !headers.contains_key(CONTENT_TYPE) {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    headers
}

/// A header a user adds to every request (`name`, `value`), checked: an error names the
/// header, and never quotes the value, which may be a credential. The value is marked
/// sensitive, so that debug output of the request does not show it.
pub(crate) fn custom_header(
    name: &str,
    value: &str,
) -> Result<(HeaderName, HeaderValue), LlmError> {
    let header = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
        LlmError::Configuration(format!(
            "`{name}` is not a valid HTTP header name; a name is letters, digits and \
             !#$%&'*+-.^_`|~ with no spaces or colons, e.g. X-Title"
        ))
    })?;
    let mut value = HeaderValue::from_str(value.trim()).map_err(|_| {
        LlmError::Configuration(format!(
            "the value of the {header} header contains characters that cannot be sent in an \
             HTTP header (such as a line break)"
        ))
    })?;
    value.set_sensitive(true);
    Ok((header, value))
}

/// Adds the custom headers to a provider's own, each replacing a provider header of the same
/// name (the last custom value for a name wins).
pub(crate) fn add_custom(headers: &mut HeaderMap, custom: &[(HeaderName, HeaderValue)]) {
    for (name, value) in custom {
        headers.insert(name.clone(), value.clone());
    }
}

/// The names of custom headers, for `Debug` output that leaves their values out.
pub(crate) fn header_names(custom: &[(HeaderName, HeaderValue)]) -> Vec<&str> {
    custom.iter().map(|(name, _)| name.as_str()).collect()
}

/// Inserts a header whose name is a constant.
pub(crate) fn insert(headers: &mut HeaderMap, name: &'static str, value: HeaderValue) {
    headers.insert(HeaderName::from_static(name), value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_waiting_request_is_reported_at_10_s_then_every_30_s() {
        let marks: Vec<String> = (0..5).map(|n| whole(wait_notice(n))).collect();
        assert_eq!(marks, ["10 s", "30 s", "1 min", "1 min 30 s", "2 min"]);
    }

    #[test]
    fn provider_messages_from_common_error_bodies() {
        let s = StatusCode::BAD_REQUEST;
        assert_eq!(
            provider_message(
                r#"{"error":{"message":"Invalid model","type":"invalid_request_error"}}"#,
                s
            ),
            "Invalid model"
        );
        assert_eq!(
            provider_message(
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
                s
            ),
            "invalid x-api-key"
        );
        assert_eq!(
            provider_message(r#"{"error":"model 'x' not found"}"#, s),
            "model 'x' not found"
        );
        assert_eq!(
            provider_message(r#"{"detail":"Not Found"}"#, s),
            "Not Found"
        );
        assert_eq!(
            provider_message("  <html>bad gateway</html>\n", s),
            "<html>bad gateway</html>"
        );
        assert_eq!(provider_message("", StatusCode::BAD_GATEWAY), "Bad Gateway");
        assert_eq!(
            provider_message(&"x".repeat(600), s),
            format!("{}...", "x".repeat(500))
        );
    }
}
