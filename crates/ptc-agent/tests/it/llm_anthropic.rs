//! `Anthropic` against a local server answering like the Messages API.

use crate::support;

use std::time::Duration;

use pretty_assertions::assert_eq;
use ptc_agent::llm::{Anthropic, Llm, LlmError, LlmRequest, LlmResponse, RetryPolicy, TokenUsage};
use ptc_turn::{Message, MessageToolCall};
use serde_json::{Value, json};
use support::{Reply, TestServer};

/// A real-shaped Messages API response.
fn message(content: Value, stop_reason: &str) -> Value {
    json!({
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": 12,
            "cache_creation_input_tokens": 300,
            "cache_read_input_tokens": 2048,
            "output_tokens": 9,
            "service_tier": "standard"
        }
    })
}

fn text_reply(text: &str) -> Reply {
    Reply::json(
        200,
        &message(json!([{"type": "text", "text": text}]), "end_turn"),
    )
}

fn llm(server: &TestServer) -> Anthropic {
    Anthropic::new("claude-sonnet-4-5", "sk-ant-test")
        .unwrap()
        .with_base_url(format!("{}/", server.base_url))
        .unwrap()
        .with_retry_policy(RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_secs(5),
            multiplier: 2.0,
            jitter: false,
        })
}

const STABLE: &str =
    ";; === tool/ ===\n(tool/search query)\n;; === data/ ===\ndata/rows ; list[3]\n";
const CHANGING: &str = ";; === user/ (your prelude) ===\n(def total 6)\n";

#[tokio::test]
async fn sends_the_exact_request_with_cache_breakpoints() {
    let server = TestServer::start(vec![text_reply("(return total)")]).await;
    let prompt = format!("{STABLE}{CHANGING}");
    let request = LlmRequest::new("You write PTC-Lisp.", vec![Message::user(prompt)])
        .with_cache_breakpoint(0, STABLE.len());
    let response = llm(&server).complete(&request).await.unwrap();

    assert_eq!(
        response,
        LlmResponse {
            content: "(return total)".into(),
            usage: TokenUsage {
                input_tokens: 12,
                output_tokens: 9,
                cache_read_tokens: 2048,
                cache_write_tokens: 300,
            },
            model: Some("claude-sonnet-4-5-20250929".into()),
            stop_reason: Some("end_turn".into()),
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
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None);
    // NS-012: the tool/ and data/ sections are the cached prefix; user/ follows uncached.
    assert_eq!(
        sent.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "system": [
                {"type": "text", "text": "You write PTC-Lisp.", "cache_control": {"type": "ephemeral"}}
            ],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": STABLE, "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": CHANGING}
                ]}
            ]
        })
    );
}

#[tokio::test]
async fn the_breakpoint_finds_its_message_after_tool_results_are_merged() {
    let server = TestServer::start(vec![text_reply("done")]).await;
    let history = vec![
        Message::system("Extra rules."),
        Message::user("first"),
        Message::assistant("").with_tool_calls(vec![
            MessageToolCall {
                id: "toolu_1".into(),
                name: "a".into(),
                arguments: json!({}),
            },
            MessageToolCall {
                id: "toolu_2".into(),
                name: "b".into(),
                arguments: json!({"x": 1}),
            },
        ]),
        Message::tool_result("toolu_1", "r1"),
        Message::tool_result("toolu_2", "r2"),
        Message::user("all of it is stable"),
    ];
    let request = LlmRequest::new("Base prompt.", history)
        .with_cache_breakpoint(5, "all of it is stable".len())
        .with_max_tokens(100)
        .with_temperature(0.0);
    llm(&server).complete(&request).await.unwrap();

    assert_eq!(
        server.requests()[0].body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 100,
            "temperature": 0.0,
            "system": [
                {"type": "text", "text": "Base prompt."},
                {"type": "text", "text": "Extra rules.", "cache_control": {"type": "ephemeral"}}
            ],
            "messages": [
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "a", "input": {}},
                    {"type": "tool_use", "id": "toolu_2", "name": "b", "input": {"x": 1}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "r1"},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "r2"}
                ]},
                // The whole message is the prefix: one block, no empty remainder.
                {"role": "user", "content": [
                    {"type": "text", "text": "all of it is stable", "cache_control": {"type": "ephemeral"}}
                ]}
            ]
        })
    );
}

