//! The rules every store keeps, as one table of cases run against each store: in the process, in a
//! JSON-lines file, in SQLite and (with the `postgres` feature) in PostgreSQL. Who may write a
//! run (`may_write`: a write under a lease that is not the run's live one is refused with the
//! same `LeaseLost` in every store), and what the intent log accepts (`recording`,
//! `completing`, `replying`), with the exact error of each refusal.

use std::path::PathBuf;
use std::time::Duration;

use pretty_assertions::assert_eq;
use ptc_agent::LlmResponse;
use ptc_agent::store::{
    IdempotencyKey, InProcessStore, IntentRecord, JsonlStore, Lease, RunStore, StoreError,
    ToolIntent,
};
use ptc_lisp::{ToolOutcome, Value};
use ptc_store::SqliteStore;
use ptc_turn::Task;

use crate::contract::{returned, turn};

/// A file of the test's own, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str) -> TempFile {
        let file = TempFile(
            std::env::temp_dir().join(format!("ptc-store-rules-{}-{name}", std::process::id())),
        );
        file.remove();
        file
    }

    fn remove(&self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Every store, fresh, by name; the files they keep live as long as the list.
async fn stores(test: &str) -> (Vec<(&'static str, Box<dyn RunStore>)>, Vec<TempFile>) {
    let jsonl = TempFile::new(&format!("{test}.jsonl"));
    let sqlite = TempFile::new(&format!("{test}.db"));
    #[allow(unused_mut)]
    let mut stores: Vec<(&'static str, Box<dyn RunStore>)> = vec![
        ("in-process", Box::new(InProcessStore::new())),
        ("jsonl", Box::new(JsonlStore::open(&jsonl.0).expect("open"))),
        (
            "sqlite",
            Box::new(SqliteStore::open(&sqlite.0).expect("open")),
        ),
    ];
    #[cfg(feature = "postgres")]
    {
        let db = crate::postgres::TestDb::new(&format!("rules_{test}")).await;
        stores.push(("postgres", Box::new(db.store().await)));
    }
    (stores, vec![jsonl, sqlite])
}

/// A lease no store holds live on run `id`: the run was never a fleet's.
fn lease_on(id: &str) -> Lease {
    Lease {
        run_id: id.to_string(),
        worker: "w".to_string(),
        token: 7,
        duration: Duration::from_secs(30),
    }
}

fn lost(id: &str) -> StoreError {
    StoreError::LeaseLost {
        id: id.to_string(),
        token: 7,
    }
}

/// Each write to a run, and what every store answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_store_refuses_the_same_writes_of_a_run_with_the_same_error() {
    let (stores, _files) = stores("writes").await;
    let lease = lease_on("local");
    let other = Lease {
        run_id: "ended".to_string(),
        ..lease.clone()
    };
    let table: Vec<(&str, Result<(), StoreError>)> = vec![
        ("append turn 1 without a lease", Ok(())),
        ("append turn 2 under a lease", Err(lost("local"))),
        ("finish under a lease", Err(lost("local"))),
        (
            "append turn 2 under another run's lease",
            Err(lost("local")),
        ),
        ("append turn 3 without a lease", Err(out_of_order())),
        ("append to a run never started", Err(missing())),
        ("finish under a lease a run never started", Err(missing())),
        ("append to an ended run", Err(ended())),
        ("append under a lease to an ended run", Err(ended())),
        ("finish without a lease", Ok(())),
    ];
    for (name, store) in &stores {
        store.start("local", &Task::new("m")).await.unwrap();
        store.start("ended", &Task::new("m")).await.unwrap();
        store
            .finish(None, "ended", &returned(1), &Default::default())
            .await
            .unwrap();
        let store = store.as_ref();
        let answers = vec![
            store.append(None, "local", &turn(1)).await,
            store.append(Some(&lease), "local", &turn(2)).await,
            store
                .finish(Some(&lease), "local", &returned(2), &Default::default())
                .await,
            store.append(Some(&other), "local", &turn(2)).await,
            store.append(None, "local", &turn(3)).await,
            store.append(None, "nope", &turn(1)).await,
            store
                .finish(
                    Some(&lease_on("nope")),
                    "nope",
                    &returned(2),
                    &Default::default(),
                )
                .await,
            store.append(None, "ended", &turn(1)).await,
            store.append(Some(&other), "ended", &turn(1)).await,
            store
                .finish(None, "local", &returned(2), &Default::default())
                .await,
        ];
        let got: Vec<_> = table.iter().map(|(case, _)| *case).zip(answers).collect();
        assert_eq!(got, table, "the {name} store");
        let kept = store.load("local").await.unwrap().expect("kept");
        assert_eq!(
            (kept.turns.len(), kept.end.map(|(outcome, _)| outcome)),
            (1, Some(returned(2))),
            "the {name} store kept only the writes it accepted"
        );
    }
}

fn out_of_order() -> StoreError {
    StoreError::OutOfOrder {
        id: "local".into(),
        expected: 2,
        found: 3,
    }
}

fn missing() -> StoreError {
    StoreError::Missing("nope".into())
}

fn ended() -> StoreError {
    StoreError::Ended("ended".into())
}

fn intent(run: &str, call: u32, tool: &str, arg: i64) -> ToolIntent {
    ToolIntent {
        key: IdempotencyKey::new(run, 1, call),
        tool: tool.to_string(),
        args: vec![Value::Int(arg)],
    }
}

/// A call as the log answers it, in a line: `KEY TOOL ATTEMPTS OUTCOME`.
fn answered(record: Result<IntentRecord, StoreError>) -> Result<String, StoreError> {
    record.map(|r| {
        let outcome = match r.outcome {
            None => "in flight".to_string(),
            Some(ToolOutcome::Ok(value)) => format!("ok {}", ptc_lisp::pr_str(&value)),
            Some(ToolOutcome::Error(message)) => format!("error {message}"),
        };
        format!(
            "{} {} {} {outcome}",
            r.intent.key, r.intent.tool, r.attempts
        )
    })
}

fn done(written: Result<(), StoreError>) -> Result<String, StoreError> {
    written.map(|()| "done".to_string())
}

/// Each write to the intent log of a run, in order, and what every store that keeps a log
/// answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_intent_log_keeps_the_same_rules_with_the_same_errors() {
    let (stores, _files) = stores("intents").await;
    let paid = ToolOutcome::Ok(Value::Int(30));
    let refused = ToolOutcome::Error("declined".into());
    let charge = intent("r", 0, "charge", 30);
    let lease = lease_on("r");
    let table: Vec<(&str, Result<String, StoreError>)> = vec![
        ("record a call", Ok("r:1:0 charge 1 in flight".into())),
        (
            "record it again (a retry)",
            Ok("r:1:0 charge 2 in flight".into()),
        ),
        (
            "record another tool under its key",
            Err(StoreError::IntentMismatch {
                key: "r:1:0".into(),
                recorded: "tool/charge".into(),
            }),
        ),
        (
            "record other arguments under its key",
            Err(StoreError::IntentMismatch {
                key: "r:1:0".into(),
                recorded: "tool/charge".into(),
            }),
        ),
        (
            "complete a key never recorded",
            Err(StoreError::IntentUnknown("r:1:5".into())),
        ),
        ("complete the call", Ok("done".into())),
        ("complete it again, the same way", Ok("done".into())),
        (
            "complete it again, another way",
            Err(StoreError::IntentCompleted("r:1:0".into())),
        ),
        (
            "record the completed call",
            Ok("r:1:0 charge 2 ok 30".into()),
        ),
        ("record a call under a lease", Err(lost("r"))),
        ("complete a call under a lease", Err(lost("r"))),
        ("record a reply under a lease", Err(lost("r"))),
        ("record a call of a run never started", Err(missing())),
        ("record a call of an ended run", Err(ended())),
        ("record a reply", Ok("done".into())),
        ("record another reply for the turn", Ok("done".into())),
        ("the reply kept", Ok("(def a 1)".into())),
    ];
    let mut with_a_log = Vec::new();
    for (name, store) in &stores {
        let Some(log) = store.intent_log() else {
            continue;
        };
        with_a_log.push(*name);
        store.start("r", &Task::new("m")).await.unwrap();
        store.start("ended", &Task::new("m")).await.unwrap();
        store
            .finish(None, "ended", &returned(1), &Default::default())
            .await
            .unwrap();
        let first = LlmResponse::text("(def a 1)");
        let answers = vec![
            answered(log.record_intent(None, &charge).await),
            answered(log.record_intent(None, &charge).await),
            answered(log.record_intent(None, &intent("r", 0, "refund", 30)).await),
            answered(log.record_intent(None, &intent("r", 0, "charge", 31)).await),
            done(
                log.complete_intent(None, &IdempotencyKey::new("r", 1, 5), &paid)
                    .await,
            ),
            done(log.complete_intent(None, &charge.key, &paid).await),
            done(log.complete_intent(None, &charge.key, &paid).await),
            done(log.complete_intent(None, &charge.key, &refused).await),
            answered(log.record_intent(None, &charge).await),
            answered(
                log.record_intent(Some(&lease), &intent("r", 1, "mail", 1))
                    .await,
            ),
            done(log.complete_intent(Some(&lease), &charge.key, &paid).await),
            done(log.record_reply(Some(&lease), "r", 1, &first).await),
            answered(log.record_intent(None, &intent("nope", 0, "x", 1)).await),
            answered(log.record_intent(None, &intent("ended", 0, "x", 1)).await),
            done(log.record_reply(None, "r", 1, &first).await),
            done(
                log.record_reply(None, "r", 1, &LlmResponse::text("(def a 2)"))
                    .await,
            ),
            log.recorded_reply("r", 1)
                .await
                .map(|reply| reply.map(|r| r.content).unwrap_or_default()),
        ];
        let got: Vec<_> = table.iter().map(|(case, _)| *case).zip(answers).collect();
        assert_eq!(got, table, "the intent log of the {name} store");
        assert_eq!(
            log.in_flight("r").await.map(|calls| calls.len()),
            Ok(0),
            "the {name} store recorded nothing it refused"
        );
    }
    let mut expected = vec!["in-process"];
    if cfg!(feature = "postgres") {
        expected.push("postgres");
    }
    assert_eq!(with_a_log, expected);
}

