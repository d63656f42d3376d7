//! `OpenAiCompatible` against a local server answering like the Chat Completions API.

use crate::support;

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ptc_agent::Agent;
use ptc_agent::llm::{
    Llm, LlmError, LlmRequest, LlmResponse, OpenAiCompatible, RetryPolicy, TokenUsage,
};
use ptc_lisp::Value as LispValue;
use ptc_turn::{Message, MessageToolCall, StepOutcome};
use serde_json::{Value, json};
use support::{Reply, TestServer, closed_port};

/// A real-shaped Chat Completions response.
fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4o-2024-08-06",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": null, "annotations": []},
            "logprobs": null,
            "finish_reason": "stop"
        }],
        "usage": {
            "prompt_tokens": 1117,
            "completion_tokens": 46,
            "total_tokens": 1163,
            "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0
            }
        },
        "service_tier": "default",
        "system_fingerprint": "fp_6ec83003ad"
    })
}

fn server_error() -> Reply {
    Reply::json(
        500,
        &json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error", "param": null, "code": null}}),
    )
}

/// Retries without real waiting, so tests stay fast.
fn quick_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_secs(5),
        multiplier: 2.0,
        jitter: true,
    }
}

fn llm(server: &TestServer) -> OpenAiCompatible {
    OpenAiCompatible::new(format!("{}/v1/", server.base_url), "gpt-4o")
        .unwrap()
        .with_retry_policy(quick_retries(3))
}

fn request() -> LlmRequest {
    LlmRequest::new("You write PTC-Lisp.", vec![Message::user("Add 1 and 2.")])
}

#[tokio::test]
async fn sends_the_exact_request_and_reads_usage() {
    let server = TestServer::start(vec![Reply::json(200, &completion("(+ 1 2)"))]).await;
    let llm = llm(&server).with_api_key("sk-test");
    let response = llm
        .complete(&request().with_max_tokens(256).with_temperature(0.2))
        .await
        .unwrap();

    assert_eq!(
        response,
        LlmResponse {
            content: "(+ 1 2)".into(),
            // prompt_tokens (1117) includes the 1024 cached ones.
            usage: TokenUsage {
                input_tokens: 93,
                output_tokens: 46,
                cache_read_tokens: 1024,
                cache_write_tokens: 0,
            },
            model: Some("gpt-4o-2024-08-06".into()),
            stop_reason: Some("stop".into()),
            attempts: 1,
            tool_calls: Vec::new(),
            usage_estimated: false,
        }
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        sent.body,
        json!({
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "You write PTC-Lisp."},
                {"role": "user", "content": "Add 1 and 2."}
            ],
            "max_tokens": 256,
            "temperature": 0.2
        })
    );
}

#[tokio::test]
async fn a_keyless_local_server_gets_no_authorization_and_no_empty_system() {
    // Ollama's answer: no cached-token details, its own fingerprint.
    let ollama = json!({
        "id": "chatcmpl-431",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "llama3",
        "system_fingerprint": "fp_ollama",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "(* 6 7)"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 26, "completion_tokens": 5, "total_tokens": 31}
    });
    let server = TestServer::start(vec![Reply::json(200, &ollama)]).await;
    let llm = OpenAiCompatible::new(format!("{}/v1", server.base_url), "llama3")
        .unwrap()
        .with_max_tokens_field("max_completion_tokens");
    let history = vec![
        Message::user("What is 6*7?"),
        Message::assistant("").with_tool_calls(vec![MessageToolCall {
            id: "call_1".into(),
            name: "multiply".into(),
            arguments: json!({"a": 6, "b": 7}),
        }]),
        Message::tool_result("call_1", "42"),
    ];
    let response = llm
        .complete(&LlmRequest::new("", history).with_max_tokens(64))
        .await
        .unwrap();

    assert_eq!(response.content, "(* 6 7)");
    assert_eq!(
        response.usage,
        TokenUsage {
            input_tokens: 26,
            output_tokens: 5,
            cache_read_tokens: 0,
            cache_write_tokens: 0
        }
    );
    let sent = &server.requests()[0];
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.body,
        json!({
            "model": "llama3",
            "messages": [
                {"role": "user", "content": "What is 6*7?"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "multiply", "arguments": "{\"a\":6,\"b\":7}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "42"}
            ],
            "max_completion_tokens": 64
        })
    );
}

