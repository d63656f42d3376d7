//! Throughput of a fleet: runs per second that 1, 2 and 4 workers complete together on one
//! PostgreSQL database, with a scripted model (no model time: what is measured is the agent
//! loop, the store's claims, commits and ends, and the workers' coordination).
//!
//! Each worker has connections of its own and works 4 runs at once; every run has three turns
//! (a definition, a tool-free computation, a return). For each fleet size a fresh set of
//! `PTC_FLEET_RUNS` runs (200 unless set) is submitted, the workers are started together and
//! work until nothing is runnable, and the wall time from their start to the last run's end is
//! measured. Every run is checked to have returned its value.
//!
//! `cargo xtask postgres run -- cargo bench -p ptc-store --features postgres --bench fleet`

use std::sync::Arc;
use std::time::{Duration, Instant};

use ptc_agent::store::{FleetStore, RunStore};
use ptc_agent::{Agent, RunOptions, ScriptedLlm, Worker};
use ptc_lisp::Value;
use ptc_store::PgStore;
use ptc_turn::Task;

const MISSION: &str = "Add the squares of 1 to n";
const REPLIES: [&str; 3] = [
    "(def squares (map #(* % %) (range 1 (inc data/n))))",
    "(def total (reduce + squares))",
    "(return total)",
];

fn agent_for(n: i64) -> Agent {
    Agent::builder(MISSION)
        .data_value("n", Value::Int(n))
        .llm(ScriptedLlm::new(REPLIES))
        .build()
        .expect("agent")
}

fn agents(task: &Task) -> Result<Agent, String> {
    match task.data.get("n") {
        Some(Value::Int(n)) => Ok(agent_for(*n)),
        _ => Err("a run without n".into()),
    }
}

/// A fresh database on the cluster of `PTC_POSTGRES_URL`.
async fn bench_database(name: &str) -> String {
    let cluster = std::env::var("PTC_POSTGRES_URL").expect(
        "PTC_POSTGRES_URL is not set: run this benchmark under `cargo xtask postgres run -- ...`",
    );
    let (client, connection) = tokio_postgres::connect(&cluster, tokio_postgres::NoTls)
        .await
        .expect("connect to the cluster");
    tokio::spawn(connection);
    for statement in [
        format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        format!("CREATE DATABASE {name}"),
    ] {
        client
            .batch_execute(&statement)
            .await
            .expect("make the benchmark's database");
    }
    let (base, _) = cluster.rsplit_once('/').expect("the URL names a database");
    format!("{base}/{name}")
}

async fn measure(workers: usize, runs: i64) {
    let url = bench_database(&format!("ptc_bench_fleet_{workers}")).await;
    let submitter = PgStore::connect(&url).await.expect("open PostgreSQL");
    for n in 0..runs {
        agent_for(n)
            .submit(&submitter, &format!("run-{n:05}"), RunOptions::new())
            .await
            .expect("submit");
    }
    let mut fleet = Vec::new();
    for w in 0..workers {
        let store: Arc<dyn FleetStore> = Arc::new(
            PgStore::connect_with_pool_size(&url, 6)
                .await
                .expect("open"),
        );
        fleet.push(
            Worker::new(format!("w{w}"), store, agents)
                .concurrency(4)
                .poll(Duration::from_millis(20)),
        );
    }
    let started = Instant::now();
    let running: Vec<_> = fleet
        .into_iter()
        .map(|worker| tokio::spawn(async move { worker.run_until_idle().await }))
        .collect();
    let mut reports = Vec::new();
    for worker in running {
        reports.push(worker.await.expect("the worker's task"));
    }
    let elapsed = started.elapsed();
    let claims: usize = reports
        .iter()
        .map(|r| r.as_ref().expect("worker").claims)
        .sum();
    for n in 0..runs {
        let step = submitter
            .load(&format!("run-{n:05}"))
            .await
            .unwrap()
            .and_then(|c| c.step())
            .expect("ended");
        assert_eq!(
            step.value(),
            Some(&Value::Int(n * (n + 1) * (2 * n + 1) / 6))
        );
    }
    println!(
        "{workers} worker{} x 4 runs at once: {runs} runs ({claims} claims) in {:.2} s = {:.1} runs/s",
        if workers == 1 { "" } else { "s" },
        elapsed.as_secs_f64(),
        runs as f64 / elapsed.as_secs_f64()
    );
}

fn main() {
    // Cargo passes `--bench`; a bare word is a name filter, and this file has one group.
    if std::env::args()
        .skip(1)
        .any(|a| !a.starts_with('-') && !"fleet".contains(&a))
    {
        return;
    }
    let runs: i64 = std::env::var("PTC_FLEET_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        for workers in [1, 2, 4] {
            measure(workers, runs).await;
        }
    });
}
