//! The driver's side of a run's intent log: the I/O the run core's intent planning asks for.
//!
//! The core decides (`ptc_run::RecordedIntents`, `Action::CallTools`): each call's idempotency
//! key, which calls the log answers and which are made, the reply a resumed turn runs again,
//! what the model is told. Here, the one place a run uses its store's [`IntentLog`](crate::store::IntentLog): what the
//! log holds is read once, when the run starts; each call to make is recorded before its tool
//! is called and completed after; each reply is recorded before its program runs.

use ptc_lisp::{ToolAnswer, ToolOutcome, ToolRequest};
use ptc_run::{
    IdempotencyKey, PlannedCall, RecordedCall, RecordedIntents, answer_from_log, call_not_recorded,
};

use crate::live_tools::LiveTools;
use crate::llm::LlmResponse;
use crate::store::{IntentRecord, StoredRun, ToolIntent};

/// The intent log of one run, written through the run's one write path (with its lease, if
/// a worker holds one).
pub(super) struct RunIntents<'a> {
    run: StoredRun<'a>,
}

/// What becomes of a call to make once its intent is recorded.
enum Recorded {
    /// The log answers it (it completed, though the run had not read so when it started).
    Answered(ToolAnswer),
    /// Recorded (or planned without a key): it is made.
    ToMake(ToolRequest, Option<IdempotencyKey>),
}

impl<'a> RunIntents<'a> {
    /// The intent log of `run`, if its store keeps one.
    pub(super) fn of(run: StoredRun<'a>) -> Option<RunIntents<'a>> {
        run.keeps_intents().then_some(RunIntents { run })
    }

    /// What the log holds for the run, for its core: for a run resumed at turn `resumed_at`,
    /// the calls recorded so far and the reply recorded for that turn; nothing for a new run.
    /// A log that cannot be read counts as empty (the run then asks the model again, and
    /// its calls are made anew under their keys).
    pub(super) async fn load(&self, resumed_at: Option<u32>) -> RecordedIntents {
        let run_id = self.run.id();
        let mut recorded = RecordedIntents::new(run_id);
        let Some(turn) = resumed_at else {
            return recorded;
        };
        match self.run.recorded_reply(turn).await {
            Ok(reply) => recorded.reply = reply,
            Err(error) => {
                tracing::warn!(run = run_id, %error, "the intent log could not be read");
            }
        }
        if recorded.reply.is_some() {
            tracing::info!(
                run = run_id,
                turn,
                "turn {turn} runs the reply recorded before the run stopped; the model is not \
                 asked again"
            );
        }
        match self.run.intents().await {
            Ok(calls) => recorded.calls = calls.into_iter().map(recorded_call).collect(),
            Err(error) => {
                tracing::warn!(run = run_id, %error, "the intent log could not be read");
            }
        }
        recorded
    }

    /// Makes the calls of `calls` the core planned to make, through `live`: each is recorded
    /// first, those recorded are made concurrently, each under its key, and their outcomes
    /// recorded after. The answers of the calls made, in their order.
    pub(super) async fn make(
        &self,
        calls: Vec<PlannedCall>,
        live: &LiveTools<'_>,
    ) -> Vec<ToolAnswer> {
        let mut recorded = Vec::new();
        for call in calls.into_iter().filter(PlannedCall::is_made) {
            recorded.push(match call.key {
                Some(key) => self.record(call.request, key).await,
                None => Recorded::ToMake(call.request, None),
            });
        }
        let mut answers: Vec<Option<ToolAnswer>> = Vec::with_capacity(recorded.len());
        let mut to_make = Vec::new();
        let mut made_at = Vec::new();
        for (at, call) in recorded.into_iter().enumerate() {
            match call {
                Recorded::Answered(answer) => answers.push(Some(answer)),
                Recorded::ToMake(request, key) => {
                    answers.push(None);
                    made_at.push((at, key.clone()));
                    to_make.push((request, key));
                }
            }
        }
        let made = live.answer_keyed(to_make).await;
        for ((at, key), answer) in made_at.into_iter().zip(made) {
            if let Some(key) = key {
                self.complete(&key, &answer).await;
            }
            answers[at] = Some(answer);
        }
        answers.into_iter().flatten().collect()
    }

    /// Records `request`'s intent under `key` before it is made.
    async fn record(&self, request: ToolRequest, key: IdempotencyKey) -> Recorded {
        let intent = ToolIntent {
            key: key.clone(),
            tool: request.name.clone(),
            args: request.args.clone(),
        };
        match self.run.record_intent(&intent).await {
            Ok(IntentRecord {
                outcome: Some(outcome),
                ..
            }) => Recorded::Answered(answer_from_log(outcome)),
            Ok(_) => Recorded::ToMake(request, Some(key)),
            // Not made: a call is never made unrecorded.
            Err(error) => Recorded::Answered(ToolAnswer::new(
                Err(call_not_recorded(&error)),
                std::time::Duration::ZERO,
            )),
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

/// A call of the log as the run core takes it.
fn recorded_call(record: IntentRecord) -> RecordedCall {
    RecordedCall {
        key: record.intent.key,
        tool: record.intent.tool,
        args: record.intent.args,
        outcome: record.outcome,
    }
}
