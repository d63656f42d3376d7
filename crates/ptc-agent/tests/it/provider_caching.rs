//! Prompt caching as the providers receive it from a real agent run: the exact JSON Anthropic
//! gets under every compression strategy (golden files in `tests/golden/anthropic/`, rewritten
//! with `UPDATE_GOLDEN=1`), and byte-stable requests for OpenAI-compatible servers.

use crate::support;

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use ptc_agent::llm::{Anthropic, OpenAiCompatible};
use ptc_agent::{Agent, Llm, tool_fn};
use ptc_compression::{CompressionConfig, StrategyKind};
use serde_json::{Value, json};
use support::{Reply, TestServer};

/// Three turns: a tool call and a print, a failure after a tool call, the answer.
const REPLIES: [&str; 3] = [
    "Look first.\n```clojure\n(def c (tool/customer \"c-1\"))\n(println (:name c))\n```",
    "Refund, then note it.\n```clojure\n(tool/refund \"c-1\" 20)\n(def noted (/ 1 0))\n```",
    "Done.\n```clojure\n(return {:refunded [\"c-1\"]})\n```",
];

fn anthropic_reply(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "msg_01", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5}
        }),
    )
}

fn openai_reply(text: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}
        }),
    )
}

fn agent(llm: impl Llm + 'static, compression: CompressionConfig) -> Agent {
    let customer = tool_fn("customer", "One customer by id", |(id,): (String,)| {
        Ok::<_, ptc_agent::ToolError>(json!({"id": id, "name": "Ada", "tier": "gold"}))
    })
    .with_signature("(id :string) -> {id :string, name :string, tier :string}");
    let refund = tool_fn(
        "refund",
        "Refund an amount to a customer (side effect)",
        |(id, amount): (String, i64)| {
            Ok::<_, ptc_agent::ToolError>(json!({"refunded": amount, "to": id}))
        },
    )
    .with_signature("(id :string, amount :int) -> {refunded :int, to :string}");
    Agent::builder("Refund customer c-1 once and say who was refunded.")
        .llm(llm)
        .tool(customer)
        .tool(refund)
        .data_value("limit", ptc_lisp::Value::Int(50))
        .max_turns(5)
        .compression_config(compression)
        .build()
        .expect("agent")
}

/// The request bodies with the long system prompt replaced by a marker.
fn bodies(server: &TestServer, system_prompt: &str) -> Value {
    let bodies = server
        .requests()
        .into_iter()
        .map(|r| {
            let mut body = r.body;
            if let Some(text) = body.pointer_mut("/system/0/text")
                && text == system_prompt
            {
                *text = Value::from("<system prompt>");
            }
            body
        })
        .collect();
    Value::Array(bodies)
}

fn check_golden(name: &str, actual: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/anthropic")
        .join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(actual).expect("JSON") + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().expect("a directory")).expect("create");
        std::fs::write(&path, &text).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    assert_eq!(expected, text, "golden file {name}.json");
}

fn marks(body: &Value) -> usize {
    body.to_string().matches("\"cache_control\"").count()
}

// Every strategy: the system prompt is marked, the stable tool/ and data/ prefix is marked, and
// the strategies whose history only grows also mark their newest stable message, so each
// request reads the previous one from the cache. Never more than four marks.
#[tokio::test]
async fn anthropic_gets_the_breakpoints_a_careful_client_places() {
    for kind in StrategyKind::ALL {
        let server = TestServer::start(REPLIES.iter().map(|r| anthropic_reply(r)).collect()).await;
        let llm = Anthropic::new("claude-sonnet-4-5", "sk-ant-test")
            .unwrap()
            .with_base_url(server.base_url.clone())
            .unwrap();
        let config = CompressionConfig::parse(kind.as_str()).expect("a strategy");
        let agent = agent(llm, config);
        let step = agent.run().await.expect("runs");
        assert!(step.is_success(), "{kind}: {:?}", step.outcome);
        let bodies = bodies(&server, &agent.system_prompt().text);
        for body in bodies.as_array().expect("requests") {
            assert!((2..=4).contains(&marks(body)), "{kind}: {body}");
        }
        check_golden(kind.as_str(), &bodies);
    }
}

/// The last message's text up to its turn count.
fn without_turn_count(text: &str) -> &str {
    text.rsplit_once("\n\nTurns left: ")
        .or_else(|| text.rsplit_once("\n\nFINAL TURN"))
        .map_or(text, |(before, _)| before)
}

// OpenAI caches prefixes by itself: with the default strategy each request repeats the one
// before it byte for byte, but for the turn count at its end; the prompt cache key is sent
// only when set.
#[tokio::test]
async fn openai_requests_repeat_each_other_and_carry_the_cache_key() {
    for key in [None, Some("refund-agent")] {
        let server = TestServer::start(REPLIES.iter().map(|r| openai_reply(r)).collect()).await;
        let mut llm = OpenAiCompatible::new(format!("{}/v1", server.base_url), "gpt-4.1").unwrap();
        if let Some(key) = key {
            llm = llm.with_prompt_cache_key(key);
        }
        let step = agent(llm, CompressionConfig::parse("on").expect("on"))
            .run()
            .await
            .expect("runs");
        assert!(step.is_success());
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        for request in &requests {
            assert_eq!(
                request.body.get("prompt_cache_key").and_then(Value::as_str),
                key
            );
        }
        for pair in requests.windows(2) {
            let before = pair[0].body["messages"].as_array().expect("messages");
            let after = pair[1].body["messages"].as_array().expect("messages");
            let last = before.len() - 1;
            assert_eq!(before[..last], after[..last]);
            let stable = without_turn_count(before[last]["content"].as_str().expect("text"));
            let next = after[last]["content"].as_str().expect("text");
            assert_eq!(next, stable);
        }
    }
}
