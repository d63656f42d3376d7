//! The intent log: each tool call recorded before it is made, and marked when it is done.

use async_trait::async_trait;
use ptc_lisp::{ToolOutcome, Value};
pub use ptc_run::IdempotencyKey;

use super::{Lease, StoreError, Writable, may_write};
use crate::llm::LlmResponse;

/// A log of the tool calls a run has started. A call is [recorded](IntentLog::record_intent)
/// before the tool is called and [completed](IntentLog::complete_intent) with its outcome
/// after, so that after a crash the log tells exactly which calls may or may not have
/// happened: those [in flight](IntentLog::in_flight).
///
/// Writes to a run submitted to a fleet take its live lease and are fenced like every other
/// write ([`StoreError::LeaseLost`]): a worker that lost its lease cannot record a call, so it
/// learns it must stop before the tool is reached. Writes to a local run take `None`.
///
/// What each write checks, and the error it refuses with, is decided by [`recording`],
/// [`completing`] and [`replying`], which every implementation calls: the same log in every
/// store refuses the same writes with the same words.
#[async_trait]
pub trait IntentLog: Send + Sync {
    /// Records that `intent` is about to be made. The first record of a key holds one
    /// attempt; recording it again (the call is retried after a crash or a lost lease) counts
    /// another attempt. When the call already completed, nothing changes and the record
    /// returned carries its outcome: the caller uses it instead of calling the tool again.
    /// A key already recorded for another tool or other arguments is refused
    /// ([`StoreError::IntentMismatch`]). The rules are [`recording`]'s.
    async fn record_intent(
        &self,
        lease: Option<&Lease>,
        intent: &ToolIntent,
    ) -> Result<IntentRecord, StoreError>;

    /// Records the outcome of the call recorded under `key`. Completing it again with the
    /// same outcome changes nothing. The rules are [`completing`]'s.
    async fn complete_intent(
        &self,
        lease: Option<&Lease>,
        key: &IdempotencyKey,
        outcome: &ToolOutcome,
    ) -> Result<(), StoreError>;

    /// Every call recorded for run `run_id`, by turn and then call index.
    async fn intents(&self, run_id: &str) -> Result<Vec<IntentRecord>, StoreError>;

    /// Records `reply`, the model's answer for turn `turn` of run `run_id`, before the turn's
    /// program runs: the turn run again after a crash takes its program from it instead of
    /// asking the model anew (and its request is not billed twice). A reply already recorded
    /// for the turn is kept, and `reply` dropped. Fenced like the calls ([`replying`]).
    async fn record_reply(
        &self,
        lease: Option<&Lease>,
        run_id: &str,
        turn: u32,
        reply: &LlmResponse,
    ) -> Result<(), StoreError>;

    /// The reply recorded for turn `turn` of run `run_id`, if any.
    async fn recorded_reply(
        &self,
        run_id: &str,
        turn: u32,
    ) -> Result<Option<LlmResponse>, StoreError>;

    /// The calls of run `run_id` recorded and not completed: each may or may not have
    /// reached its tool.
    async fn in_flight(&self, run_id: &str) -> Result<Vec<IntentRecord>, StoreError> {
        let mut records = self.intents(run_id).await?;
        records.retain(|r| r.outcome.is_none());
        Ok(records)
    }
}

/// A tool call about to be made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolIntent {
    /// Which call it is.
    pub key: IdempotencyKey,
    /// The tool's name.
    pub tool: String,
    /// The arguments, as the program passed them.
    pub args: Vec<Value>,
}

/// A call as the intent log has it.
#[derive(Debug, Clone, PartialEq)]
pub struct IntentRecord {
    /// The call.
    pub intent: ToolIntent,
    /// How many times it was recorded: 1, and one more for each retry.
    pub attempts: u32,
    /// Its outcome once completed; `None` while it is in flight.
    pub outcome: Option<ToolOutcome>,
}
/// What recording a call does to the log, as [`recording`] decides it.
#[derive(Debug, Clone, PartialEq)]
pub enum Recording {
    /// The key's first record: the log adds it, with one attempt.
    First(IntentRecord),
    /// The call was recorded before and never completed (it is retried): the log keeps it with
    /// one attempt more.
    Again(IntentRecord),
    /// The call completed before: the log is left as it is, and the caller answers the call
    /// from the outcome recorded instead of calling the tool again.
    Completed(IntentRecord),
}

