//! Incremental summaries over a long conversation: the summarizer's input per turn stays
//! constant, so its total input grows linearly with the conversation, while summarizing the
//! whole history again on every turn grows quadratically.

use crate::common;

use std::sync::Mutex;

use common::*;
use pretty_assertions::assert_eq;
use ptc_compression::history::{
    HistoryManager, HistoryPolicy, Summarizer, SummaryFuture, SummaryPromptBuilder, SummaryRequest,
    SummaryState, SummaryStrategy,
};
use ptc_turn::Message;

const TURNS: usize = 100;

/// Measures each request as the prompt an LLM summarizer would send, and answers with a
/// summary of fixed length.
#[derive(Default)]
struct Measuring {
    prompt_chars: Mutex<Vec<usize>>,
    summarized: Mutex<Vec<Message>>,
}

impl Summarizer for Measuring {
    fn summarize(&self, request: SummaryRequest) -> SummaryFuture<'_> {
        Box::pin(async move {
            let chars = SummaryPromptBuilder::new().build(&request).char_count();
            let mut prompts = self.prompt_chars.lock().unwrap();
            prompts.push(chars);
            self.summarized.lock().unwrap().extend(request.messages);
            Ok(format!(
                "## Goal\nAnswer the questions.\n## Facts learned\n- {:04} batches folded in\n\
                 ## Actions taken\n- lookups\n## Open questions\nNone\n## Next step\nContinue",
                prompts.len()
            ))
        })
    }
}

/// One turn: a question, a tool call, its result, an answer; every text has a fixed width so
/// that each turn is exactly as large as the others.
fn turn(t: usize) -> [Message; 4] {
    let id = format!("call{t:03}");
    [
        user(&format!("question {t:03}: {}", "q".repeat(180))),
        calls(&[id.as_str()]),
        result(&id, &format!("result {t:03}: {}", "r".repeat(180))),
        asst(&format!("answer {t:03}: {}", "a".repeat(180))),
    ]
}

/// Runs the conversation, applying the policy each time a question arrives (before the model
/// answers). `fresh_state` forgets the summary between turns, i.e. re-summarizes everything.
fn converse(fresh_state: bool) -> (Measuring, Vec<Message>, SummaryState) {
    let manager = HistoryManager::new(
        HistoryPolicy::default().with_summary(SummaryStrategy::FromLastNMessages(6)),
    );
    let summarizer = Measuring::default();
    let mut state = SummaryState::new();
    let mut history = vec![sys("Answer each question using the lookup tool.")];
    for t in 0..TURNS {
        let [question, call, result, answer] = turn(t);
        history.push(question);
        if fresh_state {
            state.reset();
        }
        let sent = block_on(manager.apply(&history, &mut state, &summarizer)).unwrap();
        // The model always sees system, first question, summary (once there is one), and the
        // last six messages.
        assert!(sent.len() <= 9, "turn {t}: {} messages sent", sent.len());
        history.extend([call, result, answer]);
    }
    (summarizer, history, state)
}

#[test]
fn summarizer_input_grows_linearly_over_a_hundred_turns() {
    let (summarizer, history, state) = converse(false);
    let prompts = summarizer.prompt_chars.lock().unwrap().clone();

    // Summaries start once the history has ten messages (turn 2, 10 messages) and then run
    // once per turn.
    assert_eq!(prompts.len(), TURNS - 2);
    // After the first two (no previous summary, then a shorter first batch), every request
    // has exactly the same size: four new messages plus a fixed-size previous summary.
    let steady = prompts[1];
    assert!(prompts[1..].iter().all(|&c| c == steady), "{prompts:?}");
    let total: usize = prompts.iter().sum();
    assert_eq!(total, prompts[0] + (TURNS - 3) * steady);

    // Every message outside the kept ones went to the summarizer exactly once.
    let summarized = summarizer.summarized.lock().unwrap().clone();
    let last_question = 4 * (TURNS - 1) + 1;
    assert_eq!(state.covered(), last_question - 5);
    assert_eq!(summarized, history[2..state.covered()].to_vec());

    // Re-summarizing the whole prefix every turn sends far more: the same first request, then
    // requests that grow by a turn's worth of messages each time.
    let (quadratic, _, _) = converse(true);
    let quadratic_prompts = quadratic.prompt_chars.lock().unwrap().clone();
    assert_eq!(quadratic_prompts.len(), TURNS - 2);
    assert_eq!(quadratic_prompts[0], prompts[0]);
    let quadratic_total: usize = quadratic_prompts.iter().sum();
    let growth = quadratic_prompts[2] - quadratic_prompts[1];
    assert!(
        quadratic_prompts
            .windows(2)
            .skip(1)
            .all(|w| w[1] - w[0] == growth)
    );
    assert!(
        quadratic_total > 10 * total,
        "incremental {total} vs quadratic {quadratic_total}"
    );
}
