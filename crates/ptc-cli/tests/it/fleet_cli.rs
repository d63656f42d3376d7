//! `ptc submit`, `ptc worker` and `ptc status` against a real PostgreSQL server (the cluster
//! `PTC_POSTGRES_URL` names; `cargo xtask postgres run -- ...` and `cargo xtask ci` set it).

use crate::support;

use pretty_assertions::assert_eq;
use support::{ModelServer, Scratch, ptc, utf8};

/// The test cluster's URL.
fn cluster_url() -> String {
    std::env::var("PTC_POSTGRES_URL").unwrap_or_else(|_| {
        panic!(
            "PTC_POSTGRES_URL is not set: these tests need a PostgreSQL server; run them with \
             `cargo xtask postgres run -- cargo test -p ptc-cli`"
        )
    })
}

/// The URL of database `name` on the test cluster, which need not exist.
fn database_url(name: &str) -> String {
    let cluster = cluster_url();
    let (base, _) = cluster.rsplit_once('/').expect("the URL names a database");
    format!("{base}/{name}")
}

/// A fresh database named `name` on the test cluster, and its URL.
pub(crate) fn fresh_database(name: &str) -> String {
    let cluster = cluster_url();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
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
                .unwrap_or_else(|e| panic!("cannot make the database {name}: {e:?}"));
        }
    });
    database_url(name)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_submitted_run_is_worked_by_a_worker_and_its_status_follows() {
    let url = fresh_database("ptc_cli_fleet");
    let dir = Scratch::new("fleet");
    let data = dir.file("data.json", r#"{"n": 6}"#);
    let mission = "Square n and add one";

    let submitted = ptc(&[
        "submit",
        "--store",
        &url,
        "--id",
        "r1",
        "--mission",
        mission,
        "--data",
        utf8(&data),
    ]);
    assert_eq!(text(&submitted.stderr), "");
    assert_eq!(text(&submitted.stdout), "submitted run `r1`\n");
    assert_eq!(submitted.status.code(), Some(0));
    let again = ptc(&[
        "submit",
        "--store",
        &url,
        "--id",
        "r1",
        "--mission",
        mission,
        "--data",
        utf8(&data),
    ]);
    assert_eq!(
        text(&again.stderr),
        "error: the run store: the store already has a run `r1`; resume it, or start the new \
         run under another id\n"
    );
    assert_eq!(again.status.code(), Some(2));

    let status = ptc(&["status", "--store", &url, "r1"]);
    assert_eq!(text(&status.stdout), "r1: queued; 0 turns, 0 claims\n");

    let server = ModelServer::start(
        vec![
            "```clojure\n(def a (* data/n data/n))\n```".into(),
            "```clojure\n(return (+ a 1))\n```".into(),
        ],
        usize::MAX,
    );
    let worked = ptc(&[
        "worker",
        "--store",
        &url,
        "--until-idle",
        "--name",
        "w1",
        "--poll",
        "0.25",
        "--llm",
        &server.spec(),
    ]);
    assert_eq!(text(&worked.stdout), "r1: ended: returned 37\n");
    assert_eq!(text(&worked.stderr), "w1: working up to 1 run at once\n");
    assert_eq!(worked.status.code(), Some(0));

    let status = ptc(&["status", "--store", &url, "r1", "nope"]);
    assert_eq!(
        text(&status.stdout),
        "r1: ended: returned 37; 2 turns, 1 claim\nnope: no such run\n"
    );
    assert_eq!(status.status.code(), Some(2));
}

#[test]
fn a_store_that_cannot_be_opened_is_reported_in_the_servers_own_words() {
    let url = database_url("ptc_cli_no_such_database");
    let expected = "error: cannot open the store: cannot get a connection to PostgreSQL: \
                    database \"ptc_cli_no_such_database\" does not exist (3D000)\n";
    let submitted = ptc(&["submit", "--store", &url, "--id", "r1", "--mission", "m"]);
    assert_eq!(text(&submitted.stderr), expected);
    assert_eq!(submitted.status.code(), Some(2));
    let server = ModelServer::silent();
    let worked = ptc(&[
        "worker",
        "--store",
        &url,
        "--until-idle",
        "--llm",
        &server.spec(),
    ]);
    assert_eq!(text(&worked.stderr), expected);
    assert_eq!(worked.status.code(), Some(2));
    let status = ptc(&["status", "--store", &url, "r1"]);
    assert_eq!(text(&status.stderr), expected);
    assert_eq!(status.status.code(), Some(2));
}

#[test]
fn a_run_a_worker_refuses_is_parked_with_its_reason_until_it_is_requeued() {
    let url = fresh_database("ptc_cli_refused");
    let submitted = ptc(&[
        "submit",
        "--store",
        &url,
        "--id",
        "misfit",
        "--mission",
        "Return 3",
        "--max-turns",
        "7",
    ]);
    assert_eq!(text(&submitted.stderr), "");
    let server = ModelServer::start(vec!["```clojure\n(return 3)\n```".into()], usize::MAX);
    let reason = "cannot resume run `misfit`: it was started with a budget of 7 turns, this \
                  agent has 5";
    // A worker of five turns refuses it once; the next one of the same settings passes it over.
    for (name, stdout, log) in [
        (
            "w1",
            format!("misfit: refused: {reason}\n"),
            format!(
                " WARN run `misfit` refused: {reason}; it waits for a worker whose settings \
                 fit, or to be requeued\n"
            ),
        ),
        ("w2", String::new(), String::new()),
    ] {
        let worked = ptc(&[
            "worker",
            "--store",
            &url,
            "--until-idle",
            "--name",
            name,
            "--llm",
            &server.spec(),
        ]);
        assert_eq!(text(&worked.stdout), stdout, "{name}");
        assert_eq!(
            text(&worked.stderr),
            format!("{name}: working up to 1 run at once\n{log}"),
            "{name}"
        );
        assert_eq!(worked.status.code(), Some(0), "{name}");
    }
    let status = ptc(&["status", "--store", &url, "misfit"]);
    assert_eq!(
        text(&status.stdout),
        format!("misfit: refused by w1: {reason}; 0 turns, 1 claim\n")
    );
    let status = ptc(&["status", "--store", &url, "--json", "misfit", "nope"]);
    assert_eq!(
        text(&status.stdout),
        format!(
            "{{\"claims\":1,\"command\":\"status\",\"id\":\"misfit\",\"reason\":\"{reason}\",\
             \"schema\":1,\"state\":\"refused\",\"turns\":0,\"worker\":\"w1\"}}\n\
             {{\"command\":\"status\",\"id\":\"nope\",\"schema\":1,\"state\":\"missing\"}}\n"
        )
    );
    assert_eq!(status.status.code(), Some(2));

    let requeued = ptc(&["requeue", "--store", &url, "misfit"]);
    assert_eq!(text(&requeued.stdout), "requeued run `misfit`\n");
    assert_eq!(requeued.status.code(), Some(0));
    let status = ptc(&["status", "--store", &url, "misfit"]);
    assert_eq!(text(&status.stdout), "misfit: queued; 0 turns, 1 claim\n");
    let worked = ptc(&[
        "worker",
        "--store",
        &url,
        "--until-idle",
        "--name",
        "w3",
        "--max-turns",
        "7",
        "--llm",
        &server.spec(),
    ]);
    assert_eq!(text(&worked.stdout), "misfit: ended: returned 3\n");
    let status = ptc(&["status", "--store", &url, "--json", "misfit"]);
    assert_eq!(
        text(&status.stdout),
        "{\"claims\":2,\"command\":\"status\",\"error\":null,\"id\":\"misfit\",\"ok\":true,\
         \"schema\":1,\"state\":\"ended\",\"turns\":1,\"value\":3,\"value_clojure\":\"3\"}\n"
    );
    let requeued = ptc(&["requeue", "--store", &url, "nope"]);
    assert_eq!(
        text(&requeued.stderr),
        "error: the store has no run `nope`; it must be started first\n"
    );
    assert_eq!(requeued.status.code(), Some(2));
}

#[cfg(target_os = "linux")]
#[test]
fn an_until_idle_worker_hands_its_leases_back_on_signals_and_a_transcript_resumes_at_its_turn() {
    let dir = Scratch::new("fleet-signals");
    let url = fresh_database("ptc_cli_until_idle_signal");
    let submitted = ptc(&[
        "submit",
        "--store",
        &url,
        "--id",
        "r1",
        "--mission",
        "Square 6 and add one",
    ]);
    assert_eq!(text(&submitted.stderr), "");
    // The first reply, then every request waits for ever.
    let server = ModelServer::start(vec!["```clojure\n(def a (* 6 6))\n```".into()], 1);
    for (claims, signal, name) in [(1, libc::SIGTERM, "w1"), (2, libc::SIGINT, "w2")] {
        let child = support::ptc_command(&[
            "worker",
            "--store",
            &url,
            "--until-idle",
            "--name",
            name,
            "--lease",
            "600",
            "--llm",
            &server.spec(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start ptc worker");
        // The worker waits on the model for turn 2.
        server
            .hanging
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("a request for turn 2");
        let pid = libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
        // SAFETY: `pid` is our own child, not reaped yet.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let worked = child.wait_with_output().expect("ptc worker ends");
        assert_eq!(text(&worked.stdout), "r1: handed back\n", "{name}");
        assert_eq!(
            text(&worked.stderr),
            format!(
                "{name}: working up to 1 run at once\nshutting down: handing the leases held \
                 back\n"
            ),
            "{name}"
        );
        assert_eq!(worked.status.code(), Some(0), "{name}");
        // Handed back: queued at once, though the lease had ten minutes to go.
        let status = ptc(&["status", "--store", &url, "r1"]);
        assert_eq!(
            text(&status.stdout),
            format!(
                "r1: queued; 1 turn, {claims} claim{}\n",
                if claims == 1 { "" } else { "s" }
            ),
            "{name}"
        );
    }
    // The transcript of the whole run, replayed offline: the run resumes at its turn 2, so the
    // worker plays the transcript from its second reply.
    let transcript = dir.file(
        "run.jsonl",
        "{\"content\": \"```clojure\\n(def a (* 6 6))\\n```\"}\n\
         {\"content\": \"```clojure\\n(return (+ a 1))\\n```\"}\n",
    );
    let worked = ptc(&[
        "worker",
        "--store",
        &url,
        "--until-idle",
        "--name",
        "w3",
        "--llm",
        &format!("replay:{}", utf8(&transcript)),
    ]);
    assert_eq!(text(&worked.stdout), "r1: ended: returned 37\n");
    assert_eq!(worked.status.code(), Some(0));
    let status = ptc(&["status", "--store", &url, "r1"]);
    assert_eq!(
        text(&status.stdout),
        "r1: ended: returned 37; 2 turns, 3 claims\n"
    );
}

#[test]
fn a_worker_looks_for_runs_every_positive_number_of_seconds() {
    for poll in ["0", "inf", "soon"] {
        let worked = ptc(&["worker", "--store", "x", "--poll", poll, "--llm", "y"]);
        assert_eq!(
            text(&worked.stderr),
            format!(
                "error: invalid value '{poll}' for '--poll <SECONDS>': `{poll}` is not a number \
                 of seconds above 0 (at most a day)\n\nFor more information, try '--help'.\n"
            )
        );
        assert_eq!(worked.status.code(), Some(2));
    }
}

/// A TCP proxy to the test cluster, on a port of its own: cut, it closes every connection and
/// refuses new ones, as a database gone from the network does, while the cluster itself (which
/// the other tests share) stays up.
struct Proxy {
    port: u16,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Proxy {
    fn to(url: &str) -> Proxy {
        use std::net::{TcpListener, TcpStream};
        use std::sync::atomic::Ordering;
        let target = url
            .rsplit_once('@')
            .and_then(|(_, rest)| rest.split_once('/'))
            .map(|(address, _)| address.to_string())
            .expect("host:port in the URL");
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port for the proxy");
        listener.set_nonblocking(true).expect("non-blocking");
        let port = listener.local_addr().expect("its address").port();
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cutting = cut.clone();
        std::thread::spawn(move || {
            let mut open: Vec<TcpStream> = Vec::new();
            while !cutting.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).expect("blocking");
                        let server = TcpStream::connect(&target).expect("the cluster");
                        for (mut from, mut to) in [
                            (client.try_clone().unwrap(), server.try_clone().unwrap()),
                            (server.try_clone().unwrap(), client.try_clone().unwrap()),
                        ] {
                            std::thread::spawn(move || {
                                let _ = std::io::copy(&mut from, &mut to);
                                let _ = to.shutdown(std::net::Shutdown::Both);
                            });
                        }
                        open.push(client);
                        open.push(server);
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
                }
            }
            // The listener is dropped here: new connections are refused.
            for stream in open {
                let _ = stream.shutdown(std::net::Shutdown::Both);
            }
        });
        Proxy { port, cut }
    }

    fn url(&self, url: &str) -> String {
        let (user, rest) = url.rsplit_once('@').expect("user@host");
        let (_, database) = rest.split_once('/').expect("/database");
        format!("{user}@127.0.0.1:{}/{database}", self.port)
    }

    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn a_worker_whose_store_stays_away_longer_than_its_limit_gives_up_with_its_own_status() {
    let url = fresh_database("ptc_cli_outage");
    let proxy = Proxy::to(&url);
    let server = ModelServer::silent();
    let child = support::ptc_command(&[
        "worker",
        "--store",
        &proxy.url(&url),
        "--name",
        "w1",
        "--poll",
        "3",
        "--outage-limit",
        "1",
        "--llm",
        &server.spec(),
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("start ptc worker");
    // The worker found nothing and waits for its next look; the database goes away meanwhile.
    std::thread::sleep(std::time::Duration::from_millis(1000));
    proxy.cut();
    let started = std::time::Instant::now();
    let worked = child.wait_with_output().expect("ptc worker ends");
    let refused = "cannot get a connection to PostgreSQL: error connecting to server: Connection \
                   refused (os error 111)";
    assert_eq!(text(&worked.stdout), "");
    assert_eq!(
        text(&worked.stderr),
        format!(
            "w1: working up to 1 run at once\n WARN the store cannot be reached ({refused}); \
             trying again for up to 1 s\nerror: w1 gives up: the store could not be reached for \
             longer than the outage limit of 1 s; the last error: {refused}\n"
        )
    );
    assert_eq!(worked.status.code(), Some(4));
    // It gave up at its next look after the cut (within 3 s), plus the limit.
    let waited = started.elapsed();
    assert!(waited < std::time::Duration::from_secs(8), "{waited:?}");
}

#[test]
fn a_worker_serves_every_run_with_the_tools_of_the_mcp_servers_it_started() {
    let url = fresh_database("ptc_cli_mcp");
    let everything = format!(
        "{} stdio",
        ptc_mcp_testkit::server_command(ptc_mcp_testkit::EVERYTHING)
            .unwrap_or_else(|e| panic!("{e}"))
            .display()
    );
    for id in ["hi", "ho"] {
        let submitted = ptc(&[
            "submit",
            "--store",
            &url,
            "--id",
            id,
            "--mission",
            &format!("Echo {id}"),
            "--mcp",
            &everything,
        ]);
        assert_eq!(text(&submitted.stderr), "", "{id}");
        assert_eq!(submitted.status.code(), Some(0), "{id}");
    }
    let server = ModelServer::start(
        vec![
            "```clojure\n(return (tool/echo \"hi\"))\n```".into(),
            "```clojure\n(return (tool/echo \"ho\"))\n```".into(),
        ],
        usize::MAX,
    );
    let worked = ptc(&[
        "worker",
        "--store",
        &url,
        "--until-idle",
        "--name",
        "w1",
        "--mcp",
        &everything,
        "--llm",
        &server.spec(),
    ]);
    assert_eq!(
        text(&worked.stdout),
        "hi: ended: returned \"Echo: hi\"\nho: ended: returned \"Echo: ho\"\n"
    );
    assert_eq!(text(&worked.stderr), "w1: working up to 1 run at once\n");
    assert_eq!(worked.status.code(), Some(0));
    // Without the server, the worker's tools are not the runs': it refuses them.
    let url = fresh_database("ptc_cli_mcp_missing");
    let submitted = ptc(&[
        "submit",
        "--store",
        &url,
        "--id",
        "hi",
        "--mission",
        "Echo hi",
        "--mcp",
        &everything,
    ]);
    assert_eq!(submitted.status.code(), Some(0));
    let worked = ptc(&[
        "worker",
        "--store",
        &url,
        "--until-idle",
        "--name",
        "w2",
        "--llm",
        &server.spec(),
    ]);
    assert_eq!(
        text(&worked.stdout),
        "hi: refused: cannot resume run `hi`: it was started with the tools [tool/echo, \
         tool/get-annotated-message, tool/get-env, tool/get-resource-links, \
         tool/get-resource-reference, tool/get-structured-content, tool/get-sum, \
         tool/get-tiny-image, tool/gzip-file-as-resource, tool/toggle-simulated-logging, \
         tool/toggle-subscriber-updates, tool/trigger-long-running-operation, \
         tool/simulate-research-query], this agent has []; resume it with the tools it was \
         started with\n"
    );
}

#[test]
fn a_workers_mcp_server_killed_mid_call_is_started_again_for_the_runs_next_call() {
    let url = fresh_database("ptc_cli_mcp_restart");
    let everything = format!(
        "{} stdio",
        ptc_mcp_testkit::server_command(ptc_mcp_testkit::EVERYTHING)
            .unwrap_or_else(|e| panic!("{e}"))
            .display()
    );
    let submitted = ptc(&[
        "submit",
        "--store",
        &url,
        "--id",
        "slow",
        "--mission",
        "Wait, then echo",
        "--mcp",
        &everything,
    ]);
    assert_eq!(submitted.status.code(), Some(0));
    let server = ModelServer::start(
        vec![
            "```clojure\n(tool/trigger-long-running-operation {:duration 20 :steps 2})\n```".into(),
            "```clojure\n(return (tool/echo \"after\"))\n```".into(),
        ],
        usize::MAX,
    );
    let worker = support::ptc_command(&[
        "worker",
        "--store",
        &url,
        "--until-idle",
        "--name",
        "w1",
        "--mcp",
        &everything,
        "--llm",
        &server.spec(),
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("start the worker");
    // The worker's one child is the MCP server; it is killed once the long call is under way.
    let children = |pid: u32| -> Vec<String> {
        let out = std::process::Command::new("pgrep")
            .args(["-P", &pid.to_string()])
            .output()
            .expect("pgrep");
        text(&out.stdout).lines().map(str::to_string).collect()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let first = loop {
        if let [child] = children(worker.id()).as_slice() {
            break child.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no MCP server started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::thread::sleep(std::time::Duration::from_secs(3));
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &first])
        .status()
        .expect("kill");
    assert!(killed.success());
    let killed_at = std::time::Instant::now();
    let worked = worker.wait_with_output().expect("the worker");
    // The 20 s operation was cut short: the call was in flight when its server died.
    assert!(
        killed_at.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        killed_at.elapsed()
    );
    assert_eq!(
        text(&worked.stdout),
        "slow: ended: returned \"Echo: after\"\n"
    );
    assert_eq!(
        text(&worked.stderr),
        "w1: working up to 1 run at once\n WARN the MCP server everything was killed by signal 9; \
         starting it again\n"
    );
    assert_eq!(worked.status.code(), Some(0));
    let status = ptc(&["status", "--store", &url, "slow"]);
    assert_eq!(
        text(&status.stdout),
        "slow: ended: returned \"Echo: after\"; 2 turns, 1 claim\n"
    );
}