impl Recording {
    /// The call as the log has it after the record.
    pub fn record(&self) -> &IntentRecord {
        match self {
            Recording::First(record) | Recording::Again(record) | Recording::Completed(record) => {
                record
            }
        }
    }

    /// The call as the log has it after the record.
    pub fn into_record(self) -> IntentRecord {
        match self {
            Recording::First(record) | Recording::Again(record) | Recording::Completed(record) => {
                record
            }
        }
    }
}

/// The rule of [`IntentLog::record_intent`], which every store keeps by calling it: recording
/// `intent` under `lease` in the log of a run the store has as `run` (see [`may_write`]), where
/// the log held `recorded` under the intent's key (`None`: nothing).
///
/// The writer is checked first ([`may_write`]: the run is missing, ended, a fleet's run
/// written without its live lease...); then a key recorded for another tool or other
/// arguments is refused ([`StoreError::IntentMismatch`]).
///
/// ```
/// use ptc_agent::store::{IdempotencyKey, Recording, StoreError, ToolIntent, Writable, recording};
///
/// let charge = ToolIntent { key: IdempotencyKey::new("r", 1, 0), tool: "charge".into(), args: vec![] };
/// let run = Some(Writable::LOCAL);
/// let first = recording(run, None, None, &charge).unwrap();
/// assert_eq!(first.record().attempts, 1);
/// let again = recording(run, None, Some(first.record()), &charge).unwrap();
/// assert!(matches!(again, Recording::Again(ref r) if r.attempts == 2));
/// let refund = ToolIntent { tool: "refund".into(), ..charge.clone() };
/// assert_eq!(
///     recording(run, None, Some(again.record()), &refund),
///     Err(StoreError::IntentMismatch { key: "r:1:0".into(), recorded: "tool/charge".into() })
/// );
/// ```
pub fn recording(
    run: Option<Writable>,
    lease: Option<&Lease>,
    recorded: Option<&IntentRecord>,
    intent: &ToolIntent,
) -> Result<Recording, StoreError> {
    may_write(intent.key.run_id(), run, lease)?;
    let Some(recorded) = recorded else {
        return Ok(Recording::First(IntentRecord {
            intent: intent.clone(),
            attempts: 1,
            outcome: None,
        }));
    };
    if recorded.intent != *intent {
        return Err(StoreError::IntentMismatch {
            key: intent.key.to_string(),
            recorded: format!("tool/{}", recorded.intent.tool),
        });
    }
    if recorded.outcome.is_some() {
        return Ok(Recording::Completed(recorded.clone()));
    }
    Ok(Recording::Again(IntentRecord {
        attempts: recorded.attempts.saturating_add(1),
        ..recorded.clone()
    }))
}

/// The rule of [`IntentLog::complete_intent`], which every store keeps by calling it:
/// completing the call under `key` with `outcome`, under `lease`, in the log of a run the
/// store has as `run`, where the log holds `recorded` under the key. `Ok(true)` when the log
/// keeps `outcome`, `Ok(false)` when the call was completed with this outcome already (nothing
/// changes).
///
/// The writer is checked first ([`may_write`]); then a key never recorded is refused
/// ([`StoreError::IntentUnknown`]), and so is a call completed with another outcome
/// ([`StoreError::IntentCompleted`]).
pub fn completing(
    run: Option<Writable>,
    lease: Option<&Lease>,
    recorded: Option<&IntentRecord>,
    key: &IdempotencyKey,
    outcome: &ToolOutcome,
) -> Result<bool, StoreError> {
    may_write(key.run_id(), run, lease)?;
    let Some(recorded) = recorded else {
        return Err(StoreError::IntentUnknown(key.to_string()));
    };
    match &recorded.outcome {
        None => Ok(true),
        Some(done) if done == outcome => Ok(false),
        Some(_) => Err(StoreError::IntentCompleted(key.to_string())),
    }
}

/// The rule of [`IntentLog::record_reply`], which every store keeps by calling it: recording a
/// reply for a turn of run `run_id`, under `lease`, which the store has as `run`, where the log
/// `holds` a reply for that turn already or not. `Ok(true)` when the log keeps the reply,
/// `Ok(false)` when it keeps the one it holds. The writer is checked as every write is
/// ([`may_write`]).
pub fn replying(
    run: Option<Writable>,
    lease: Option<&Lease>,
    run_id: &str,
    holds: bool,
) -> Result<bool, StoreError> {
    may_write(run_id, run, lease)?;
    Ok(!holds)
}
