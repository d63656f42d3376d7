//! The schema's versions, applied in order when a store is opened.

use ptc_agent::store::StoreError;

use super::db_error;

/// Every migration, oldest first: its version, what it does, and its SQL. A migration is
/// never changed once released; a change of the schema is a new one.
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "runs, turns, leases and the intent log",
        include_str!("../../migrations/0001_runs_turns_leases_intents.sql"),
    ),
    (
        2,
        "runs refused by workers whose settings do not fit",
        include_str!("../../migrations/0002_refused_runs.sql"),
    ),
    (
        3,
        "the model's reply to each turn, before its program runs",
        include_str!("../../migrations/0003_turn_replies.sql"),
    ),
    (
        4,
        "claimable runs announced on ptc_runs_claimable",
        include_str!("../../migrations/0004_claimable_runs_announced.sql"),
    ),
];

/// The advisory lock that makes stores opened at once (workers starting together) migrate
/// one after the other: the first applies what is missing, the others find it applied.
const MIGRATION_LOCK: i64 = 0x7074_635f_7374_6f72;

/// The newest schema version this build knows.
pub(super) fn newest() -> i32 {
    MIGRATIONS.last().map_or(0, |(version, _, _)| *version)
}

/// Applies the migrations the database lacks, in one transaction, and returns its version. A
/// database whose schema is newer than this build knows is refused: a worker of an older
/// release must not write rows it does not understand.
pub(super) async fn migrate(client: &mut tokio_postgres::Client) -> Result<i32, StoreError> {
    let tx = client.transaction().await.map_err(db_error)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(db_error)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS ptc_schema_migrations (
             version INTEGER PRIMARY KEY,
             name TEXT NOT NULL,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
         )",
    )
    .await
    .map_err(db_error)?;
    let applied: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM ptc_schema_migrations",
            &[],
        )
        .await
        .map_err(db_error)?
        .get(0);
    if applied > newest() {
        return Err(StoreError::Io(format!(
            "the database's schema is at version {applied}, newer than this build of \
             ptc-store knows (version {}); use a newer ptc-store",
            newest()
        )));
    }
    for (version, name, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > applied) {
        tx.batch_execute(sql).await.map_err(|e| {
            StoreError::Io(format!(
                "migration {version} ({name}) failed: {}",
                db_error(e)
            ))
        })?;
        tx.execute(
            "INSERT INTO ptc_schema_migrations (version, name) VALUES ($1, $2)",
            &[version, name],
        )
        .await
        .map_err(db_error)?;
    }
    tx.commit().await.map_err(db_error)?;
    Ok(newest())
}
