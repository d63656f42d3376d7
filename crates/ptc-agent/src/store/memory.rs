//! Runs kept in memory.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use ptc_turn::{StepOutcome, Task, Turn, Turns, Usage};

use super::{Checkpoint, RunStore, StoreError};

/// A [`RunStore`] in memory: for tests, and for hosts that only need to resume within one
/// process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    runs: Mutex<HashMap<String, Checkpoint>>,
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
}
