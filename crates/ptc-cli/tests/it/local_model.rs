//! `ptc run` against a real model: SmolLM2-135M-Instruct behind llama-cpp-python's
//! OpenAI-compatible server, both pinned and installed by `ptc-local-model` (the first run
//! compiles llama.cpp, many minutes on a busy machine; later runs reuse the environment).
//!
//! These tests check the plumbing, not the model's skill: exit codes, that every turn is
//! recorded with exactly the usage the server reported for its request, that the saved
//! transcript replays to the same programs and verdicts, and that killing the server mid-run
//! ends the run with the step written. When the environment cannot be built they fail, saying
//! what is missing.

use pretty_assertions::assert_eq;
use ptc_local_model::{Environment, Server, ServerOptions};
use ptc_turn::{FailureKind, Step, StepOutcome, Turn, TurnResult};
use serde_json::Value as Json;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Replies are kept short so that a run takes seconds, not minutes.
const MAX_TOKENS: &str = "160";
const MAX_TURNS: &str = "2";

fn environment() -> Environment {
    Environment::ensure(&mut |message| eprintln!("{message}"))
        .unwrap_or_else(|error| panic!("the local model environment could not be built: {error}"))
}

fn server(environment: &Environment) -> Server {
    Server::start(environment, &ServerOptions::default())
        .unwrap_or_else(|error| panic!("the local model server did not start: {error}"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptc-local-model-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// A benchmark mission that needs only data: its text, data file and signature.
struct Mission {
    name: &'static str,
    signature: &'static str,
}

const MISSIONS: [Mission; 2] = [
    Mission {
        name: "low-stock",
        signature: "[:string]",
    },
    Mission {
        name: "ticket-status-counts",
        signature: "{open :int, pending :int, closed :int}",
    },
];

fn run_args(mission: &Mission, compression: &str, llm: &str, dir: &Path) -> Vec<String> {
    let mission_dir = repo().join("benchmarks/missions").join(mission.name);
    let text = std::fs::read_to_string(mission_dir.join("mission.txt")).expect("mission text");
    vec![
        "run".into(),
        "--mission".into(),
        text.trim().into(),
        "--data".into(),
        mission_dir.join("data.json").display().to_string(),
        "--signature".into(),
        mission.signature.into(),
        "--max-turns".into(),
        MAX_TURNS.into(),
        "--max-tokens".into(),
        MAX_TOKENS.into(),
        "--compression".into(),
        compression.into(),
        // A busy machine can make a cold prompt slow; a retry would send it twice.
        "--request-timeout".into(),
        "900s".into(),
        "--llm".into(),
        llm.into(),
        "--dump-step".into(),
        dir.join("step.json").display().to_string(),
        "--transcript".into(),
        dir.join("transcript.jsonl").display().to_string(),
    ]
}

fn ptc(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(args)
        .output()
        .expect("run ptc")
}

fn read_step(path: &Path) -> Step {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("the step {} was not written: {e}", path.display()));
    serde_json::from_str(&text).expect("the step reads back")
}

/// What a run decided: each turn's program and result, and the outcome.
fn verdicts(step: &Step) -> (Vec<(String, String)>, String) {
    let turns = step
        .turns
        .iter()
        .map(|turn| {
            let result = match turn.result() {
                TurnResult::Value(value) => format!("=> {}", ptc_lisp::pr_str(value)),
                TurnResult::Error(error) => format!("{}: {error}", error.kind),
            };
            (turn.program().to_string(), result)
        })
        .collect();
    let outcome = match &step.outcome {
        StepOutcome::Returned { value } => format!("returned {}", ptc_lisp::pr_str(value)),
        StepOutcome::Failed { kind, reason, .. } => format!("failed [{}] {reason}", kind.as_str()),
    };
    (turns, outcome)
}

/// One exchange the proxy passed on: the request body and the server's answer.
#[derive(Debug, Clone)]
struct Exchange {
    request: Json,
    response: Json,
}

/// A proxy in front of the server that keeps every request and answer, so a test can compare
/// the step with what the server said. Each connection carries one exchange.
struct RecordingProxy {
    port: u16,
    exchanges: Arc<Mutex<Vec<Exchange>>>,
}

impl RecordingProxy {
    fn start(upstream: &str) -> RecordingProxy {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind the proxy");
        let port = listener.local_addr().expect("proxy address").port();
        let upstream = upstream
            .trim_start_matches("http://")
            .trim_end_matches("/v1")
            .to_string();
        let exchanges: Arc<Mutex<Vec<Exchange>>> = Arc::default();
        let record = exchanges.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (upstream, record) = (upstream.clone(), record.clone());
                std::thread::spawn(move || forward(stream, &upstream, &record));
            }
        });
        RecordingProxy { port, exchanges }
    }

    fn spec(&self) -> String {
        format!(
            "openai-compatible:http://127.0.0.1:{}/v1:{}",
            self.port,
            ptc_local_model::MODEL_ALIAS
        )
    }

    fn take(&self) -> Vec<Exchange> {
        std::mem::take(
            &mut *self
                .exchanges
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

/// Reads one HTTP request from `client`, sends it to `upstream` and the answer back, with
/// `Connection: close` so the client opens a new connection for its next request.
fn forward(client: TcpStream, upstream: &str, record: &Mutex<Vec<Exchange>>) {
    let mut reader = BufReader::new(client.try_clone().expect("clone the stream"));
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
        if !line.to_ascii_lowercase().starts_with("connection:") {
            head.push_str(&line);
        }
    }
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let Ok(mut server) = TcpStream::connect(upstream) else {
        return;
    };
    let request = format!("{head}Connection: close\r\n\r\n");
    if server.write_all(request.as_bytes()).is_err() || server.write_all(&body).is_err() {
        return;
    }
    let mut answer = Vec::new();
    let _ = server.read_to_end(&mut answer);
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(answer.len(), |i| i + 4);
    let (answer_head, answer_body) = answer.split_at(split);
    let answer_head = String::from_utf8_lossy(answer_head);
    let mut kept = String::new();
    for line in answer_head.split_inclusive("\r\n") {
        if !line.to_ascii_lowercase().starts_with("connection:") {
            if line == "\r\n" {
                kept.push_str("Connection: close\r\n");
            }
            kept.push_str(line);
        }
    }
    if let (Ok(request), Ok(response)) = (
        serde_json::from_slice(&body),
        serde_json::from_slice(answer_body),
    ) {
        record
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Exchange { request, response });
    }
    let mut client = client;
    let _ = client.write_all(kept.as_bytes());
    let _ = client.write_all(answer_body);
}

