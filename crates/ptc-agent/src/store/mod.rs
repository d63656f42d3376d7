//! Durable runs: a [`RunStore`] keeps each turn of a run as soon as it is recorded, so a run
//! that stops half way (a crash, a killed process, a deploy) can be continued with
//! [`Agent::resume`](crate::Agent::resume) from its last completed turn instead of starting
//! again and paying for every turn twice.
//!
//! Two stores come with the crate family: [`JsonlStore`] here, one JSON object per line in a
//! file (what `ptc run --checkpoint` writes), and `ptc_store::SqliteStore` in the `ptc-store`
//! crate, for services. [`InProcessStore`] keeps runs in the process itself, for tests.
//!
//! A store that several processes share can also hand runs out to a fleet of workers
//! ([`FleetStore`]: runs submitted to a queue, claimed under leases that fence out a worker
//! that lost its claim) and keep a log of the tool calls a run has started ([`IntentLog`]);
//! `ptc_store::PgStore` (PostgreSQL) implements both.

mod backoff;
mod held;
mod in_process;
mod intent;
mod jsonl;
mod lease;
mod stored_run;

use async_trait::async_trait;
use ptc_turn::{Step, StepOutcome, Task, Turn, Turns, Usage};

pub(crate) use backoff::Backoff;
pub(crate) use held::HeldLease;
pub use in_process::InProcessStore;
pub use intent::{
    IdempotencyKey, IntentLog, IntentRecord, Recording, ToolIntent, completing, recording, replying,
};
pub use jsonl::{JsonlStore, TornRecord};
pub use lease::{Claimed, FleetStore, Lease, RunState, RunStatus, Writable, may_write};
/// The store held by the process itself, by the name it had before [`InProcessStore`]: code
/// written against it keeps compiling.
pub type MemoryStore = InProcessStore;
pub(crate) use stored_run::StoredRun;

/// Where runs are checkpointed. A run started with
/// [`RunOptions::with_store`](crate::RunOptions::with_store) calls [`start`](RunStore::start) before its
/// first model request, [`append`](RunStore::append) after each turn and
/// [`finish`](RunStore::finish) when it ends; [`load`](RunStore::load) reads it back.
///
/// A store holds many runs, each under the id the caller chose. Implementations must make each
/// call all-or-nothing: a [`load`](RunStore::load) after a crash sees whole turns only.
///
/// The writes of a run take the lease it is written under: `None` for a run one process
/// [started](RunStore::start), the worker's [`Lease`] for a run of a [`FleetStore`]'s fleet.
/// Every store decides who may write a run with [`may_write`], so each refuses the same
/// writes with the same error: a write under a lease that is not the run's live one fails
/// with [`StoreError::LeaseLost`] in every store (a store that keeps no fleet has no live
/// lease).
#[async_trait]
pub trait RunStore: Send + Sync {
    /// Records the start of run `id`. Fails with [`StoreError::Exists`] if the store already
    /// has a run with this id.
    async fn start(&self, id: &str, task: &Task) -> Result<(), StoreError>;

    /// Appends a completed turn to run `id`, written under `lease`; its number is the next
    /// one. Under a lease the write extends it, and appending the same turn again under the
    /// same lease (a retry after an answer was lost) is accepted and changes nothing.
    async fn append(&self, lease: Option<&Lease>, id: &str, turn: &Turn) -> Result<(), StoreError>;

    /// Records how run `id` ended, written under `lease`: its outcome and its whole usage. Under
    /// a lease, the lease ends with it.
    async fn finish(
        &self,
        lease: Option<&Lease>,
        id: &str,
        outcome: &StepOutcome,
        usage: &Usage,
    ) -> Result<(), StoreError>;

    /// What the store has for run `id`, or `None` if it has no such run.
    async fn load(&self, id: &str) -> Result<Option<Checkpoint>, StoreError>;

    /// Takes back how run `id` ended, keeping its turns, so that it takes turns again after
    /// them: [`Agent::resume`](crate::Agent::resume) does it for a run that ended on an outage
    /// (a model error, a deadline or a stop). A run that has not ended is left as it is. Fails
    /// with [`StoreError::Missing`] if the store has no run `id`.
    async fn reopen(&self, id: &str) -> Result<(), StoreError>;

