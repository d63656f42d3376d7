//! Each summary strategy on a fixed history, incremental summaries, and summarizer failures.

use crate::common;

use common::*;
use pretty_assertions::assert_eq;
use ptc_compression::history::{
    HistoryError, SummarizerError, SummaryRequest, SummaryState, SummaryStrategy,
    summarize_history, summary_message,
};
use ptc_turn::Message;

/// 14 messages, stamped 0, 1000, 2000, … ms.
fn history() -> Vec<Message> {
    let messages = vec![
        sys("You are terse."), // 0
        user("u1 task"),       // 1
        asst("a1"),            // 2
        user("u2"),            // 3
        calls(&["c1"]),        // 4
        result("c1", "r1"),    // 5
        asst("a2"),            // 6
        user("u3"),            // 7
        calls(&["c2", "c3"]),  // 8
        result("c2", "r2"),    // 9
        result("c3", "r3"),    // 10
        asst("a3"),            // 11
        user("u4"),            // 12
        asst("a4"),            // 13
    ];
    stamp(messages)
}

fn stamp(messages: Vec<Message>) -> Vec<Message> {
    messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| m.with_timestamp_ms(i as i64 * 1000))
        .collect()
}

fn run(
    strategy: SummaryStrategy,
    history: &[Message],
    state: &mut SummaryState,
    recorder: &Recorder,
) -> Vec<Message> {
    block_on(summarize_history(strategy, history, state, recorder)).unwrap()
}

fn request(
    strategy: SummaryStrategy,
    task: &str,
    previous: Option<&str>,
    messages: &[Message],
) -> SummaryRequest {
    SummaryRequest {
        strategy,
        task: Some(task.into()),
        previous_summary: previous.map(str::to_owned),
        messages: messages.to_vec(),
    }
}

#[test]
fn whole_history_keeps_system_and_first_user_and_summarizes_the_rest() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    let out = run(SummaryStrategy::WholeHistory, &h, &mut state, &recorder);
    assert_eq!(
        out,
        vec![
            h[0].clone(),
            h[1].clone(),
            summary_message("summary #1 of 12 new messages")
        ]
    );
    assert_eq!(
        recorder.requests(),
        vec![request(
            SummaryStrategy::WholeHistory,
            "u1 task",
            None,
            &h[2..]
        )]
    );
    assert_eq!(state.covered(), 14);
    assert_eq!(state.summary(), Some("summary #1 of 12 new messages"));
}

#[test]
fn from_last_n_messages_widens_the_tail_to_keep_tool_results_with_their_call() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    let strategy = SummaryStrategy::FromLastNMessages(4);
    let out = run(strategy, &h, &mut state, &recorder);
    // The last four messages start with the result r3, so the tail starts at its call (8).
    let mut expected = vec![
        h[0].clone(),
        h[1].clone(),
        summary_message("summary #1 of 6 new messages"),
    ];
    expected.extend_from_slice(&h[8..]);
    assert_eq!(out, expected);
    assert_eq!(
        recorder.requests(),
        vec![request(strategy, "u1 task", None, &h[2..8])]
    );
    assert_eq!(state.covered(), 8);
}

#[test]
fn from_last_n_messages_larger_than_the_history_changes_nothing() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    let out = run(
        SummaryStrategy::FromLastNMessages(50),
        &h,
        &mut state,
        &recorder,
    );
    assert_eq!(out, h);
    assert_eq!(recorder.calls(), 0);
}

#[test]
fn from_timestamp_summarizes_messages_before_the_instant() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    // Message 5 (the result r1, stamped 5000) is the first at or after the instant; its call
    // at 4 stays with it.
    let strategy = SummaryStrategy::FromTimestamp(4_500);
    let out = run(strategy, &h, &mut state, &recorder);
    let mut expected = vec![
        h[0].clone(),
        h[1].clone(),
        summary_message("summary #1 of 2 new messages"),
    ];
    expected.extend_from_slice(&h[4..]);
    assert_eq!(out, expected);
    assert_eq!(
        recorder.requests(),
        vec![request(strategy, "u1 task", None, &h[2..4])]
    );
}

#[test]
fn from_timestamp_ignores_unstamped_messages_when_placing_the_boundary() {
    let mut h = history();
    for m in &mut h[6..10] {
        m.timestamp_ms = None;
    }
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    // 6..10 have no stamp; the first stamped message at or after 7000 is 10 (stamped 10000),
    // which is a result of the call at 8: the boundary moves back to 8.
    let out = run(
        SummaryStrategy::FromTimestamp(7_000),
        &h,
        &mut state,
        &recorder,
    );
    assert_eq!(out[3..], h[8..]);
    assert_eq!(recorder.requests()[0].messages, h[2..8].to_vec());
}

#[test]
fn from_timestamp_later_than_every_message_summarizes_everything() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    let out = run(
        SummaryStrategy::FromTimestamp(1_000_000),
        &h,
        &mut state,
        &recorder,
    );
    assert_eq!(
        out,
        vec![
            h[0].clone(),
            h[1].clone(),
            summary_message("summary #1 of 12 new messages")
        ]
    );
}

