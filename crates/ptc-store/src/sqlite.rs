//! The SQLite run store.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use ptc_agent::store::{
    Checkpoint, Lease, RunStore, StoreError, Writable, may_write, run_blocking,
};
use ptc_turn::{StepOutcome, Task, Turn, Usage};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::codec::{checkpoint, encode};

/// The tables, created when missing. A run's task, outcome and usage, and each turn, are
/// stored as the JSON they serialize to, so a row reads back exactly as it was written.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ptc_runs (
    id TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    outcome TEXT,
    usage TEXT,
    started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    ended_at TEXT
);
CREATE TABLE IF NOT EXISTS ptc_turns (
    run_id TEXT NOT NULL REFERENCES ptc_runs(id),
    number INTEGER NOT NULL,
    turn TEXT NOT NULL,
    recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (run_id, number)
);
";

/// A [`RunStore`] in an SQLite database: the tables `ptc_runs` (one row per run: task,
/// outcome, usage, times) and `ptc_turns` (one row per completed turn), created on open.
///
/// Every call is one transaction, committed before it returns (the database is in WAL mode
/// with full synchronization), so a turn is either wholly stored or not at all. Several
/// processes may share a database; SQLite serializes their writes.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
}

fn io(e: rusqlite::Error) -> StoreError {
    StoreError::Io(format!("SQLite: {e}"))
}