// Two breakpoints in one message split it into three blocks; past three breakpoints the first
// and the newest two are kept, so the request carries four marks with the system prompt's.
#[tokio::test]
async fn several_breakpoints_are_placed_and_never_more_than_four_marks() {
    let server = TestServer::start(vec![text_reply("ok")]).await;
    let history = vec![
        Message::user("prefix|summary|count"),
        Message::assistant("(a)"),
        Message::user("one"),
        Message::assistant("(b)"),
        Message::user("two|count"),
    ];
    let request = LlmRequest::new("System.", history)
        .with_cache_breakpoint(0, "prefix|".len())
        .with_cache_breakpoint(0, "prefix|summary|".len())
        .with_cache_breakpoint(2, "one".len())
        .with_cache_breakpoint(4, "two|".len());
    llm(&server).complete(&request).await.unwrap();
    let marked = json!({"type": "ephemeral"});
    assert_eq!(
        server.requests()[0].body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "system": [{"type": "text", "text": "System.", "cache_control": marked}],
            "messages": [
                // The second point inside the first message is dropped for the newer ones.
                {"role": "user", "content": [
                    {"type": "text", "text": "prefix|", "cache_control": marked},
                    {"type": "text", "text": "summary|count"}
                ]},
                {"role": "assistant", "content": "(a)"},
                {"role": "user", "content": [
                    {"type": "text", "text": "one", "cache_control": marked}
                ]},
                {"role": "assistant", "content": "(b)"},
                {"role": "user", "content": [
                    {"type": "text", "text": "two|", "cache_control": marked},
                    {"type": "text", "text": "count"}
                ]}
            ]
        })
    );
    let server = TestServer::start(vec![text_reply("ok")]).await;
    let request = LlmRequest::new("", vec![Message::user("prefix|summary|count")])
        .with_cache_breakpoint(0, "prefix|summary|".len())
        .with_cache_breakpoint(0, "prefix|".len());
    llm(&server).complete(&request).await.unwrap();
    assert_eq!(
        server.requests()[0].body["messages"][0]["content"],
        json!([
            {"type": "text", "text": "prefix|", "cache_control": marked},
            {"type": "text", "text": "summary|", "cache_control": marked},
            {"type": "text", "text": "count"}
        ])
    );
}

#[tokio::test]
async fn no_system_prompt_and_a_breakpoint_at_zero_mark_nothing() {
    let server = TestServer::start(vec![text_reply("ok")]).await;
    let request = LlmRequest::new("", vec![Message::user("hello")]).with_cache_breakpoint(0, 0);
    llm(&server).complete(&request).await.unwrap();
    assert_eq!(
        server.requests()[0].body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "messages": [{"role": "user", "content": "hello"}]
        })
    );
}

#[tokio::test]
async fn the_text_of_a_tool_use_reply_is_returned() {
    let content = json!([
        {"type": "text", "text": "I'll check."},
        {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {"location": "Oslo"}}
    ]);
    let server = TestServer::start(vec![Reply::json(200, &message(content, "tool_use"))]).await;
    let response = llm(&server)
        .complete(&LlmRequest::new("s", vec![Message::user("weather?")]))
        .await
        .unwrap();
    assert_eq!(
        (response.content.as_str(), response.stop_reason.as_deref()),
        ("I'll check.", Some("tool_use"))
    );
}

