//! Throughput of separate `ptc worker` processes on one machine: 1, 2 and 4 processes work the
//! same 200 queued runs of two turns each, every model request answered after 100 ms by a
//! local model server (so the work is I/O-bound, as with a real model). Measured, not
//! asserted: it prints runs per second and the claim latency (from the reply that ended a
//! worker's run to the first model request of its next run: the end's commit, the claim and
//! the run's start) for each fleet size, side by side.
//!
//! `cargo xtask postgres run -- cargo test -p ptc-cli --test it fleet_throughput -- --ignored
//! --nocapture`

use crate::fleet_cli::fresh_database;
use crate::support::{answer, ptc, ptc_command_through, read_request};

use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) const RUNS: usize = 200;
const MODEL_TIME: Duration = Duration::from_millis(100);

#[derive(Clone, Copy, PartialEq)]
enum Event {
    /// A run's first model request arrived.
    Started,
    /// The reply that ends a run was sent.
    Ended,
}

/// A model server for one worker: each request is answered on a thread of its own after
/// [`MODEL_TIME`]; a run's first request gets a definition, its second the return.
struct SleepingModel {
    spec: String,
    events: Arc<Mutex<Vec<(Instant, Event)>>>,
}

impl SleepingModel {
    /// Listens on a free port of `address`.
    fn start(address: &str) -> SleepingModel {
        let listener = TcpListener::bind((address, 0))
            .unwrap_or_else(|e| panic!("cannot listen on {address}: {e}"));
        let spec = format!(
            "openai-compatible:http://{}/v1:test-model",
            listener.local_addr().expect("address")
        );
        let events: Arc<Mutex<Vec<(Instant, Event)>>> = Arc::default();
        let log = events.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let log = log.clone();
                std::thread::spawn(move || serve(stream, &log));
            }
        });
        SleepingModel { spec, events }
    }
}

fn serve(mut stream: TcpStream, log: &Mutex<Vec<(Instant, Event)>>) {
    let Some(body) = read_request(&mut stream) else {
        return;
    };
    let request: serde_json::Value = serde_json::from_slice(&body).expect("a JSON request");
    let answered = request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count();
    if answered == 0 {
        log.lock().unwrap().push((Instant::now(), Event::Started));
    }
    std::thread::sleep(MODEL_TIME);
    let reply = if answered == 0 {
        "```clojure\n(def a (* data/n data/n))\n```"
    } else {
        "```clojure\n(return (+ a 1))\n```"
    };
    answer(&mut stream, reply);
    if answered > 0 {
        log.lock().unwrap().push((Instant::now(), Event::Ended));
    }
}

