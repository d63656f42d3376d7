//! `ptc run` against a local model server: a server that never answers is reported within 10 s
//! and given up on after the request timeout and one retry, each shown as it happens; a run killed after a turn
//! resumes from its checkpoint to the same end as a run that was never interrupted; a
//! checkpoint whose last record was cut short resumes from the last whole turn.

use crate::support;

use pretty_assertions::assert_eq;
use ptc_turn::Step;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;
use support::{ModelServer, Scratch, utf8};

fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo")
}

/// The model replies of the demo's recorded run (five turns, the last returns).
fn demo_replies() -> Vec<String> {
    let transcript =
        std::fs::read_to_string(demo().join("transcript.jsonl")).expect("the demo transcript");
    transcript
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            entry["content"].as_str().expect("content").to_string()
        })
        .collect()
}

/// `ptc run` on the demo's mission, data and tools against `llm`, with `extra` arguments.
fn demo_run(llm: &str, extra: &[&str]) -> Command {
    let signature = std::fs::read_to_string(demo().join("signature.txt")).expect("signature");
    let mut command = Command::new(env!("CARGO_BIN_EXE_ptc"));
    command
        .args([
            "run",
            "--mission-file",
            utf8(&demo().join("mission.txt")),
            "--data",
            utf8(&demo().join("data.json")),
            "--tools",
            utf8(&demo().join("tools.json")),
            "--signature",
            signature.trim(),
            "--max-turns",
            "6",
            "--compression",
            "on",
            "--llm",
            llm,
        ])
        .args(extra)
        .env_remove("RUST_LOG")
        .env_remove("OPENAI_COMPATIBLE_API_KEY")
        .env_remove("PTC_RETRIES")
        .env_remove("PTC_REQUEST_TIMEOUT")
        .env_remove("PTC_DEADLINE")
        .env_remove("PTC_MCP_CONFIG")
        .stdin(Stdio::null());
    command
}

fn finish(command: &mut Command) -> Output {
    command.output().expect("run ptc")
}

fn read_step(path: &Path) -> Step {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the step file")).expect("a step")
}

/// A step as JSON with every timing zeroed, so two runs of the same replies compare equal.
fn without_timings(step: &Step) -> serde_json::Value {
    fn zero(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, field) in map.iter_mut() {
                    if key.ends_with("duration_us") {
                        *field = 0.into();
                    } else {
                        zero(field);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(zero),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(step).expect("a step serializes");
    zero(&mut value);
    value
}

/// The demo run against a model with every reply, which never stops; its step.
fn uninterrupted_run(dir: &Scratch, replies: &[String]) -> Step {
    let whole_file = dir.path("whole.json");
    let server = ModelServer::start(replies.to_vec(), usize::MAX);
    let output = finish(&mut demo_run(
        &server.spec(),
        &["--dump-step", utf8(&whole_file)],
    ));
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    read_step(&whole_file)
}

/// Waits until the fourth request reaches `server`, which answers only three: by then turn 3
/// is checkpointed.
fn wait_for_the_fourth_request(server: &ModelServer) {
    let waiting = server
        .hanging
        .recv_timeout(Duration::from_secs(120))
        .expect("the fourth request arrives");
    assert_eq!(waiting, 3);
}

/// The same `ptc run` with `--resume` on `checkpoint`, which holds three turns, against a model
/// with the replies of the turns left; the output and the path of its step file.
fn resume_after_turn_three(
    dir: &Scratch,
    replies: &[String],
    checkpoint: &Path,
) -> (Output, PathBuf) {
    let resumed_file = dir.path("resumed.json");
    let server = ModelServer::start(replies[3..].to_vec(), usize::MAX);
    let output = finish(&mut demo_run(
        &server.spec(),
        &[
            "--checkpoint",
            utf8(checkpoint),
            "--resume",
            "--dump-step",
            utf8(&resumed_file),
        ],
    ));
    (output, resumed_file)
}

fn kill(mut child: Child) {
    // `Child::kill` sends SIGKILL: the process gets no chance to write anything more.
    child.kill().expect("kill ptc");
    child.wait().expect("reap ptc");
}

/// A server that accepts the request and never answers: with the default retries (3), the
/// run says it is waiting within 10 s, counts its attempts as it makes them (2: a request
/// that timed out is retried once), and gives up after the timeout and one retry.
#[test]
fn a_server_that_never_answers_is_reported_within_10_s_and_fails_after_the_timeout_and_one_retry() {
    let server = ModelServer::silent();
    let started = std::time::Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args([
            "run",
            "--mission",
            "Say hello",
            "--llm",
            &server.spec(),
            "--request-timeout",
            "11s",
        ])
        .env_remove("RUST_LOG")
        .env_remove("PTC_RETRIES")
        .env_remove("PTC_REQUEST_TIMEOUT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ptc");
    let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
    let mut line = || {
        let mut line = String::new();
        stderr.read_line(&mut line).expect("a log line");
        line
    };
    let waiting = " INFO waiting for the model: 10 s (attempt 1; abandoned at 11 s)\n";
    assert_eq!(line(), waiting);
    // Reported while the request is still waiting, before its timeout.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(11),
        "the first notice came after {:?}",
        started.elapsed()
    );
    let retry = line();
    // The retry is reported while the second attempt is still waiting.
    assert_eq!(
        child.try_wait().expect("status"),
        None,
        "ptc has not ended yet"
    );
    let spec = server.spec();
    let silent = format!(
        "{spec} did not answer within 11 s; raise the request timeout if the model is slow"
    );
    // The wait is jittered; the rest of the line is exact.
    let (retry, wait) = retry.rsplit_once("retrying in ").expect("a retry line");
    assert!(wait.ends_with(" ms\n"), "{wait}");
    assert_eq!(
        format!("{retry}retrying in <t>\n"),
        format!(" WARN model call attempt 1 of 2 failed: {silent}; retrying in <t>\n")
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).expect("the rest of the log");
    let output = child.wait_with_output().expect("ptc ends");
    assert_eq!(
        rest,
        format!(
            " INFO waiting for the model: 10 s (attempt 2; abandoned at 11 s)\n WARN model call \
             attempt 2 of 2 failed: {silent}\n"
        )
    );
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!(
            "=== result ===\nfailed (llm_error) after 0 of 5 turns:\n  gave up after 2 \
             attempts, the first and the last failing alike: {silent}\nmodel requests: 2\n"
        )),
        "{stdout}"
    );
}

