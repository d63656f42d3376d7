//! What committing one turn costs, side by side: SQLite (a database file, WAL, full
//! synchronization: one fsync per commit), and PostgreSQL (the server `PTC_POSTGRES_URL` names,
//! with its durable defaults) both through `RunStore::append` (a run of one process) and
//! through `FleetStore::commit_turn` (a fleet's run, under its lease).
//!
//! Each sample appends its iterations' turns to a fresh run. The turn is a typical one: a
//! program of a few lines, two tool calls with their results, a print, and the map it
//! returned (about 1 KB of JSON).
//!
//! `cargo xtask postgres run -- cargo bench -p ptc-store --features postgres --bench commit`

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ptc_agent::store::{FleetStore, RunStore};
use ptc_lisp::{ToolCallRecord, ToolOutcome, Value};
use ptc_store::{PgStore, SqliteStore};
use ptc_turn::{Task, Turn};

const PROGRAM: &str = "(let [orders (tool/orders {:customer data/customer :since \"2024-01-01\"})
      open (filter #(= (:status %) \"open\") orders)
      total (reduce + (map :amount open))]
  (println \"open orders:\" (count open))
  (def summary {:count (count open) :total total :ids (mapv :id open)})
  (tool/notify {:customer data/customer :total total})
  summary)";

fn a_turn(number: u32) -> Turn {
    let orders: Vec<Value> = (1..=5)
        .map(|i| {
            Value::map([
                (Value::keyword("id"), Value::Int(i)),
                (Value::keyword("status"), Value::from("open")),
                (Value::keyword("amount"), Value::Int(10 * i)),
            ])
        })
        .collect();
    let call = |name: &str, result: Value| ToolCallRecord {
        name: name.to_string(),
        args: vec![Value::keyword("customer")],
        result: ToolOutcome::Ok(result),
        duration_us: 1200,
    };
    Turn::success(
        number,
        PROGRAM,
        Value::map([
            (Value::keyword("count"), Value::Int(5)),
            (Value::keyword("total"), Value::Int(150)),
        ]),
    )
    .with_prints(vec!["open orders: 5".to_string()])
    .with_tool_calls(vec![
        call("orders", Value::vector(orders)),
        call("notify", Value::Bool(true)),
    ])
}

static RUNS: AtomicUsize = AtomicUsize::new(0);

fn next_id() -> String {
    format!("bench-{}", RUNS.fetch_add(1, Ordering::Relaxed))
}

/// A fresh database on the cluster of `PTC_POSTGRES_URL`.
async fn bench_database() -> String {
    let cluster = std::env::var("PTC_POSTGRES_URL").expect(
        "PTC_POSTGRES_URL is not set: run this benchmark under `cargo xtask postgres run -- ...`",
    );
    let (client, connection) = tokio_postgres::connect(&cluster, tokio_postgres::NoTls)
        .await
        .expect("connect to the cluster");
    tokio::spawn(connection);
    client
        .batch_execute(
            "DROP DATABASE IF EXISTS ptc_bench_commit WITH (FORCE); \
             CREATE DATABASE ptc_bench_commit",
        )
        .await
        .expect("make the benchmark's database");
    let (base, _) = cluster.rsplit_once('/').expect("the URL names a database");
    format!("{base}/ptc_bench_commit")
}

fn commit(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let turns: Vec<Turn> = (1..=100_000).map(a_turn).collect();
    let task = Task::new("Sum the open orders of data/customer");
    let mut group = c.benchmark_group("commit_turn");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));

    let file = std::env::temp_dir().join(format!("ptc-bench-commit-{}.db", std::process::id()));
    let sqlite = SqliteStore::open(&file).expect("open SQLite");
    group.bench_function("sqlite_append", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let id = next_id();
                sqlite.start(&id, &task).await.unwrap();
                let started = Instant::now();
                for turn in &turns[..iters as usize] {
                    sqlite.append(&id, turn).await.unwrap();
                }
                started.elapsed()
            })
        })
    });

    let postgres = runtime.block_on(async {
        PgStore::connect(&bench_database().await)
            .await
            .expect("open PostgreSQL")
    });
    group.bench_function("postgres_append", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let id = next_id();
                postgres.start(&id, &task).await.unwrap();
                let started = Instant::now();
                for turn in &turns[..iters as usize] {
                    postgres.append(&id, turn).await.unwrap();
                }
                started.elapsed()
            })
        })
    });
    group.bench_function("postgres_commit_under_lease", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let id = next_id();
                postgres.submit(&id, &task).await.unwrap();
                let claimed = postgres
                    .claim("bench", Duration::from_secs(600), 1)
                    .await
                    .unwrap();
                let lease = &claimed[0].lease;
                let started = Instant::now();
                for turn in &turns[..iters as usize] {
                    postgres.commit_turn(lease, turn).await.unwrap();
                }
                started.elapsed()
            })
        })
    });
    group.finish();
    for suffix in ["", "-wal", "-shm"] {
        let mut path = file.clone().into_os_string();
        path.push(suffix);
        let _ = std::fs::remove_file(path);
    }
}

criterion_group!(benches, commit);
criterion_main!(benches);
