//! The run page of a small step, held against a golden copy and, figure by figure, against the
//! step itself.

use pretty_assertions::assert_eq;
use ptc_compression::{
    CompressionConfig, HeuristicTokenizer, PricingKind, RenderOptions, compare_with_full_history,
};
use ptc_lisp::{Definition, ToolCallRecord, ToolOutcome, Value};
use ptc_turn::{Message, Step, StepOutcome, Task, TokenUsage, Turn, TurnError, Turns, Usage};
use ptc_view::{PageOptions, run_page};
use std::path::Path;

fn usage(input: u64, read: u64, write: u64, output: u64) -> Usage {
    Usage {
        tokens: TokenUsage {
            input_tokens: input,
            cache_read_tokens: read,
            cache_write_tokens: write,
            output_tokens: output,
        },
        llm_requests: 1,
        llm_duration_us: 1_500_000,
        eval_duration_us: 2_000,
        duration_us: 1_502_000,
    }
}

/// Two turns: one that fails with a place in the program, one that calls a tool, prints,
/// defines a function and returns.
fn step() -> Step {
    let mut task = Task::new("Count the <open> tickets & return {:open n}.");
    task.signature = Some("{open :int}".to_string());
    task.max_turns = 5;
    let system = Message::system("You write PTC-Lisp.");
    let mission = Message::user("Count the <open> tickets & return {:open n}.");
    let first = Turn::failure(
        1,
        "(def n (count data/tickets))\n(return {:open m})",
        TurnError::new("undefined_symbol", "m is not defined").at(2, 16),
    )
    .with_messages(vec![system.clone(), mission.clone()])
    .with_usage(usage(900, 0, 850, 40));
    let reply = Message::new(
        ptc_turn::Role::Assistant,
        "```clojure\n(return {:open m})\n```",
    );
    let feedback = Message::user("error: m is not defined");
    let open = ToolCallRecord {
        name: "open-tickets".to_string(),
        args: vec![Value::from("queue-1")],
        result: ToolOutcome::Ok(Value::Int(3)),
        duration_us: 250,
    };
    let second = Turn::success(
        2,
        "(defn half \"half of x\" [x] (/ x 2))\n(println \"open:\" (tool/open-tickets \"queue-1\"))\n(return {:open 3})",
        Value::Nil,
    )
    .with_prints(vec!["open: 3".to_string()])
    .with_tool_calls(vec![open])
    .with_memory(vec![Definition {
        name: "half".to_string(),
        doc: Some("half of x".to_string()),
        value: Value::Nil,
        params: vec!["[x]".to_string()],
        last_return: None,
    }])
    .with_messages(vec![system, mission, reply, feedback])
    .with_usage(usage(60, 850, 0, 35));
    let mut turns = Turns::new();
    turns.push(first).expect("in order");
    turns.push(second).expect("in order");
    let total = Usage::sum([turns.as_slice()[0].usage(), turns.as_slice()[1].usage()]);
    let value: Value = ptc_lisp::read_value("{:open 3}").expect("reads");
    Step {
        outcome: StepOutcome::Returned { value },
        task,
        turns,
        usage: total,
    }
}

#[test]
fn the_page_of_a_small_run_is_as_recorded() {
    let page = run_page(&step(), &PageOptions::default());
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/small-run.html");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &page).expect("writes the golden page");
    }
    let expected = std::fs::read_to_string(&golden).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; run with UPDATE_GOLDEN=1 to create it",
            golden.display()
        )
    });
    assert_eq!(page, expected);
}

/// Every `data-figure` of the page with a `data-value`, in order.
fn figures(page: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = page;
    while let Some(at) = rest.find("data-figure=\"") {
        rest = &rest[at + 13..];
        let name = &rest[..rest.find('"').expect("closed")];
        let tail = &rest[name.len() + 1..];
        if let Some(value) = tail.strip_prefix(" data-value=\"") {
            let value = &value[..value.find('"').expect("closed")];
            found.push((name.to_string(), value.to_string()));
        }
    }
    found
}

#[test]
fn every_figure_on_the_page_is_the_steps() {
    for spec in ["off", "on", "single-user-coalesced"] {
        figures_match(spec);
    }
}

/// The figures of the page made with the strategy `spec` against the step and against
/// `ptc render --stats`'s bill (`compare_with_full_history`).
fn figures_match(spec: &str) {
    let step = step();
    let compression = CompressionConfig::parse(spec).expect("a spec");
    let options = PageOptions {
        compression,
        ..PageOptions::default()
    };
    let page = run_page(&step, &options);
    let mut expected = Vec::new();
    let pair = |name: &str, value: String| (name.to_string(), value);
    let t = &step.usage.tokens;
    expected.push(pair("turns", step.turns.len().to_string()));
    expected.push(pair("requests", step.usage.llm_requests.to_string()));
    expected.push(pair("input-tokens", t.input_tokens.to_string()));
    expected.push(pair("cache-read-tokens", t.cache_read_tokens.to_string()));
    expected.push(pair("cache-write-tokens", t.cache_write_tokens.to_string()));
    expected.push(pair("output-tokens", t.output_tokens.to_string()));
    let turns = step.turns.as_slice();
    let opts = RenderOptions::from_task(&step.task).with_limits(compression.limits());
    let strategy = compression.build();
    let bills: Vec<_> = PricingKind::ALL
        .into_iter()
        .map(|kind| {
            compare_with_full_history(
                &*strategy,
                turns,
                &opts,
                false,
                &kind.profile(),
                &HeuristicTokenizer,
            )
        })
        .collect();
    for bill in &bills {
        expected.push(pair("billed", bill.strategy.total.billed.to_string()));
        expected.push(pair(
            "full-history-billed",
            bill.full_history.billed().to_string(),
        ));
    }
    for (i, turn) in turns.iter().enumerate() {
        let t = &turn.usage().tokens;
        expected.push(pair("input-tokens", t.input_tokens.to_string()));
        expected.push(pair("cache-read-tokens", t.cache_read_tokens.to_string()));
        expected.push(pair("cache-write-tokens", t.cache_write_tokens.to_string()));
        expected.push(pair("output-tokens", t.output_tokens.to_string()));
        for bill in &bills {
            expected.push(pair("billed", bill.strategy.requests[i].billed.to_string()));
            expected.push(pair(
                "full-history-billed",
                bill.full_history.requests[i].billed.to_string(),
            ));
        }
    }
    assert_eq!(figures(&page), expected, "{spec}");
}

#[test]
fn text_from_the_run_cannot_add_markup() {
    let mut step = step();
    step.task.mission = "</p><script>fetch('http://example.invalid')</script><img src=x>".into();
    let page = run_page(&step, &PageOptions::default());
    assert_eq!(
        page.matches("<script>").count(),
        1,
        "only the page's own script"
    );
    assert_eq!(page.matches("<img").count(), 0);
    assert!(page.contains("&lt;/p&gt;&lt;script&gt;fetch(&#39;http://example.invalid&#39;)"));
}
