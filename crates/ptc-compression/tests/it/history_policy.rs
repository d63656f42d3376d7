//! `HistoryManager`: the order summarize → max_tokens → max_messages, each step on its own,
//! validation errors, and token caching.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use pretty_assertions::assert_eq;
use ptc_compression::history::{
    HistoryError, HistoryManager, HistoryPolicy, SummaryState, SummaryStrategy, summary_message,
    trim_notice, trim_to_messages, trim_to_tokens,
};
use ptc_compression::tokenizer::{HeuristicTokenizer, Tokenizer};
use ptc_turn::Message;

fn history() -> Vec<Message> {
    vec![
        sys("You are terse."), // 8 tokens
        user("u1 task"),       // 6
        asst("a1"),            // 5
        user("u2"),
        calls(&["c1"]),
        result("c1", "r1"),
        asst("a2"),
        user("u3"),
        calls(&["c2", "c3"]),
        result("c2", "r2"),
        result("c3", "r3"),
        asst("a3"),
        user("u4"),
        asst("a4"),
    ]
}

fn apply(manager: &HistoryManager, h: &[Message], recorder: &Recorder) -> Vec<Message> {
    let mut state = SummaryState::new();
    block_on(manager.apply(h, &mut state, recorder)).unwrap()
}

#[test]
fn summary_runs_before_the_token_budget() {
    let h = history();
    let summary = summary_message("summary #1 of 12 new messages");
    let budget = HeuristicTokenizer.count_messages(&[h[0].clone(), summary.clone()]);
    let manager = HistoryManager::new(
        HistoryPolicy::default()
            .with_summary(SummaryStrategy::WholeHistory)
            .with_max_tokens(budget),
    );
    let recorder = Recorder::default();
    // [system, u1, summary] is one message too large: the oldest non-system message goes.
    assert_eq!(apply(&manager, &h, &recorder), vec![h[0].clone(), summary]);
    // The summary saw the whole history, not what a token trim would have left of it.
    assert_eq!(recorder.requests()[0].messages, h[2..].to_vec());
}

#[test]
fn summary_runs_before_the_message_limit() {
    let h = history();
    let manager = HistoryManager::new(
        HistoryPolicy::default()
            .with_summary(SummaryStrategy::FromLastNMessages(3))
            .with_max_messages(5),
    );
    let recorder = Recorder::default();
    // The summary step gives [system, u1, summary, a3, u4, a4]; the limit then drops u1, the
    // oldest non-system message. Had the limit run first, there would be nothing to summarize.
    assert_eq!(
        apply(&manager, &h, &recorder),
        vec![
            h[0].clone(),
            summary_message("summary #1 of 9 new messages"),
            h[11].clone(),
            h[12].clone(),
            h[13].clone()
        ]
    );
    assert_eq!(recorder.requests()[0].messages, h[2..11].to_vec());
}

#[test]
fn token_budget_runs_before_the_message_limit() {
    // The two orders differ only through the trim notice: the message limit puts one in front
    // of a history that would start with the assistant, and the notice costs tokens.
    let h = vec![sys("s"), user("u1"), asst("a1"), asst("a2"), asst("a3")];
    let tokens = |m: &[Message]| HeuristicTokenizer.count_messages(m);
    assert_eq!(tokens(&h), 25);
    let manager = HistoryManager::new(
        HistoryPolicy::default()
            .with_max_tokens(25)
            .with_max_messages(3),
    );
    let out = manager.apply_limits(&h).unwrap();
    // max_tokens first: the history fits, nothing is dropped. max_messages then keeps the
    // newest messages behind a notice, and has the last word even though the notice takes
    // the result past the token budget.
    assert_eq!(trim_to_tokens(&h, 25, &HeuristicTokenizer).unwrap(), h);
    assert_eq!(out, vec![sys("s"), trim_notice(), asst("a3")]);
    assert_eq!(tokens(&out), 5 + tokens(&[trim_notice()]) + 5);
    // The other order would end differently: the token budget, applied last, leaves no room
    // for the notice and so for anything but the system message.
    let by_messages = trim_to_messages(&h, 3).unwrap();
    assert_eq!(by_messages, out);
    assert_eq!(
        trim_to_tokens(&by_messages, 25, &HeuristicTokenizer).unwrap(),
        vec![sys("s")]
    );
}

