//! Claimable runs announced by the database (`NOTIFY` on `ptc_runs_claimable`, sent by a
//! trigger when a run is submitted, handed back, refused, requeued or reopened), heard on a
//! connection of the store's own that `LISTEN`s: a worker waiting for runs wakes at once.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, NoTls};

/// Listening on the channel the trigger of migration 4 notifies.
const LISTEN: &str = "LISTEN ptc_runs_claimable";

/// The announcements a store hears, and the task that listens for them.
pub(super) struct Announcements {
    config: tokio_postgres::Config,
    arrived: Arc<Notify>,
    listening: Mutex<Option<JoinHandle<()>>>,
}

impl Announcements {
    pub(super) fn new(config: tokio_postgres::Config) -> Announcements {
        Announcements {
            config,
            arrived: Arc::new(Notify::new()),
            listening: Mutex::new(None),
        }
    }

    /// Waits for an announcement, or for `timeout`. Listens first if it does not (it never
    /// did, or its connection was lost: the database went away); a connection that cannot be
    /// made leaves only the timeout, and is tried again on the next wait.
    pub(super) async fn wait(&self, timeout: Duration) {
        self.listen();
        let _ = tokio::time::timeout(timeout, self.arrived.notified()).await;
    }

    fn listen(&self) {
        let mut listening = self
            .listening
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if listening.as_ref().is_some_and(|task| !task.is_finished()) {
            return;
        }
        *listening = Some(tokio::spawn(listen(
            self.config.clone(),
            self.arrived.clone(),
        )));
    }
}

impl Drop for Announcements {
    fn drop(&mut self) {
        let listening = self
            .listening
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(task) = listening.take() {
            task.abort();
        }
    }
}

/// Wakes every waiter, and the next one to wait if none is waiting now.
fn wake(arrived: &Notify) {
    arrived.notify_waiters();
    arrived.notify_one();
}

/// Listens on a connection of its own until it is lost, waking the waiters at each
/// announcement. A connection that cannot be made, or cannot listen, ends the task: the next
/// wait starts another.
async fn listen(config: tokio_postgres::Config, arrived: Arc<Notify>) {
    let Ok((client, mut connection)) = config.connect(NoTls).await else {
        return;
    };
    // The connection carries the client's requests and the server's notifications: it is
    // driven here until the server closes it.
    let driven = async {
        while let Some(Ok(message)) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            if let AsyncMessage::Notification(_) = message {
                wake(&arrived);
            }
        }
    };
    tokio::pin!(driven);
    tokio::select! {
        () = &mut driven => return,
        listened = client.batch_execute(LISTEN) => {
            if listened.is_err() {
                return;
            }
        }
    }
    // Runs may have become claimable while nothing listened.
    wake(&arrived);
    driven.await;
}
