//! Workers of a fleet: a [`Worker`] claims runs of a [`FleetStore`] under leases, resumes each
//! from its last committed turn, commits every turn under its lease, renews the lease while the
//! run goes on, and records the end. When it is told to shut down, it stops its runs and hands
//! their leases back, so another worker takes them at once. While the store cannot be reached
//! it tries again, with capped and jittered waits; a lease it could not renew in time is
//! taken as lost, and the run's turn in progress is not committed.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ptc_turn::{StepOutcome, Task};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::agent::Agent;
use crate::run::{RunError, RunOptions};
use crate::store::{Backoff, Claimed, FleetStore, HeldLease, Lease, StoreError};

/// Makes the agent that works a claimed run, from the run's task: the service's agent for that
/// kind of run, with the same mission, tools, data, signature and turn budget the run was
/// submitted with (anything else is refused as a [`RunError::Resume`]).
pub type AgentFor = dyn Fn(&Task) -> Result<Agent, String> + Send + Sync;

impl Agent {
    /// Submits a run of this agent with `options` (its input data) to the fleet of `store`
    /// under `id`: a [`Worker`] claims it and works it with the agent its [`AgentFor`] makes
    /// for the run's task. Fails as [`Agent::run_with`] would before its first request, or
    /// with [`StoreError::Exists`] when the store already has run `id`.
    pub async fn submit(
        &self,
        store: &dyn FleetStore,
        id: &str,
        options: RunOptions<'_>,
    ) -> Result<(), RunError> {
        let task = self.task_for(&options)?;
        store.submit(id, &task).await?;
        Ok(())
    }
}

/// A worker of a fleet sharing one [`FleetStore`].
///
/// ```
/// # use std::sync::Arc;
/// # use ptc_agent::store::FleetStore;
/// # use ptc_agent::{Agent, ScriptedLlm, Worker};
/// # async fn example(store: Arc<dyn FleetStore>, shutdown: tokio::sync::oneshot::Receiver<()>) {
/// let worker = Worker::new("worker-1", store.clone(), |task: &ptc_turn::Task| {
///     Agent::builder(task.mission.as_str())
///         .llm(ScriptedLlm::new(["(return 1)"]))
///         .build()
///         .map_err(|e| e.to_string())
/// })
/// .concurrency(4);
/// // Works runs until it is told to shut down, then hands the leases it holds back.
/// let report = worker.run(async { let _ = shutdown.await; }).await;
/// # }
/// ```
pub struct Worker {
    name: String,
    store: Arc<dyn FleetStore>,
    agents: Arc<AgentFor>,
    settings: String,
    concurrency: usize,
    lease: Duration,
    poll: Duration,
    outage_limit: Duration,
}

/// What a worker did with the runs it claimed, by run id (the last claim of a run it claimed
/// more than once).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkerReport {
    /// What became of each run.
    pub runs: BTreeMap<String, Worked>,
    /// How many claims the worker made that returned a run.
    pub claims: usize,
}

/// What became of a run a worker claimed.
#[derive(Debug, Clone, PartialEq)]
pub enum Worked {
    /// The run ended, and its end was recorded under the lease.
    Ended(StepOutcome),
    /// The worker shut down, or a commit failed, before the run ended: the lease was handed
    /// back and the run is claimable again after its last committed turn.
    HandedBack,
    /// The lease was lost (it expired, or another worker claimed the run): the worker stopped
    /// working the run and wrote nothing more.
    LeaseLost,
    /// The run could not be worked: no agent for its task, or its agent refused it. The run
    /// was parked as refused, with the reason: no worker with the same settings claims it
    /// again until it is requeued.
    Refused(String),
}