#[test]
fn token_budget_alone_drops_the_oldest_non_system_messages() {
    let h = history();
    // Everything from u4 on: 8 (system) + 5 + 5.
    let manager = HistoryManager::new(HistoryPolicy::default().with_max_tokens(18));
    assert_eq!(
        manager.apply_limits(&h).unwrap(),
        vec![h[0].clone(), h[12].clone(), h[13].clone()]
    );
    let tokens = manager
        .tokenizer()
        .count_messages(&manager.apply_limits(&h).unwrap());
    assert_eq!(tokens, 18);
}

#[test]
fn token_budget_that_only_holds_the_system_messages_keeps_only_them() {
    let h = history();
    let manager = HistoryManager::new(HistoryPolicy::default().with_max_tokens(8));
    assert_eq!(manager.apply_limits(&h).unwrap(), vec![h[0].clone()]);
}

#[test]
fn message_limit_alone_keeps_the_newest_and_the_system_messages() {
    let h = history();
    let manager = HistoryManager::new(HistoryPolicy::default().with_max_messages(6));
    // Five newest non-system messages would start at result r2; its call comes along only if
    // it fits, which it does not, so the cut moves forward to a3 behind a notice.
    assert_eq!(
        manager.apply_limits(&h).unwrap(),
        vec![
            h[0].clone(),
            trim_notice(),
            h[11].clone(),
            h[12].clone(),
            h[13].clone()
        ]
    );
    // Seven slots: the call with both results still does not fit behind a notice (eight).
    let manager = HistoryManager::new(HistoryPolicy::default().with_max_messages(7));
    assert_eq!(
        manager.apply_limits(&h).unwrap(),
        vec![
            h[0].clone(),
            trim_notice(),
            h[11].clone(),
            h[12].clone(),
            h[13].clone()
        ]
    );
    // Eight: everything from u3 on, which starts with a user message and needs no notice.
    let manager = HistoryManager::new(HistoryPolicy::default().with_max_messages(8));
    assert_eq!(
        manager.apply_limits(&h).unwrap(),
        [&h[..1], &h[7..]].concat()
    );
}

#[test]
fn no_policy_changes_nothing() {
    let h = history();
    let manager = HistoryManager::new(HistoryPolicy::default());
    let recorder = Recorder::default();
    assert_eq!(apply(&manager, &h, &recorder), h);
    assert_eq!(recorder.calls(), 0);
}

#[test]
fn a_short_history_skips_the_summary_step_but_not_the_limits() {
    let h = history()[..9].to_vec();
    let manager = HistoryManager::new(
        HistoryPolicy::default()
            .with_summary(SummaryStrategy::WholeHistory)
            .with_max_messages(3),
    );
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    let out = block_on(manager.apply(&h, &mut state, &recorder)).unwrap();
    assert_eq!(recorder.calls(), 0);
    assert_eq!(state, SummaryState::new());
    // Three slots: the newest user message (u3) and the call after it.
    assert_eq!(out, vec![h[0].clone(), h[7].clone(), h[8].clone()]);
}

#[test]
fn a_token_limit_below_the_system_messages_is_invalid() {
    let h = history();
    let manager = HistoryManager::new(
        HistoryPolicy::default()
            .with_summary(SummaryStrategy::WholeHistory)
            .with_max_tokens(7),
    );
    let expected = HistoryError::InvalidTokenLimit {
        system_prompt_tokens: 8,
        max_tokens: 7,
    };
    assert_eq!(manager.apply_limits(&h), Err(expected.clone()));
    // Checked before anything is summarized.
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    assert_eq!(
        block_on(manager.apply(&h, &mut state, &recorder)),
        Err(expected.clone())
    );
    assert_eq!(recorder.calls(), 0);
    assert_eq!(
        expected.to_string(),
        "max_tokens is 7, but the system messages alone take about 8 tokens; raise max_tokens \
         to at least 8 or shorten the system messages"
    );
}

