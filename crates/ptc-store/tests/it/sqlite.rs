//! The SQLite store against a real database file.

use crate::contract;
use ptc_store::SqliteStore;
use std::path::PathBuf;

struct TempDb(PathBuf);

impl TempDb {
    fn new(name: &str) -> TempDb {
        let path = std::env::temp_dir().join(format!("ptc-store-{}-{name}.db", std::process::id()));
        let db = TempDb(path);
        db.remove();
        db
    }

    fn remove(&self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        self.remove();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_kept_turn_by_turn_and_read_back_exactly() {
    let db = TempDb::new("kept");
    let store = SqliteStore::open(&db.0).expect("open");
    // Another connection, as another process would open it.
    let other = SqliteStore::open(&db.0).expect("reopen");
    contract::a_run_is_kept_and_read_back_exactly(&store, &other).await;
    pretty_assertions::assert_eq!(other.run_ids().unwrap(), vec!["job-1".to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stopped_after_two_turns_resumes_elsewhere_to_the_same_step() {
    let db = TempDb::new("resume");
    let writer = SqliteStore::open(&db.0).expect("open");
    let reader = SqliteStore::open(&db.0).expect("reopen");
    contract::a_stopped_run_resumes_elsewhere_to_the_same_step(&writer, &reader).await;
}

#[tokio::test]
async fn misuse_is_refused_and_leaves_the_store_as_it_was() {
    let store = SqliteStore::open_in_memory().expect("open");
    contract::misuse_is_refused_and_leaves_the_store_as_it_was(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_ended_on_a_model_error_goes_on_from_another_connection() {
    let db = TempDb::new("outage");
    let store = SqliteStore::open(&db.0).expect("open");
    let other = SqliteStore::open(&db.0).expect("reopen");
    contract::a_run_ended_on_a_model_error_goes_on_elsewhere(&store, &other).await;
}