    /// Where the tool calls of this store's runs are recorded before they are made; `None`
    /// (the default) when the store keeps no intent log. With one, each call of a run is
    /// recorded (under the run's lease, if it has one) before its tool is called and completed
    /// after, its tool reads its key ([`current_idempotency_key`](crate::current_idempotency_key)),
    /// a call that completed before a crash is answered from the log instead of being made
    /// again, and a resumed run is told which calls of its unfinished turn may or may not have
    /// happened. [`InProcessStore`] and `ptc_store::PgStore` keep one.
    fn intent_log(&self) -> Option<&dyn IntentLog> {
        None
    }
}

/// A run as a store has it: what it was given, the turns completed so far and, once it ended,
/// how.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// What the run was given: mission, data, settings.
    pub task: Task,
    /// The turns completed so far, in order.
    pub turns: Turns,
    /// The outcome and total usage, when the run ended.
    pub end: Option<(StepOutcome, Usage)>,
}

impl Checkpoint {
    /// The finished run as a [`Step`], when it ended.
    pub fn step(&self) -> Option<Step> {
        let (outcome, usage) = self.end.clone()?;
        Some(Step {
            outcome,
            task: self.task.clone(),
            turns: self.turns.clone(),
            usage,
        })
    }

    /// Whether [`Agent::resume`](crate::Agent::resume) goes on with this run: it has not
    /// ended, or it ended on an outage (a model error, its deadline or a stop), not on
    /// anything its turns decided. The rule is the run crate's
    /// ([`ptc_run::resumed_goes_on`]), which decides every start of a run.
    pub fn goes_on(&self) -> bool {
        ptc_run::resumed_goes_on(self.end.as_ref().map(|(outcome, _)| outcome))
    }
}

/// Runs `work`, blocking I/O of a store, on tokio's blocking threads when called within a
/// runtime (so the async threads stay free), else right here.
pub async fn run_blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle
            .spawn_blocking(work)
            .await
            .map_err(|e| StoreError::Io(format!("the store's work was interrupted: {e}")))?,
        Err(_) => work(),
    }
}

/// Why a store could not save or read a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// `start` for an id the store already has.
    #[error("the store already has a run `{0}`; resume it, or start the new run under another id")]
    Exists(String),
    /// `append` or `finish` for an id the store does not have.
    #[error("the store has no run `{0}`; it must be started first")]
    Missing(String),
    /// `append` or `finish` for a run that has ended.
    #[error("run `{0}` has ended; it takes no more turns")]
    Ended(String),
    /// A turn whose number is not the next one of its run.
    #[error("turn {found} of run `{id}` is out of order: the next turn is number {expected}")]
    OutOfOrder {
        /// The run's id.
        id: String,
        /// The number the next turn must have.
        expected: u32,
        /// The number the turn had.
        found: u32,
    },
    /// A write under a lease that is no longer held: it expired, or another worker claimed
    /// the run since. The worker must stop working the run; nothing it wrote under this
    /// lease after losing it was kept.
    #[error(
        "the lease {token} on run `{id}` is no longer held (it expired, or another worker \
         claimed the run); stop working this run"
    )]
    LeaseLost {
        /// The run's id.
        id: String,
        /// The lease's fencing token.
        token: u64,
    },
    /// A write without a lease to a run submitted to a fleet: only the worker holding its
    /// lease writes it.
    #[error(
        "run `{0}` was submitted to the fleet; only the worker holding its lease writes it \
         (claim it first)"
    )]
    FleetRun(String),
    /// A tool call completed under an idempotency key the intent log holds no call under.
    #[error("the intent log has no call under the key `{0}`; record a call before making it")]
    IntentUnknown(String),
    /// A tool call completed again, with another outcome than the one recorded.
    #[error("the call `{0}` was completed already, with another outcome")]
    IntentCompleted(String),
    /// A tool call recorded under an idempotency key the log already holds for another call.
    #[error(
        "the intent log already holds another call under the idempotency key `{key}` \
         ({recorded}); a retried turn must make the same calls in the same order"
    )]
    IntentMismatch {
        /// The key.
        key: String,
        /// The call recorded under it, as `tool/NAME`.
        recorded: String,
    },
    /// Reading or writing the store failed.
    #[error("{0}")]
    Io(String),
    /// The store could not be reached: its server is down or unreachable, or the connection
    /// was cut. Whether a write sent then took effect is unknown; a write under a lease may be
    /// sent again under the same lease (a turn committed twice is kept once).
    #[error("{0}")]
    Unavailable(String),
    /// The store holds something that is not a run record (a damaged or foreign file).
    #[error("{0}")]
    Corrupt(String),
}
