//! The chaos test: three worker processes share one database and work 1,000 runs (a scripted
//! model, a slow tool that acts on the database), while every second or two one of them,
//! chosen at random, is killed with SIGKILL and started again. Every run ends as it would have
//! undisturbed, no turn is committed twice, and a tool call is made more than once only when
//! the intent log shows it was in flight at a kill.
//!
//! The worker processes are this test binary, started on `chaos_worker_process` with the
//! database and the worker's name in the environment.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use pretty_assertions::assert_eq;
use ptc_agent::store::{FleetStore, IdempotencyKey, RunStore};
use ptc_agent::{Agent, LlmResponse, RunOptions, ToolError, Worker, async_tool, llm_fn};
use ptc_lisp::Value;
use ptc_store::PgStore;
use ptc_turn::{Step, Task};
use tokio_postgres::NoTls;

use super::{TestDb, admin};

const RUNS: usize = 1_000;
const WORKERS: usize = 3;
const LEASE: Duration = Duration::from_secs(2);
/// How long the tool takes after it has acted.
const TOOL_TIME: Duration = Duration::from_millis(100);
const DATABASE_VAR: &str = "PTC_CHAOS_DATABASE";
const WORKER_VAR: &str = "PTC_CHAOS_WORKER";
const WORKER_TEST: &str = "postgres::chaos::chaos_worker_process";

const MISSION: &str = "Work on n in three steps";
/// The model's reply to each turn's request.
const PROGRAMS: [&str; 3] = [
    "(def a (tool/work {:n data/n :step 1}))",
    "(def b (pmap (fn [step] (tool/work {:n data/n :step step})) [2 3]))",
    "(return {:n data/n :a a :b b})",
];

#[derive(serde::Deserialize)]
struct Work {
    n: i64,
    step: i64,
}

/// The agent of run `n`. With `acts`, its tool acts on the world (it notes the call, under its
/// idempotency key, in the table `chaos_calls`) and then takes `TOOL_TIME`; without, it
/// only answers.
fn agent_for(n: i64, acts: Option<(Arc<tokio_postgres::Client>, String)>) -> Agent {
    let work = async_tool("work", "Works on a step", move |args: Work| {
        let acts = acts.clone();
        let key = IdempotencyKey::current();
        async move {
            if let Some((client, worker)) = acts {
                let key = key.map(|k| k.to_string()).unwrap_or_default();
                client
                    .execute(
                        "INSERT INTO chaos_calls (key, worker) VALUES ($1, $2)",
                        &[&key, &worker],
                    )
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                tokio::time::sleep(TOOL_TIME).await;
            }
            Ok::<_, ToolError>(args.n * 10 + args.step)
        }
    });
    let model = llm_fn("chaos:turns", |request| async move {
        let turn = request.turn.unwrap_or(1) as usize;
        Ok(LlmResponse::text(PROGRAMS[turn.clamp(1, 3) - 1]))
    });
    Agent::builder(MISSION)
        .data_value("n", Value::Int(n))
        .llm(model)
        .tool(work)
        .max_turns(3)
        .build()
        .expect("agent")
}

fn n_of(task: &Task) -> Result<i64, String> {
    match task.data.get("n") {
        Some(Value::Int(n)) => Ok(*n),
        _ => Err("a run without n".into()),
    }
}

/// One worker process: works runs until it is killed. Started by the test below, which names
/// its database in the environment; run on its own it does nothing.
#[test]
#[ignore = "a worker process of the chaos test, which starts it"]
fn chaos_worker_process() {
    let (Ok(url), Ok(name)) = (std::env::var(DATABASE_VAR), std::env::var(WORKER_VAR)) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let store = PgStore::connect(&url).await.expect("the store");
        let (client, connection) = tokio_postgres::connect(&url, NoTls)
            .await
            .expect("a connection for the tool");
        tokio::spawn(connection);
        let client = Arc::new(client);
        let worker_name = name.clone();
        let worker = Worker::new(name, Arc::new(store) as Arc<dyn FleetStore>, move |task| {
            Ok(agent_for(
                n_of(task)?,
                Some((client.clone(), worker_name.clone())),
            ))
        })
        .concurrency(24)
        .lease(LEASE)
        .poll(Duration::from_millis(50));
        worker
            .run(std::future::pending())
            .await
            .expect("the store answers");
    });
}