fn count(json: &Json, pointer: &str) -> u64 {
    json.pointer(pointer).and_then(Json::as_u64).unwrap_or(0)
}

/// Checks one run against the server's answers: every request became a turn with exactly the
/// server's usage, reply and stop reason.
fn check_against_server(step: &Step, exchanges: &[Exchange], max_turns: usize, label: &str) {
    assert_eq!(
        exchanges.len(),
        step.turns.len(),
        "{label}: one request per turn"
    );
    assert_eq!(
        step.usage.llm_requests as usize,
        exchanges.len(),
        "{label}: requests counted"
    );
    let numbers: Vec<u32> = step.turns.iter().map(Turn::number).collect();
    assert_eq!(
        numbers,
        (1..=step.turns.len() as u32).collect::<Vec<_>>(),
        "{label}: every turn recorded"
    );
    if matches!(
        step.outcome,
        StepOutcome::Failed {
            kind: FailureKind::MaxTurnsExceeded,
            ..
        }
    ) {
        assert_eq!(step.turns.len(), max_turns, "{label}: all turns taken");
    }
    let mut total = ptc_turn::TokenUsage::default();
    for (turn, exchange) in step.turns.iter().zip(exchanges) {
        let response = &exchange.response;
        let reported = ptc_turn::TokenUsage {
            input_tokens: count(response, "/usage/prompt_tokens"),
            output_tokens: count(response, "/usage/completion_tokens"),
            ..ptc_turn::TokenUsage::default()
        };
        assert!(
            reported.input_tokens > 0,
            "{label}: the server counted the prompt"
        );
        assert_eq!(
            (
                turn.usage().tokens,
                turn.usage().llm_requests,
                turn.raw_response(),
                turn.stop_reason(),
            ),
            (
                reported,
                1,
                response
                    .pointer("/choices/0/message/content")
                    .and_then(Json::as_str)
                    .unwrap_or_default(),
                response
                    .pointer("/choices/0/finish_reason")
                    .and_then(Json::as_str),
            ),
            "{label}: turn {}",
            turn.number()
        );
        assert_eq!(
            exchange.request["max_tokens"],
            Json::from(MAX_TOKENS.parse::<u64>().unwrap_or_default()),
            "{label}: the reply limit was sent"
        );
        total += reported;
    }
    assert_eq!(step.usage.tokens, total, "{label}: the run's usage");
}