#[tokio::test]
async fn server_errors_are_retried_until_success() {
    let server = TestServer::start(vec![
        server_error(),
        server_error(),
        Reply::json(200, &completion("(+ 1 2)")),
    ])
    .await;
    let response = llm(&server).complete(&request()).await.unwrap();

    assert_eq!(
        (response.content.as_str(), response.attempts),
        ("(+ 1 2)", 3)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // Every attempt sends the same request.
    assert_eq!(requests[0].body, requests[2].body);
}

fn http_error(status: u16) -> LlmError {
    LlmError::Http {
        provider: "p".into(),
        status,
        message: "m".into(),
    }
}

#[test]
fn request_timeouts_and_server_errors_are_transient_except_permanent_5xx() {
    let transient: Vec<u16> = (100..=599)
        .filter(|&status| http_error(status).is_transient())
        .collect();
    let mut expected = vec![408, 429, 500, 502, 503, 504, 507, 509];
    expected.extend(512..=599);
    assert_eq!(transient, expected);
}

#[tokio::test]
async fn every_transient_status_is_retried_and_permanent_ones_are_not() {
    let mut seen = Vec::new();
    for status in [408, 502, 507, 520, 529, 501, 505, 511] {
        let server = TestServer::start(vec![
            Reply::json(status, &json!({"error": {"message": "trouble"}})),
            Reply::json(200, &completion("ok")),
        ])
        .await;
        let outcome = llm(&server).complete(&request()).await;
        seen.push((
            status,
            server.requests().len(),
            outcome.map(|r| r.attempts).map_err(|e| e.status()),
        ));
    }
    assert_eq!(
        seen,
        vec![
            (408, 2, Ok(2)),
            (502, 2, Ok(2)),
            (507, 2, Ok(2)),
            (520, 2, Ok(2)),
            (529, 2, Ok(2)),
            (501, 1, Err(Some(501))),
            (505, 1, Err(Some(505))),
            (511, 1, Err(Some(511))),
        ]
    );
}

#[tokio::test]
async fn the_agent_counts_every_request_the_provider_sent() {
    let server = TestServer::start(vec![
        server_error(),
        Reply::json(200, &completion("```clojure\n(return 3)\n```")),
    ])
    .await;
    let agent = Agent::builder("Add 1 and 2.")
        .llm(llm(&server))
        .build()
        .expect("agent");
    let step = agent.run().await.expect("runs");
    assert_eq!(step.value(), Some(&LispValue::Int(3)));
    assert_eq!(server.requests().len(), 2);
    assert_eq!(step.turns[0].usage().llm_requests, 2);
    assert_eq!(step.usage.llm_requests, 2);
}

#[tokio::test]
async fn a_permanent_error_after_a_retry_keeps_the_count() {
    let bad_request = Reply::json(400, &json!({"error": {"message": "context too long"}}));
    let server = TestServer::start(vec![server_error(), server_error(), bad_request]).await;
    let err = llm(&server).complete(&request()).await.unwrap_err();
    let provider = format!("openai-compatible:{}/v1:gpt-4o", server.base_url);
    let overloaded = LlmError::Http {
        provider: provider.clone(),
        status: 500,
        message: "The server had an error while processing your request.".into(),
    };
    assert_eq!(
        err,
        LlmError::RetriesExhausted {
            errors: vec![
                overloaded.clone(),
                overloaded,
                LlmError::Http {
                    provider: provider.clone(),
                    status: 400,
                    message: "context too long".into(),
                },
            ],
        }
    );
    assert!(!err.is_transient());
    assert_eq!(err.attempts(), 3);
    // The message names the first failure and the last.
    assert_eq!(
        err.to_string(),
        format!(
            "gave up after 3 attempts; the first failed with: {provider} answered HTTP 500: The \
             server had an error while processing your request.; the last with: {provider} \
             answered HTTP 400: context too long"
        )
    );

    // In a run: the failed call's three requests are part of the run's usage.
    let server = TestServer::start(vec![
        server_error(),
        server_error(),
        Reply::json(400, &json!({"error": {"message": "context too long"}})),
    ])
    .await;
    let agent = Agent::builder("Add 1 and 2.")
        .llm(llm(&server))
        .build()
        .expect("agent");
    let step = agent.run().await.expect("runs");
    assert_eq!(step.turns.len(), 0);
    assert_eq!(step.usage.llm_requests, 3);
    // The step keeps every attempt's error; the reason names the first and the last.
    let StepOutcome::Failed {
        reason, llm_errors, ..
    } = &step.outcome
    else {
        panic!("expected a failed run, got {:?}", step.outcome);
    };
    assert_eq!(
        reason,
        &err.to_string().replace(&provider, &llm(&server).describe())
    );
    assert_eq!(
        llm_errors,
        &err.each_attempt()
            .iter()
            .map(|e| e.to_string().replace(&provider, &llm(&server).describe()))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn retry_after_is_honoured_on_429() {
    let rate_limited = Reply::json(
        429,
        &json!({"error": {"message": "Rate limit reached for gpt-4o on tokens per min (TPM).", "type": "tokens", "param": null, "code": "rate_limit_exceeded"}}),
    )
    .with_header("retry-after", "1");
    let server = TestServer::start(vec![rate_limited, Reply::json(200, &completion("ok"))]).await;
    let started = Instant::now();
    let response = llm(&server).complete(&request()).await.unwrap();

    // The one timing assertion the test plan allows: the 1 s Retry-After was waited out,
    // although the backoff alone would have waited about 1 ms.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "retried after {:?}",
        started.elapsed()
    );
    assert_eq!(response.content, "ok");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_bad_key_fails_at_once_with_the_providers_message() {
    let unauthorized = Reply::json(
        401,
        &json!({"error": {
            "message": "Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error",
            "param": null,
            "code": "invalid_api_key"
        }}),
    );
    let server = TestServer::start(vec![unauthorized, Reply::json(200, &completion("no"))]).await;
    let llm = llm(&server).with_api_key("sk-bad");
    let err = llm.complete(&request()).await.unwrap_err();

    assert_eq!(server.requests().len(), 1);
    assert!(!err.is_transient());
    assert_eq!(
        err.to_string(),
        format!(
            "openai-compatible:{}/v1:gpt-4o answered HTTP 401: Incorrect API key provided: sk-bad. \
             You can find your API key at https://platform.openai.com/account/api-keys. (check \
             the API key and its permissions)",
            server.base_url
        )
    );
}

#[tokio::test]
async fn a_plain_text_error_body_is_quoted() {
    let server = TestServer::start(vec![Reply::raw(
        400,
        "model name must not contain spaces\n",
    )])
    .await;
    let err = llm(&server).complete(&request()).await.unwrap_err();
    assert_eq!(
        err,
        LlmError::Http {
            provider: format!("openai-compatible:{}/v1:gpt-4o", server.base_url),
            status: 400,
            message: "model name must not contain spaces".into(),
        }
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn persistent_server_errors_give_up_after_the_retries() {
    let server = TestServer::start(vec![
        server_error(),
        server_error(),
        server_error(),
        server_error(),
    ])
    .await;
    let err = llm(&server).complete(&request()).await.unwrap_err();

    assert_eq!(server.requests().len(), 4);
    assert!(err.is_transient());
    let overloaded = LlmError::Http {
        provider: format!("openai-compatible:{}/v1:gpt-4o", server.base_url),
        status: 500,
        message: "The server had an error while processing your request.".into(),
    };
    assert_eq!(
        err,
        LlmError::RetriesExhausted {
            errors: vec![overloaded.clone(); 4],
        }
    );
    assert_eq!(
        err.to_string(),
        format!("gave up after 4 attempts, the first and the last failing alike: {overloaded}")
    );
}

#[tokio::test]
async fn a_closed_port_is_a_transient_connect_error_that_is_retried() {
    let url = format!("http://127.0.0.1:{}/v1", closed_port());
    let llm = OpenAiCompatible::new(url.clone(), "gpt-4o")
        .unwrap()
        .with_retry_policy(quick_retries(2));
    let err = llm.complete(&request()).await.unwrap_err();
    assert!(err.is_transient());
    let LlmError::RetriesExhausted { errors } = &err else {
        panic!("expected retries to run out, got {err:?}");
    };
    assert_eq!(errors.len(), 3);
    let LlmError::Connect {
        url: failed_url,
        message,
        ..
    } = &errors[2]
    else {
        panic!("expected a connect error, got {errors:?}");
    };
    assert_eq!(failed_url, &format!("{url}/chat/completions"));
    // The OS's words, e.g. "Connection refused (os error 111)".
    assert!(message.starts_with("Connection refused"), "{message}");
}

#[tokio::test]
async fn a_body_that_is_not_json_is_an_invalid_response() {
    let server = TestServer::start(vec![Reply::raw(200, "<html>gateway</html>")]).await;
    let err = llm(&server).complete(&request()).await.unwrap_err();

    assert_eq!(server.requests().len(), 1);
    assert!(!err.is_transient());
    let LlmError::InvalidResponse { message, .. } = &err else {
        panic!("expected an invalid response, got {err:?}");
    };
    assert!(
        message.starts_with("the body is not valid JSON (")
            && message.ends_with("); it starts with: <html>gateway</html>"),
        "{message}"
    );
}

#[tokio::test]
async fn json_without_choices_is_an_invalid_response() {
    let server = TestServer::start(vec![Reply::json(
        200,
        &json!({"object": "chat.completion", "choices": []}),
    )])
    .await;
    let err = llm(&server).complete(&request()).await.unwrap_err();
    assert_eq!(
        err,
        LlmError::InvalidResponse {
            provider: format!("openai-compatible:{}/v1:gpt-4o", server.base_url),
            message: "the response has no `choices[0]`".into(),
        }
    );
}

#[tokio::test]
async fn a_slow_server_times_out() {
    let server = TestServer::start(vec![
        Reply::json(200, &completion("late")).with_delay(Duration::from_secs(30)),
    ])
    .await;
    let llm = llm(&server)
        .with_timeout(Duration::from_millis(200))
        .with_retry_policy(RetryPolicy::none());
    let err = llm.complete(&request()).await.unwrap_err();
    assert_eq!(
        err,
        LlmError::Timeout {
            provider: format!("openai-compatible:{}/v1:gpt-4o", server.base_url),
            timeout: Duration::from_millis(200),
        }
    );
    assert!(err.is_transient());
}

#[tokio::test]
async fn a_request_that_times_out_is_retried_once_whatever_the_retries() {
    let late = || Reply::json(200, &completion("late")).with_delay(Duration::from_secs(30));
    let server = TestServer::start(vec![late(), late(), late(), late()]).await;
    let llm = llm(&server)
        .with_timeout(Duration::from_millis(200))
        .with_retry_policy(quick_retries(3));
    let err = llm.complete(&request()).await.unwrap_err();
    let timeout = LlmError::Timeout {
        provider: format!("openai-compatible:{}/v1:gpt-4o", server.base_url),
        timeout: Duration::from_millis(200),
    };
    assert_eq!(
        err,
        LlmError::RetriesExhausted {
            errors: vec![timeout.clone(), timeout]
        }
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn other_failures_between_two_timeouts_do_not_reset_the_count() {
    let late = || Reply::json(200, &completion("late")).with_delay(Duration::from_secs(30));
    let server = TestServer::start(vec![
        late(),
        server_error(),
        late(),
        Reply::json(200, &completion("never asked for")),
    ])
    .await;
    let llm = llm(&server)
        .with_timeout(Duration::from_millis(500))
        .with_retry_policy(quick_retries(3));
    let err = llm.complete(&request()).await.unwrap_err();
    let provider = format!("openai-compatible:{}/v1:gpt-4o", server.base_url);
    let timeout = LlmError::Timeout {
        provider: provider.clone(),
        timeout: Duration::from_millis(500),
    };
    assert_eq!(
        err,
        LlmError::RetriesExhausted {
            errors: vec![
                timeout.clone(),
                LlmError::Http {
                    provider,
                    status: 500,
                    message: "The server had an error while processing your request.".into(),
                },
                timeout,
            ]
        }
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn an_invalid_cache_breakpoint_is_rejected_before_sending() {
    let server = TestServer::start(vec![Reply::json(200, &completion("x"))]).await;
    let err = llm(&server)
        .complete(&LlmRequest::new("s", vec![Message::user("héllo")]).with_cache_breakpoint(0, 2))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid model request: the cache breakpoint's byte offset 2 is not a character \
         boundary of message 0 (6 bytes long)"
    );
    assert_eq!(server.requests().len(), 0);
}

#[test]
fn describe_names_provider_and_model() {
    let local = OpenAiCompatible::new("http://localhost:8080/v1/", "qwen").unwrap();
    assert_eq!(
        local.describe(),
        "openai-compatible:http://localhost:8080/v1:qwen"
    );
    assert_eq!(local.base_url(), "http://localhost:8080/v1");
}

#[test]
fn bad_configuration_is_reported() {
    assert_eq!(
        OpenAiCompatible::new("localhost:8080", "m")
            .unwrap_err()
            .to_string(),
        "`localhost:8080` is not an http:// or https:// URL; give the server's base URL, e.g. \
         http://localhost:11434/v1"
    );
    assert_eq!(
        OpenAiCompatible::new("http://localhost:8080", " ")
            .unwrap_err()
            .to_string(),
        "the model name is empty; name the model the server should run"
    );
}

#[test]
fn the_debug_output_hides_the_key() {
    let llm = OpenAiCompatible::new("http://localhost:8080", "m")
        .unwrap()
        .with_api_key("sk-secret");
    let debug = format!("{llm:?}");
    assert!(
        !debug.contains("sk-secret") && debug.contains("<redacted>"),
        "{debug}"
    );
}

#[tokio::test]
async fn https_urls_are_supported() {
    // Without TLS support compiled in, an https URL fails as an unusable request instead of
    // trying to connect.
    let url = format!("https://127.0.0.1:{}/v1", closed_port());
    let llm = OpenAiCompatible::new(url, "gpt-4o")
        .unwrap()
        .with_retry_policy(RetryPolicy::none());
    let err = llm.complete(&request()).await.unwrap_err();
    assert!(matches!(err, LlmError::Connect { .. }), "{err:?}");
}

/// A reply streamed as server-sent events, as OpenAI sends one with `include_usage`: a chunk
/// per piece of content, the finish reason, then a chunk with the usage and no choices.
fn streamed(pieces: &[&str], usage: Option<Value>) -> Reply {
    let mut body = String::new();
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": "chatcmpl-7", "object": "chat.completion.chunk", "created": 1741569952,
            "model": "qwen2.5-coder",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
        })
    };
    body.push_str(&format!(
        "data: {}\n\n",
        chunk(json!({"role": "assistant", "content": ""}), Value::Null)
    ));
    for piece in pieces {
        body.push_str(&format!(
            "data: {}\n\n",
            chunk(json!({"content": piece}), Value::Null)
        ));
    }
    body.push_str(": keep-alive\n\n");
    body.push_str(&format!("data: {}\n\n", chunk(json!({}), json!("length"))));
    if let Some(usage) = usage {
        body.push_str(&format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-7", "object": "chat.completion.chunk", "choices": [], "usage": usage})
        ));
    }
    body.push_str("data: [DONE]\n\n");
    Reply::raw(200, &body).with_header("content-type", "text/event-stream")
}

#[tokio::test]
async fn a_streamed_reply_is_put_together_with_its_usage() {
    let usage = json!({"prompt_tokens": 2515, "completion_tokens": 3, "total_tokens": 2518,
                       "prompt_tokens_details": {"cached_tokens": 2048}});
    let server = TestServer::start(vec![streamed(&["(+ 1", " 2", ")"], Some(usage))]).await;
    let llm = llm(&server).with_streaming(true);
    let response = llm.complete(&request().with_max_tokens(64)).await.unwrap();
    assert_eq!(
        response,
        LlmResponse {
            content: "(+ 1 2)".into(),
            usage: TokenUsage {
                input_tokens: 467,
                output_tokens: 3,
                cache_read_tokens: 2048,
                cache_write_tokens: 0,
            },
            model: Some("qwen2.5-coder".into()),
            stop_reason: Some("length".into()),
            attempts: 1,
            tool_calls: Vec::new(),
            usage_estimated: false,
        }
    );
    assert_eq!(
        server.requests()[0].body,
        json!({
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "You write PTC-Lisp."},
                {"role": "user", "content": "Add 1 and 2."}
            ],
            "max_tokens": 64,
            "stream": true,
            "stream_options": {"include_usage": true}
        })
    );
}

#[tokio::test]
async fn a_stream_without_usage_counts_no_tokens() {
    // llama-cpp-python's server streams no usage.
    let server = TestServer::start(vec![streamed(&["(return 1)"], None)]).await;
    let response = llm(&server)
        .with_streaming(true)
        .complete(&request())
        .await
        .unwrap();
    assert_eq!(
        (response.content.as_str(), response.usage),
        ("(return 1)", TokenUsage::default())
    );
}

#[tokio::test]
async fn a_broken_stream_is_an_error_that_says_what_broke() {
    let error_chunk = Reply::raw(
        200,
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"(+ 1\"}}]}\n\n\
         data: {\"error\":{\"message\":\"context window exceeded\"}}\n\n",
    );
    let cut = Reply::raw(
        200,
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"(+ 1\"}}]}\n\n",
    );
    let not_json = Reply::raw(200, "data: {oops\n\n");
    let server = TestServer::start(vec![error_chunk, cut, not_json]).await;
    let llm = llm(&server)
        .with_streaming(true)
        .with_retry_policy(quick_retries(0));
    let mut messages = Vec::new();
    for _ in 0..3 {
        messages.push(llm.complete(&request()).await.unwrap_err().to_string());
    }
    let provider = format!("openai-compatible:{}/v1:gpt-4o", server.base_url);
    assert_eq!(
        messages,
        [
            format!(
                "{provider} sent a response that could not be read: the server reported an \
                 error mid-stream: context window exceeded"
            ),
            format!(
                "{provider} sent a response that could not be read: the stream ended before the \
                 reply was complete (no finish reason, no [DONE]); it starts with: data: \
                 {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"(+ 1\"}}}}]}}"
            ),
            format!(
                "{provider} sent a response that could not be read: a streamed chunk is not \
                 valid JSON (key must be a string at line 1 column 2): {{oops"
            ),
        ]
    );
}