/// A worker process in slot `slot`, its `generation`th start.
fn start_worker(url: &str, slot: usize, generation: usize) -> Child {
    let log = std::env::temp_dir().join(format!(
        "ptc-chaos-{}-w{slot}-{generation}.log",
        std::process::id()
    ));
    Command::new(std::env::current_exe().expect("the test binary"))
        .args([WORKER_TEST, "--exact", "--ignored", "--nocapture"])
        .env(DATABASE_VAR, url)
        .env(WORKER_VAR, format!("w{slot}-{generation}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("a log file"))
        .spawn()
        .expect("a worker process starts")
}

/// A small pseudo-random generator (xorshift), seeded from the clock and printed, so a
/// failing schedule can be told apart.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

/// A step as JSON without what differs between two runs of the same replies: timings, the
/// messages sent (a resumed run is told of its unfinished calls) and the usage.
fn comparable(step: &Step) -> serde_json::Value {
    fn strip(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                map.retain(|key, _| !matches!(key.as_str(), "messages" | "usage"));
                for (key, field) in map.iter_mut() {
                    if key.ends_with("duration_us") {
                        *field = 0.into();
                    } else {
                        strip(field);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(step).expect("a step serializes");
    strip(&mut value);
    value
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_killed_at_random_finish_every_run_as_it_would_have_ended_undisturbed() {
    let db = TestDb::new("chaos").await;
    let store = db.store().await;
    let client = admin(&db.url).await;
    client
        .batch_execute(
            "CREATE TABLE chaos_calls (key TEXT NOT NULL, worker TEXT NOT NULL, \
             at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())",
        )
        .await
        .expect("the calls table");
    let ids: Vec<String> = (0..RUNS).map(|n| format!("chaos-{n:04}")).collect();
    for (n, id) in ids.iter().enumerate() {
        agent_for(n as i64, None)
            .submit(&store, id, RunOptions::new())
            .await
            .expect("submitted");
    }

    let seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    eprintln!("chaos seed {seed}");
    let mut dice = Dice(seed);
    let mut generations = [0; WORKERS];
    let mut workers: Vec<Child> = (0..WORKERS)
        .map(|slot| start_worker(&db.url, slot, 0))
        .collect();
    let started = Instant::now();
    let mut kills = 0;
    let mut unexpected_exits = Vec::new();
    loop {
        tokio::time::sleep(Duration::from_millis(1_000 + dice.roll(1_500))).await;
        let ended: i64 = client
            .query_one(
                "SELECT count(*) FROM ptc_runs WHERE outcome IS NOT NULL",
                &[],
            )
            .await
            .expect("count")
            .get(0);
        if ended as usize == RUNS {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "{ended} of {RUNS} runs ended after 10 minutes (seed {seed})"
        );
        for (slot, worker) in workers.iter_mut().enumerate() {
            if let Ok(Some(status)) = worker.try_wait() {
                unexpected_exits.push(format!("w{slot}-{}: {status}", generations[slot]));
                generations[slot] += 1;
                *worker = start_worker(&db.url, slot, generations[slot]);
            }
        }
        let slot = dice.roll(WORKERS as u64) as usize;
        workers[slot].kill().expect("SIGKILL");
        workers[slot].wait().expect("the killed worker is reaped");
        kills += 1;
        generations[slot] += 1;
        workers[slot] = start_worker(&db.url, slot, generations[slot]);
    }
    let took = started.elapsed();
    for worker in &mut workers {
        let _ = worker.kill();
        let _ = worker.wait();
    }
    assert_eq!(unexpected_exits, Vec::<String>::new(), "seed {seed}");
    assert!(kills >= 3, "only {kills} kills before every run ended");

    // Every run ended as it would have undisturbed.
    let mut undisturbed = tokio::task::JoinSet::new();
    for n in 0..RUNS {
        undisturbed.spawn(async move { (n, agent_for(n as i64, None).run().await) });
    }
    let mut expected = BTreeMap::new();
    while let Some(done) = undisturbed.join_next().await {
        let (n, step) = done.expect("a run");
        expected.insert(n, step.expect("runs"));
    }
    let mut differing = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        let step = store
            .load(id)
            .await
            .expect("load")
            .and_then(|c| c.step())
            .unwrap_or_else(|| panic!("{id} has not ended"));
        if comparable(&step) != comparable(&expected[&n]) {
            differing.push((id.clone(), step));
        }
    }
    if let Some((id, step)) = differing.first() {
        let n = differing.len();
        assert_eq!(
            comparable(step),
            comparable(&expected[&n_of(&step.task).unwrap_or(0).try_into().unwrap_or(0)]),
            "{id} (one of {n} runs that differ), seed {seed}"
        );
    }

    // No turn committed twice: three turns a run, numbered 1 to 3, under one lease each.
    let turns: Vec<(String, i32)> = client
        .query(
            "SELECT run_id, number FROM ptc_turns ORDER BY run_id, number",
            &[],
        )
        .await
        .expect("turns")
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    let every_turn: Vec<(String, i32)> = ids
        .iter()
        .flat_map(|id| (1..=3).map(move |number| (id.clone(), number)))
        .collect();
    assert_eq!(turns, every_turn);

    // Each call made once, except those in flight at a kill: made at most once per record.
    let made: BTreeMap<String, i64> = client
        .query("SELECT key, count(*) FROM chaos_calls GROUP BY key", &[])
        .await
        .expect("calls")
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    let recorded: BTreeMap<String, (i32, bool)> = client
        .query(
            "SELECT run_id, turn, call, attempts, outcome IS NOT NULL FROM ptc_tool_intents",
            &[],
        )
        .await
        .expect("intents")
        .iter()
        .map(|row| {
            let key = IdempotencyKey::new(
                row.get::<_, String>(0),
                row.get::<_, i32>(1) as u32,
                row.get::<_, i32>(2) as u32,
            );
            (key.to_string(), (row.get(3), row.get(4)))
        })
        .collect();
    assert_eq!(recorded.len(), RUNS * 3, "three calls a run");
    assert!(
        recorded.values().all(|(_, completed)| *completed),
        "every recorded call completed"
    );
    assert_eq!(
        made.keys().collect::<Vec<_>>(),
        recorded.keys().collect::<Vec<_>>(),
        "every call made was recorded first, and every recorded call was made"
    );
    let beyond_records: Vec<String> = made
        .iter()
        .filter(|(key, times)| **times > i64::from(recorded[*key].0))
        .map(|(key, times)| format!("{key} made {times} times"))
        .collect();
    assert_eq!(beyond_records, Vec::<String>::new(), "seed {seed}");
    let in_flight_at_a_kill = recorded
        .values()
        .filter(|(attempts, _)| *attempts > 1)
        .count();
    let repeated: i64 = made.values().map(|times| times - 1).sum();
    eprintln!(
        "chaos: {RUNS} runs by {WORKERS} workers in {:.1} s, {kills} kills; {in_flight_at_a_kill} \
         calls in flight at a kill, {repeated} calls made again",
        took.as_secs_f64()
    );
}
