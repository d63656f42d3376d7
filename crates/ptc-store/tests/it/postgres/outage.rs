//! Workers riding out an outage of the database: a cluster of the test's own (the shared test
//! cluster cannot be stopped under the other tests) is stopped with `pg_ctl stop -m immediate`
//! while two workers are in the middle of their runs, and started again ten seconds later. Both
//! workers are still running, every run ends with its value, no turn is committed twice, and
//! work resumes soon after the database is back. A worker whose store stays away longer than its
//! outage limit gives up with its own error.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ptc_agent::store::{FleetStore, RunState, RunStore, StoreError};
use ptc_agent::{Agent, LlmResponse, RunOptions, ToolError, Worked, Worker, async_tool, llm_fn};
use ptc_lisp::Value;
use ptc_store::PgStore;
use ptc_turn::Task;

const RUNS: i64 = 40;
const LEASE: Duration = Duration::from_secs(2);
const OUTAGE: Duration = Duration::from_secs(10);
const MISSION: &str = "Work on n in three steps";
/// The model's reply to each turn's request.
const PROGRAMS: [&str; 3] = [
    "(def a (tool/work {:n data/n :step 1}))",
    "(def b (tool/work {:n data/n :step 2}))",
    "(return [a b])",
];

/// A PostgreSQL cluster of this test's own, made with the server's `initdb` and `pg_ctl` (found
/// as `cargo xtask postgres` finds them), run by the `postgres` system user when the test runs
/// as root, on a free port of 127.0.0.1. Stopped and removed when dropped.
pub(super) struct OwnCluster {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl OwnCluster {
    pub(super) fn start(name: &str) -> OwnCluster {
        let bin = server_programs();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
        if dir.join("data/postmaster.pid").exists() {
            let _ = Command::new(bin.join("pg_ctl"))
                .arg("stop")
                .args(["-D", &dir.join("data").to_string_lossy(), "-m", "immediate"])
                .status();
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the cluster's directory");
        let as_postgres = run_ok(Command::new("id").arg("-u")).trim() == "0";
        if as_postgres {
            run_ok(Command::new("chown").arg("postgres:").arg(&dir));
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let cluster = OwnCluster {
            bin,
            dir,
            port,
            as_postgres,
        };
        run_ok(
            cluster
                .program("initdb")
                .arg("--pgdata")
                .arg(cluster.data())
                .args(["--username", "postgres", "--auth=trust", "--encoding=UTF8"])
                .arg("--no-sync"),
        );
        cluster.start_server();
        cluster
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    pub(super) fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn program(&self, name: &str) -> Command {
        let path = self.bin.join(name);
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        };
        command.current_dir(&self.dir).env("LC_ALL", "C");
        command
    }

    pub(super) fn start_server(&self) {
        run_ok(
            self.program("pg_ctl")
                .arg("start")
                .arg("-D")
                .arg(self.data())
                .arg("-l")
                .arg(self.dir.join("server.log"))
                .args(["-w", "-t", "60", "-o"])
                .arg(format!(
                    "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''",
                    self.port
                )),
        );
    }

    /// Stops the server at once, as a crash would: connections are cut, nothing is flushed.
    pub(super) fn stop_immediately(&self) {
        run_ok(
            self.program("pg_ctl")
                .arg("stop")
                .arg("-D")
                .arg(self.data())
                .args(["-m", "immediate", "-w"]),
        );
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        if self.data().join("postmaster.pid").exists() {
            let _ = self
                .program("pg_ctl")
                .arg("stop")
                .arg("-D")
                .arg(self.data())
                .args(["-m", "immediate", "-w"])
                .output();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The directory of `initdb` and `pg_ctl`: `PTC_POSTGRES_BIN`, else the newest
/// `/usr/lib/postgresql/VERSION/bin`, as `cargo xtask postgres` looks for them.
fn server_programs() -> PathBuf {
    if let Some(dir) = std::env::var_os("PTC_POSTGRES_BIN") {
        return PathBuf::from(dir);
    }
    std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("pg_ctl").is_file().then_some((version, bin))
        })
        .max_by_key(|(version, _)| *version)
        .map(|(_, bin)| bin)
        .unwrap_or_else(|| {
            panic!(
                "no PostgreSQL server programs: `cargo xtask postgres` installs them; or set \
                 PTC_POSTGRES_BIN"
            )
        })
}

fn run_ok(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[derive(serde::Deserialize)]
struct Work {
    n: i64,
    step: i64,
}

/// The agent of run `n`: a model that answers each turn's program after 150 ms, and a tool
/// that takes 100 ms.
fn agent_for(n: i64) -> Agent {
    let work = async_tool("work", "Works on a step", |args: Work| async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok::<_, ToolError>(args.n * 10 + args.step)
    });
    let model = llm_fn("outage:turns", |request| async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
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

fn agents(task: &Task) -> Result<Agent, String> {
    match task.data.get("n") {
        Some(Value::Int(n)) => Ok(agent_for(*n)),
        _ => Err("a run without n".into()),
    }
}

fn worker(name: &str, store: PgStore) -> Worker {
    Worker::new(name, Arc::new(store) as Arc<dyn FleetStore>, agents)
        .concurrency(4)
        .lease(LEASE)
        .poll(Duration::from_millis(50))
        .outage_limit(Duration::from_secs(60))
}

/// How many turns are committed and how many runs ended, or `None` while the database is away.
async fn progress(url: &str) -> Option<(i64, i64)> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .ok()?;
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT (SELECT count(*) FROM ptc_turns), \
             (SELECT count(*) FROM ptc_runs WHERE outcome IS NOT NULL)",
            &[],
        )
        .await
        .ok()?;
    Some((row.get(0), row.get(1)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_ride_out_a_database_outage_and_finish_every_run_once() {
    let cluster = OwnCluster::start("ptc-outage-cluster");
    let url = cluster.url();
    let submitter = PgStore::connect(&url).await.expect("the store");
    for n in 0..RUNS {
        agent_for(n)
            .submit(&submitter, &format!("n-{n:02}"), RunOptions::new())
            .await
            .expect("submitted");
    }
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut workers = Vec::new();
    for name in ["a", "b"] {
        let worker = worker(name, PgStore::connect(&url).await.expect("the store"));
        let mut stopping = stopping.clone();
        workers.push(tokio::spawn(async move {
            worker
                .run(async move {
                    let _ = stopping.wait_for(|stop| *stop).await;
                })
                .await
        }));
    }
    // Mid-run: some runs ended, others in flight.
    let (turns_before, ended_before) = loop {
        let (turns, ended) = progress(&url).await.expect("the database answers");
        if ended >= 8 {
            break (turns, ended);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(ended_before < RUNS, "every run ended before the outage");
    cluster.stop_immediately();
    let stopped = Instant::now();
    tokio::time::sleep(OUTAGE).await;
    for worker in &workers {
        assert!(!worker.is_finished(), "a worker exited during the outage");
    }
    let outage = stopped.elapsed();
    cluster.start_server();
    let restarted = Instant::now();
    let (turns_at_restart, _) = progress(&url).await.expect("the database is back");
    // Work resumes: the first turn committed after the database came back.
    let resumed = loop {
        let (turns, _) = progress(&url).await.expect("the database answers");
        if turns > turns_at_restart {
            break restarted.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let finished = loop {
        let (_, ended) = progress(&url).await.expect("the database answers");
        if ended == RUNS {
            break restarted.elapsed();
        }
        assert!(
            restarted.elapsed() < Duration::from_secs(120),
            "the runs did not finish"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    for worker in &workers {
        assert!(!worker.is_finished(), "a worker exited after the outage");
    }
    stop.send_replace(true);
    let mut worked: BTreeMap<String, Vec<Worked>> = BTreeMap::new();
    for worker in workers {
        let report = worker
            .await
            .expect("the worker's task")
            .expect("the worker");
        for (id, what) in report.runs {
            worked.entry(id).or_default().push(what);
        }
    }
    eprintln!(
        "outage of {:.1} s with {ended_before} of {RUNS} runs ended and {turns_before} turns \
         committed; work resumed {:.2} s after the database was back, every run ended {:.2} s \
         after",
        outage.as_secs_f64(),
        resumed.as_secs_f64(),
        finished.as_secs_f64()
    );
    assert!(
        resumed <= Duration::from_secs(3),
        "work resumed {resumed:?} after the database was back"
    );

    // Every run ended with its value, after turns 1, 2 and 3, each committed once.
    let admin = super::admin(&url).await;
    let rows = admin
        .query(
            "SELECT run_id, array_agg(number ORDER BY number) FROM ptc_turns GROUP BY run_id \
             ORDER BY run_id",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), RUNS as usize);
    for row in rows {
        let numbers: Vec<i32> = row.get(1);
        assert_eq!(numbers, vec![1, 2, 3], "{}", row.get::<_, String>(0));
    }
    let mut lost = 0;
    for n in 0..RUNS {
        let id = format!("n-{n:02}");
        let step = submitter
            .load(&id)
            .await
            .unwrap()
            .and_then(|c| c.step())
            .expect("ended");
        assert_eq!(
            step.value(),
            Some(&Value::Vector(
                vec![Value::Int(n * 10 + 1), Value::Int(n * 10 + 2)].into()
            )),
            "{id}"
        );
        let programs: Vec<_> = step.turns.iter().map(|t| t.program().to_string()).collect();
        assert_eq!(programs, PROGRAMS, "{id}");
        let status = submitter.status(&id).await.unwrap().expect("a run");
        assert_eq!(status.state, RunState::Ended(step.outcome.clone()), "{id}");
        // The run ended under one worker's last claim; a run in flight at the outage lost its
        // lease and was claimed again.
        let whats = &worked[&id];
        assert!(
            whats.contains(&Worked::Ended(step.outcome.clone())),
            "{id}: {whats:?}"
        );
        if status.claims > 1 {
            lost += 1;
        }
    }
    assert!(lost > 0, "no run was in flight at the outage");
    eprintln!("{lost} runs were in flight at the outage and were claimed again");

    // A worker whose store stays away longer than its limit gives up, with its own error.
    cluster.stop_immediately();
    let gives_up = worker("c", submitter.clone()).outage_limit(Duration::from_secs(1));
    let started = Instant::now();
    let given_up = gives_up.run(std::future::pending()).await;
    let waited = started.elapsed();
    assert_eq!(
        given_up,
        Err(StoreError::Unavailable(
            "the store could not be reached for longer than the outage limit of 1 s; the last \
             error: cannot get a connection to PostgreSQL: error connecting to server: \
             Connection refused (os error 111)"
                .into()
        ))
    );
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(4),
        "gave up after {waited:?}"
    );
}