/// A fleet's run written under a lease that was lost (it ran out and another worker claimed the
/// run) is refused with the same error the other stores give a lease they never gave.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_under_a_lost_lease_is_refused_as_every_store_refuses_a_lease_not_live() {
    use ptc_agent::store::{FleetStore, IntentLog};

    let db = crate::postgres::TestDb::new("rules_lost_lease").await;
    let store = db.store().await;
    store.submit("f", &Task::new("m")).await.unwrap();
    let short = Duration::from_millis(500);
    let stale = store.claim("a", "", short, 1).await.unwrap()[0]
        .lease
        .clone();
    store.append(Some(&stale), "f", &turn(1)).await.unwrap();
    tokio::time::sleep(short + Duration::from_millis(300)).await;
    let fresh = store
        .claim("b", "", Duration::from_secs(60), 1)
        .await
        .unwrap()[0]
        .lease
        .clone();
    let lost = StoreError::LeaseLost {
        id: "f".into(),
        token: stale.token,
    };
    let answers = vec![
        store.append(Some(&stale), "f", &turn(2)).await,
        store
            .finish(Some(&stale), "f", &returned(1), &Default::default())
            .await,
        store
            .record_intent(Some(&stale), &intent("f", 0, "x", 1))
            .await
            .map(|_| ()),
        store
            .record_reply(Some(&stale), "f", 2, &LlmResponse::text("(def a 1)"))
            .await,
        store.renew(&stale).await,
    ];
    assert_eq!(answers, vec![Err(lost); 5]);
    assert_eq!(
        store.append(None, "f", &turn(2)).await,
        Err(StoreError::FleetRun("f".into()))
    );
    store.append(Some(&fresh), "f", &turn(2)).await.unwrap();
    let kept = store.load("f").await.unwrap().expect("kept");
    assert_eq!(kept.turns.len(), 2);
}
