//! Tool calls recorded in the run store's intent log before they are made.
//!
//! Each call of a turn's program gets the key `RUN:TURN:INDEX`, INDEX counting the turn's
//! calls in the order the program made them. Before its tool is called the call is recorded
//! under that key, and its outcome after. A turn run again after a crash (its run resumed from
//! its last committed turn) makes its calls under the same keys: a call recorded as completed
//! is answered from the log and not made again; a call recorded but never completed (in flight
//! at the crash) is made again under the same key, so a tool that honours the key acts once.
//! The turn's calls are matched to the recorded ones in order up to the first that differs
//! (the model wrote another program); from there each call gets a new key, after every key
//! recorded for the turn.

use std::time::Duration;

use ptc_lisp::{ToolAnswer, ToolError, ToolOutcome, ToolRequest, Value, pr_str};

use crate::live_tools::LiveTools;
use crate::llm::LlmResponse;
use crate::store::{IdempotencyKey, IntentRecord, StoreError, StoredRun, ToolIntent};

/// The intent log of one run, and the numbering of its calls.
pub(super) struct RecordedCalls<'a> {
    run: StoredRun<'a>,
    /// The turn whose calls are being numbered.
    turn: u32,
    /// The index the turn's next call gets.
    next: u32,
    /// Whether the turn's calls stopped matching the recorded ones.
    diverged: bool,
}

/// What becomes of one call: answered without calling the tool, or made under a key.
enum Planned {
    Answered(ToolAnswer),
    Made(ToolRequest, IdempotencyKey),
}

