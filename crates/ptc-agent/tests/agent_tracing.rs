//! The spans of a run, with the fields a dashboard needs: run, turn, model request, tool call.

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, ScriptedLlm, ToolError, tool_fn};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

type Fields = BTreeMap<String, String>;

/// A span: its id, name, parent's name and fields (as last recorded).
type SpanRecord = (u64, String, Option<String>, Fields);

/// Every span of the crate.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<SpanRecord>>>);

struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if !attrs.metadata().target().starts_with("ptc_agent") {
            return;
        }
        let mut fields = Fields::new();
        attrs.record(&mut Visitor(&mut fields));
        let parent = ctx
            .span(id)
            .and_then(|span| span.parent())
            .map(|parent| parent.name().to_string());
        self.0.lock().unwrap().push((
            id.into_u64(),
            attrs.metadata().name().to_string(),
            parent,
            fields,
        ));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some((_, _, _, fields)) = spans.iter_mut().rev().find(|s| s.0 == id.into_u64()) {
            values.record(&mut Visitor(fields));
        }
    }
}

fn pick(fields: &Fields, names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("{n}={}", fields.get(*n).map_or("-", String::as_str)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_has_nested_spans_with_dashboard_fields() {
    let spans = Spans::default();
    // Programs and tools run on other threads, so the subscriber must be global; this test
    // binary has this one test.
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(spans.clone()))
        .expect("no other subscriber");

    let lookup = tool_fn("lookup", "Finds a number", |n: i64| {
        Ok::<_, ToolError>(n * 10)
    });
    let llm = ScriptedLlm::new([
        "```clojure\n(def x (tool/lookup 4))\n```".to_string(),
        "```clojure\n(return x)\n```".to_string(),
    ]);
    let agent = Agent::builder("Look up four")
        .llm(llm)
        .tool(lookup)
        .compression(true)
        .build()
        .expect("agent");
    let step = agent.run().await.expect("runs");
    assert_eq!(step.value(), Some(&ptc_lisp::Value::Int(40)));

    let recorded = spans.0.lock().unwrap().clone();
    let lines: Vec<String> = recorded
        .iter()
        .map(|(_, name, parent, fields)| {
            let shown = match name.as_str() {
                "agent_run" => pick(
                    fields,
                    &[
                        "gen_ai.operation.name",
                        "gen_ai.provider.name",
                        "gen_ai.request.model",
                        "mission",
                        "llm",
                        "max_turns",
                        "compression",
                        "tools",
                        "outcome",
                        "turns",
                        "llm_requests",
                        "gen_ai.usage.input_tokens",
                    ],
                ),
                "agent_turn" => pick(
                    fields,
                    &[
                        "turn",
                        "max_turns",
                        "outcome",
                        "program_chars",
                        "prints",
                        "tool_calls",
                    ],
                ),
                "llm_request" => pick(
                    fields,
                    &[
                        "gen_ai.operation.name",
                        "turn",
                        "attempt",
                        "llm",
                        "messages",
                        "outcome",
                        "gen_ai.usage.output_tokens",
                    ],
                ),
                "tool_call" => pick(
                    fields,
                    &[
                        "gen_ai.operation.name",
                        "gen_ai.tool.name",
                        "args",
                        "outcome",
                    ],
                ),
                _ => String::new(),
            };
            format!("{name} < {}: {shown}", parent.as_deref().unwrap_or("none"))
        })
        .collect();
    assert_eq!(
        lines,
        vec![
            "agent_run < none: gen_ai.operation.name=invoke_agent gen_ai.provider.name=scripted \
             gen_ai.request.model=scripted mission=Look up four llm=scripted max_turns=5 \
             compression=append-compact tools=1 outcome=returned turns=2 llm_requests=2 \
             gen_ai.usage.input_tokens=0",
            "agent_turn < agent_run: turn=1 max_turns=5 outcome=ok program_chars=23 prints=0 \
             tool_calls=1",
            "llm_request < agent_turn: gen_ai.operation.name=chat turn=1 attempt=1 llm=scripted \
             messages=2 outcome=ok gen_ai.usage.output_tokens=0",
            "tool_call < agent_turn: gen_ai.operation.name=execute_tool gen_ai.tool.name=lookup \
             args=1 outcome=ok",
            "agent_turn < agent_run: turn=2 max_turns=5 outcome=ok program_chars=10 prints=0 \
             tool_calls=0",
            "llm_request < agent_turn: gen_ai.operation.name=chat turn=2 attempt=1 llm=scripted \
             messages=4 outcome=ok gen_ai.usage.output_tokens=0",
        ]
    );
    // Durations are recorded too (their values vary).
    for (_, name, _, fields) in &recorded {
        let key = if name == "tool_call" {
            "duration_us"
        } else {
            "duration_ms"
        };
        assert!(fields.contains_key(key), "{name} has no {key}: {fields:?}");
    }
}
