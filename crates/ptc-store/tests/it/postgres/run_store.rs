//! The `RunStore` of PostgreSQL does what every store does.

use super::TestDb;
use crate::contract;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_kept_turn_by_turn_and_read_back_exactly() {
    let db = TestDb::new("kept").await;
    let (store, other) = (db.store().await, db.store().await);
    contract::a_run_is_kept_and_read_back_exactly(&store, &other).await;
    pretty_assertions::assert_eq!(other.run_ids().await.unwrap(), vec!["job-1".to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stopped_after_two_turns_resumes_elsewhere_to_the_same_step() {
    let db = TestDb::new("resume").await;
    let (writer, reader) = (db.store().await, db.store().await);
    contract::a_stopped_run_resumes_elsewhere_to_the_same_step(&writer, &reader).await;
}

#[tokio::test]
async fn misuse_is_refused_and_leaves_the_store_as_it_was() {
    let db = TestDb::new("misuse").await;
    contract::misuse_is_refused_and_leaves_the_store_as_it_was(&db.store().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_ended_on_a_model_error_goes_on_from_another_connection() {
    let db = TestDb::new("outage").await;
    let (store, other) = (db.store().await, db.store().await);
    contract::a_run_ended_on_a_model_error_goes_on_elsewhere(&store, &other).await;
}