impl SqliteStore {
    /// Opens the database at `path`, creating the file and the tables as needed.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref();
        let connection = Connection::open(path).map_err(|e| {
            StoreError::Io(format!("cannot open the database {}: {e}", path.display()))
        })?;
        SqliteStore::with_connection(connection)
    }

    /// A database in memory, gone when the store is dropped: for tests.
    pub fn open_in_memory() -> Result<SqliteStore, StoreError> {
        SqliteStore::with_connection(Connection::open_in_memory().map_err(io)?)
    }

    fn with_connection(connection: Connection) -> Result<SqliteStore, StoreError> {
        connection
            .busy_timeout(std::time::Duration::from_secs(10))
            .map_err(io)?;
        // WAL keeps readers and the writer apart; FULL makes each commit durable on its own.
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .and_then(|()| connection.pragma_update(None, "synchronous", "FULL"))
            .and_then(|()| connection.pragma_update(None, "foreign_keys", "ON"))
            .and_then(|()| connection.execute_batch(SCHEMA))
            .map_err(io)?;
        Ok(SqliteStore {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    /// The ids of every run in the store, oldest first.
    pub fn run_ids(&self) -> Result<Vec<String>, StoreError> {
        let connection = self.lock();
        let mut statement = connection
            .prepare("SELECT id FROM ptc_runs ORDER BY started_at, rowid")
            .map_err(io)?;
        let ids = statement
            .query_map([], |row| row.get::<_, String>(0))
            .map_err(io)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(io)?;
        Ok(ids)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves the connection usable: every change is a
        // transaction that SQLite rolls back if it was not committed.
        self.connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `work` with the connection on a blocking thread.
    async fn with<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let store = self.clone();
        run_blocking(move || work(&mut store.lock())).await
    }
}

/// Whether run `id` exists and has ended.
fn run_state(connection: &Connection, id: &str) -> Result<Option<bool>, StoreError> {
    connection
        .query_row(
            "SELECT outcome IS NOT NULL FROM ptc_runs WHERE id = ?1",
            params![id],
            |row| row.get::<_, bool>(0),
        )
        .optional()
        .map_err(io)
}

/// Checks that `writer` may write run `id` ([`may_write`]: the run exists and has not ended,
/// and is written without a lease, as a run in SQLite is one process's, never a fleet's).
fn writable(connection: &Connection, id: &str, writer: Option<&Lease>) -> Result<(), StoreError> {
    let run = run_state(connection, id)?.map(|ended| Writable {
        ended,
        ..Writable::LOCAL
    });
    may_write(id, run, writer)
}

/// A transaction that takes the write lock at once, so that a check made inside it still holds
/// when it writes, whichever process shares the file.
fn write_transaction(connection: &mut Connection) -> Result<Transaction<'_>, StoreError> {
    connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(io)
}

#[async_trait]
impl RunStore for SqliteStore {
    async fn start(&self, id: &str, task: &Task) -> Result<(), StoreError> {
        let task = encode(task)?;
        let id = id.to_string();
        self.with(move |connection| {
            let tx = write_transaction(connection)?;
            if run_state(&tx, &id)?.is_some() {
                return Err(StoreError::Exists(id));
            }
            tx.execute(
                "INSERT INTO ptc_runs (id, task) VALUES (?1, ?2)",
                params![id, task],
            )
            .map_err(io)?;
            tx.commit().map_err(io)
        })
        .await
    }

    async fn append(&self, lease: Option<&Lease>, id: &str, turn: &Turn) -> Result<(), StoreError> {
        let number = turn.number();
        let text = encode(turn)?;
        let id = id.to_string();
        let lease = lease.cloned();
        self.with(move |connection| {
            let tx = write_transaction(connection)?;
            writable(&tx, &id, lease.as_ref())?;
            let count: u32 = tx
                .query_row(
                    "SELECT count(*) FROM ptc_turns WHERE run_id = ?1",
                    params![id],
                    |row| row.get(0),
                )
                .map_err(io)?;
            if number != count + 1 {
                return Err(StoreError::OutOfOrder {
                    id,
                    expected: count + 1,
                    found: number,
                });
            }
            tx.execute(
                "INSERT INTO ptc_turns (run_id, number, turn) VALUES (?1, ?2, ?3)",
                params![id, number, text],
            )
            .map_err(io)?;
            tx.commit().map_err(io)
        })
        .await
    }

    async fn finish(
        &self,
        lease: Option<&Lease>,
        id: &str,
        outcome: &StepOutcome,
        usage: &Usage,
    ) -> Result<(), StoreError> {
        let outcome = encode(outcome)?;
        let usage = encode(usage)?;
        let id = id.to_string();
        let lease = lease.cloned();
        self.with(move |connection| {
            let tx = write_transaction(connection)?;
            writable(&tx, &id, lease.as_ref())?;
            tx.execute(
                "UPDATE ptc_runs SET outcome = ?2, usage = ?3, \
                 ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1",
                params![id, outcome, usage],
            )
            .map_err(io)?;
            tx.commit().map_err(io)
        })
        .await
    }

    async fn load(&self, id: &str) -> Result<Option<Checkpoint>, StoreError> {
        let id = id.to_string();
        self.with(move |connection| {
            let tx = connection.transaction().map_err(io)?;
            let row = tx
                .query_row(
                    "SELECT task, outcome, usage FROM ptc_runs WHERE id = ?1",
                    params![id],
                    |row| {
                        Ok((
                            row.get::<_, String>(0)?,
                            row.get::<_, Option<String>>(1)?,
                            row.get::<_, Option<String>>(2)?,
                        ))
                    },
                )
                .optional()
                .map_err(io)?;
            let Some((task, outcome, usage)) = row else {
                return Ok(None);
            };
            let mut statement = tx
                .prepare("SELECT number, turn FROM ptc_turns WHERE run_id = ?1 ORDER BY number")
                .map_err(io)?;
            let rows = statement
                .query_map(params![id], |row| {
                    Ok((row.get::<_, u32>(0)?, row.get::<_, String>(1)?))
                })
                .map_err(io)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(io)?;
            checkpoint(&id, &task, rows, outcome, usage).map(Some)
        })
        .await
    }

    async fn reopen(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.with(move |connection| {
            let tx = write_transaction(connection)?;
            if run_state(&tx, &id)?.is_none() {
                return Err(StoreError::Missing(id));
            }
            tx.execute(
                "UPDATE ptc_runs SET outcome = NULL, usage = NULL, ended_at = NULL WHERE id = ?1",
                params![id],
            )
            .map_err(io)?;
            tx.commit().map_err(io)
        })
        .await
    }
}
