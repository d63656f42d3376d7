//! A lease as the worker holding it keeps it while it works the run.

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::watch;

use super::{Backoff, Lease, StoreError};

/// A [`Lease`] a worker holds: until when it holds it by the worker's own clock (counted from
/// before it was asked for, and extended by each renewal and commit, so never later than the
/// store's idea), whether the run must stop (the lease was lost, or a turn could not be
/// committed), and whether the run's end was recorded under it.
pub(crate) struct HeldLease {
    lease: Lease,
    until: Mutex<Instant>,
    stopping: watch::Sender<Option<StoreError>>,
    ended: Mutex<Option<Result<(), StoreError>>>,
}

impl HeldLease {
    /// `lease`, asked for at `asked`.
    pub(crate) fn new(lease: Lease, asked: Instant) -> HeldLease {
        HeldLease {
            until: Mutex::new(asked + lease.duration),
            lease,
            stopping: watch::channel(None).0,
            ended: Mutex::new(None),
        }
    }

    /// The lease.
    pub(crate) fn lease(&self) -> &Lease {
        &self.lease
    }

    /// Until when the worker holds the lease, by its own clock.
    pub(crate) fn until(&self) -> Instant {
        *self.until.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The store extended the lease by its duration after `asked`.
    pub(crate) fn extend(&self, asked: Instant) {
        let mut until = self.until.lock().unwrap_or_else(PoisonError::into_inner);
        *until = (*until).max(asked + self.lease.duration);
    }

    /// Stops the run for `error`: nothing more is written under the lease.
    pub(crate) fn stop(&self, error: StoreError) {
        self.stopping.send_replace(Some(error));
    }

    /// Why the run stopped, once it did.
    pub(crate) fn stopped(&self) -> Option<StoreError> {
        self.stopping.borrow().clone()
    }

    /// Completes once the run must stop.
    pub(crate) fn stopping(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut stopping = self.stopping.subscribe();
        async move {
            let _ = stopping.wait_for(Option::is_some).await;
        }
    }

    /// Records whether the run's end was written under the lease.
    pub(crate) fn record_end(&self, written: Result<(), StoreError>) {
        *self.ended.lock().unwrap_or_else(PoisonError::into_inner) = Some(written);
    }

    /// Whether the run's end was written under the lease, once it was tried.
    pub(crate) fn end(&self) -> Option<Result<(), StoreError>> {
        self.ended
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The lease ran out while the store could not be reached (`reason`): the run stops, as if
    /// the lease were lost, and nothing more is written under it.
    pub(crate) fn ran_out(&self, reason: &str) -> StoreError {
        let error = StoreError::LeaseLost {
            id: self.lease.run_id.clone(),
            token: self.lease.token,
        };
        let first = self.stopped().is_none();
        self.stop(error.clone());
        if first {
            let id = &self.lease.run_id;
            tracing::warn!(
                run = %id,
                %reason,
                "the lease on run `{id}` ran out while the store could not be reached \
                 ({reason}); the run stops without committing its turn in progress, and goes \
                 on from its last committed turn once a worker claims it again"
            );
        }
        error
    }

    /// Sends a write (or a read) of the run with `attempt`, again while the store cannot be
    /// reached and the lease lasts; `extends` when a write that succeeds extends the lease.
    /// Nothing is sent once the run is stopping, and a write refused because the lease was
    /// lost stops it.
    pub(crate) async fn send<T, F>(
        &self,
        extends: bool,
        mut attempt: impl FnMut() -> F,
    ) -> Result<T, StoreError>
    where
        F: Future<Output = Result<T, StoreError>>,
    {
        let mut backoff = Backoff::new();
        loop {
            if let Some(error) = self.stopped() {
                return Err(match error {
                    StoreError::LeaseLost { .. } => error,
                    other => StoreError::Io(format!(
                        "run `{}` is stopping ({other}); nothing more is written",
                        self.lease.run_id
                    )),
                });
            }
            let asked = Instant::now();
            let left = self.until().saturating_duration_since(asked);
            let sent = match tokio::time::timeout(left, attempt()).await {
                Ok(sent) => sent,
                Err(_) => Err(StoreError::Unavailable(
                    "the store did not answer before the lease ran out".into(),
                )),
            };
            match sent {
                Ok(value) => {
                    if extends {
                        self.extend(asked);
                    }
                    return Ok(value);
                }
                Err(StoreError::Unavailable(reason)) => {
                    let left = self.until().saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(self.ran_out(&reason));
                    }
                    tracing::debug!(run = %self.lease.run_id, %reason, "the store cannot be reached; trying again");
                    tokio::time::sleep(backoff.next_wait().min(left)).await;
                }
                Err(error @ StoreError::LeaseLost { .. }) => {
                    self.stop(error.clone());
                    return Err(error);
                }
                Err(error) => return Err(error),
            }
        }
    }
}