/// The target of the issue: a run killed with SIGKILL right after its third turn, resumed,
/// ends with the same step as the run that was never interrupted.
#[test]
fn a_run_killed_after_turn_three_resumes_to_the_same_step() {
    let dir = Scratch::new("durable");
    let replies = demo_replies();
    assert_eq!(replies.len(), 5);

    let whole = uninterrupted_run(&dir, &replies);
    assert_eq!(whole.turns.len(), 5);

    // The fourth request never gets an answer: by then turn 3 is checkpointed, and the
    // process is killed while it waits.
    let checkpoint = dir.path("run.jsonl");
    let server = ModelServer::start(replies.clone(), 3);
    let child = demo_run(&server.spec(), &["--checkpoint", utf8(&checkpoint)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start ptc");
    wait_for_the_fourth_request(&server);
    kill(child);

    // The same command with --resume asks the model again from turn 4.
    let (output, resumed_file) = resume_after_turn_three(&dir, &replies, &checkpoint);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.starts_with(&format!(
            "resuming run `run` from {} after turn 3 of 6\n\n--- turn 4: asking the model",
            checkpoint.display()
        )),
        "{stdout}"
    );
    let resumed = read_step(&resumed_file);
    assert_eq!(without_timings(&resumed), without_timings(&whole));

    // Without --resume, the checkpoint file is not overwritten.
    let output = finish(&mut demo_run(
        &server.spec(),
        &["--checkpoint", utf8(&checkpoint)],
    ));
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "error: {} already holds run `run`; add --resume to continue it, or give another \
             --checkpoint file or --run-id\n",
            checkpoint.display()
        )
    );
    // Resuming an ended run prints its result without asking the model.
    let output = finish(&mut demo_run(
        "openai-compatible:http://127.0.0.1:9/v1:none",
        &["--checkpoint", utf8(&checkpoint), "--resume", "--json"],
    ));
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["turns"], 5);
}