impl Worker {
    /// A worker named `name` (it names the leases it holds) on `store`, making each run's
    /// agent with `agents`. It works one run at a time, under leases of 30 seconds, and when it
    /// has room claims the runs its store announces, and looks for runs every second.
    pub fn new(
        name: impl Into<String>,
        store: Arc<dyn FleetStore>,
        agents: impl Fn(&Task) -> Result<Agent, String> + Send + Sync + 'static,
    ) -> Worker {
        Worker {
            name: name.into(),
            store,
            agents: Arc::new(agents),
            settings: String::new(),
            concurrency: 1,
            lease: Duration::from_secs(30),
            poll: Duration::from_secs(1),
            outage_limit: Duration::from_secs(300),
        }
    }

    /// A key that names the worker's settings (its model, tools, turn budget, ...) and
    /// changes whenever they do; empty unless set. A run the worker refuses is parked under
    /// this key: no worker with the same key claims it again, one with another key may.
    pub fn settings(mut self, key: impl Into<String>) -> Worker {
        self.settings = key.into();
        self
    }

    /// How many runs the worker works at once (at least one).
    pub fn concurrency(mut self, runs: usize) -> Worker {
        self.concurrency = runs.max(1);
        self
    }

    /// How long each lease lasts after a claim, a renewal or a commit. The worker renews it
    /// every third of that while a run waits on its model or its tools.
    pub fn lease(mut self, duration: Duration) -> Worker {
        self.lease = duration;
        self
    }

    /// How long the store may stay unreachable before the worker gives up and
    /// [`run`](Worker::run) fails with [`StoreError::Unavailable`] (five minutes unless set).
    /// Until then the worker tries again, waiting a little longer each time (up to two
    /// seconds, jittered).
    pub fn outage_limit(mut self, limit: Duration) -> Worker {
        self.outage_limit = limit;
        self
    }

    /// How long the worker waits before looking for runs again when none was runnable and its
    /// store announced none ([`FleetStore::wait_for_runs`]: a run announced is claimed at
    /// once; a lease that expired is found by this look). A second unless set.
    pub fn poll(mut self, every: Duration) -> Worker {
        self.poll = every;
        self
    }