#[tokio::test]
async fn overloaded_is_retried() {
    let overloaded = Reply::json(
        529,
        &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let server = TestServer::start(vec![overloaded, text_reply("ok")]).await;
    let response = llm(&server)
        .complete(&LlmRequest::new("s", vec![Message::user("hi")]))
        .await
        .unwrap();
    assert_eq!(response.content, "ok");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_bad_key_fails_at_once_with_the_providers_message() {
    let unauthorized = Reply::json(
        401,
        &json!({
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"
        }),
    );
    let server = TestServer::start(vec![unauthorized, text_reply("no")]).await;
    let err = llm(&server)
        .complete(&LlmRequest::new("s", vec![Message::user("hi")]))
        .await
        .unwrap_err();

    assert_eq!(server.requests().len(), 1);
    assert_eq!(
        err,
        LlmError::Http {
            provider: "anthropic:claude-sonnet-4-5".into(),
            status: 401,
            message: "invalid x-api-key".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "anthropic:claude-sonnet-4-5 answered HTTP 401: invalid x-api-key (check the API key and \
         its permissions)"
    );
}

#[tokio::test]
async fn rate_limits_carry_the_providers_wait() {
    let limited = Reply::json(
        429,
        &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}),
    )
    .with_header("retry-after", "0");
    let server = TestServer::start(vec![limited]).await;
    let err = llm(&server)
        .with_retry_policy(RetryPolicy::none())
        .complete(&LlmRequest::new("s", vec![Message::user("hi")]))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        LlmError::RateLimited {
            provider: "anthropic:claude-sonnet-4-5".into(),
            message: "Number of request tokens has exceeded your per-minute rate limit".into(),
            retry_after: Some(Duration::ZERO),
        }
    );
    assert!(err.is_transient());
    assert_eq!(err.status(), Some(429));
}

#[tokio::test]
async fn a_response_without_content_is_invalid() {
    let server = TestServer::start(vec![Reply::json(
        200,
        &json!({"type": "message", "role": "assistant"}),
    )])
    .await;
    let err = llm(&server)
        .complete(&LlmRequest::new("s", vec![Message::user("hi")]))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        LlmError::InvalidResponse {
            provider: "anthropic:claude-sonnet-4-5".into(),
            message: "the response has no `content`".into(),
        }
    );
}

#[tokio::test]
async fn unsendable_requests_fail_before_sending() {
    let server = TestServer::start(vec![text_reply("x")]).await;
    let llm = llm(&server);
    let on_assistant = LlmRequest::new("s", vec![Message::user("a"), Message::assistant("b")])
        .with_cache_breakpoint(1, 0);
    assert_eq!(
        llm.complete(&on_assistant).await.unwrap_err(),
        LlmError::InvalidRequest(
            "the cache breakpoint points at message 1, whose role is assistant; it must point \
             into a user message or a tool result"
                .into()
        )
    );
    let out_of_range = LlmRequest::new("s", vec![Message::user("a")]).with_cache_breakpoint(3, 0);
    assert_eq!(
        llm.complete(&out_of_range).await.unwrap_err(),
        LlmError::InvalidRequest(
            "the cache breakpoint points at message 3, but the request has 1 messages".into()
        )
    );
    assert_eq!(server.requests().len(), 0);
}

#[tokio::test]
async fn a_late_system_message_is_sent_in_place_as_marked_user_text() {
    let server = TestServer::start(vec![text_reply("(return 1)")]).await;
    let request = LlmRequest::new(
        "s",
        vec![
            Message::user("a"),
            Message::system("From now on, be brief."),
            Message::user("b"),
        ],
    );
    llm(&server).complete(&request).await.unwrap();
    assert_eq!(
        server.requests()[0].body["messages"],
        json!([
            {"role": "user", "content": "a"},
            {"role": "user", "content": "<system>\nFrom now on, be brief.\n</system>"},
            {"role": "user", "content": "b"}
        ])
    );
}

#[test]
fn describe_and_debug() {
    let llm = Anthropic::new("claude-haiku-4-5", "sk-ant-secret").unwrap();
    assert_eq!(llm.describe(), "anthropic:claude-haiku-4-5");
    assert_eq!(llm.base_url(), "https://api.anthropic.com");
    let debug = format!("{llm:?}");
    assert!(!debug.contains("sk-ant-secret"), "{debug}");
}