#[test]
fn a_checkpoint_cut_short_resumes_from_the_last_whole_turn() {
    let dir = Scratch::new("torn");
    let replies = demo_replies();
    let whole_file = dir.path("whole.json");
    let checkpoint = dir.path("run.jsonl");
    let server = ModelServer::start(replies.clone(), usize::MAX);
    let output = finish(&mut demo_run(
        &server.spec(),
        &[
            "--dump-step",
            utf8(&whole_file),
            "--checkpoint",
            utf8(&checkpoint),
        ],
    ));
    assert_eq!(output.status.code(), Some(0));
    let whole = read_step(&whole_file);

    // Keep the start and turns 1 to 3, and half of turn 4's line: the process stopped while
    // writing it.
    let text = std::fs::read_to_string(&checkpoint).expect("the checkpoint");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "start, five turns, end");
    let kept = lines[..4].join("\n") + "\n";
    let torn = format!("{kept}{}", &lines[4][..lines[4].len() / 2]);
    std::fs::write(&checkpoint, &torn).expect("cut the checkpoint");

    let (output, resumed_file) = resume_after_turn_three(&dir, &replies, &checkpoint);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "warning: {} ended in a record cut short (line 5, {} bytes written when the process \
             stopped); it was removed, and the run continues from the last whole turn\n",
            checkpoint.display(),
            lines[4].len() / 2
        )
    );
    assert_eq!(
        without_timings(&read_step(&resumed_file)),
        without_timings(&whole)
    );
}

#[test]
fn an_sqlite_checkpoint_resumes_too() {
    let dir = Scratch::new("sqlite");
    let replies = demo_replies();
    let database = dir.path("runs.db");
    let server = ModelServer::start(replies.clone(), 2);
    let child = demo_run(
        &server.spec(),
        &["--checkpoint", utf8(&database), "--run-id", "demo-1"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("start ptc");
    server
        .hanging
        .recv_timeout(Duration::from_secs(120))
        .expect("the third request arrives");
    kill(child);
    let server = ModelServer::start(replies[2..].to_vec(), usize::MAX);
    let output = finish(&mut demo_run(
        &server.spec(),
        &[
            "--checkpoint",
            utf8(&database),
            "--run-id",
            "demo-1",
            "--resume",
            "--json",
        ],
    ));
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        (&report["ok"], &report["turns"]),
        (&serde_json::json!(true), &serde_json::json!(5))
    );
}

#[test]
fn a_run_past_its_deadline_exits_3_with_the_timeout_failure() {
    let server = ModelServer::silent();
    let output = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args([
            "run",
            "--mission",
            "Say hello",
            "--llm",
            &server.spec(),
            "--deadline",
            "1s",
        ])
        .env_remove("RUST_LOG")
        .env_remove("PTC_REQUEST_TIMEOUT")
        .output()
        .expect("run ptc");
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        " WARN the run's deadline of 1.0 s passed during turn 1\n"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "=== result ===\nfailed (timeout) after 0 of 5 turns:\n  the run did not finish \
             within its deadline of 1.0 s; turn 1 was cut off\nmodel requests: 1\n"
        ),
        "{stdout}"
    );
}

/// Ctrl-C while the fourth request waits: the run ends `interrupted` with exit status 130,
/// `--dump-step` holds the three completed turns, and the checkpoint is left open, so
/// `--resume` finishes the run with the step of a run that was never interrupted.
#[test]
fn ctrl_c_keeps_the_completed_turns_and_the_run_resumes_to_the_same_step() {
    let dir = Scratch::new("ctrl-c");
    let replies = demo_replies();
    let whole = uninterrupted_run(&dir, &replies);

    let checkpoint = dir.path("run.jsonl");
    let stopped_file = dir.path("stopped.json");
    let server = ModelServer::start(replies.clone(), 3);
    let child = demo_run(
        &server.spec(),
        &[
            "--checkpoint",
            utf8(&checkpoint),
            "--dump-step",
            utf8(&stopped_file),
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start ptc");
    wait_for_the_fourth_request(&server);
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
    let output = child.wait_with_output().expect("ptc ends");
    assert_eq!(output.status.code(), Some(130));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "\nstopping the run at Ctrl-C (press it again to quit at once)\n"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "=== result ===\nfailed (interrupted) after 3 of 6 turns:\n  the run was stopped \
             during turn 4, which was cut off\n"
        ),
        "{stdout}"
    );
    let stopped = read_step(&stopped_file);
    assert_eq!(
        without_timings(&stopped)["turns"],
        without_timings(&whole)["turns"]
            .as_array()
            .map(|turns| serde_json::Value::from(turns[..3].to_vec()))
            .expect("turns")
    );
    // The fourth request was sent, and is counted, though it never produced a turn.
    assert_eq!(stopped.usage.llm_requests, 4);

    let (output, resumed_file) = resume_after_turn_three(&dir, &replies, &checkpoint);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        without_timings(&read_step(&resumed_file)),
        without_timings(&whole)
    );
}