    /// Works runs until `shutdown` resolves; then stops the runs in flight (each at once,
    /// its turn in progress cut off and not committed), hands their leases back, and returns
    /// what it did. While the store cannot be reached, the worker tries again; it fails with
    /// [`StoreError::Unavailable`] when the outage lasts longer than its
    /// [`outage_limit`](Worker::outage_limit), and with the store's error when a claim fails
    /// otherwise.
    pub async fn run(
        &self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<WorkerReport, StoreError> {
        self.work(shutdown, false).await
    }

    /// Works runs until none is runnable and its own have ended (or been handed back), and
    /// returns what it did: for a batch, and for tests.
    pub async fn run_until_idle(&self) -> Result<WorkerReport, StoreError> {
        self.work(std::future::pending(), true).await
    }

    /// Like [`run_until_idle`](Worker::run_until_idle), and stops earlier when `shutdown`
    /// resolves, as [`run`](Worker::run) does: the runs in flight are stopped and their
    /// leases handed back.
    pub async fn run_until_idle_or(
        &self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<WorkerReport, StoreError> {
        self.work(shutdown, true).await
    }

    async fn work(
        &self,
        shutdown: impl Future<Output = ()> + Send,
        until_idle: bool,
    ) -> Result<WorkerReport, StoreError> {
        let mut report = WorkerReport::default();
        let (stop, stopping) = watch::channel(false);
        let mut runs: JoinSet<(String, Worked)> = JoinSet::new();
        tokio::pin!(shutdown);
        // Since when the store could not be reached, and how long to wait before trying again.
        let mut outage: Option<(Instant, Backoff)> = None;
        loop {
            let room = self.concurrency - runs.len();
            let mut claimed = Vec::new();
            let mut wait = self.poll;
            if room > 0 {
                let asked = Instant::now();
                match self
                    .store
                    .claim(&self.name, &self.settings, self.lease, room)
                    .await
                {
                    Ok(runs) => {
                        if let Some((since, _)) = outage.take() {
                            tracing::warn!(
                                worker = %self.name,
                                "the store answers again after {:.1} s; claiming runs",
                                since.elapsed().as_secs_f64()
                            );
                        }
                        claimed = runs;
                    }
                    Err(StoreError::Unavailable(reason)) => {
                        let (since, backoff) = outage.get_or_insert_with(|| {
                            tracing::warn!(
                                worker = %self.name,
                                %reason,
                                "the store cannot be reached ({reason}); trying again for up \
                                 to {} s",
                                self.outage_limit.as_secs_f64()
                            );
                            (Instant::now(), Backoff::new())
                        });
                        if since.elapsed() > self.outage_limit {
                            stop.send_replace(true);
                            collect(&mut runs, &mut report).await;
                            return Err(StoreError::Unavailable(format!(
                                "the store could not be reached for longer than the outage \
                                 limit of {} s; the last error: {reason}",
                                self.outage_limit.as_secs_f64()
                            )));
                        }
                        wait = backoff.next_wait();
                    }
                    Err(error) => {
                        stop.send_replace(true);
                        collect(&mut runs, &mut report).await;
                        return Err(error);
                    }
                }
                report.claims += claimed.len();
                if claimed.is_empty() && runs.is_empty() && until_idle && outage.is_none() {
                    break;
                }
                let claimed_any = !claimed.is_empty();
                for claimed in claimed {
                    runs.spawn(work_run(
                        self.store.clone(),
                        self.agents.clone(),
                        self.settings.clone(),
                        claimed,
                        asked,
                        stopping.clone(),
                    ));
                }
                if claimed_any && runs.len() < self.concurrency {
                    // There may be more: look again at once.
                    continue;
                }
            }
            // With room, the worker waits for the store to announce runs, and looks again
            // after `poll` anyway; while the store is away, it only waits.
            let in_outage = outage.is_some();
            let waiting = async {
                if in_outage {
                    tokio::time::sleep(wait).await;
                } else {
                    self.store.wait_for_runs(wait).await;
                }
            };
            tokio::select! {
                () = &mut shutdown => break,
                Some(done) = runs.join_next(), if !runs.is_empty() => record(done, &mut report),
                () = waiting, if runs.len() < self.concurrency => {}
            }
        }
        stop.send_replace(true);
        collect(&mut runs, &mut report).await;
        Ok(report)
    }
}

/// Waits for every run in `runs`, recording what became of each.
async fn collect(runs: &mut JoinSet<(String, Worked)>, report: &mut WorkerReport) {
    while let Some(done) = runs.join_next().await {
        record(done, report);
    }
}

fn record(done: Result<(String, Worked), tokio::task::JoinError>, report: &mut WorkerReport) {
    match done {
        Ok((id, worked)) => {
            report.runs.insert(id, worked);
        }
        Err(error) => tracing::error!(%error, "a run's task failed"),
    }
}

/// Works one claimed run to its end, or until the worker stops or the lease is lost. The run is
/// written through the store under the worker's lease.
async fn work_run(
    store: Arc<dyn FleetStore>,
    agents: Arc<AgentFor>,
    settings: String,
    claimed: Claimed,
    asked: Instant,
    mut stopping: watch::Receiver<bool>,
) -> (String, Worked) {
    let Claimed {
        lease, checkpoint, ..
    } = claimed;
    let id = lease.run_id.clone();
    let agent = match agents(&checkpoint.task) {
        Ok(agent) => agent,
        Err(reason) => return (id, refuse(store.as_ref(), &lease, &settings, reason).await),
    };
    // The worker's idea of when the lease ends: counted from before it asked, so never later
    // than the store's.
    let held = Arc::new(HeldLease::new(lease.clone(), asked));
    // Ended with the run's task, however it ends (a worker dropped mid-run renews nothing).
    let renewing = AbortOnDrop(tokio::spawn(renew(store.clone(), held.clone())));
    let lost = held.stopping();
    let stop = async move {
        tokio::select! {
            _ = stopping.wait_for(|stop| *stop) => {}
            () = lost => {}
        }
    };
    let options = RunOptions::new().with_lease(&held).with_stop_signal(stop);
    let step = agent.resume(store.as_ref(), &id, options).await;
    drop(renewing);
    let worked = match (step, held.stopped()) {
        (_, Some(StoreError::LeaseLost { .. })) => Worked::LeaseLost,
        (Err(RunError::Store(StoreError::LeaseLost { .. })), _) => Worked::LeaseLost,
        (Err(RunError::Store(error)), _) => {
            tracing::warn!(run = %id, %error, "run `{id}` stopped: {error}; it is handed back");
            hand_back(store.as_ref(), &lease).await;
            Worked::HandedBack
        }
        (Err(error), _) => refuse(store.as_ref(), &lease, &settings, error.to_string()).await,
        (Ok(step), _) => match held.end() {
            Some(Ok(())) => Worked::Ended(step.outcome),
            Some(Err(StoreError::LeaseLost { .. })) => Worked::LeaseLost,
            _ => {
                // Stopped, or the end could not be written: the run goes on elsewhere.
                hand_back(store.as_ref(), &lease).await;
                Worked::HandedBack
            }
        },
    };
    (id, worked)
}

/// A task aborted when this is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Parks the run of `lease` as refused by this worker for `reason`, and says so.
async fn refuse(store: &dyn FleetStore, lease: &Lease, settings: &str, reason: String) -> Worked {
    let id = &lease.run_id;
    match store.refuse(lease, settings, &reason).await {
        Ok(()) => tracing::warn!(
            run = %id,
            %reason,
            "run `{id}` refused: {reason}; it waits for a worker whose settings fit, or to be \
             requeued"
        ),
        Err(StoreError::LeaseLost { .. }) => return Worked::LeaseLost,
        Err(error) => {
            tracing::warn!(
                run = %id,
                %reason,
                %error,
                "run `{id}` refused: {reason}; the refusal could not be recorded ({error}), so \
                 its lease expires"
            )
        }
    }
    Worked::Refused(reason)
}

/// Hands `lease` back; a lease already lost needs no handing back.
async fn hand_back(store: &dyn FleetStore, lease: &Lease) {
    match store.release(lease).await {
        Ok(()) | Err(StoreError::LeaseLost { .. }) => {}
        Err(error) => {
            tracing::warn!(run = %lease.run_id, %error, "the lease could not be handed back; it expires")
        }
    }
}

/// Renews the lease of `held` every third of its duration until the task is ended, or stops
/// the run when it is lost. While the store cannot be reached, it tries again with shorter
/// waits; a lease not renewed before it runs out (by the worker's clock) is taken as lost.
async fn renew(store: Arc<dyn FleetStore>, held: Arc<HeldLease>) {
    let lease = held.lease();
    let mut wait = lease.duration / 3;
    let mut backoff = Backoff::new();
    loop {
        tokio::time::sleep(wait).await;
        let asked = Instant::now();
        let left = held.until().saturating_duration_since(asked);
        // A renewal that has not come back when the lease runs out comes too late.
        let renewed = match tokio::time::timeout(left, store.renew(lease)).await {
            Ok(renewed) => renewed,
            Err(_) => Err(StoreError::Unavailable(
                "the store did not answer before the lease ran out".into(),
            )),
        };
        match renewed {
            Ok(()) => {
                held.extend(asked);
                wait = lease.duration / 3;
                backoff = Backoff::new();
            }
            Err(error @ (StoreError::LeaseLost { .. } | StoreError::Ended(_))) => {
                held.stop(error);
                return;
            }
            Err(error) => {
                let left = held.until().saturating_duration_since(Instant::now());
                if left.is_zero() {
                    held.ran_out(&error.to_string());
                    return;
                }
                tracing::debug!(run = %lease.run_id, %error, "renewing the lease failed; trying again");
                wait = backoff.next_wait().min(left);
            }
        }
    }
}
