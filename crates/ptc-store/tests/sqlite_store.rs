//! The SQLite store against a real database file: what it keeps, what it refuses, and a run
//! resumed from it by another connection (as another process would).

use pretty_assertions::assert_eq;
use ptc_agent::store::{RunStore, StoreError};
use ptc_agent::{Agent, RunOptions, ScriptedLlm};
use ptc_store::SqliteStore;
use ptc_turn::{Step, Task, Turn};
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

const REPLIES: [&str; 3] = [
    "```clojure\n(defn sq \"Square\" [x] (* x x))\n(def a (sq 3))\n```",
    "```clojure\n(def b (+ a (sq 4)))\n```",
    "```clojure\n(return (sq b))\n```",
];

fn agent(replies: &[&str]) -> Agent {
    Agent::builder("Square things")
        .llm(ScriptedLlm::new(replies.iter().map(|r| r.to_string())))
        .build()
        .expect("agent")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_kept_turn_by_turn_and_read_back_exactly() {
    let db = TempDb::new("kept");
    let store = SqliteStore::open(&db.0).expect("open");
    let step = agent(&REPLIES)
        .run_with(RunOptions::new().with_store(&store, "job-1"))
        .await
        .expect("runs");
    assert_eq!(step.value(), Some(&ptc_lisp::Value::Int(625)));
    // Another connection, as another process would open it.
    let other = SqliteStore::open(&db.0).expect("reopen");
    let checkpoint = other.load("job-1").await.unwrap().expect("stored");
    assert_eq!(checkpoint.step(), Some(step));
    assert_eq!(other.run_ids().unwrap(), vec!["job-1".to_string()]);
    assert_eq!(other.load("job-2").await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stopped_after_two_turns_resumes_elsewhere_to_the_same_step() {
    let db = TempDb::new("resume");
    let whole: Step = agent(&REPLIES).run().await.expect("runs");
    {
        let store = SqliteStore::open(&db.0).expect("open");
        store.start("job", &whole.task).await.unwrap();
        for turn in &whole.turns[..2] {
            store.append("job", turn).await.unwrap();
        }
    }
    let store = SqliteStore::open(&db.0).expect("reopen");
    let resumed = agent(&REPLIES[2..])
        .resume(&store, "job", RunOptions::new())
        .await
        .expect("resumes");
    assert_eq!(resumed.outcome, whole.outcome);
    assert_eq!(
        resumed.turns.iter().map(Turn::program).collect::<Vec<_>>(),
        whole.turns.iter().map(Turn::program).collect::<Vec<_>>()
    );
    // Functions compare by identity, so the definitions are compared as they are stored.
    let stored_memory = |step: &Step| serde_json::to_value(step.turns[2].memory()).unwrap();
    assert_eq!(stored_memory(&resumed), stored_memory(&whole));
    let stored = store.load("job").await.unwrap().expect("stored");
    assert_eq!(stored.turns.len(), 3);
    assert_eq!(stored.end.map(|(outcome, _)| outcome), Some(whole.outcome));
}

#[tokio::test]
async fn misuse_is_refused_and_leaves_the_store_as_it_was() {
    let store = SqliteStore::open_in_memory().expect("open");
    let turn = |n: u32| Turn::success(n, "(def x 1)", ptc_lisp::Value::Int(1));
    assert_eq!(
        store.append("nope", &turn(1)).await,
        Err(StoreError::Missing("nope".into()))
    );
    store.start("a", &Task::new("m")).await.unwrap();
    assert_eq!(
        store.start("a", &Task::new("other")).await,
        Err(StoreError::Exists("a".into()))
    );
    assert_eq!(
        store.append("a", &turn(2)).await,
        Err(StoreError::OutOfOrder {
            id: "a".into(),
            expected: 1,
            found: 2
        })
    );
    store.append("a", &turn(1)).await.unwrap();
    let outcome = ptc_turn::StepOutcome::Returned {
        value: ptc_lisp::Value::Int(1),
    };
    store
        .finish("a", &outcome, &Default::default())
        .await
        .unwrap();
    assert_eq!(
        store.append("a", &turn(2)).await,
        Err(StoreError::Ended("a".into()))
    );
    let checkpoint = store.load("a").await.unwrap().expect("stored");
    assert_eq!(checkpoint.task, Task::new("m"));
    assert_eq!(checkpoint.turns.len(), 1);
}
