//! The schema's migrations: applied once however many stores open at the same moment, and a
//! database newer than the build refused; a database that does not exist named as the server
//! names it.

use pretty_assertions::assert_eq;
use ptc_agent::store::StoreError;
use ptc_store::PgStore;

use super::{TestDb, admin};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_opened_at_once_apply_each_migration_once() {
    let db = TestDb::new("migrate_at_once").await;
    let opened = join_all((0..6).map(|_| {
        let url = db.url.clone();
        async move { PgStore::connect(&url).await }
    }))
    .await;
    let mut stores = Vec::new();
    for store in opened {
        stores.push(store.unwrap_or_else(|e| panic!("a store failed to open: {e}")));
    }
    let store = &stores[0];
    assert_eq!(store.schema_version().await, Ok(4));
    let rows = admin(&db.url)
        .await
        .query("SELECT version, name FROM ptc_schema_migrations", &[])
        .await
        .unwrap();
    let applied: Vec<(i32, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        applied,
        vec![
            (1, "runs, turns, leases and the intent log".to_string()),
            (
                2,
                "runs refused by workers whose settings do not fit".to_string()
            ),
            (
                3,
                "the model's reply to each turn, before its program runs".to_string()
            ),
            (
                4,
                "claimable runs announced on ptc_runs_claimable".to_string()
            )
        ]
    );
    // Opening again applies nothing.
    db.store().await;
    let count: i64 = admin(&db.url)
        .await
        .query_one("SELECT count(*) FROM ptc_schema_migrations", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(count, 4);
}

#[tokio::test]
async fn a_database_newer_than_the_build_is_refused() {
    let db = TestDb::new("migrate_newer").await;
    db.store().await;
    admin(&db.url)
        .await
        .execute(
            "INSERT INTO ptc_schema_migrations (version, name) VALUES (99, 'from the future')",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        PgStore::connect(&db.url).await.map(|_| ()),
        Err(StoreError::Io(
            "the database's schema is at version 99, newer than this build of ptc-store knows \
             (version 4); use a newer ptc-store"
                .into()
        ))
    );
}

#[tokio::test]
async fn a_database_that_does_not_exist_is_reported_in_the_servers_own_words() {
    let db = TestDb::new("missing_database").await;
    let url = db
        .url
        .replace("ptc_test_missing_database", "ptc_test_no_such_database");
    assert_eq!(
        PgStore::connect(&url).await.map(|_| ()),
        Err(StoreError::Io(
            "cannot get a connection to PostgreSQL: database \"ptc_test_no_such_database\" \
             does not exist (3D000)"
                .into()
        ))
    );
}

/// Awaits every future, concurrently, in order.
async fn join_all<F: std::future::Future + Send + 'static>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut outputs = Vec::new();
    for handle in handles {
        outputs.push(handle.await.expect("task"));
    }
    outputs
}
