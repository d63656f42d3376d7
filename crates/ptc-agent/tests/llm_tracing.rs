//! The tracing events a provider call emits: one span per call, one event per attempt.
//!
//! A binary of its own: a thread's subscriber must see every event of a call, and other tests
//! registering the same call sites at the same time could hide some of them.

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;
use ptc_agent::Agent;
use ptc_agent::llm::{
    Llm, LlmError, LlmRequest, LlmResponse, OpenAiCompatible, RetryPolicy, ScriptedLlm,
};
use ptc_turn::Message;
use serde_json::json;
use support::{Reply, TestServer};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

type Fields = BTreeMap<String, String>;

/// Records span names with their fields, and event fields, of `ptc_agent`.
#[derive(Default)]
struct Captured {
    spans: Mutex<Vec<(String, Fields)>>,
    events: Mutex<Vec<Fields>>,
    next_id: AtomicU64,
}

#[derive(Clone, Default)]
struct Capture(Arc<Captured>);

struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        // Only this crate's spans and events, not those of the HTTP stack.
        metadata.target().starts_with("ptc_agent")
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut fields = Fields::new();
        attrs.record(&mut Visitor(&mut fields));
        self.0
            .spans
            .lock()
            .unwrap()
            .push((attrs.metadata().name().into(), fields));
        Id::from_u64(self.0.next_id.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::new();
        event.record(&mut Visitor(&mut fields));
        fields.insert("level".into(), event.metadata().level().to_string());
        self.0.events.lock().unwrap().push(fields);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

fn fields(pairs: &[(&str, &str)]) -> Fields {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn a_retried_call_logs_each_attempt_and_the_usage() {
    let completion = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34}
    });
    let server = TestServer::start(vec![
        Reply::json(503, &json!({"error": {"message": "busy"}})),
        Reply::json(200, &completion),
    ])
    .await;
    let llm = OpenAiCompatible::new(server.base_url.clone(), "gpt-4o-mini")
        .unwrap()
        .with_retry_policy(RetryPolicy {
            max_retries: 1,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(1),
            multiplier: 2.0,
            jitter: false,
        });

    let capture = Capture::default();
    // The test runtime is single-threaded, so the thread's default subscriber sees the call.
    let guard = tracing::subscriber::set_default(capture.clone());
    llm.complete(&LlmRequest::new("", vec![Message::user("hi")]))
        .await
        .unwrap();
    drop(guard);

    let spans = capture.0.spans.lock().unwrap().clone();
    assert_eq!(
        spans,
        vec![(
            "llm_call".to_string(),
            fields(&[
                ("gen_ai.provider.name", "openai-compatible"),
                ("gen_ai.request.model", "gpt-4o-mini")
            ])
        )]
    );
    let mut events = capture.0.events.lock().unwrap().clone();
    // Durations vary; check they are there, then compare the rest exactly.
    for event in &mut events {
        let duration = event.remove("duration_ms");
        assert!(
            duration.is_some_and(|d| d.parse::<u64>().is_ok()),
            "{event:?}"
        );
        if let Some(message) = event.get_mut("message")
            && let Some(at) = message.find(" completed in ")
        {
            message.replace_range(at + " completed in ".len().., "<duration>");
        }
    }
    let error = format!(
        "openai-compatible:{}:gpt-4o-mini answered HTTP 503: busy",
        server.base_url
    );
    assert_eq!(
        events,
        vec![
            fields(&[
                ("level", "WARN"),
                (
                    "message",
                    &format!("model call attempt 1 of 2 failed: {error}; retrying in 1 ms")
                ),
                ("gen_ai.provider.name", "openai-compatible"),
                ("gen_ai.request.model", "gpt-4o-mini"),
                ("attempt", "1"),
                ("status", "503"),
                ("retry_in_ms", "1"),
                ("error", &error),
            ]),
            fields(&[
                ("level", "DEBUG"),
                ("message", "model call attempt 2 succeeded"),
                ("gen_ai.provider.name", "openai-compatible"),
                ("gen_ai.request.model", "gpt-4o-mini"),
                ("attempt", "2"),
                ("status", "200"),
            ]),
            fields(&[
                ("level", "INFO"),
                ("message", "model call completed in <duration>"),
                ("gen_ai.provider.name", "openai-compatible"),
                ("gen_ai.request.model", "gpt-4o-mini"),
                ("gen_ai.usage.input_tokens", "30"),
                ("gen_ai.usage.output_tokens", "4"),
                ("gen_ai.usage.cache_read.input_tokens", "0"),
                ("gen_ai.usage.cache_creation.input_tokens", "0"),
            ]),
        ]
    );
}

/// A run's own retries (here of a model that does not retry by itself) say so in the words of
/// a provider's, and leave the failure that ends the run to the run's outcome.
#[tokio::test]
async fn a_run_retries_a_model_call_with_the_notice_of_a_provider() {
    let overloaded = || LlmError::Http {
        provider: "test".into(),
        status: 503,
        message: "overloaded".into(),
    };
    let llm = ScriptedLlm::from_results([
        Err(overloaded()),
        Ok(LlmResponse::text("```clojure\n(return 1)\n```")),
        Err(overloaded()),
        Err(LlmError::Configuration("no key".into())),
    ]);
    let policy = RetryPolicy {
        max_retries: 2,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(1),
        multiplier: 2.0,
        jitter: false,
    };
    let capture = Capture::default();
    let guard = tracing::subscriber::set_default(capture.clone());
    let returned = Agent::builder("Go")
        .llm(llm.clone())
        .retry_policy(policy.clone())
        .build()
        .unwrap()
        .run()
        .await
        .unwrap();
    let failed = Agent::builder("Go")
        .llm(llm)
        .retry_policy(policy)
        .build()
        .unwrap()
        .run()
        .await
        .unwrap();
    drop(guard);

    assert_eq!(returned.value(), Some(&ptc_lisp::Value::Int(1)));
    assert_eq!(failed.usage.llm_requests, 2);
    let mut warnings: Vec<Fields> = capture.0.events.lock().unwrap().clone();
    warnings.retain(|event| event.get("level").map(String::as_str) == Some("WARN"));
    for event in &mut warnings {
        let duration = event.remove("duration_ms");
        assert!(
            duration.is_some_and(|d| d.parse::<u64>().is_ok()),
            "{event:?}"
        );
    }
    let error = "test answered HTTP 503: overloaded";
    let notice = fields(&[
        ("level", "WARN"),
        (
            "message",
            &format!("model call attempt 1 of 3 failed: {error}; retrying in 1 ms"),
        ),
        ("gen_ai.provider.name", "scripted"),
        ("gen_ai.request.model", "scripted"),
        ("attempt", "1"),
        ("status", "503"),
        ("retry_in_ms", "1"),
        ("error", error),
    ]);
    assert_eq!(warnings, vec![notice.clone(), notice]);
}
