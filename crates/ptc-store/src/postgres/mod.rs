//! The PostgreSQL run store: runs a fleet of workers shares, under leases.

mod announce;
mod fleet;
mod intents;
mod migrations;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use ptc_agent::store::{Checkpoint, IntentLog, Lease, RunStore, StoreError, Writable, may_write};
use ptc_turn::{StepOutcome, Task, Turn, Usage};
use tokio_postgres::{GenericClient, NoTls, Row};

use crate::codec::{checkpoint, encode};

/// How many connections a store opens at most, unless told otherwise.
const DEFAULT_POOL_SIZE: usize = 16;

/// A [`RunStore`] in a PostgreSQL database that many processes, on many machines, share; also
/// a [`FleetStore`](ptc_agent::store::FleetStore), whose runs workers claim under leases, and
/// an [`IntentLog`].
///
/// Opening the store applies the schema's migrations the database lacks (tables `ptc_runs`,
/// `ptc_turns`, `ptc_tool_intents`, and `ptc_schema_migrations`, which records the versions
/// applied), in the schema the connection's `search_path` names. Every write is one
/// transaction that checks, in the database, what the write needs: that the run has not
/// ended, that a turn is the next one, and for a run submitted to the fleet that the writer's
/// lease is live.
///
/// The connection is not encrypted: the store reaches a server on a trusted network, or
/// through a tunnel or a local proxy.
///
/// A service submits a run; a worker, anywhere, claims it and writes it under its lease (this
/// example runs against the server of `PTC_POSTGRES_URL`, as `cargo xtask postgres run` and
/// CI set it):
///
/// ```
/// # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
/// use std::time::Duration;
/// use ptc_agent::store::{FleetStore, RunState, RunStore};
/// use ptc_store::PgStore;
/// use ptc_turn::{StepOutcome, Task, Turn};
///
/// let url = std::env::var("PTC_POSTGRES_URL").expect("the URL of a PostgreSQL database");
/// let store = PgStore::connect(&url).await.unwrap();
/// let id = format!("ticket-{}", std::process::id());
/// store.submit(&id, &Task::new("Count the users")).await.unwrap();
///
/// let claimed = store.claim("worker-7", "", Duration::from_secs(30), 1).await.unwrap().remove(0);
/// let lease = claimed.lease;
/// assert_eq!(claimed.checkpoint.turns.len(), 0);
/// // Every write of the run goes under the lease: a worker that lost it is refused.
/// let run = &lease.run_id;
/// store.append(Some(&lease), run, &Turn::success(1, "(count data/users)", 2.into())).await.unwrap();
/// let outcome = StepOutcome::Returned { value: 2.into() };
/// store.finish(Some(&lease), run, &outcome, &Default::default()).await.unwrap();
///
/// let status = store.status(run).await.unwrap().unwrap();
/// assert_eq!((status.state, status.turns), (RunState::Ended(outcome), 1));
/// # });
/// ```
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
    /// The claimable runs the database announces, heard on a connection of their own.
    announcements: std::sync::Arc<announce::Announcements>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PgStore")
            .field("connections", &status.size)
            .field("max_connections", &status.max_size)
            .finish()
    }
}

/// A driver error as the store reports it: the server's own message when it sent one.
pub(super) fn db_error(e: tokio_postgres::Error) -> StoreError {
    let text = format!("PostgreSQL: {}", describe(&e));
    if unreachable(&e) {
        StoreError::Unavailable(text)
    } else {
        StoreError::Io(text)
    }
}

/// Whether `e` says the server could not be reached or the connection was cut (it is down,
/// restarting, shutting down or out of connections), rather than that it refused what was
/// asked.
fn unreachable(e: &tokio_postgres::Error) -> bool {
    if let Some(code) = e.code() {
        let code = code.code();
        // Class 08: connection exceptions; 57P01-57P03: the server shutting down, crashed or
        // starting; 53300: too many connections.
        return code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "53300");
    }
    if e.is_closed() {
        return true;
    }
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        if cause.is::<std::io::Error>() {
            return true;
        }
        source = cause.source();
    }
    false
}

