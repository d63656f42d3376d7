//! Runs kept in the process's own memory.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use ptc_lisp::ToolOutcome;
use ptc_turn::{StepOutcome, Task, Turn, Turns, Usage};

use crate::llm::LlmResponse;

use super::{
    Checkpoint, IdempotencyKey, IntentLog, IntentRecord, Lease, Recording, RunStore, StoreError,
    ToolIntent, Writable, completing, may_write, recording, replying,
};

/// A [`RunStore`] held by the process itself, with an [`IntentLog`]: for tests, and for hosts
/// that only need to resume within one process. Its runs are gone when it is dropped.
///
/// It was named `MemoryStore`, a name that [`MemoryStore`](super::MemoryStore) keeps.
#[derive(Debug, Default)]
pub struct InProcessStore {
    runs: Mutex<HashMap<String, Checkpoint>>,
    intents: Mutex<BTreeMap<IdempotencyKey, IntentRecord>>,
    replies: Mutex<BTreeMap<(String, u32), LlmResponse>>,
}

impl InProcessStore {
    /// An empty store.
    pub fn new() -> InProcessStore {
        InProcessStore::default()
    }

    /// Changes run `id` with `change` once `writer` may write it ([`may_write`]).
    fn write_run<T>(
        &self,
        writer: Option<&Lease>,
        id: &str,
        change: impl FnOnce(&mut Checkpoint) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        let run = runs.get_mut(id);
        may_write(id, run.as_deref().map(writable), writer)?;
        match run {
            Some(run) => change(run),
            None => Err(StoreError::Missing(id.to_string())),
        }
    }

    /// What the store has of run `id`, as [`may_write`] reads it.
    fn writable(&self, id: &str) -> Option<Writable> {
        let runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        runs.get(id).map(writable)
    }
}

/// A run held in process is one process's: it is never a fleet's, and no lease holds it.
fn writable(run: &Checkpoint) -> Writable {
    Writable {
        ended: run.end.is_some(),
        ..Writable::LOCAL
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
impl RunStore for InProcessStore {
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

    async fn append(&self, lease: Option<&Lease>, id: &str, turn: &Turn) -> Result<(), StoreError> {
        self.write_run(lease, id, |run| push_turn(id, &mut run.turns, turn.clone()))
    }

    async fn finish(
        &self,
        lease: Option<&Lease>,
        id: &str,
        outcome: &StepOutcome,
        usage: &Usage,
    ) -> Result<(), StoreError> {
        self.write_run(lease, id, |run| {
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

    fn intent_log(&self) -> Option<&dyn IntentLog> {
        Some(self)
    }
}

#[async_trait]
impl IntentLog for InProcessStore {
    async fn record_intent(
        &self,
        lease: Option<&Lease>,
        intent: &ToolIntent,
    ) -> Result<IntentRecord, StoreError> {
        let run = self.writable(intent.key.run_id());
        let mut intents = self.intents.lock().unwrap_or_else(PoisonError::into_inner);
        let recording = recording(run, lease, intents.get(&intent.key), intent)?;
        if let Recording::First(record) | Recording::Again(record) = &recording {
            intents.insert(intent.key.clone(), record.clone());
        }
        Ok(recording.into_record())
    }

    async fn complete_intent(
        &self,
        lease: Option<&Lease>,
        key: &IdempotencyKey,
        outcome: &ToolOutcome,
    ) -> Result<(), StoreError> {
        let run = self.writable(key.run_id());
        let mut intents = self.intents.lock().unwrap_or_else(PoisonError::into_inner);
        if completing(run, lease, intents.get(key), key, outcome)?
            && let Some(record) = intents.get_mut(key)
        {
            record.outcome = Some(outcome.clone());
        }
        Ok(())
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
        let run = self.writable(run_id);
        let mut replies = self.replies.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (run_id.to_string(), turn);
        if replying(run, lease, run_id, replies.contains_key(&key))? {
            replies.insert(key, reply.clone());
        }
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
