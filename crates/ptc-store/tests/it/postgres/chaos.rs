//! The chaos tests: three worker processes share one database and work 1,000 runs (a scripted
//! model, a slow tool that acts on the database), while every second or two one of them,
//! chosen at random, is killed with SIGKILL and started again; in the second test the database
//! is also stopped at random (`pg_ctl stop -m immediate`) for one to three seconds, on a cluster
//! of the test's own. Every run ends as it would have undisturbed, no turn is committed twice,
//! no worker exits on its own, and a tool call is made more than once only when the intent log
//! shows it was in flight at a kill or an outage.
//!
//! The worker processes are this test binary, started on `chaos_worker_process` with the
//! database and the worker's name in the environment.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use pretty_assertions::assert_eq;
use ptc_agent::store::{FleetStore, IdempotencyKey, RunStore};
use ptc_agent::{
    Agent, LlmResponse, RunOptions, ToolError, Worker, async_tool, current_idempotency_key, llm_fn,
};
use ptc_lisp::Value;
use ptc_store::PgStore;
use ptc_turn::{Step, Task};
use tokio_postgres::NoTls;

use super::outage::OwnCluster;
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

/// The world the tool acts on: the table `chaos_calls`, through a connection of the worker's
/// own, made again when the database went away.
struct World {
    url: String,
    worker: String,
    client: tokio::sync::Mutex<Option<tokio_postgres::Client>>,
}

/// Numbers each time a tool acts in this process.
static ACTS: AtomicU64 = AtomicU64::new(0);

impl World {
    /// Notes that the call under `key` acted, once however often the note is sent again: while
    /// the database is away, the tool waits for it.
    async fn act(&self, key: &str) {
        let act = format!(
            "{}-{}",
            std::process::id(),
            ACTS.fetch_add(1, Ordering::SeqCst)
        );
        loop {
            let mut client = self.client.lock().await;
            if client.is_none()
                && let Ok((fresh, connection)) = tokio_postgres::connect(&self.url, NoTls).await
            {
                tokio::spawn(connection);
                *client = Some(fresh);
            }
            if let Some(connected) = client.as_ref() {
                let noted = connected
                    .execute(
                        "INSERT INTO chaos_calls (act, key, worker) VALUES ($1, $2, $3) \
                         ON CONFLICT (act) DO NOTHING",
                        &[&act, &key, &self.worker],
                    )
                    .await;
                if noted.is_ok() {
                    return;
                }
                *client = None;
            }
            drop(client);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The agent of run `n`. With a world, its tool acts on it (it notes the call, under its
/// idempotency key, in the table `chaos_calls`) and then takes `TOOL_TIME`; without, it
/// only answers.
fn agent_for(n: i64, world: Option<Arc<World>>) -> Agent {
    let work = async_tool("work", "Works on a step", move |args: Work| {
        let world = world.clone();
        let key = current_idempotency_key();
        async move {
            if let Some(world) = world {
                world
                    .act(&key.map(|k| k.to_string()).unwrap_or_default())
                    .await;
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
        // Started while the database is away, the process waits for it, as a supervisor would
        // start it again.
        let store = loop {
            match PgStore::connect(&url).await {
                Ok(store) => break store,
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        let world = Arc::new(World {
            url: url.clone(),
            worker: name.clone(),
            client: tokio::sync::Mutex::new(None),
        });
        let worker = Worker::new(name, Arc::new(store) as Arc<dyn FleetStore>, move |task| {
            Ok(agent_for(n_of(task)?, Some(world.clone())))
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
    chaos(&db.url, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_killed_and_the_database_stopped_at_random_finish_every_run_undisturbed() {
    let cluster = OwnCluster::start("ptc-chaos-outages-cluster");
    chaos(&cluster.url(), Some(&cluster)).await;
}

/// How many runs of the database ended, or `None` while it is away.
async fn ended_runs(url: &str) -> Option<i64> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.ok()?;
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT count(*) FROM ptc_runs WHERE outcome IS NOT NULL",
            &[],
        )
        .await
        .ok()?;
    Some(row.get(0))
}

/// Works `RUNS` runs with `WORKERS` worker processes on the database at `url`, killing one at
/// random every second or two; with `cluster`, also stopping the database at random, about
/// every third time, for one to three seconds.
async fn chaos(url: &str, cluster: Option<&OwnCluster>) {
    let store = PgStore::connect(url).await.expect("the store");
    let client = admin(url).await;
    client
        .batch_execute(
            "CREATE TABLE chaos_calls (act TEXT PRIMARY KEY, key TEXT NOT NULL, \
             worker TEXT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())",
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
        .map(|slot| start_worker(url, slot, 0))
        .collect();
    let started = Instant::now();
    let mut kills = 0;
    let mut outages = Vec::new();
    let mut unexpected_exits = Vec::new();
    loop {
        tokio::time::sleep(Duration::from_millis(1_000 + dice.roll(1_500))).await;
        let ended = ended_runs(url).await.expect("the database answers");
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
                *worker = start_worker(url, slot, generations[slot]);
            }
        }
        if let Some(cluster) = cluster
            && dice.roll(3) == 0
        {
            let outage = Duration::from_millis(1_000 + dice.roll(2_000));
            cluster.stop_immediately();
            tokio::time::sleep(outage).await;
            cluster.start_server();
            outages.push(outage);
        }
        let slot = dice.roll(WORKERS as u64) as usize;
        workers[slot].kill().expect("SIGKILL");
        workers[slot].wait().expect("the killed worker is reaped");
        kills += 1;
        generations[slot] += 1;
        workers[slot] = start_worker(url, slot, generations[slot]);
    }
    let took = started.elapsed();
    for worker in &mut workers {
        let _ = worker.kill();
        let _ = worker.wait();
    }
    assert_eq!(unexpected_exits, Vec::<String>::new(), "seed {seed}");
    assert!(kills >= 3, "only {kills} kills before every run ended");
    if cluster.is_some() {
        assert!(
            !outages.is_empty(),
            "no outage before every run ended (seed {seed})"
        );
    }
    // The test's connection did not outlive an outage.
    let client = admin(url).await;

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
    let down: Duration = outages.iter().sum();
    eprintln!(
        "chaos: {RUNS} runs by {WORKERS} workers in {:.1} s, {kills} kills, {} outages of the \
         database ({:.1} s in all); {in_flight_at_a_kill} calls in flight at a kill or an \
         outage, {repeated} calls made again",
        took.as_secs_f64(),
        outages.len(),
        down.as_secs_f64()
    );
}
