//! Runs handed out to a fleet of workers under leases.

use std::time::Duration;

use async_trait::async_trait;
use ptc_turn::{StepOutcome, Task};

use super::{Checkpoint, IntentLog, RunStore, StoreError};

/// A store whose runs a fleet of workers shares: runs are [submitted](FleetStore::submit) to a
/// queue, a worker [claims](FleetStore::claim) runnable ones, each under a [`Lease`] it
/// [renews](FleetStore::renew) while it works, and writes the run only under that lease.
///
/// The rules every implementation keeps:
///
/// - **One holder.** A run is leased to at most one worker at a time: two claims never return
///   the same run while its lease is live.
/// - **Fencing.** Every claim gets a new token, larger than every token the store gave
///   before. A write under a lease (the [`RunStore`] writes [`append`](RunStore::append) and
///   [`finish`](RunStore::finish), [`renew`](FleetStore::renew) and the intent log) is
///   accepted only while the run's current token is the lease's and the lease has not expired
///   by the store's clock, and is checked in the same transaction as the write; a worker that
///   lost its lease gets [`StoreError::LeaseLost`] and nothing it sent is kept. Which writer
///   may write a run is decided by [`may_write`], in every store.
/// - **Commits extend the lease.** A turn [appended](RunStore::append) under a lease extends
///   the lease by its duration, in the same transaction; appending the same turn again under
///   the same lease (a retry after an answer was lost) is accepted and changes nothing. The
///   run's [end](RunStore::finish) under a lease ends the lease.
/// - **Expiry.** A lease not renewed in time expires, and the run becomes claimable again;
///   the next claim gets the run's checkpoint (its committed turns), so the new worker
///   resumes after the last committed turn.
/// - **Exactly once per turn.** A turn is committed once: the turn numbers of a run have no
///   gaps and no repeats, whichever workers wrote them.
/// - **Calls recorded first.** The worker records each tool call in the store's
///   [`IntentLog`] under its lease before making it, so a run claimed after a crash knows
///   which calls of its unfinished turn completed and which were in flight.
///
/// Runs [started](RunStore::start) through [`RunStore`] are a single process's, as in any
/// store: workers never claim them, and they are written without a lease (a write under one
/// is refused with [`StoreError::LeaseLost`]). Runs [submitted](FleetStore::submit) to the
/// fleet refuse writes without one ([`StoreError::FleetRun`]).
#[async_trait]
pub trait FleetStore: RunStore + IntentLog {
    /// Queues run `id` with its task for the fleet. Fails with [`StoreError::Exists`] if the
    /// store already has a run with this id.
    async fn submit(&self, id: &str, task: &Task) -> Result<(), StoreError>;

    /// Claims up to `limit` runnable runs for `worker`, whose settings are `settings` (a key
    /// that changes whenever the worker's settings do), oldest submission first, each under a
    /// new lease of `duration`. A run is runnable when it was submitted, has not ended, no
    /// live lease holds it, and no worker with the same `settings` [refused](FleetStore::refuse)
    /// it since it was last [requeued](FleetStore::requeue). Runs other claimers hold or are
    /// claiming are skipped, not waited for; an empty list means nothing is runnable now.
    async fn claim(
        &self,
        worker: &str,
        settings: &str,
        duration: Duration,
        limit: usize,
    ) -> Result<Vec<Claimed>, StoreError>;

    /// Parks the leased run as refused by its worker, whose settings are `settings`, for
    /// `reason` (the run's settings do not fit the worker's), and ends the lease: no worker
    /// with these settings claims it again until it is [requeued](FleetStore::requeue); a
    /// worker with other settings may. Fenced like every write under a lease.
    async fn refuse(&self, lease: &Lease, settings: &str, reason: &str) -> Result<(), StoreError>;

    /// Takes back every refusal of run `id`, so that any worker may claim it again. Fails with
    /// [`StoreError::Missing`] if the store has no run `id`.
    async fn requeue(&self, id: &str) -> Result<(), StoreError>;

    /// Extends `lease` by its duration, counted from now by the store's clock. Fails with
    /// [`StoreError::LeaseLost`] when the lease expired or the run was claimed by another
    /// worker, and with [`StoreError::Ended`] when the run has ended.
    async fn renew(&self, lease: &Lease) -> Result<(), StoreError>;

    /// Hands the lease back, so the run is claimable at once (a worker shutting down). Fails
    /// with [`StoreError::LeaseLost`] when another worker holds the run now.
    async fn release(&self, lease: &Lease) -> Result<(), StoreError>;

    /// Where run `id` stands, or `None` if the store has no such run.
    async fn status(&self, id: &str) -> Result<Option<RunStatus>, StoreError>;

    /// Waits until runs may have become claimable, as the store announces them (a run
    /// submitted, handed back or requeued), or until `timeout` passes: a worker with room waits
    /// here between claims, so it claims a new run at once and still looks every `timeout` for
    /// what is not announced (leases that expired). A store that announces nothing waits
    /// `timeout` (the default).
    async fn wait_for_runs(&self, timeout: Duration) {
        tokio::time::sleep(timeout).await;
    }
}

