//! Workers against a real server: runs submitted by a service, worked to their exact steps by
//! several workers at once; a worker shutting down hands its leases back; a worker that
//! vanished mid-run leaves its run to another after the lease; a run that ended on a model
//! error goes on in the fleet once reopened.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use ptc_agent::llm::{Llm, LlmError, LlmRequest, LlmResponse};
use ptc_agent::store::{FleetStore, RunState, RunStatus, RunStore};
use ptc_agent::{Agent, RunOptions, ScriptedLlm, Worked, Worker};
use ptc_lisp::Value;
use ptc_store::PgStore;
use ptc_turn::{FailureKind, StepOutcome, Task};

use super::TestDb;

const MISSION: &str = "Square n and add one";
const FIRST: &str = "(def a (* data/n data/n))";
const SECOND: &str = "(return (+ a 1))";

/// A model that answers its script, then waits for ever (a request that never comes back).
struct ThenHangs(ScriptedLlm);

#[async_trait]
impl Llm for ThenHangs {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        if self.0.remaining() == 0 {
            return std::future::pending().await;
        }
        self.0.complete(request).await
    }

    fn describe(&self) -> String {
        "then-hangs".into()
    }
}

/// What the model of a worker does.
#[derive(Clone, Copy)]
enum Model {
    /// Both replies.
    Answers,
    /// The replies from turn `done + 1` on: the earlier turns are committed.
    AnswersAfter(usize),
    /// The first reply, then no answer.
    FirstThenHangs,
    /// The first reply, then an error (the script runs out).
    FirstThenFails,
}

/// The service's agent for a run's task: the mission, with the run's `n`.
fn agent_for(n: i64, model: Model) -> Agent {
    let builder = Agent::builder(MISSION).data_value("n", Value::Int(n));
    let builder = match model {
        Model::Answers => builder.llm(ScriptedLlm::new([FIRST, SECOND])),
        Model::AnswersAfter(done) => {
            builder.llm(ScriptedLlm::new([FIRST, SECOND][done..].iter().copied()))
        }
        Model::FirstThenHangs => builder.llm(ThenHangs(ScriptedLlm::new([FIRST]))),
        Model::FirstThenFails => builder.llm(ScriptedLlm::new([FIRST])),
    };
    builder.build().expect("agent")
}

fn agents(model: Model) -> impl Fn(&Task) -> Result<Agent, String> + Send + Sync + 'static {
    move |task: &Task| match task.data.get("n") {
        Some(Value::Int(n)) => Ok(agent_for(*n, model)),
        _ => Err("a run without n".into()),
    }
}

async fn submit(store: &PgStore, count: i64) -> Vec<String> {
    let mut ids = Vec::new();
    for n in 0..count {
        let id = format!("n-{n:02}");
        agent_for(n, Model::Answers)
            .submit(store, &id, RunOptions::new())
            .await
            .expect("submitted");
        ids.push(id);
    }
    ids
}

fn n_of(id: &str) -> i64 {
    id[2..].parse().unwrap()
}

fn worker(name: &str, store: &Arc<PgStore>, model: Model) -> Worker {
    Worker::new(name, store.clone() as Arc<dyn FleetStore>, agents(model))
        .poll(Duration::from_millis(50))
}

async fn status(store: &PgStore, id: &str) -> RunStatus {
    store.status(id).await.unwrap().expect("a run")
}