#[test]
fn a_message_limit_of_zero_is_refused() {
    let manager = HistoryManager::new(HistoryPolicy::default().with_max_messages(0));
    let err = manager.apply_limits(&history()).unwrap_err();
    assert_eq!(
        err,
        HistoryError::InsufficientHistory {
            message_count: 0,
            minimum: 1
        }
    );
    assert_eq!(
        err.to_string(),
        "history management needs at least 1 messages here but got 0; summaries need a \
         history of at least 10 messages (wait for more turns or unset `summarize`), and \
         `max_messages` and `Chunked` sizes must be at least 1"
    );
}

#[test]
fn a_chunk_size_of_zero_is_refused_before_summarizing() {
    let manager =
        HistoryManager::new(HistoryPolicy::default().with_summary(SummaryStrategy::Chunked(0)));
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    assert_eq!(
        block_on(manager.apply(&history(), &mut state, &recorder)),
        Err(HistoryError::InsufficientHistory {
            message_count: 0,
            minimum: 1
        })
    );
    assert_eq!(recorder.calls(), 0);
}

#[test]
fn a_failed_summary_returns_the_original_history_in_the_error() {
    let h = history();
    let manager = HistoryManager::new(
        HistoryPolicy::default()
            .with_summary(SummaryStrategy::WholeHistory)
            .with_max_messages(2),
    );
    let failing = FailOn {
        fail_on: 1,
        recorder: Recorder::default(),
    };
    let mut state = SummaryState::new();
    match block_on(manager.apply(&h, &mut state, &failing)) {
        Err(HistoryError::CompressionFailed {
            strategy, history, ..
        }) => {
            assert_eq!(strategy, "WholeHistory");
            assert_eq!(history, h);
        }
        other => panic!("expected CompressionFailed, got {other:?}"),
    }
    assert_eq!(state, SummaryState::new());
}

/// Counts the messages it is asked to count.
#[derive(Clone, Default)]
struct Counting(Arc<AtomicUsize>);

impl Tokenizer for Counting {
    fn count_text(&self, text: &str) -> usize {
        HeuristicTokenizer.count_text(text)
    }

    fn count_message(&self, message: &Message) -> usize {
        self.0.fetch_add(1, Ordering::Relaxed);
        HeuristicTokenizer.count_message(message)
    }
}

#[test]
fn token_caching_counts_each_message_once_across_calls() {
    let h = history();
    let counting = Counting::default();
    let manager = HistoryManager::with_tokenizer(
        HistoryPolicy::default().with_max_tokens(1_000),
        counting.clone(),
    );
    manager.apply_limits(&h).unwrap();
    let first = counting.0.load(Ordering::Relaxed);
    // 14 messages once each (the system message is counted again for validation: cached).
    assert_eq!(first, 14);
    manager.apply_limits(&h).unwrap();
    assert_eq!(counting.0.load(Ordering::Relaxed), 14);

    let uncached = Counting::default();
    let manager = HistoryManager::with_tokenizer(
        HistoryPolicy::default()
            .with_max_tokens(1_000)
            .with_token_caching(false),
        uncached.clone(),
    );
    manager.apply_limits(&h).unwrap();
    manager.apply_limits(&h).unwrap();
    // Validation (1 system message) and the budget (14) per call.
    assert_eq!(uncached.0.load(Ordering::Relaxed), 30);
}

#[test]
fn policy_round_trips_through_serde_with_caching_on_by_default() {
    let policy: HistoryPolicy =
        serde_json::from_str(r#"{"summarize":{"FromLastNMessages":8},"max_tokens":1000}"#).unwrap();
    assert_eq!(
        policy,
        HistoryPolicy::default()
            .with_summary(SummaryStrategy::FromLastNMessages(8))
            .with_max_tokens(1000)
    );
    let json = serde_json::to_string(&policy).unwrap();
    assert_eq!(
        serde_json::from_str::<HistoryPolicy>(&json).unwrap(),
        policy
    );
}

#[test]
fn apply_can_run_on_a_multi_threaded_runtime() {
    fn assert_send<T: Send>(value: T) -> T {
        value
    }
    let h = history();
    let manager = HistoryManager::new(
        HistoryPolicy::default().with_summary(SummaryStrategy::FromLastNMessages(4)),
    );
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    // The future must be Send to be spawned on a work-stealing executor.
    let out = block_on(assert_send(manager.apply(&h, &mut state, &recorder))).unwrap();
    assert_eq!(out.len(), 3 + 6);
}