/// One worker's claim on one run.
///
/// A worker counts the lease's time from before it asked for it, so its own idea of when the
/// lease ends is never later than the store's; it stops working the run (or renews) before
/// then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The run.
    pub run_id: String,
    /// The worker holding it, as it named itself when claiming.
    pub worker: String,
    /// The fencing token: every claim in the store gets a larger one.
    pub token: u64,
    /// How long the lease lasts after each claim, renewal or commit.
    pub duration: Duration,
}

/// A run a worker has claimed: its lease and what the store has of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Claimed {
    /// The lease the worker writes the run under.
    pub lease: Lease,
    /// The task and the turns committed so far; the worker resumes after the last one.
    pub checkpoint: Checkpoint,
    /// How many times the run has been claimed, this claim included: more than one means an
    /// earlier worker stopped (or handed it back) before it ended.
    pub claims: u32,
}

/// Where a run stands.
#[derive(Debug, Clone, PartialEq)]
pub struct RunStatus {
    /// Queued, leased, local or ended.
    pub state: RunState,
    /// The turns committed so far.
    pub turns: u32,
    /// How many times workers have claimed it.
    pub claims: u32,
}

/// The state of a run in a [`FleetStore`].
#[derive(Debug, Clone, PartialEq)]
pub enum RunState {
    /// Submitted and not ended, and no live lease holds it: the next claim may take it.
    Queued,
    /// A worker holds it under a live lease.
    Leased {
        /// The worker.
        worker: String,
        /// The lease's fencing token.
        token: u64,
    },
    /// Not ended and not leased, and refused by a worker whose settings do not fit it (the
    /// last refusal): workers with those settings do not claim it until it is
    /// [requeued](FleetStore::requeue); others may.
    Refused {
        /// The worker that refused it last.
        worker: String,
        /// Why.
        reason: String,
    },
    /// Started by one process through [`RunStore::start`], not ended: not the fleet's.
    Local,
    /// It ended this way.
    Ended(StepOutcome),
}

/// What a store knows of a run when it is written: whether it ended, whether it is a fleet's,
/// and the token of the lease that holds it now, if one holds it and has not expired by the
/// store's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writable {
    /// The run has ended.
    pub ended: bool,
    /// The run was [submitted](FleetStore::submit) to a fleet (else a process
    /// [started](RunStore::start) it).
    pub fleet: bool,
    /// The token of the live lease on the run, if any.
    pub live_lease: Option<u64>,
}

impl Writable {
    /// A run one process started, not ended: what every store that keeps no fleet has.
    pub const LOCAL: Writable = Writable {
        ended: false,
        fleet: false,
        live_lease: None,
    };
}

/// Whether `writer` (a lease, or `None` for a run of one process) may write run `id`, which
/// the store has as `run` (`None`: it has no such run). Every store decides each write of a
/// run (its turns, its end, its intent log) here, so that each refuses the same writes with
/// the same error:
///
/// - a run the store does not have: [`StoreError::Missing`];
/// - a run that ended: [`StoreError::Ended`];
/// - a fleet's run written without a lease: [`StoreError::FleetRun`];
/// - a write under a lease that is not the run's live one (it expired, another worker claimed
///   the run since, the lease is another run's, or the run is not a fleet's and was never
///   leased): [`StoreError::LeaseLost`].
///
/// ```
/// use std::time::Duration;
/// use ptc_agent::store::{Lease, StoreError, Writable, may_write};
///
/// let lease = Lease { run_id: "r".into(), worker: "w".into(), token: 7, duration: Duration::from_secs(30) };
/// let leased = Writable { ended: false, fleet: true, live_lease: Some(7) };
/// assert_eq!(may_write("r", Some(leased), Some(&lease)), Ok(()));
/// let claimed_again = Writable { live_lease: Some(8), ..leased };
/// assert_eq!(
///     may_write("r", Some(claimed_again), Some(&lease)),
///     Err(StoreError::LeaseLost { id: "r".into(), token: 7 })
/// );
/// assert_eq!(may_write("r", Some(Writable::LOCAL), None), Ok(()));
/// assert_eq!(may_write("r", None, None), Err(StoreError::Missing("r".into())));
/// ```
pub fn may_write(
    id: &str,
    run: Option<Writable>,
    writer: Option<&Lease>,
) -> Result<(), StoreError> {
    let Some(run) = run else {
        return Err(StoreError::Missing(id.to_string()));
    };
    if run.ended {
        return Err(StoreError::Ended(id.to_string()));
    }
    match writer {
        None if run.fleet => Err(StoreError::FleetRun(id.to_string())),
        None => Ok(()),
        Some(lease) if run.fleet && run.live_lease == Some(lease.token) && lease.run_id == id => {
            Ok(())
        }
        Some(lease) => Err(StoreError::LeaseLost {
            id: id.to_string(),
            token: lease.token,
        }),
    }
}