/// What went wrong, in PostgreSQL's own words: the server's message and its SQLSTATE
/// (`database "x" does not exist (3D000)`) when the server answered, else the driver's
/// account with every cause it carries (`error connecting to server: Connection refused`).
pub(super) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Why no connection could be had from the pool, with the server's own message.
fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    let (reason, unavailable) = match &e {
        deadpool_postgres::PoolError::Backend(e) => (describe(e), unreachable(e)),
        deadpool_postgres::PoolError::Timeout(_) => (e.to_string(), true),
        other => (other.to_string(), false),
    };
    let text = format!("cannot get a connection to PostgreSQL: {reason}");
    if unavailable {
        StoreError::Unavailable(text)
    } else {
        StoreError::Io(text)
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`,
    /// or the `key=value` form libpq takes) and applies the migrations it lacks.
    pub async fn connect(url: &str) -> Result<PgStore, StoreError> {
        PgStore::connect_with_pool_size(url, DEFAULT_POOL_SIZE).await
    }

    /// Like [`connect`](PgStore::connect), opening at most `size` connections (at least one):
    /// a worker needs one for each run it commits at the same moment, and one to claim.
    pub async fn connect_with_pool_size(url: &str, size: usize) -> Result<PgStore, StoreError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Io(format!("`{url}` is not a PostgreSQL URL: {e}")))?;
        let announcements = std::sync::Arc::new(announce::Announcements::new(config.clone()));
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(size.max(1))
            .build()
            .map_err(|e| StoreError::Io(format!("cannot make the connection pool: {e}")))?;
        let store = PgStore {
            pool,
            announcements,
        };
        let mut client = store.client().await?;
        migrations::migrate(&mut client).await?;
        Ok(store)
    }

    /// The schema version the database is at (the newest this build knows, once opened).
    pub async fn schema_version(&self) -> Result<i32, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT coalesce(max(version), 0) FROM ptc_schema_migrations",
                &[],
            )
            .await
            .map_err(db_error)?;
        Ok(row.get(0))
    }

    /// The ids of every run in the store, oldest first.
    pub async fn run_ids(&self) -> Result<Vec<String>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query("SELECT id FROM ptc_runs ORDER BY seq", &[])
            .await
            .map_err(db_error)?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(pool_error)
    }

    /// Adds run `id`: submitted to the fleet, or started by one process.
    async fn insert_run(&self, id: &str, task: &Task, fleet: bool) -> Result<(), StoreError> {
        let task = encode(task)?;
        let client = self.client().await?;
        let added = client
            .execute(
                "INSERT INTO ptc_runs (id, task, fleet) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO NOTHING",
                &[&id, &task, &fleet],
            )
            .await
            .map_err(db_error)?;
        if added == 0 {
            return Err(StoreError::Exists(id.to_string()));
        }
        Ok(())
    }

    /// Appends `turn` to run `id` as `writer` (a lease, or none for a local run), extending
    /// the lease, in one statement.
    async fn append_turn(
        &self,
        id: &str,
        writer: Option<&Lease>,
        turn: &Turn,
    ) -> Result<(), StoreError> {
        let number = i32::try_from(turn.number())
            .map_err(|_| StoreError::Io(format!("turn number {} is too large", turn.number())))?;
        let text = encode(turn)?;
        let token = token_of(writer);
        let seconds = writer.map_or(0.0, |lease| lease.duration.as_secs_f64());
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "WITH run AS (
                     UPDATE ptc_runs
                     SET turns = $3,
                         lease_expires_at = CASE WHEN fleet
                             THEN clock_timestamp() + make_interval(secs => $5) END
                     WHERE id = $1 AND outcome IS NULL AND turns = $3 - 1 AND {WRITER}
                     RETURNING id)
                 INSERT INTO ptc_turns (run_id, number, turn, lease_token)
                 SELECT id, $3, $4, $2 FROM run"
            ))
            .await
            .map_err(db_error)?;
        let added = client
            .execute(&statement, &[&id, &token, &number, &text, &seconds])
            .await
            .map_err(db_error)?;
        if added == 1 {
            return Ok(());
        }
        let committed = writer_check(&**client, id, writer).await?;
        if writer.is_some() && committed >= turn.number() {
            // A retry of a commit whose answer was lost: the same turn under the same lease.
            let stored = client
                .query_opt(
                    "SELECT turn FROM ptc_turns WHERE run_id = $1 AND number = $2 \
                     AND lease_token = $3",
                    &[&id, &number, &token],
                )
                .await
                .map_err(db_error)?;
            if stored.is_some_and(|row| row.get::<_, &str>(0) == text) {
                return Ok(());
            }
        }
        if committed + 1 != turn.number() {
            return Err(StoreError::OutOfOrder {
                id: id.to_string(),
                expected: committed + 1,
                found: turn.number(),
            });
        }
        Err(changed_meanwhile(id))
    }

    /// Records how run `id` ended, as `writer`, and ends its lease.
    async fn end_run(
        &self,
        id: &str,
        writer: Option<&Lease>,
        outcome: &StepOutcome,
        usage: &Usage,
    ) -> Result<(), StoreError> {
        let outcome = encode(outcome)?;
        let usage = encode(usage)?;
        let token = token_of(writer);
        let client = self.client().await?;
        let statement = format!(
            "UPDATE ptc_runs
             SET outcome = $3, usage = $4, ended_at = clock_timestamp(), lease_expires_at = NULL
             WHERE id = $1 AND outcome IS NULL AND {WRITER}"
        );
        let ended = client
            .execute(statement.as_str(), &[&id, &token, &outcome, &usage])
            .await
            .map_err(db_error)?;
        if ended == 1 {
            return Ok(());
        }
        writer_check(&**client, id, writer).await?;
        Err(changed_meanwhile(id))
    }
}

/// The condition a run's row meets when `$2` (a lease's token, or NULL) may write it: a local
/// run takes writes without a lease, a fleet's run only under its live lease.
const WRITER: &str = "((NOT fleet AND $2::BIGINT IS NULL) \
                      OR (fleet AND lease_token = $2 AND lease_expires_at > clock_timestamp()))";

/// A lease's token as the database keeps it.
fn token_of(writer: Option<&Lease>) -> Option<i64> {
    // Tokens come from a BIGINT sequence; one above its range matches no run.
    writer.map(|lease| i64::try_from(lease.token).unwrap_or(-1))
}

fn changed_meanwhile(id: &str) -> StoreError {
    StoreError::Io(format!(
        "run `{id}` changed while the write was checked; nothing was written, try again"
    ))
}

/// A run's row, as the checks of writes and the status of a run read it.
struct RunRow {
    fleet: bool,
    outcome: Option<String>,
    turns: u32,
    claims: u32,
    lease_worker: Option<String>,
    lease_token: Option<i64>,
    /// Whether the lease has not expired by the database's clock.
    lease_live: bool,
    /// Why a worker last refused it, and which, unless it was requeued since.
    refused_reason: Option<String>,
    refused_worker: Option<String>,
}

async fn run_row(client: &impl GenericClient, id: &str) -> Result<Option<RunRow>, StoreError> {
    let row = client
        .query_opt(
            "SELECT fleet, outcome, turns, claims, lease_worker, lease_token, \
             coalesce(lease_expires_at > clock_timestamp(), false), refused_reason, \
             refused_worker FROM ptc_runs WHERE id = $1",
            &[&id],
        )
        .await
        .map_err(db_error)?;
    let count = |row: &Row, i: usize| u32::try_from(row.get::<_, i32>(i)).unwrap_or(0);
    Ok(row.map(|row| RunRow {
        fleet: row.get(0),
        outcome: row.get(1),
        turns: count(&row, 2),
        claims: count(&row, 3),
        lease_worker: row.get(4),
        lease_token: row.get(5),
        lease_live: row.get(6),
        refused_reason: row.get(7),
        refused_worker: row.get(8),
    }))
}

impl RunRow {
    /// The run as [`may_write`] reads it.
    fn writable(&self) -> Writable {
        Writable {
            ended: self.outcome.is_some(),
            fleet: self.fleet,
            live_lease: self
                .lease_token
                .filter(|_| self.lease_live)
                .and_then(|token| u64::try_from(token).ok()),
        }
    }
}

/// Why a guarded write to run `id` by `writer` was refused, as [`may_write`] decides it: the
/// run is missing, has ended, belongs to the fleet and `writer` has no lease, or the lease is
/// not the live one. When none of these holds, the write may go ahead as far as the writer is
/// concerned, and the number of turns committed is returned.
async fn writer_check(
    client: &impl GenericClient,
    id: &str,
    writer: Option<&Lease>,
) -> Result<u32, StoreError> {
    let run = run_row(client, id).await?;
    may_write(id, run.as_ref().map(RunRow::writable), writer)?;
    Ok(run.map_or(0, |run| run.turns))
}

/// What the store has of run `id`, read in one statement (so from one snapshot).
async fn load_checkpoint(
    client: &impl GenericClient,
    id: &str,
) -> Result<Option<Checkpoint>, StoreError> {
    let row: Option<Row> = client
        .query_opt(
            "SELECT task, outcome, usage,
                 ARRAY(SELECT number FROM ptc_turns WHERE run_id = r.id ORDER BY number),
                 ARRAY(SELECT turn FROM ptc_turns WHERE run_id = r.id ORDER BY number)
             FROM ptc_runs r WHERE id = $1",
            &[&id],
        )
        .await
        .map_err(db_error)?;
    let Some(row) = row else {
        return Ok(None);
    };
    let numbers: Vec<i32> = row.get(3);
    let turns: Vec<String> = row.get(4);
    let turns = numbers
        .into_iter()
        .map(|n| u32::try_from(n).unwrap_or(0))
        .zip(turns)
        .collect();
    checkpoint(id, row.get(0), turns, row.get(1), row.get(2)).map(Some)
}

#[async_trait]
impl RunStore for PgStore {
    async fn start(&self, id: &str, task: &Task) -> Result<(), StoreError> {
        self.insert_run(id, task, false).await
    }

    async fn append(&self, lease: Option<&Lease>, id: &str, turn: &Turn) -> Result<(), StoreError> {
        self.append_turn(id, lease, turn).await
    }

    async fn finish(
        &self,
        lease: Option<&Lease>,
        id: &str,
        outcome: &StepOutcome,
        usage: &Usage,
    ) -> Result<(), StoreError> {
        self.end_run(id, lease, outcome, usage).await
    }

    async fn load(&self, id: &str) -> Result<Option<Checkpoint>, StoreError> {
        let client = self.client().await?;
        load_checkpoint(&**client, id).await
    }

    /// For a run submitted to the fleet, the run is queued again: the next claim takes it,
    /// with its turns.
    async fn reopen(&self, id: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        let found = client
            .execute(
                "UPDATE ptc_runs SET outcome = NULL, usage = NULL, ended_at = NULL WHERE id = $1",
                &[&id],
            )
            .await
            .map_err(db_error)?;
        if found == 0 {
            return Err(StoreError::Missing(id.to_string()));
        }
        Ok(())
    }

    fn intent_log(&self) -> Option<&dyn IntentLog> {
        Some(self)
    }
}
