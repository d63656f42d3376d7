//! Properties over random histories with tool calls: no step of history management ever
//! separates a tool call from its results, drops a system message, or leaves the assistant
//! speaking first.

use crate::common;

use common::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use ptc_compression::history::{
    HistoryManager, HistoryPolicy, SUMMARY_HEADER, SummaryState, SummaryStrategy,
    summarize_history, trim_to_messages, trim_to_tokens,
};
use ptc_compression::tokenizer::{HeuristicTokenizer, Tokenizer};
use ptc_turn::{Message, Role};

#[derive(Debug, Clone)]
enum Block {
    System(usize),
    User(usize),
    Assistant(usize),
    /// An assistant message calling this many tools, then their results (in reverse order
    /// when the flag is set), each result this long.
    ToolRound(usize, bool, usize),
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        1 => (1usize..30).prop_map(Block::System),
        4 => (1usize..60).prop_map(Block::User),
        4 => (1usize..60).prop_map(Block::Assistant),
        4 => (1usize..4, any::<bool>(), 1usize..80).prop_map(|(n, rev, len)| Block::ToolRound(n, rev, len)),
    ]
}

/// A well-formed history: optional system message, a user message, random blocks, and maybe
/// a pending tool call (no results yet) at the end. Some messages carry no timestamp.
fn history() -> impl Strategy<Value = Vec<Message>> {
    (
        any::<bool>(),
        prop::collection::vec(block(), 0..30),
        any::<bool>(),
        prop::collection::vec(any::<bool>(), 120),
    )
        .prop_map(|(system, blocks, pending, stamped)| {
            let mut h = Vec::new();
            if system {
                h.push(sys("You are a careful assistant."));
            }
            h.push(user("Please do the task."));
            let mut next_id = 0;
            let text = |c: char, len: usize| c.to_string().repeat(len);
            for block in blocks {
                match block {
                    Block::System(len) => h.push(sys(&text('s', len))),
                    Block::User(len) => h.push(user(&text('u', len))),
                    Block::Assistant(len) => h.push(asst(&text('a', len))),
                    Block::ToolRound(n, reverse, len) => {
                        let ids: Vec<String> =
                            (0..n).map(|k| format!("c{}", next_id + k)).collect();
                        next_id += n;
                        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                        h.push(calls(&refs));
                        let mut results: Vec<Message> =
                            ids.iter().map(|id| result(id, &text('r', len))).collect();
                        if reverse {
                            results.reverse();
                        }
                        h.extend(results);
                    }
                }
            }
            if pending {
                h.push(calls(&["pending"]));
            }
            h.into_iter()
                .enumerate()
                .map(|(i, m)| {
                    if stamped.get(i).copied().unwrap_or(true) {
                        m.with_timestamp_ms(i as i64 * 100)
                    } else {
                        m
                    }
                })
                .collect()
        })
}

fn strategy(len: usize) -> impl Strategy<Value = SummaryStrategy> {
    let len = len.max(1);
    prop_oneof![
        Just(SummaryStrategy::WholeHistory),
        (0..len + 2).prop_map(SummaryStrategy::FromLastNMessages),
        (1..len + 2).prop_map(SummaryStrategy::Chunked),
        (0..(len as i64 + 2) * 100).prop_map(SummaryStrategy::FromTimestamp),
        Just(SummaryStrategy::WholeHistoryMultipleSystemMessages),
    ]
}

fn summarizer(
    request: ptc_compression::SummaryRequest,
) -> Result<String, ptc_compression::SummarizerError> {
    Ok(format!(
        "{} messages after {:?}",
        request.messages.len(),
        request.previous_summary
    ))
}

fn summarize(strategy: SummaryStrategy, h: &[Message], state: &mut SummaryState) -> Vec<Message> {
    block_on(summarize_history(strategy, h, state, &summarizer)).unwrap()
}

fn is_summary(m: &Message) -> bool {
    m.role == Role::User && m.content.starts_with(SUMMARY_HEADER)
}

/// The output with each summary's text blanked out: what was kept and where summaries sit.
fn shape(out: &[Message]) -> Vec<Message> {
    out.iter()
        .map(|m| {
            if is_summary(m) {
                user(SUMMARY_HEADER)
            } else {
                m.clone()
            }
        })
        .collect()
}