impl<'a> RecordedCalls<'a> {
    pub(super) fn new(run: StoredRun<'a>) -> RecordedCalls<'a> {
        RecordedCalls {
            run,
            turn: 0,
            next: 0,
            diverged: false,
        }
    }

    /// Answers `requests`, calls of the program of turn `turn` in the order it made them:
    /// each is recorded, then made through `live` (those to make, concurrently) or answered
    /// from the log, then completed in the log.
    pub(super) async fn answer(
        &mut self,
        turn: u32,
        requests: Vec<ToolRequest>,
        live: &LiveTools<'_>,
    ) -> Vec<ToolAnswer> {
        if turn != self.turn {
            self.turn = turn;
            self.next = 0;
            self.diverged = false;
        }
        let mut planned = Vec::with_capacity(requests.len());
        for request in requests {
            planned.push(self.record(request).await);
        }
        let mut answers = Vec::with_capacity(planned.len());
        let mut to_make = Vec::new();
        let mut made_at = Vec::new();
        for (at, plan) in planned.into_iter().enumerate() {
            match plan {
                Planned::Answered(answer) => answers.push(Some(answer)),
                Planned::Made(request, key) => {
                    answers.push(None);
                    made_at.push((at, key.clone()));
                    to_make.push((request, Some(key)));
                }
            }
        }
        let made = live.answer_keyed(to_make).await;
        for ((at, key), answer) in made_at.into_iter().zip(made) {
            self.complete(&key, &answer).await;
            answers[at] = Some(answer);
        }
        answers.into_iter().flatten().collect()
    }

    /// Records the call, under the next key of the turn.
    async fn record(&mut self, request: ToolRequest) -> Planned {
        loop {
            let key = IdempotencyKey::new(self.run.id(), self.turn, self.next);
            self.next += 1;
            let intent = ToolIntent {
                key: key.clone(),
                tool: request.name.clone(),
                args: request.args.clone(),
            };
            match self.run.record_intent(&intent).await {
                Ok(IntentRecord {
                    outcome: Some(outcome),
                    ..
                }) => {
                    let result = match outcome {
                        ToolOutcome::Ok(value) => Ok(value),
                        ToolOutcome::Error(message) => Err(ToolError::new(message)),
                    };
                    return Planned::Answered(ToolAnswer::new(result, Duration::ZERO));
                }
                Ok(_) => return Planned::Made(request, key),
                Err(StoreError::IntentMismatch { .. }) if !self.diverged => {
                    // Another program than the recorded one: new keys from here on.
                    self.diverged = true;
                    match self.first_unrecorded().await {
                        Ok(index) => self.next = index,
                        Err(error) => return not_recorded(&error),
                    }
                }
                Err(error) => return not_recorded(&error),
            }
        }
    }

    /// Records the model's reply to turn `turn` before its program runs. A reply that cannot
    /// be recorded only costs a new request if the turn is run again: the run goes on.
    pub(super) async fn keep_reply(&self, turn: u32, reply: &LlmResponse) {
        if let Err(error) = self.run.record_reply(turn, reply).await {
            tracing::warn!(
                run = self.run.id(),
                turn,
                %error,
                "the reply to turn {turn} could not be recorded ({error}); run again after a \
                 crash, the turn asks the model anew"
            );
        }
    }

    /// The reply recorded for turn `turn`, if the log has one.
    pub(super) async fn reply(&self, turn: u32) -> Option<LlmResponse> {
        match self.run.recorded_reply(turn).await {
            Ok(reply) => reply,
            Err(error) => {
                tracing::warn!(run = self.run.id(), %error, "the intent log could not be read");
                None
            }
        }
    }

    /// What a run resumed at turn `turn` is told about the calls its unfinished turn made
    /// before the run stopped, or `None` when it made none (or the log cannot be read).
    pub(super) async fn unfinished_notice(&self, turn: u32) -> Option<String> {
        match self.run.intents().await {
            Ok(recorded) => resumed_calls_notice(turn, &recorded),
            Err(error) => {
                tracing::warn!(run = self.run.id(), %error, "the intent log could not be read");
                None
            }
        }
    }

    /// The first index after every call recorded for the turn.
    async fn first_unrecorded(&self) -> Result<u32, StoreError> {
        let recorded = self.run.intents().await?;
        Ok(recorded
            .iter()
            .filter(|r| r.intent.key.turn() == self.turn)
            .map(|r| r.intent.key.call() + 1)
            .max()
            .unwrap_or(0)
            .max(self.next))
    }

    async fn complete(&self, key: &IdempotencyKey, answer: &ToolAnswer) {
        let outcome = match &answer.result {
            Ok(value) => ToolOutcome::Ok(value.clone()),
            Err(error) => ToolOutcome::Error(error.message.clone()),
        };
        if let Err(error) = self.run.complete_intent(key, &outcome).await {
            // The call was made: if the run is resumed before this turn is committed, the
            // call counts as in flight and is made again under the same key.
            tracing::warn!(%key, %error, "a tool call's outcome could not be recorded");
        }
    }
}

/// A call that was not made, because it could not be recorded first.
fn not_recorded(error: &StoreError) -> Planned {
    Planned::Answered(ToolAnswer::new(
        Err(ToolError::new(format!(
            "the call was not made: it could not be recorded first ({error})"
        ))),
        Duration::ZERO,
    ))
}

/// What a run resumed at turn `turn` is told about the calls the unfinished turn had made
/// before the run stopped, or `None` when it had made none.
fn resumed_calls_notice(turn: u32, recorded: &[IntentRecord]) -> Option<String> {
    let lines: Vec<String> = recorded
        .iter()
        .filter(|r| r.intent.key.turn() >= turn)
        .map(|r| {
            let call = call_text(&r.intent.tool, &r.intent.args);
            match &r.outcome {
                Some(ToolOutcome::Ok(value)) => {
                    format!(
                        "- {call} completed, returning {}",
                        shortened(&pr_str(value))
                    )
                }
                Some(ToolOutcome::Error(message)) => {
                    format!("- {call} completed, failing: {}", shortened(message))
                }
                None => format!("- {call} may or may not have happened"),
            }
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(format!(
        "Note: this run stopped during turn {turn}, before the turn was saved, after its \
         program had made these tool calls:\n{}\nA call made again with the same arguments \
         in the same order is not repeated: a completed one returns its recorded result, and \
         one that may have happened is retried under the same idempotency key.",
        lines.join("\n")
    ))
}

fn call_text(tool: &str, args: &[Value]) -> String {
    let mut text = format!("(tool/{tool}");
    for arg in args {
        text.push(' ');
        text.push_str(&pr_str(arg));
    }
    text.push(')');
    shortened(&text)
}

/// `text`, cut to 200 characters.
fn shortened(text: &str) -> String {
    const LIMIT: usize = 200;
    match text.char_indices().nth(LIMIT) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}
