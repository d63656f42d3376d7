//! Rendering cost by history length: 1, 8, 32 and 128 turns, each with tool calls, prints and
//! new definitions (every strategy also renders the uncompressed baseline for its stats), and
//! the cost of pricing a run's requests. The figures are in docs/compression.md.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ptc_compression::{
    AppendCompact, Compression, HeuristicTokenizer, PerTurnSummary, PricingKind, RenderOptions,
    RollingWindow, SingleUserCoalesced, Uncompressed, price, run_requests,
};
use ptc_lisp::Function;
use ptc_lisp::{Definition, ToolCallRecord, ToolOutcome, ToolSpec, Value, ValueShape};
use ptc_turn::Turn;
use std::collections::BTreeMap;
use std::hint::black_box;

fn record(i: usize) -> Value {
    Value::map([
        (Value::keyword("id"), Value::Int(i as i64)),
        (Value::keyword("name"), Value::string(format!("item-{i}"))),
        (Value::keyword("price"), Value::Float(9.5 + i as f64)),
    ])
}

fn history(turns: usize) -> Vec<Turn> {
    let mut memory: Vec<Definition> = Vec::new();
    (1..=turns)
        .map(|n| {
            let program = format!(
                "(def batch-{n} (tool/search {{:query \"q{n}\" :page {n}}}))\n\
                 (defn score-{n} \"Score an item for round {n}\" [item] (* (:price item) {n}))\n\
                 (tool/log \"round {n}\")\n\
                 (println \"round {n}:\" (count batch-{n}))\n\
                 (println (map score-{n} (take 2 batch-{n})))"
            );
            let batch = Value::vector((0..6).map(|i| record(n * 10 + i)));
            memory.push(Definition {
                name: format!("batch-{n}"),
                doc: None,
                value: batch.clone(),
                params: Vec::new(),
                last_return: None,
            });
            memory.push(Definition {
                name: format!("score-{n}"),
                doc: Some(format!("Score an item for round {n}")),
                value: Value::Fn(Function::read_back(&format!("#fn[score-{n}]"))),
                params: vec!["[item]".into()],
                last_return: Some(ValueShape::Float),
            });
            Turn::success(n as u32, program.clone(), Value::Nil)
                .with_raw_response(format!(
                    "Round {n}: fetch the next page, score it and print a summary.\n\n\
                     ```clojure\n{program}\n```"
                ))
                .with_tool_calls(vec![
                    ToolCallRecord {
                        name: "search".into(),
                        args: vec![Value::map([
                            (Value::keyword("query"), Value::string(format!("q{n}"))),
                            (Value::keyword("page"), Value::Int(n as i64)),
                        ])],
                        result: ToolOutcome::Ok(batch),
                        duration_us: 2_000,
                    },
                    ToolCallRecord {
                        name: "log".into(),
                        args: vec![Value::string(format!("round {n}"))],
                        result: ToolOutcome::Ok(Value::Nil),
                        duration_us: 50,
                    },
                ])
                .with_prints(vec![
                    format!("round {n}: 6"),
                    format!("({} {})", 9.5 * n as f64, 10.5 * n as f64),
                ])
                .with_memory(memory.clone())
        })
        .collect()
}

/// The tools and input data every rendering shows.
fn tools_and_data() -> (Vec<ToolSpec>, BTreeMap<String, Value>) {
    let tools = vec![
        ToolSpec::new("search", "Search the catalogue, one page at a time")
            .with_params(["query"])
            .with_signature("({:query :string :page :int}) -> [{:id :int :name :string}]"),
        ToolSpec::new("log", "Append a line to the audit log").with_params(["line"]),
    ];
    let data = BTreeMap::from([
        ("catalogue".to_string(), Value::vector((0..50).map(record))),
        ("currency".to_string(), Value::string("EUR")),
    ]);
    (tools, data)
}

fn bench_render(c: &mut Criterion) {
    let (tools, data) = tools_and_data();
    let strategies: Vec<Box<dyn Compression>> = vec![
        Box::new(AppendCompact::default()),
        Box::new(SingleUserCoalesced::default()),
        Box::new(Uncompressed),
        Box::new(RollingWindow::default()),
        Box::new(PerTurnSummary::default()),
    ];
    for strategy in &strategies {
        let mut group = c.benchmark_group(format!("render/{}", strategy.name()));
        for n in [1usize, 8, 32, 128] {
            let turns = history(n);
            let opts =
                RenderOptions::new("Score every catalogue page.", "You write PTC-Lisp.", 200)
                    .with_tools(&tools)
                    .with_data(&data);
            let memory = turns.last().map_or(&[][..], Turn::memory);
            group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                b.iter(|| strategy.to_messages(black_box(&turns), black_box(memory), &opts))
            });
        }
        group.finish();
    }
}

/// Pricing a whole run's requests (one per turn) under each profile.
fn bench_price(c: &mut Criterion) {
    let data = BTreeMap::from([("catalogue".to_string(), Value::vector((0..50).map(record)))]);
    let system = "You write PTC-Lisp. ".repeat(400);
    let turns = history(32);
    let opts = RenderOptions::new("Score every catalogue page.", &system, 200).with_data(&data);
    let requests = run_requests(&Uncompressed, &turns, &opts, true);
    let mut group = c.benchmark_group("price/32 requests");
    for kind in PricingKind::ALL {
        let profile = kind.profile();
        group.bench_function(kind.as_str(), |b| {
            b.iter(|| price(black_box(&requests), &profile, &HeuristicTokenizer))
        });
    }
    group.finish();
}

/// Render the 32-turn history `n` times with the default strategy (for the `profile_render` example).
pub fn profile(n: usize) {
    let (tools, data) = tools_and_data();
    let strategy = AppendCompact::default();
    let turns = history(32);
    let opts = RenderOptions::new("Score every catalogue page.", "You write PTC-Lisp.", 200)
        .with_tools(&tools)
        .with_data(&data);
    let memory = turns.last().map_or(&[][..], Turn::memory);
    for _ in 0..n {
        black_box(strategy.to_messages(black_box(&turns), black_box(memory), &opts));
    }
}

criterion_group!(benches, bench_render, bench_price);
criterion_main!(benches);