#[test]
fn chunked_folds_whole_chunks_and_leaves_the_incomplete_rest() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    let strategy = SummaryStrategy::Chunked(4);
    let out = run(strategy, &h, &mut state, &recorder);
    // Chunk 1: 2..6. Chunk 2: 6..10 would end between call 8 and result 10, so it takes 10
    // too. 11, 12, 13 are only three messages: they stay.
    let mut expected = vec![
        h[0].clone(),
        h[1].clone(),
        summary_message("summary #2 of 5 new messages"),
    ];
    expected.extend_from_slice(&h[11..]);
    assert_eq!(out, expected);
    assert_eq!(
        recorder.requests(),
        vec![
            request(strategy, "u1 task", None, &h[2..6]),
            request(
                strategy,
                "u1 task",
                Some("summary #1 of 4 new messages"),
                &h[6..11]
            ),
        ]
    );
    assert_eq!(state.covered(), 11);

    // One more message completes the next chunk.
    let mut longer = h.clone();
    longer.push(user("u5"));
    let out = run(strategy, &longer, &mut state, &recorder);
    assert_eq!(
        out,
        vec![
            h[0].clone(),
            h[1].clone(),
            summary_message("summary #3 of 4 new messages")
        ]
    );
    assert_eq!(
        recorder.requests()[2],
        request(
            strategy,
            "u1 task",
            Some("summary #2 of 5 new messages"),
            &longer[11..]
        )
    );
}

fn sectioned_history() -> Vec<Message> {
    vec![
        sys("A"),          // 0
        user("u1"),        // 1
        asst("a1"),        // 2
        user("u2"),        // 3
        asst("a2"),        // 4
        sys("B"),          // 5
        user("u3"),        // 6
        asst("a3"),        // 7
        calls(&["c1"]),    // 8
        result("c1", "r"), // 9
        sys("C"),          // 10
        asst("a4"),        // 11
    ]
}

#[test]
fn multiple_system_messages_are_summarized_section_by_section() {
    let h = sectioned_history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    let strategy = SummaryStrategy::WholeHistoryMultipleSystemMessages;
    let out = run(strategy, &h, &mut state, &recorder);
    assert_eq!(
        out,
        vec![
            sys("A"),
            user("u1"),
            summary_message("summary #1 of 3 new messages"),
            sys("B"),
            user("u3"),
            summary_message("summary #2 of 3 new messages"),
            sys("C"),
            summary_message("summary #3 of 1 new messages"),
        ]
    );
    let requests = recorder.requests();
    assert_eq!(requests[0], request(strategy, "u1", None, &h[2..5]));
    assert_eq!(requests[1], request(strategy, "u3", None, &h[7..10]));
    assert_eq!(
        requests[2],
        SummaryRequest {
            strategy,
            task: None,
            previous_summary: None,
            messages: vec![asst("a4")],
        }
    );
    assert_eq!(state.summaries().len(), 3);

    // Only the open last section is summarized again, and only with what is new.
    let mut longer = h.clone();
    longer.push(user("u4"));
    longer.push(asst("a5"));
    let out = run(strategy, &longer, &mut state, &recorder);
    assert_eq!(recorder.calls(), 4);
    assert_eq!(
        recorder.requests()[3],
        request(
            strategy,
            "u4",
            Some("summary #3 of 1 new messages"),
            &[asst("a5")]
        )
    );
    assert_eq!(
        out[6..],
        [
            sys("C"),
            user("u4"),
            summary_message("summary #4 of 1 new messages")
        ]
    );
    assert_eq!(
        out[..6],
        [
            sys("A"),
            user("u1"),
            summary_message("summary #1 of 3 new messages"),
            sys("B"),
            user("u3"),
            summary_message("summary #2 of 3 new messages"),
        ]
    );
}

#[test]
fn a_new_turn_only_sends_what_left_the_window_since_the_last_summary() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    let strategy = SummaryStrategy::FromLastNMessages(4);
    run(strategy, &h, &mut state, &recorder);

    let mut longer = h.clone();
    longer.extend([user("u5"), asst("a5"), user("u6")]);
    let out = run(strategy, &longer, &mut state, &recorder);
    // Tail: the last four (a4, u5, a5, u6); 8..13 are new in the summary.
    assert_eq!(
        recorder.requests()[1],
        request(
            strategy,
            "u1 task",
            Some("summary #1 of 6 new messages"),
            &longer[8..13]
        )
    );
    let mut expected = vec![
        h[0].clone(),
        h[1].clone(),
        summary_message("summary #2 of 5 new messages"),
    ];
    expected.extend_from_slice(&longer[13..]);
    assert_eq!(out, expected);

    // Nothing new: the stored summary is reused without a call.
    let again = run(strategy, &longer, &mut state, &recorder);
    assert_eq!(again, out);
    assert_eq!(recorder.calls(), 2);
}

