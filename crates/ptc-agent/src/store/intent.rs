//! The intent log: each tool call recorded before it is made, and marked when it is done.

use async_trait::async_trait;
use ptc_lisp::{ToolOutcome, Value};
pub use ptc_run::IdempotencyKey;

use super::{Lease, StoreError};
use crate::llm::LlmResponse;

/// A log of the tool calls a run has started. A call is [recorded](IntentLog::record_intent)
/// before the tool is called and [completed](IntentLog::complete_intent) with its outcome
/// after, so that after a crash the log tells exactly which calls may or may not have
/// happened: those [in flight](IntentLog::in_flight).
///
/// Writes to a run submitted to a fleet take its live lease and are fenced like every other
/// write ([`StoreError::LeaseLost`]): a worker that lost its lease cannot record a call, so it
/// learns it must stop before the tool is reached. Writes to a local run take `None`.
#[async_trait]
pub trait IntentLog: Send + Sync {
    /// Records that `intent` is about to be made. The first record of a key holds one
    /// attempt; recording it again (the call is retried after a crash or a lost lease) counts
    /// another attempt. When the call already completed, nothing changes and the record
    /// returned carries its outcome: the caller uses it instead of calling the tool again.
    /// A key already recorded for another tool or other arguments is refused
    /// ([`StoreError::IntentMismatch`]).
    async fn record_intent(
        &self,
        lease: Option<&Lease>,
        intent: &ToolIntent,
    ) -> Result<IntentRecord, StoreError>;

    /// Records the outcome of the call recorded under `key`. Completing it again with the
    /// same outcome changes nothing.
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
    /// for the turn is kept, and `reply` dropped. Fenced like the calls.
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