#[test]
fn real_runs_record_every_turn_and_replay_to_the_same_verdicts() {
    let environment = environment();
    let server = server(&environment);
    let proxy = RecordingProxy::start(&server.base_url());
    // Each mission under one strategy: both strategies and both signatures are exercised in
    // two runs rather than four, which keeps the test within a few minutes on a busy machine.
    for (mission, compression) in MISSIONS.iter().zip(["off", "on"]) {
        let label = format!("{} under {compression}", mission.name);
        let dir = scratch(&format!("{}-{compression}", mission.name));
        let output = ptc(&run_args(mission, compression, &proxy.spec(), &dir));
        let stdout = String::from_utf8_lossy(&output.stdout);
        let step = read_step(&dir.join("step.json"));
        // 0 returned, 3 stopped by the turn budget, 1 failed otherwise.
        let expected_code = match &step.outcome {
            StepOutcome::Returned { .. } => 0,
            StepOutcome::Failed {
                kind: FailureKind::MaxTurnsExceeded,
                ..
            } => 3,
            StepOutcome::Failed { .. } => 1,
        };
        assert_eq!(
            output.status.code(),
            Some(expected_code),
            "{label}: exit code for {:?}\n{stdout}\n{}",
            step.outcome,
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains(&format!(
                "step written to {}",
                dir.join("step.json").display()
            )),
            "{label}: {stdout}"
        );
        check_against_server(&step, &proxy.take(), 2, &label);

        // The transcript replays offline to the same programs and verdicts.
        let transcript = dir.join("transcript.jsonl");
        let replay_dir = scratch(&format!("{}-{compression}-replay", mission.name));
        let replay = ptc(&run_args(
            mission,
            compression,
            &format!("replay:{}", transcript.display()),
            &replay_dir,
        ));
        let replayed = read_step(&replay_dir.join("step.json"));
        assert_eq!(
            replay.status.code(),
            output.status.code(),
            "{label}: replay"
        );
        assert_eq!(verdicts(&replayed), verdicts(&step), "{label}: replay");
        assert_eq!(
            std::fs::read_to_string(replay_dir.join("transcript.jsonl")).ok(),
            std::fs::read_to_string(&transcript).ok(),
            "{label}: the replay's transcript is the same"
        );
    }
}

#[test]
fn killing_the_server_mid_run_ends_the_run_with_the_step_written() {
    let environment = environment();
    let mut server = server(&environment);
    let dir = scratch("killed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(run_args(&MISSIONS[0], "off", &server.spec(), &dir))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ptc run");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.expect("a line of output");
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("--- turn 1: asking the model") {
            break;
        }
    }
    // The request is on its way; a cold prompt of this size takes the server seconds.
    std::thread::sleep(Duration::from_millis(500));
    let pid = server.pid();
    server.stop();
    for line in lines {
        seen.push_str(&line.expect("a line of output"));
        seen.push('\n');
    }
    let status = child.wait().expect("ptc ends");
    assert_eq!(status.code(), Some(1), "after killing {pid}:\n{seen}");
    let step = read_step(&dir.join("step.json"));
    let StepOutcome::Failed {
        kind,
        reason,
        llm_errors,
        ..
    } = &step.outcome
    else {
        panic!("expected a failed run, got {:?}", step.outcome);
    };
    assert_eq!(*kind, FailureKind::LlmError);
    assert!(step.turns.is_empty());
    // The request in flight, then three retries (the provider's default) that find no server.
    assert_eq!(llm_errors.len(), 4, "{llm_errors:#?}");
    assert_eq!(step.usage.llm_requests, 4);
    let provider = format!("openai-compatible:{}:smollm2", server.base_url());
    let refused = format!(
        "could not connect to {provider} at {}/chat/completions: Connection refused (os error \
         111); check that the server is running and that the URL is right",
        server.base_url()
    );
    assert!(
        llm_errors[0].starts_with(&format!("network error talking to {provider}: ")),
        "the first error is the dropped reply: {}",
        llm_errors[0]
    );
    assert_eq!(
        llm_errors[1..],
        [refused.clone(), refused.clone(), refused.clone()]
    );
    assert_eq!(
        reason,
        &format!(
            "gave up after 4 attempts; the first failed with: {}; the last with: {refused}",
            llm_errors[0]
        )
    );
    // The output shows the first failure and the last.
    assert!(
        seen.contains(&format!(
            "=== result ===\nfailed (llm_error) after 0 of {MAX_TURNS} turns:\n  {reason}\n"
        )),
        "{seen}"
    );
}

/// Without streaming, llama-cpp-python goes on generating a reply whose client has given up,
/// and the retry queues behind it. Streamed, the server notices the closed connection at the
/// next token and stops.
#[test]
fn a_streamed_request_given_up_on_stops_the_servers_work_on_it() {
    let environment = environment();
    let server = server(&environment);
    let dir = scratch("abandoned");
    let mut args = run_args(&MISSIONS[0], "off", &server.spec(), &dir);
    let timeout = args
        .iter()
        .position(|a| a == "900s")
        .expect("the timeout argument");
    // A cold prompt of this size takes the server seconds; one second is sure to run out.
    args[timeout] = "1s".into();
    args.extend(["--stream".into(), "--retries".into(), "0".into()]);
    let output = ptc(&args);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let step = read_step(&dir.join("step.json"));
    let StepOutcome::Failed {
        kind, llm_errors, ..
    } = &step.outcome
    else {
        panic!("expected a failed run, got {:?}", step.outcome);
    };
    assert_eq!(*kind, FailureKind::LlmError);
    let provider = format!("openai-compatible:{}:smollm2", server.base_url());
    assert_eq!(
        llm_errors,
        &[format!(
            "{provider} did not answer within 1 s; raise the request timeout if the model is slow"
        )]
    );
    // The server finishes the prompt it was evaluating, then stops at the first token.
    let deadline = Instant::now() + Duration::from_secs(600);
    while !server.log().contains("Disconnected from client") {
        assert!(
            Instant::now() < deadline,
            "the server never stopped the abandoned request:\n{}",
            server.log_tail()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
