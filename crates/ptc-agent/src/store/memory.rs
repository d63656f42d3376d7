//! Runs kept in memory.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use ptc_lisp::ToolOutcome;
use ptc_turn::{StepOutcome, Task, Turn, Turns, Usage};

use crate::llm::LlmResponse;

use super::{
    Checkpoint, IdempotencyKey, IntentLog, IntentRecord, Lease, RunStore, StoreError, ToolIntent,
};

/// A [`RunStore`] in memory, with an [`IntentLog`]: for tests, and for hosts that only need to
/// resume within one process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    runs: Mutex<HashMap<String, Checkpoint>>,
    intents: Mutex<BTreeMap<IdempotencyKey, IntentRecord>>,
    replies: Mutex<BTreeMap<(String, u32), LlmResponse>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn with_run<T>(
        &self,
        id: &str,
        change: impl FnOnce(&mut Checkpoint) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        let run = runs
            .get_mut(id)
            .ok_or_else(|| StoreError::Missing(id.to_string()))?;
        if run.end.is_some() {
            return Err(StoreError::Ended(id.to_string()));
        }
        change(run)
    }
}

/// Appends `turn` to `turns`, reporting a number out of order as the store's error.
pub(super) fn push_turn(id: &str, turns: &mut Turns, turn: Turn) -> Result<(), StoreError> {
    turns
        .push(turn)
        .map(|_| ())
        .map_err(|e| StoreError::OutOfOrder {
            id: id.to_string(),
            expected: e.expected,
            found: e.found,
        })
}

#[async_trait]
impl RunStore for MemoryStore {
    async fn start(&self, id: &str, task: &Task) -> Result<(), StoreError> {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        if runs.contains_key(id) {
            return Err(StoreError::Exists(id.to_string()));
        }
        runs.insert(
            id.to_string(),
            Checkpoint {
                task: task.clone(),
                turns: Turns::new(),
                end: None,
            },
        );
        Ok(())
    }

    async fn append(&self, id: &str, turn: &Turn) -> Result<(), StoreError> {
        self.with_run(id, |run| push_turn(id, &mut run.turns, turn.clone()))
    }

    async fn finish(
        &self,
        id: &str,
        outcome: &StepOutcome,
        usage: &Usage,
    ) -> Result<(), StoreError> {
        self.with_run(id, |run| {
            run.end = Some((outcome.clone(), usage.clone()));
            Ok(())
        })
    }

    async fn load(&self, id: &str) -> Result<Option<Checkpoint>, StoreError> {
        let runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(runs.get(id).cloned())
    }

    async fn reopen(&self, id: &str) -> Result<(), StoreError> {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        let run = runs
            .get_mut(id)
            .ok_or_else(|| StoreError::Missing(id.to_string()))?;
        run.end = None;
        Ok(())
    }

    fn intent_log(&self) -> Option<(&dyn IntentLog, Option<&Lease>)> {
        Some((self, None))
    }
}

/// Refuses a lease: runs in memory are one process's, never a fleet's.
fn no_lease(lease: Option<&Lease>) -> Result<(), StoreError> {
    match lease {
        None => Ok(()),
        Some(lease) => Err(StoreError::Io(format!(
            "a memory store holds no leases (lease {} on run `{}`)",
            lease.token, lease.run_id
        ))),
    }
}

#[async_trait]
impl IntentLog for MemoryStore {
    async fn record_intent(
        &self,
        lease: Option<&Lease>,
        intent: &ToolIntent,
    ) -> Result<IntentRecord, StoreError> {
        no_lease(lease)?;
        let mut intents = self.intents.lock().unwrap_or_else(PoisonError::into_inner);
        let record = intents
            .entry(intent.key.clone())
            .or_insert_with(|| IntentRecord {
                intent: intent.clone(),
                attempts: 0,
                outcome: None,
            });
        if record.intent != *intent {
            return Err(StoreError::IntentMismatch {
                key: intent.key.to_string(),
                recorded: format!("tool/{}", record.intent.tool),
            });
        }
        if record.outcome.is_none() {
            record.attempts += 1;
        }
        Ok(record.clone())
    }

    async fn complete_intent(
        &self,
        lease: Option<&Lease>,
        key: &IdempotencyKey,
        outcome: &ToolOutcome,
    ) -> Result<(), StoreError> {
        no_lease(lease)?;
        let mut intents = self.intents.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(record) = intents.get_mut(key) else {
            return Err(StoreError::Io(format!(
                "the intent log has no call under the key `{key}`; record a call before making it"
            )));
        };
        match &record.outcome {
            Some(done) if done != outcome => Err(StoreError::Io(format!(
                "the call `{key}` was completed already, with another outcome"
            ))),
            _ => {
                record.outcome = Some(outcome.clone());
                Ok(())
            }
        }
    }

    async fn intents(&self, run_id: &str) -> Result<Vec<IntentRecord>, StoreError> {
        let intents = self.intents.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(intents
            .values()
            .filter(|r| r.intent.key.run_id() == run_id)
            .cloned()
            .collect())
    }

    async fn record_reply(
        &self,
        lease: Option<&Lease>,
        run_id: &str,
        turn: u32,
        reply: &LlmResponse,
    ) -> Result<(), StoreError> {
        no_lease(lease)?;
        let mut replies = self.replies.lock().unwrap_or_else(PoisonError::into_inner);
        replies
            .entry((run_id.to_string(), turn))
            .or_insert_with(|| reply.clone());
        Ok(())
    }

    async fn recorded_reply(
        &self,
        run_id: &str,
        turn: u32,
    ) -> Result<Option<LlmResponse>, StoreError> {
        let replies = self.replies.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(replies.get(&(run_id.to_string(), turn)).cloned())
    }
}