/// Queues [`RUNS`] runs with `ptc submit`, four at a time.
fn submit_all(url: &str, data: &str) {
    let next = Arc::new(Mutex::new(0..RUNS));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (next, url, data) = (next.clone(), url.to_string(), data.to_string());
            std::thread::spawn(move || {
                let take = || next.lock().unwrap().next();
                while let Some(i) = take() {
                    let id = format!("r{i}");
                    let out = ptc(&[
                        "submit",
                        "--store",
                        &url,
                        "--id",
                        &id,
                        "--mission",
                        "Square n and add one",
                        "--data",
                        &data,
                    ]);
                    assert_eq!(out.status.code(), Some(0), "{out:?}");
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("submitter");
    }
}

pub(crate) struct Measured {
    pub(crate) workers: usize,
    pub(crate) wall: Duration,
    /// The claim latencies, shortest first.
    pub(crate) gaps: Vec<Duration>,
}

impl Measured {
    pub(crate) fn runs_per_second(&self) -> f64 {
        RUNS as f64 / self.wall.as_secs_f64()
    }

    /// The claim latency at quantile `q` (0.5 is the median).
    pub(crate) fn latency(&self, q: f64) -> Duration {
        self.gaps[((self.gaps.len() - 1) as f64 * q).round() as usize]
    }
}

/// Where a measurement's worker processes run.
pub(crate) enum Placement {
    /// All in this machine's network namespace, reaching the database and their model servers
    /// on 127.0.0.1.
    Plain,
    /// Worker `k` in the network namespace `namespaces[k].0`, reaching the database and its
    /// model server at this machine's address `namespaces[k].1` on the pair joining them.
    Namespaces(Vec<(String, String)>),
}

/// Works [`RUNS`] queued runs with `workers` worker processes placed as `placement` says, in
/// the database `database` (made afresh), and times them.
pub(crate) fn measure(
    workers: usize,
    placement: &Placement,
    database: &str,
    data: &str,
) -> Measured {
    let url = fresh_database(database);
    submit_all(&url, data);
    let place = |k: usize| -> (Vec<&str>, &str) {
        match placement {
            Placement::Plain => (Vec::new(), "127.0.0.1"),
            Placement::Namespaces(all) => {
                let (name, host) = all.get(k).unwrap_or_else(|| {
                    panic!(
                        "{workers} workers need {workers} namespaces, there are {}",
                        all.len()
                    )
                });
                (vec!["ip", "netns", "exec", name], host)
            }
        }
    };
    let models: Vec<SleepingModel> = (0..workers)
        .map(|k| SleepingModel::start(place(k).1))
        .collect();
    let started = Instant::now();
    let children: Vec<_> = models
        .iter()
        .enumerate()
        .map(|(k, model)| {
            let (launcher, host) = place(k);
            let store = url.replacen("@127.0.0.1:", &format!("@{host}:"), 1);
            ptc_command_through(
                &launcher,
                &[
                    "worker",
                    "--store",
                    &store,
                    "--until-idle",
                    "--name",
                    &format!("w{k}"),
                    "--poll",
                    "0.25",
                    "--llm",
                    &model.spec,
                ],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start a worker")
        })
        .collect();
    let mut lines = Vec::new();
    for child in children {
        let out = child.wait_with_output().expect("a worker");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        lines.extend(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_string),
        );
    }
    let wall = started.elapsed();
    lines.sort();
    let mut expected: Vec<String> = (0..RUNS)
        .map(|i| format!("r{i}: ended: returned 37"))
        .collect();
    expected.sort();
    assert_eq!(lines, expected);
    let mut gaps = Vec::new();
    for model in &models {
        let mut events = model.events.lock().unwrap().clone();
        events.sort_by_key(|(at, _)| *at);
        let mut ended: Option<Instant> = None;
        for (at, event) in events {
            match event {
                Event::Ended => ended = Some(at),
                Event::Started => {
                    if let Some(end) = ended.take() {
                        gaps.push(at - end);
                    }
                }
            }
        }
    }
    gaps.sort();
    Measured {
        workers,
        wall,
        gaps,
    }
}

pub(crate) fn millis(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[test]
#[ignore = "a measurement (about 90 s): run it on its own with --ignored --nocapture"]
fn fleet_throughput_of_worker_processes() {
    let dir = crate::support::Scratch::new("fleet-throughput");
    let data = dir.file("data.json", r#"{"n": 6}"#);
    let data = crate::support::utf8(&data).to_string();
    let measured: Vec<Measured> = [1, 2, 4]
        .into_iter()
        .map(|n| {
            let database = format!("ptc_cli_throughput_{n}");
            measure(n, &Placement::Plain, &database, &data)
        })
        .collect();
    let one = measured[0].runs_per_second();
    println!(
        "| worker processes | runs | wall time | runs per second | vs 1 | claim latency p50 | p95 | max |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for m in &measured {
        let rate = m.runs_per_second();
        let at = |q: f64| m.latency(q);
        println!(
            "| {} | {RUNS} | {:.2} s | {rate:.1} | {:.2}× | {} | {} | {} |",
            m.workers,
            m.wall.as_secs_f64(),
            rate / one,
            millis(at(0.5)),
            millis(at(0.95)),
            millis(*m.gaps.last().expect("gaps")),
        );
    }
}
