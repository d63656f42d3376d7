//! One run of a store, as the run that writes it sees it.

use ptc_lisp::ToolOutcome;
use ptc_turn::{StepOutcome, Task, Turn, Usage};

use std::future::Future;

use super::{
    Checkpoint, HeldLease, IdempotencyKey, IntentLog, IntentRecord, Lease, RunStore, StoreError,
    ToolIntent,
};
use crate::llm::LlmResponse;

/// One run of a store: the store, the run's id and, for a fleet's run, the lease its worker
/// holds. Every read and write of a run goes through here, and every write goes to the store
/// with the lease (`None` for a run of one process). Under a lease, a call is sent again while
/// the store cannot be reached and the lease lasts, a write refused because the lease was lost
/// stops the run, and so does a turn that could not be committed: another worker goes on from
/// the last committed one.
#[derive(Clone, Copy)]
pub(crate) struct StoredRun<'a> {
    store: &'a dyn RunStore,
    id: &'a str,
    lease: Option<&'a HeldLease>,
}

impl<'a> StoredRun<'a> {
    /// Run `id` of `store`, written under `lease` when a worker holds one.
    pub(crate) fn new(
        store: &'a dyn RunStore,
        id: &'a str,
        lease: Option<&'a HeldLease>,
    ) -> StoredRun<'a> {
        StoredRun { store, id, lease }
    }

    /// The run's id.
    pub(crate) fn id(&self) -> &'a str {
        self.id
    }

    /// Whether the run is written under a lease: then a turn that cannot be written stops it.
    pub(crate) fn leased(&self) -> bool {
        self.lease.is_some()
    }

    /// Whether the store keeps an intent log.
    pub(crate) fn keeps_intents(&self) -> bool {
        self.store.intent_log().is_some()
    }

    /// Sends `attempt` with the run's lease: once for a run of one process, or through the
    /// worker's hold of the lease (sent again while the store cannot be reached); `extends`
    /// when a write that succeeds extends the lease.
    async fn send<T, F>(
        &self,
        extends: bool,
        attempt: impl Fn(Option<&'a Lease>) -> F,
    ) -> Result<T, StoreError>
    where
        F: Future<Output = Result<T, StoreError>>,
    {
        match self.lease {
            None => attempt(None).await,
            Some(held) => held.send(extends, || attempt(Some(held.lease()))).await,
        }
    }

    fn log(&self) -> Result<&'a dyn IntentLog, StoreError> {
        self.store
            .intent_log()
            .ok_or_else(|| StoreError::Io("the store keeps no intent log".into()))
    }

    pub(crate) async fn start(&self, task: &Task) -> Result<(), StoreError> {
        self.store.start(self.id, task).await
    }

    pub(crate) async fn load(&self) -> Result<Option<Checkpoint>, StoreError> {
        self.send(false, |_| self.store.load(self.id)).await
    }

    pub(crate) async fn reopen(&self) -> Result<(), StoreError> {
        self.store.reopen(self.id).await
    }

    /// Appends `turn`. Under a lease, a turn not committed stops the run before it goes on
    /// past it.
    pub(crate) async fn append(&self, turn: &Turn) -> Result<(), StoreError> {
        let committed = self
            .send(true, |lease| self.store.append(lease, self.id, turn))
            .await;
        if let (Some(held), Err(error)) = (self.lease, &committed) {
            held.stop(error.clone());
        }
        committed
    }

    /// Records the run's end; under a lease, the lease keeps whether it was written.
    pub(crate) async fn finish(
        &self,
        outcome: &StepOutcome,
        usage: &Usage,
    ) -> Result<(), StoreError> {
        let finished = self
            .send(false, |lease| {
                self.store.finish(lease, self.id, outcome, usage)
            })
            .await;
        if let Some(held) = self.lease {
            held.record_end(finished.clone());
        }
        finished
    }

    pub(crate) async fn record_intent(
        &self,
        intent: &ToolIntent,
    ) -> Result<IntentRecord, StoreError> {
        let log = self.log()?;
        self.send(false, |lease| log.record_intent(lease, intent))
            .await
    }

    pub(crate) async fn complete_intent(
        &self,
        key: &IdempotencyKey,
        outcome: &ToolOutcome,
    ) -> Result<(), StoreError> {
        let log = self.log()?;
        self.send(false, |lease| log.complete_intent(lease, key, outcome))
            .await
    }

    pub(crate) async fn intents(&self) -> Result<Vec<IntentRecord>, StoreError> {
        let log = self.log()?;
        self.send(false, |_| log.intents(self.id)).await
    }

    pub(crate) async fn record_reply(
        &self,
        turn: u32,
        reply: &LlmResponse,
    ) -> Result<(), StoreError> {
        let log = self.log()?;
        self.send(false, |lease| log.record_reply(lease, self.id, turn, reply))
            .await
    }

    pub(crate) async fn recorded_reply(
        &self,
        turn: u32,
    ) -> Result<Option<LlmResponse>, StoreError> {
        let log = self.log()?;
        self.send(false, |_| log.recorded_reply(self.id, turn))
            .await
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use pretty_assertions::assert_eq;
    use ptc_lisp::Value;

    use super::*;
    use crate::store::{InProcessStore, Lease};

    fn lease() -> Lease {
        Lease {
            run_id: "r".into(),
            worker: "w".into(),
            token: 7,
            duration: Duration::from_secs(30),
        }
    }

    fn turn(n: u32) -> Turn {
        Turn::success(n, format!("(def x{n} {n})"), Value::Int(n.into()))
    }

    fn charge() -> ToolIntent {
        ToolIntent {
            key: IdempotencyKey::new("r", 1, 0),
            tool: "charge".into(),
            args: vec![Value::Int(30)],
        }
    }

    #[tokio::test]
    async fn a_write_refused_under_a_lost_lease_stops_the_run_and_nothing_more_is_written() {
        let store = InProcessStore::new();
        store.start("r", &Task::new("m")).await.unwrap();
        let held = HeldLease::new(lease(), Instant::now());
        let run = StoredRun::new(&store, "r", Some(&held));
        let lost = StoreError::LeaseLost {
            id: "r".into(),
            token: 7,
        };
        // The store holds no live lease on the run: the write is refused, and the run stops.
        assert_eq!(run.record_intent(&charge()).await, Err(lost.clone()));
        assert_eq!(held.stopped(), Some(lost.clone()));
        assert_eq!(run.append(&turn(1)).await, Err(lost.clone()));
        assert_eq!(
            run.finish(
                &ptc_turn::StepOutcome::Returned { value: Value::Nil },
                &Usage::default()
            )
            .await,
            Err(lost.clone())
        );
        assert_eq!(held.end(), Some(Err(lost)));
        assert_eq!(store.load("r").await.unwrap().unwrap().turns.len(), 0);
        assert_eq!(store.intents("r").await, Ok(Vec::new()));
        // Without a lease the same run takes the same writes.
        let local = StoredRun::new(&store, "r", None);
        assert!(!local.leased());
        local.append(&turn(1)).await.unwrap();
        assert_eq!(
            local.record_intent(&charge()).await.map(|r| r.attempts),
            Ok(1)
        );
    }

    #[tokio::test]
    async fn a_turn_not_committed_under_a_lease_stops_the_run_before_it_goes_on() {
        let store = InProcessStore::new();
        let held = HeldLease::new(
            Lease {
                run_id: "gone".into(),
                ..lease()
            },
            Instant::now(),
        );
        let run = StoredRun::new(&store, "gone", Some(&held));
        // The store has no such run: the turn is not committed, and the run stops.
        let missing = StoreError::Missing("gone".into());
        assert_eq!(run.append(&turn(1)).await, Err(missing.clone()));
        assert_eq!(held.stopped(), Some(missing));
        assert_eq!(
            run.record_reply(2, &LlmResponse::text("(def a 1)")).await,
            Err(StoreError::Io(
                "run `gone` is stopping (the store has no run `gone`; it must be started \
                 first); nothing more is written"
                    .into()
            ))
        );
    }
}