/// Waits until every run of `ids` has `turns` committed turns.
async fn committed(store: &PgStore, ids: &[String], turns: u32) {
    for id in ids {
        while status(store, id).await.turns < turns {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_work_every_submitted_run_to_its_exact_step() {
    let db = TestDb::new("workers").await;
    let submitter = db.store().await;
    let ids = submit(&submitter, 12).await;
    let (one, two) = (Arc::new(db.store().await), Arc::new(db.store().await));
    let (a, b) = (
        worker("a", &one, Model::Answers).concurrency(3),
        worker("b", &two, Model::Answers).concurrency(3),
    );
    let (a, b) = tokio::join!(a.run_until_idle(), b.run_until_idle());
    let (a, b) = (a.expect("worker a"), b.expect("worker b"));
    assert_eq!(a.claims + b.claims, 12);
    let mut worked: BTreeMap<String, Worked> = a.runs.clone();
    for (id, outcome) in b.runs {
        assert!(
            worked.insert(id.clone(), outcome).is_none(),
            "{id} worked twice"
        );
    }
    assert_eq!(worked.keys().cloned().collect::<Vec<_>>(), ids);
    for id in &ids {
        let n = n_of(id);
        let undisturbed = agent_for(n, Model::Answers).run().await.expect("runs");
        let stored = submitter
            .load(id)
            .await
            .unwrap()
            .and_then(|c| c.step())
            .expect("ended");
        assert_eq!(stored.value(), Some(&Value::Int(n * n + 1)), "{id}");
        assert_eq!(stored.value(), undisturbed.value(), "{id}");
        assert_eq!(stored.task, undisturbed.task, "{id}");
        assert_eq!(stored.turns.len(), 2, "{id}");
        assert_eq!(worked[id], Worked::Ended(stored.outcome.clone()), "{id}");
        assert_eq!(
            status(&submitter, id).await,
            RunStatus {
                state: RunState::Ended(stored.outcome.clone()),
                turns: 2,
                claims: 1,
            }
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_shutting_down_hands_its_leases_back_and_another_finishes_the_runs() {
    let db = TestDb::new("shutdown").await;
    let store = Arc::new(db.store().await);
    let ids = submit(&store, 2).await;
    // Long leases: the runs are claimable again at once only because they were handed back.
    let first = worker("first", &store, Model::FirstThenHangs)
        .concurrency(2)
        .lease(Duration::from_secs(60));
    let watched = store.clone();
    let watched_ids = ids.clone();
    let report = first
        .run(async move { committed(&watched, &watched_ids, 1).await })
        .await
        .expect("worker");
    assert_eq!(
        report.runs,
        ids.iter()
            .map(|id| (id.clone(), Worked::HandedBack))
            .collect::<BTreeMap<_, _>>()
    );
    for id in &ids {
        assert_eq!(
            status(&store, id).await,
            RunStatus {
                state: RunState::Queued,
                turns: 1,
                claims: 1,
            }
        );
    }
    let second = worker("second", &store, Model::AnswersAfter(1)).concurrency(2);
    let report = second.run_until_idle().await.expect("worker");
    for id in &ids {
        let n = n_of(id);
        let step = store
            .load(id)
            .await
            .unwrap()
            .and_then(|c| c.step())
            .unwrap();
        assert_eq!(step.value(), Some(&Value::Int(n * n + 1)), "{id}");
        assert_eq!(step.turns.len(), 2);
        assert_eq!(report.runs[id], Worked::Ended(step.outcome.clone()));
        assert_eq!(status(&store, id).await.claims, 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_worker_vanished_goes_to_another_after_the_lease() {
    let db = TestDb::new("vanished").await;
    let store = Arc::new(db.store().await);
    let ids = submit(&store, 1).await;
    let lease = Duration::from_secs(1);
    let first = worker("first", &store, Model::FirstThenHangs).lease(lease);
    let running = tokio::spawn(async move { first.run_until_idle().await });
    committed(&store, &ids, 1).await;
    // The worker is gone mid-turn, as a killed process is: no hand-back, no renewal.
    running.abort();
    let gone = Instant::now();
    while status(&store, &ids[0]).await.state != RunState::Queued {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Claimable again within the lease plus one renewal.
    let waited = gone.elapsed();
    assert!(waited <= lease + lease / 3, "claimable after {waited:?}");
    let report = worker("second", &store, Model::AnswersAfter(1))
        .run_until_idle()
        .await
        .expect("worker");
    let step = store
        .load(&ids[0])
        .await
        .unwrap()
        .and_then(|c| c.step())
        .unwrap();
    assert_eq!(step.value(), Some(&Value::Int(1)));
    assert_eq!(report.runs[&ids[0]], Worked::Ended(step.outcome.clone()));
    assert_eq!(status(&store, &ids[0]).await.claims, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_run_that_ended_on_a_model_error_goes_on_once_reopened() {
    let db = TestDb::new("fleet_outage").await;
    let store = Arc::new(db.store().await);
    let ids = submit(&store, 1).await;
    let id = &ids[0];
    let report = worker("first", &store, Model::FirstThenFails)
        .run_until_idle()
        .await
        .expect("worker");
    let failed = store
        .load(id)
        .await
        .unwrap()
        .and_then(|c| c.step())
        .unwrap();
    assert!(matches!(
        &failed.outcome,
        StepOutcome::Failed {
            kind: FailureKind::LlmError,
            ..
        }
    ));
    assert_eq!(report.runs[id], Worked::Ended(failed.outcome.clone()));
    assert_eq!(failed.turns.len(), 1);
    store.reopen(id).await.unwrap();
    assert_eq!(
        status(&store, id).await,
        RunStatus {
            state: RunState::Queued,
            turns: 1,
            claims: 1,
        }
    );
    let report = worker("second", &store, Model::AnswersAfter(1))
        .run_until_idle()
        .await
        .expect("worker");
    let step = store
        .load(id)
        .await
        .unwrap()
        .and_then(|c| c.step())
        .unwrap();
    assert_eq!(step.value(), Some(&Value::Int(1)));
    assert_eq!(step.turns[0], failed.turns[0]);
    assert_eq!(report.runs[id], Worked::Ended(step.outcome.clone()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_a_worker_refuses_is_parked_once_and_worked_by_a_worker_whose_settings_fit() {
    let db = TestDb::new("worker_refuses").await;
    let store = Arc::new(db.store().await);
    Agent::builder(MISSION)
        .data_value("n", Value::Int(3))
        .max_turns(7)
        .llm(ScriptedLlm::new(Vec::<String>::new()))
        .build()
        .expect("agent")
        .submit(store.as_ref(), "misfit", RunOptions::new())
        .await
        .expect("submitted");
    let reason = "cannot resume run `misfit`: it was started with a budget of 7 turns, this \
                  agent has 5";
    // Twice with the same settings, whatever the worker's name: one claim in all, and each
    // finishes.
    for (name, claims) in [("five-a", 1), ("five-b", 0)] {
        let report = worker(name, &store, Model::Answers)
            .settings("five turns")
            .run_until_idle()
            .await
            .expect("worker");
        assert_eq!(report.claims, claims, "{name}");
        let expected: BTreeMap<String, Worked> = if claims == 1 {
            [("misfit".to_string(), Worked::Refused(reason.into()))].into()
        } else {
            BTreeMap::new()
        };
        assert_eq!(report.runs, expected, "{name}");
    }
    assert_eq!(
        status(&store, "misfit").await,
        RunStatus {
            state: RunState::Refused {
                worker: "five-a".into(),
                reason: reason.into()
            },
            turns: 0,
            claims: 1,
        }
    );
    // A worker whose agent has the run's budget works it.
    let fits = Worker::new(
        "seven",
        store.clone() as Arc<dyn FleetStore>,
        |task: &Task| {
            Agent::builder(task.mission.as_str())
                .data_value("n", task.data["n"].clone())
                .max_turns(7)
                .llm(ScriptedLlm::new([FIRST, SECOND]))
                .build()
                .map_err(|e| e.to_string())
        },
    )
    .settings("seven turns")
    .poll(Duration::from_millis(50));
    let report = fits.run_until_idle().await.expect("worker");
    let step = store
        .load("misfit")
        .await
        .unwrap()
        .and_then(|c| c.step())
        .expect("ended");
    assert_eq!(step.value(), Some(&Value::Int(10)));
    assert_eq!(report.runs["misfit"], Worked::Ended(step.outcome.clone()));
    assert_eq!(status(&store, "misfit").await.claims, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_submitted_to_an_idle_worker_is_announced_and_claimed_at_once() {
    let db = TestDb::new("announced").await;
    let store = Arc::new(db.store().await);
    let first_request: Arc<std::sync::Mutex<Option<Instant>>> = Arc::default();
    let noted = first_request.clone();
    // Looking for runs only every minute: a run claimed sooner was announced.
    let idle = Worker::new(
        "idle",
        store.clone() as Arc<dyn FleetStore>,
        move |task: &Task| {
            let noted = noted.clone();
            let model = ptc_agent::llm_fn("announced", move |_| {
                noted.lock().unwrap().get_or_insert_with(Instant::now);
                async { Ok(ptc_agent::LlmResponse::text("(return 1)")) }
            });
            Agent::builder(task.mission.as_str())
                .llm(model)
                .build()
                .map_err(|e| e.to_string())
        },
    )
    .poll(Duration::from_secs(60));
    let (stop, mut stopping) = tokio::sync::watch::channel(false);
    let working = tokio::spawn(async move {
        idle.run(async move {
            let _ = stopping.wait_for(|stop| *stop).await;
        })
        .await
    });
    // The worker found nothing, and waits.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let submitter = db.store().await;
    let mut latencies = Vec::new();
    for n in 0..3 {
        *first_request.lock().unwrap() = None;
        let id = format!("announced-{n}");
        let submitted = Instant::now();
        Agent::builder("Return 1")
            .llm(ScriptedLlm::new(Vec::<String>::new()))
            .build()
            .expect("agent")
            .submit(&submitter, &id, RunOptions::new())
            .await
            .expect("submitted");
        while !matches!(status(&submitter, &id).await.state, RunState::Ended(_)) {
            assert!(
                submitted.elapsed() < Duration::from_secs(20),
                "{id} not worked"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let asked = first_request.lock().unwrap().expect("the model was asked");
        latencies.push(asked - submitted);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    stop.send_replace(true);
    let report = working
        .await
        .expect("the worker's task")
        .expect("the worker");
    assert_eq!(report.claims, 3);
    eprintln!("from submission to the model's first request: {latencies:?}");
    for latency in latencies {
        assert!(latency < Duration::from_secs(2), "{latency:?}");
    }
}