#[test]
fn an_edited_history_is_summarized_from_scratch() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    let strategy = SummaryStrategy::FromLastNMessages(4);
    run(strategy, &h, &mut state, &recorder);

    let mut edited = h.clone();
    edited[3] = user("u2, reworded");
    run(strategy, &edited, &mut state, &recorder);
    assert_eq!(
        recorder.requests()[1],
        request(strategy, "u1 task", None, &edited[2..8])
    );
}

#[test]
fn a_strategy_that_keeps_more_verbatim_starts_over() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    run(SummaryStrategy::WholeHistory, &h, &mut state, &recorder);
    let strategy = SummaryStrategy::FromLastNMessages(4);
    let out = run(strategy, &h, &mut state, &recorder);
    assert_eq!(
        recorder.requests()[1],
        request(strategy, "u1 task", None, &h[2..8])
    );
    assert_eq!(out[3..], h[8..]);
    assert_eq!(state.covered(), 8);
}

#[test]
fn a_watermark_inside_a_call_whose_results_kept_arriving_starts_over() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    // The first ten messages end after result r2 of the call at 8; r3 is not in yet.
    run(
        SummaryStrategy::WholeHistory,
        &h[..10],
        &mut state,
        &recorder,
    );
    assert_eq!(state.covered(), 10);
    // Now r3 is there: continuing would strand it without its call.
    let out = run(SummaryStrategy::WholeHistory, &h, &mut state, &recorder);
    assert_eq!(
        recorder.requests()[1],
        request(SummaryStrategy::WholeHistory, "u1 task", None, &h[2..])
    );
    assert_eq!(
        out,
        vec![
            h[0].clone(),
            h[1].clone(),
            summary_message("summary #2 of 12 new messages")
        ]
    );
}

#[test]
fn state_round_trips_through_serde() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    run(SummaryStrategy::WholeHistory, &h, &mut state, &recorder);
    let json = serde_json::to_string(&state).unwrap();
    let mut restored: SummaryState = serde_json::from_str(&json).unwrap();
    assert_eq!(restored, state);
    run(SummaryStrategy::WholeHistory, &h, &mut restored, &recorder);
    assert_eq!(recorder.calls(), 1);
}

#[test]
fn a_failing_summarizer_leaves_history_and_state_untouched() {
    let h = history();
    let mut state = SummaryState::new();
    let first = Recorder::default();
    run(SummaryStrategy::Chunked(4), &h, &mut state, &first);
    let before = state.clone();

    let mut longer = h.clone();
    longer.extend([user("u5"), asst("a5"), user("u6"), asst("a6"), user("u7")]);
    // Two chunks are due; the second call fails.
    let failing = FailOn {
        fail_on: 2,
        recorder: Recorder::default(),
    };
    let err = block_on(summarize_history(
        SummaryStrategy::Chunked(4),
        &longer,
        &mut state,
        &failing,
    ))
    .unwrap_err();
    assert_eq!(
        err,
        HistoryError::CompressionFailed {
            strategy: "Chunked(4)".into(),
            cause: SummarizerError::new("provider returned 503"),
            history: longer.clone(),
        }
    );
    assert_eq!(state, before);
    assert_eq!(
        err.to_string(),
        "summarizing the history with Chunked(4) failed: provider returned 503; the history \
         was left unchanged (retry, or send it without a summary)"
    );
}

#[test]
fn an_empty_summary_is_a_failure() {
    let h = history();
    let mut state = SummaryState::new();
    let blank = |_: SummaryRequest| -> Result<String, SummarizerError> { Ok("  \n".into()) };
    let err = block_on(summarize_history(
        SummaryStrategy::WholeHistory,
        &h,
        &mut state,
        &blank,
    ))
    .unwrap_err();
    assert_eq!(
        err,
        HistoryError::CompressionFailed {
            strategy: "WholeHistory".into(),
            cause: SummarizerError::new("the summarizer returned an empty summary"),
            history: h.clone(),
        }
    );
    assert_eq!(state, SummaryState::new());
}

#[test]
fn a_summary_of_fewer_than_ten_messages_is_refused() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    let err = block_on(summarize_history(
        SummaryStrategy::WholeHistory,
        &h[..9],
        &mut state,
        &recorder,
    ))
    .unwrap_err();
    assert_eq!(
        err,
        HistoryError::InsufficientHistory {
            message_count: 9,
            minimum: 10
        }
    );
    assert_eq!(recorder.calls(), 0);
}

#[test]
fn a_chunk_size_of_zero_is_refused() {
    let h = history();
    let recorder = Recorder::default();
    let mut state = SummaryState::new();
    let err = block_on(summarize_history(
        SummaryStrategy::Chunked(0),
        &h,
        &mut state,
        &recorder,
    ))
    .unwrap_err();
    assert_eq!(
        err,
        HistoryError::InsufficientHistory {
            message_count: 0,
            minimum: 1
        }
    );
}
