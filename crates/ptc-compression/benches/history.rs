//! Token counting of a 200-message history, on demand versus cached, and a `max_tokens` trim.
//!
//! `cargo bench -p ptc-compression --bench history` (add `--features tiktoken` for the exact
//! OpenAI tokenizer).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ptc_compression::history::{HistoryManager, HistoryPolicy};
use ptc_compression::tokenizer::{CachingTokenizer, HeuristicTokenizer, Tokenizer};
use ptc_turn::{Message, MessageToolCall};

/// A system message and 199 more: questions, tool calls, tool results and answers, with
/// texts of a few hundred characters of ordinary prose.
fn history() -> Vec<Message> {
    let prose = "The quarterly report lists revenue by region, and the north region grew \
                 fastest while the south region stayed flat compared to last year. ";
    let mut h = vec![Message::system(
        "You are an analyst. Use the tools to look up figures and answer precisely.",
    )];
    let mut t = 0;
    while h.len() < 200 {
        let id = format!("call_{t}");
        h.push(Message::user(format!("Question {t}: {}", prose.repeat(2))));
        h.push(
            Message::assistant("Looking that up.").with_tool_calls(vec![MessageToolCall {
                id: id.clone(),
                name: "query_report".into(),
                arguments: serde_json::json!({ "region": "north", "quarter": t % 4 + 1 }),
            }]),
        );
        h.push(Message::tool_result(id, prose.repeat(4)));
        h.push(Message::assistant(format!(
            "Answer {t}: {}",
            prose.repeat(2)
        )));
        t += 1;
    }
    h.truncate(200);
    h
}

fn count_tokens(c: &mut Criterion) {
    let h = history();
    let mut group = c.benchmark_group("count_200_messages");
    group.bench_function("heuristic_on_demand", |b| {
        b.iter(|| HeuristicTokenizer.count_messages(black_box(&h)))
    });
    let cached = CachingTokenizer::new(HeuristicTokenizer);
    cached.count_messages(&h);
    group.bench_function("heuristic_cached", |b| {
        b.iter(|| cached.count_messages(black_box(&h)))
    });
    #[cfg(feature = "tiktoken")]
    {
        use ptc_compression::tokenizer::{OpenAiEncoding, TiktokenTokenizer};
        let exact = TiktokenTokenizer::new(OpenAiEncoding::O200kBase);
        group.bench_function("tiktoken_on_demand", |b| {
            b.iter(|| exact.count_messages(black_box(&h)))
        });
        let cached = CachingTokenizer::new(exact);
        cached.count_messages(&h);
        group.bench_function("tiktoken_cached", |b| {
            b.iter(|| cached.count_messages(black_box(&h)))
        });
    }
    group.finish();
}

fn trim(c: &mut Criterion) {
    let h = history();
    let budget = HeuristicTokenizer.count_messages(&h) / 2;
    let mut group = c.benchmark_group("max_tokens_trim_200_messages");
    for caching in [true, false] {
        let manager = HistoryManager::new(
            HistoryPolicy::default()
                .with_max_tokens(budget)
                .with_token_caching(caching),
        );
        let name = if caching { "cached" } else { "on_demand" };
        group.bench_function(name, |b| b.iter(|| manager.apply_limits(black_box(&h))));
    }
    group.finish();
}

criterion_group!(benches, count_tokens, trim);
criterion_main!(benches);
