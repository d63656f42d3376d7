//! A server that dies is started again as soon as its death is noticed, without waiting for a
//! call to its tools; a server whose starts keep failing is tried again after waits that grow
//! to a cap, each announced in a warning, and calls made meanwhile fail at once.

use crate::support;

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ptc_mcp::ServerConfig;
use support::Session;
use support::logs::{self, Warning};

/// The waits of `failing`: up to 200 ms after the first failed start, doubling to 800 ms.
const FIRST: Duration = Duration::from_millis(200);
const CAP: Duration = Duration::from_millis(800);

fn texts(warnings: &[Warning]) -> Vec<String> {
    warnings.iter().map(|w| w.message.clone()).collect()
}

#[test]
fn a_killed_server_is_started_again_before_any_call() {
    logs::keep();
    let mut config = support::everything();
    config.name = "watched".to_string();
    let session = Session::start(vec![config]);
    let server = session.servers.servers()[0].clone();
    let first = server.process_id().expect("a process id");
    let killed = Instant::now();
    support::kill(first);
    assert!(
        support::eventually(|| server.restarts() == 1 && server.process_id().is_some()),
        "not started again: {} restarts",
        server.restarts()
    );
    let restarted = killed.elapsed();
    let second = server.process_id().expect("a process id");
    assert_ne!(second, first);
    assert_eq!(server.failed_starts(), 0);
    let warnings = logs::warnings("watched");
    assert_eq!(
        texts(&warnings),
        vec!["the MCP server watched was killed by signal 9; starting it again".to_string()]
    );
    assert!(
        warnings[0].at.duration_since(killed) < Duration::from_secs(1),
        "the death was noticed {:?} after the kill",
        warnings[0].at.duration_since(killed)
    );
    assert!(
        restarted < Duration::from_secs(5),
        "started again {restarted:?} after the kill"
    );
    // No call was needed; the first one goes to the new process.
    session.check(&[(r#"(tool/echo "again")"#, Ok(r#""Echo: again""#))]);
    assert_eq!(server.restarts(), 1);
    session.close();
}

/// A function that replaces, in a warning about a failed start, why the handshake failed with
/// `<why>`.
fn mask_why(described: &str) -> impl Fn(&str) -> String {
    let head = format!("initialize handshake with `{described}` failed: ");
    move |text: &str| match (text.find(&head), text.rfind("; trying again in ")) {
        (Some(from), Some(to)) if from + head.len() <= to => {
            format!("{}{head}<why>{}", &text[..from], &text[to..])
        }
        _ => text.to_string(),
    }
}

/// The number in `trying again in 0.4 s` at the end of a warning.
fn announced_wait(message: &str) -> Duration {
    let seconds = message
        .rsplit_once("trying again in ")
        .and_then(|(_, rest)| rest.strip_suffix(" s"))
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no wait announced in {message:?}"));
    Duration::from_secs_f64(seconds)
}

/// The most and the fewest failed starts there can be in `window` from the first: waits at
/// their shortest and starts that take no time, or waits at their longest and starts that take
/// `slowest` each.
fn bounds(window: Duration, slowest: Duration) -> (u64, u64) {
    let count = |wait: &dyn Fn(u32) -> Duration, took: Duration| {
        let (mut at, mut n) = (Duration::ZERO, 0u32);
        while at <= window {
            n += 1;
            at += took + wait(n);
        }
        u64::from(n)
    };
    let ceiling = |n: u32| (FIRST * 2u32.saturating_pow(n - 1)).min(CAP);
    (
        count(&|n| ceiling(n) / 2, Duration::ZERO),
        count(&ceiling, slowest),
    )
}

#[test]
fn a_server_that_keeps_failing_to_start_is_tried_after_growing_waits() {
    logs::keep();
    let dir = support::scratch("failing-starts");
    let refuse = dir.join("refuse");
    let everything = ptc_mcp_testkit::server_command(ptc_mcp_testkit::EVERYTHING)
        .unwrap_or_else(|e| panic!("{e}"))
        .display()
        .to_string();
    // Starts the server unless the file `$REFUSE` exists; then it exits at once, saying why.
    let script =
        r#"if [ -e "$REFUSE" ]; then echo "refusing to start" >&2; exit 3; fi; exec "$0" stdio"#;
    let config = ServerConfig::stdio("failing", "sh", ["-c", script, &everything])
        .with_env("REFUSE", refuse.display().to_string())
        .with_restart_backoff(FIRST, CAP);
    let described = config.describe();
    let session = Session::start(vec![config]);
    let server = session.servers.servers()[0].clone();
    let first = server.process_id().expect("a process id");
    std::fs::write(&refuse, "").expect("write the flag");
    let killed = Instant::now();
    support::kill(first);

    // While its starts fail, a call fails at once, saying so.
    assert!(support::eventually(|| server.failed_starts() >= 1));
    let asked = Instant::now();
    let error = session
        .run(r#"(tool/echo "meanwhile")"#)
        .expect_err("no server to answer");
    assert!(
        asked.elapsed() < Duration::from_millis(500),
        "the call waited {:?}",
        asked.elapsed()
    );
    let prefix = "tool/echo failed: the MCP server failing was killed by signal 9 and could not \
                  be started again";
    assert!(error.starts_with(prefix), "{error}");

    const WINDOW: Duration = Duration::from_secs(4);
    std::thread::sleep(WINDOW.saturating_sub(killed.elapsed()));
    let warnings = logs::warnings("failing");
    let failed = server.failed_starts();
    let (most, fewest) = bounds(WINDOW, Duration::from_millis(250));
    assert!(
        (fewest..=most).contains(&failed),
        "{failed} failed starts in {WINDOW:?}; between {fewest} and {most} were expected:\n{:#?}",
        texts(&warnings)
    );
    assert_eq!(server.restarts(), 0);

    // One warning that it died, then one for each failed start, each with its wait.
    let mut expected =
        vec!["the MCP server failing was killed by signal 9; starting it again".to_string()];
    let started: Vec<&Warning> = warnings.iter().skip(1).collect();
    for (k, warning) in started.iter().enumerate() {
        let n = k as u32 + 1;
        let wait = announced_wait(&warning.message);
        let ceiling = (FIRST * 2u32.pow(n - 1)).min(CAP);
        let tenth = Duration::from_millis(50);
        assert!(
            wait + tenth >= ceiling / 2 && wait <= ceiling + tenth,
            "failed start {n}: a wait of {wait:?}, outside {:?}..={ceiling:?}",
            ceiling / 2
        );
        if let Some(next) = started.get(k + 1) {
            let gap = next.at.duration_since(warning.at);
            assert!(
                gap + tenth >= wait && gap <= wait + Duration::from_millis(400),
                "failed start {n}: the next came {gap:?} after, the wait announced was {wait:?}"
            );
        }
        expected.push(format!(
            "the MCP server failing could not be started again (failed start {n} in a row): the \
             initialize handshake with `{described}` failed: <why>; trying again in {:.1} s",
            wait.as_secs_f64()
        ));
    }
    // Why the handshake failed depends on when the server's exit is seen: reading the reply
    // (`connection closed: initialize response: it exited with status 3; its last words on
    // stderr: refusing to start`) or sending the request (`... Broken pipe ...`).
    let why = mask_why(&described);
    let masked: Vec<String> = texts(&warnings[..expected.len()])
        .iter()
        .map(|text| why(text))
        .collect();
    assert_eq!(masked, expected);

    // Once it can start, the next try starts it: within the longest wait and the time the
    // server takes to start and answer the handshake (a node process, slow on a busy machine).
    std::fs::remove_file(&refuse).expect("remove the flag");
    let allowed = Instant::now();
    assert!(support::eventually(|| server.restarts() == 1));
    assert!(
        allowed.elapsed() < CAP + Duration::from_secs(5),
        "started {:?} after it could",
        allowed.elapsed()
    );
    let failed = server.failed_starts();
    assert_eq!(
        logs::warnings("failing").last().map(|w| w.message.clone()),
        Some(format!(
            "the MCP server failing was started again after {failed} failed starts"
        ))
    );
    session.check(&[(r#"(tool/echo "back")"#, Ok(r#""Echo: back""#))]);
    session.close();
}