fn first_user(h: &[Message]) -> Option<&Message> {
    h.iter().find(|m| m.role == Role::User)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn summaries_keep_pairs_system_messages_and_the_first_user_message(
        (h, strategy) in history().prop_flat_map(|h| {
            let len = h.len();
            (Just(h), strategy(len))
        })
    ) {
        prop_assume!(h.len() >= 10);
        let mut state = SummaryState::new();
        let out = summarize(strategy, &h, &mut state);
        if let Err(e) = check_pairs(&h, &out) {
            prop_assert!(false, "{}: {:?}", e, out);
        }
        prop_assert_eq!(systems(&out), systems(&h));
        prop_assert!(out.contains(first_user(&h).unwrap()));
        // Every message is either kept or summarized: nothing vanishes without a summary.
        let summarized = h.iter().filter(|m| !out.contains(m)).count();
        let summaries = out.iter().filter(|m| is_summary(m)).count();
        prop_assert!(summarized == 0 || summaries > 0);
    }

    #[test]
    fn incremental_summaries_keep_the_same_messages_as_summarizing_from_scratch(
        (h, strategy, split) in history().prop_flat_map(|h| {
            let len = h.len();
            (Just(h), strategy(len), 10..len.max(11))
        })
    ) {
        prop_assume!(h.len() >= 10 && split <= h.len());
        // Earlier turn on a prefix, then the full history with the carried state.
        let mut state = SummaryState::new();
        summarize(strategy, &h[..split], &mut state);
        let incremental = summarize(strategy, &h, &mut state);
        let scratch = summarize(strategy, &h, &mut SummaryState::new());
        prop_assert_eq!(shape(&incremental), shape(&scratch));
        if let Err(e) = check_pairs(&h, &incremental) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn token_trims_keep_pairs_and_fit_the_budget(h in history(), extra in 0usize..400) {
        let tokenizer = HeuristicTokenizer;
        let system: usize = systems(&h).iter().map(|m| tokenizer.count_message(m)).sum();
        let out = trim_to_tokens(&h, system + extra, &tokenizer).unwrap();
        if let Err(e) = check_pairs(&h, &out) {
            prop_assert!(false, "{}", e);
        }
        prop_assert!(tokenizer.count_messages(&out) <= system + extra);
        prop_assert_eq!(systems(&out), systems(&h));
        // The newest message survives whenever it fits with the system messages alone
        // (a lone pending call needs a notice in front of it).
        let last = h.last().unwrap();
        let notice = ptc_compression::history::trim_notice();
        let alone = if last.role == Role::User { 0 } else { tokenizer.count_message(&notice) };
        if last.role != Role::System
            && last.role != Role::Tool
            && system + tokenizer.count_message(last) + alone <= system + extra
        {
            prop_assert_eq!(out.last(), Some(last));
        }
    }

    #[test]
    fn message_trims_keep_pairs_and_the_limit(h in history(), max in 1usize..40) {
        let out = trim_to_messages(&h, max).unwrap();
        if let Err(e) = check_pairs(&h, &out) {
            prop_assert!(false, "{}", e);
        }
        let system_count = systems(&h).len();
        prop_assert!(out.len() <= max.max(system_count));
        prop_assert_eq!(systems(&out), systems(&h));
        if h.len() <= max {
            prop_assert_eq!(&out, &h);
        }
    }

    #[test]
    fn whole_policies_keep_pairs(
        (h, strategy) in history().prop_flat_map(|h| {
            let len = h.len();
            (Just(h), strategy(len))
        }),
        summarize_on in any::<bool>(),
        extra in prop::option::of(0usize..300),
        max_messages in prop::option::of(1usize..30),
    ) {
        let system: usize = systems(&h).iter().map(|m| HeuristicTokenizer.count_message(m)).sum();
        let policy = HistoryPolicy {
            summarize: summarize_on.then_some(strategy),
            max_tokens: extra.map(|e| system + e),
            max_messages,
            token_caching: true,
        };
        let manager = HistoryManager::new(policy);
        let out = block_on(manager.apply(&h, &mut SummaryState::new(), &summarizer)).unwrap();
        if let Err(e) = check_pairs(&h, &out) {
            prop_assert!(false, "{}", e);
        }
        prop_assert_eq!(systems(&out), systems(&h));
        if let Some(max_tokens) = policy.max_tokens {
            // Only the message step can add to the estimate (by swapping a summary for a notice),
            // so check the budget when it does not run.
            if max_messages.is_none() {
                prop_assert!(HeuristicTokenizer.count_messages(&out) <= max_tokens);
            }
        }
        if let Some(max) = max_messages {
            prop_assert!(out.len() <= max.max(systems(&h).len()));
        }
    }
}

#[test]
fn check_pairs_rejects_broken_histories() {
    let h = vec![user("q"), calls(&["a"]), result("a", "r")];
    assert_eq!(check_pairs(&h, &h), Ok(()));
    assert_eq!(
        check_pairs(&h, &[user("q"), result("a", "r")]),
        Err("tool result a at 1 lost its call".to_string())
    );
    assert_eq!(
        check_pairs(&h, &[user("q"), calls(&["a"])]),
        Err("call a at 1 lost a result".to_string())
    );
    assert_eq!(
        check_pairs(&h, &[sys("s"), asst("x")]),
        Err("history starts with Assistant".to_string())
    );
}
