//! Custom headers reach the server exactly, replace the provider's own of the same name, and
//! are refused with an error naming them when they cannot be sent.

use crate::support;

use pretty_assertions::assert_eq;
use ptc_agent::llm::{
    Anthropic, Llm, LlmError, LlmRequest, OpenAiCompatible, ProviderOptions, parse_llm_spec_with,
};
use ptc_turn::Message;
use serde_json::json;
use support::{Recorded, Reply, TestServer};

fn request() -> LlmRequest {
    LlmRequest::new("sys", vec![Message::user("hi")])
}

/// The headers the server got, `host` and `content-length` left out (they vary with the port
/// and the body).
fn headers(recorded: &Recorded) -> Vec<(String, String)> {
    recorded
        .headers
        .iter()
        .filter(|(name, _)| name != "host" && name != "content-length")
        .cloned()
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

fn openai_reply() -> Reply {
    Reply::json(
        200,
        &json!({
            "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1}
        }),
    )
}

fn anthropic_reply() -> Reply {
    Reply::json(
        200,
        &json!({
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1}
        }),
    )
}

#[tokio::test]
async fn openai_sends_custom_headers_and_they_replace_its_own() {
    let server = TestServer::start(vec![openai_reply()]).await;
    let llm = OpenAiCompatible::new(format!("{}/v1", server.base_url), "m")
        .unwrap()
        .with_api_key("sk-default")
        .with_header("HTTP-Referer", "https://example.com")
        .unwrap()
        .with_header("X-Title", "Example app")
        .unwrap()
        .with_header("Authorization", "Bearer sk-gateway")
        .unwrap();
    llm.complete(&request()).await.unwrap();
    let got = server.requests();
    assert_eq!(got.len(), 1);
    assert_eq!(
        headers(&got[0]),
        pairs(&[
            ("authorization", "Bearer sk-gateway"),
            ("http-referer", "https://example.com"),
            ("x-title", "Example app"),
            ("content-type", "application/json"),
            ("accept", "*/*"),
            ("user-agent", concat!("ptc-rs/", env!("CARGO_PKG_VERSION"))),
        ])
    );
    // Neither `describe` nor `Debug` shows a value.
    assert_eq!(
        llm.describe(),
        format!("openai-compatible:{}/v1:m", server.base_url)
    );
    let debug = format!("{llm:?}");
    assert!(
        debug.contains(r#"headers: ["http-referer", "x-title", "authorization"]"#),
        "{debug}"
    );
    assert!(
        !debug.contains("sk-gateway") && !debug.contains("Example app"),
        "{debug}"
    );
}

#[tokio::test]
async fn anthropic_sends_custom_headers_and_they_replace_its_own() {
    let server = TestServer::start(vec![anthropic_reply()]).await;
    let llm = Anthropic::new("claude-sonnet-4-5", "sk-ant-default")
        .unwrap()
        .with_base_url(&server.base_url)
        .unwrap()
        .with_header("x-route", "team-a")
        .unwrap()
        .with_header("anthropic-version", "2024-01-01")
        .unwrap();
    llm.complete(&request()).await.unwrap();
    let got = server.requests();
    assert_eq!(got.len(), 1);
    assert_eq!(
        headers(&got[0]),
        pairs(&[
            ("x-api-key", "sk-ant-default"),
            ("anthropic-version", "2024-01-01"),
            ("x-route", "team-a"),
            ("content-type", "application/json"),
            ("accept", "*/*"),
            ("user-agent", concat!("ptc-rs/", env!("CARGO_PKG_VERSION"))),
        ])
    );
    assert_eq!(llm.describe(), "anthropic:claude-sonnet-4-5");
}

#[tokio::test]
async fn provider_options_give_the_spec_models_their_headers() {
    let server = TestServer::start(vec![openai_reply()]).await;
    let options = ProviderOptions {
        headers: vec![("api-key".into(), "azure-key".into())],
        ..ProviderOptions::default()
    };
    let spec = format!("openai-compatible:{}/v1:m", server.base_url);
    let llm = parse_llm_spec_with(&spec, &options).unwrap();
    llm.complete(&request()).await.unwrap();
    assert_eq!(server.requests()[0].header("api-key"), Some("azure-key"));
}

#[test]
fn invalid_headers_are_errors_naming_the_header() {
    let err = |result: Result<OpenAiCompatible, LlmError>| result.unwrap_err().to_string();
    let llm = || OpenAiCompatible::new("http://localhost:8000/v1", "m").unwrap();
    assert_eq!(
        err(llm().with_header("X Title", "Example")),
        "`X Title` is not a valid HTTP header name; a name is letters, \
         digits and !#$%&'*+-.^_`|~ with no spaces or colons, e.g. X-Title"
    );
    assert_eq!(
        err(llm().with_header("X-Secret", "sk-1\nInjected: yes")),
        "the value of the x-secret header contains characters that \
         cannot be sent in an HTTP header (such as a line break)"
    );
    let anthropic = Anthropic::new("claude-sonnet-4-5", "k")
        .unwrap()
        .with_header("", "v")
        .unwrap_err()
        .to_string();
    assert_eq!(
        anthropic,
        "`` is not a valid HTTP header name; a name is letters, \
         digits and !#$%&'*+-.^_`|~ with no spaces or colons, e.g. X-Title"
    );
}
