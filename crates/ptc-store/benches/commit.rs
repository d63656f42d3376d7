//! What committing one turn costs, side by side: SQLite (a database file, WAL, full
//! synchronization: one fsync per commit), and PostgreSQL (the server `PTC_POSTGRES_URL` names,
//! with its durable defaults) through `RunStore::append`, both for a run of one process
//! (without a lease) and for a fleet's run (under its lease).
//!
//! A measured loop, not a criterion benchmark: each store commits the turns of ten runs of
//! `PTC_COMMIT_TURNS` turns (200 unless set), one commit at a time, and the median, 95th
//! percentile and mean time of one commit are printed. The turn is a typical one: a program of
//! a few lines, two tool calls with their results, a print, and the map it returned (about
//! 1 KB of JSON).
//!
//! `cargo xtask postgres run -- cargo bench -p ptc-store --features postgres --bench commit`

use std::time::{Duration, Instant};

use ptc_agent::store::{FleetStore, Lease, RunStore};
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

/// A fresh database on the cluster of `PTC_POSTGRES_URL`.
async fn bench_database() -> String {
    let cluster = std::env::var("PTC_POSTGRES_URL").expect(
        "PTC_POSTGRES_URL is not set: run this benchmark under `cargo xtask postgres run -- ...`",
    );
    let (client, connection) = tokio_postgres::connect(&cluster, tokio_postgres::NoTls)
        .await
        .expect("connect to the cluster");
    tokio::spawn(connection);
    // One statement a query: neither may run in the transaction block several make.
    for statement in [
        "DROP DATABASE IF EXISTS ptc_bench_commit WITH (FORCE)",
        "CREATE DATABASE ptc_bench_commit",
    ] {
        client
            .batch_execute(statement)
            .await
            .expect("make the benchmark's database");
    }
    let (base, _) = cluster.rsplit_once('/').expect("the URL names a database");
    format!("{base}/ptc_bench_commit")
}

/// How a store commits: the run is made (started, or submitted and claimed) by `open`, then
/// each turn goes through `commit`.
#[async_trait::async_trait]
trait Committer {
    async fn open(&self, id: &str, task: &Task) -> Option<Lease>;
    async fn commit(&self, id: &str, lease: Option<&Lease>, turn: &Turn);
}

#[async_trait::async_trait]
impl<S: RunStore> Committer for Local<S> {
    async fn open(&self, id: &str, task: &Task) -> Option<Lease> {
        self.0.start(id, task).await.unwrap();
        None
    }

    async fn commit(&self, id: &str, _: Option<&Lease>, turn: &Turn) {
        self.0.append(None, id, turn).await.unwrap();
    }
}

#[async_trait::async_trait]
impl Committer for Leased {
    async fn open(&self, id: &str, task: &Task) -> Option<Lease> {
        self.0.submit(id, task).await.unwrap();
        let claimed = self
            .0
            .claim("bench", "", Duration::from_secs(600), 1)
            .await
            .unwrap();
        Some(claimed[0].lease.clone())
    }

    async fn commit(&self, id: &str, lease: Option<&Lease>, turn: &Turn) {
        self.0.append(lease, id, turn).await.unwrap();
    }
}

/// Runs of one process, written without a lease.
struct Local<S>(S);
/// A fleet's runs, written under their leases.
struct Leased(PgStore);

async fn measure(name: &str, store: &dyn Committer, turns: &[Turn], task: &Task) {
    let mut times = Vec::new();
    for run in 0..10 {
        let id = format!("{name}-{run}");
        let lease = store.open(&id, task).await;
        for turn in turns {
            let started = Instant::now();
            store.commit(&id, lease.as_ref(), turn).await;
            times.push(started.elapsed());
        }
    }
    times.sort_unstable();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{name:<30} {:>5} commits  median {:>8.0} µs  p95 {:>8.0} µs  mean {:>8.0} µs",
        times.len(),
        micros(times[times.len() / 2]),
        micros(times[times.len() * 95 / 100]),
        micros(mean)
    );
}

fn main() {
    // Cargo passes `--bench`; a bare word is a name filter, and this file has one group.
    if std::env::args()
        .skip(1)
        .any(|a| !a.starts_with('-') && !"commit".contains(&a))
    {
        return;
    }
    let count: u32 = std::env::var("PTC_COMMIT_TURNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let turns: Vec<Turn> = (1..=count).map(a_turn).collect();
    let task = Task::new("Sum the open orders of data/customer");
    println!(
        "commit: one turn of {} bytes of JSON, committed one at a time",
        serde_json::to_string(&turns[0]).map_or(0, |t| t.len())
    );
    let file = std::env::temp_dir().join(format!("ptc-bench-commit-{}.db", std::process::id()));
    runtime.block_on(async {
        let sqlite = Local(SqliteStore::open(&file).expect("open SQLite"));
        measure("sqlite append", &sqlite, &turns, &task).await;
        let url = bench_database().await;
        let postgres = PgStore::connect(&url).await.expect("open PostgreSQL");
        measure("postgres append", &Local(postgres.clone()), &turns, &task).await;
        measure("postgres append (lease)", &Leased(postgres), &turns, &task).await;
    });
    for suffix in ["", "-wal", "-shm"] {
        let mut path = file.clone().into_os_string();
        path.push(suffix);
        let _ = std::fs::remove_file(path);
    }
}
