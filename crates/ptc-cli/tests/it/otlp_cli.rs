//! `ptc run --otlp` against a real OpenTelemetry receiver: Arize Phoenix (installed by
//! `cargo xtask phoenix`), started on free ports for the test; the spans are read back through
//! its REST API.

use crate::support;

use pretty_assertions::assert_eq;
use ptc_turn::Step;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::{Scratch, ptc_command, utf8};

/// The `phoenix` program of the environment `cargo xtask phoenix` builds.
fn phoenix_program() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    };
    let program = target.join("phoenix/venv/bin/phoenix");
    assert!(
        program.is_file(),
        "Arize Phoenix is needed to test the OpenTelemetry export: `cargo xtask phoenix` \
         installs it (pinned) in {}",
        program.display()
    );
    program
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// A Phoenix server of the test's own, killed when dropped.
struct Phoenix {
    child: Child,
    port: u16,
}

impl Phoenix {
    fn start(dir: &Scratch) -> Phoenix {
        let port = free_port();
        let child = Command::new(phoenix_program())
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", dir.path("phoenix"))
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .stdout(Stdio::null())
            .stderr(
                std::fs::File::create(dir.path("phoenix.log"))
                    .expect("Phoenix's log file")
                    .try_clone()
                    .expect("a log handle"),
            )
            .spawn()
            .expect("start Phoenix");
        let phoenix = Phoenix { child, port };
        let started = Instant::now();
        while get(port, "/healthz").is_none() {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "Phoenix did not answer within 120 s; its log: {}",
                std::fs::read_to_string(dir.path("phoenix.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        phoenix
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The spans Phoenix stored in its default project, once there are `count` of them.
    fn spans(&self, count: usize) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let body = get(self.port, "/v1/projects/default/spans?limit=100")
                .expect("Phoenix answers its spans");
            let spans: Value = serde_json::from_str(&body).expect("JSON spans");
            let spans = spans["data"].as_array().cloned().unwrap_or_default();
            if spans.len() >= count || started.elapsed() > Duration::from_secs(30) {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The body of `GET path` on 127.0.0.1:`port` when it answers 200.
fn get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let response = String::from_utf8(response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    if !head.starts_with("HTTP/1.1 200") {
        return None;
    }
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return Some(unchunk(body));
    }
    Some(body.to_string())
}

/// A chunked HTTP body, joined.
fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// The span named `name` (the `n`th, in start order).
fn span<'a>(spans: &'a [Value], name: &str, n: usize) -> &'a Value {
    spans
        .iter()
        .filter(|s| s["name"] == name)
        .nth(n)
        .unwrap_or_else(|| panic!("no span `{name}` #{n}"))
}

#[test]
fn a_run_exported_with_otlp_is_one_trace_in_phoenix_with_usage_and_tool_calls() {
    let dir = Scratch::new("otlp");
    let transcript = dir.file(
        "t.jsonl",
        concat!(
            r#"{"content": "```clojure\n(def total (reduce + (map :price data/items)))\n(println \"total:\" total)\n```", "usage": {"input_tokens": 900, "output_tokens": 40}}"#,
            "\n",
            r#"{"content": "```clojure\n(tool/notify {:total total})\n(return {:total total})\n```", "usage": {"input_tokens": 950, "output_tokens": 25, "cache_read_tokens": 700}}"#,
            "\n"
        ),
    );
    let data = dir.file(
        "data.json",
        r#"{"items": [{"name": "pen", "price": 2}, {"name": "ink", "price": 5}]}"#,
    );
    let tools = dir.file(
        "tools.json",
        r#"{"notify": {"description": "Tell the team", "params": ["message"], "returns": "sent"}}"#,
    );
    let dump = dir.path("step.json");
    let started = Instant::now();
    let phoenix = Phoenix::start(&dir);
    eprintln!(
        "Phoenix answered in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // Run in the scratch directory, so that the replayed model is named `t.jsonl`.
    assert!(transcript.ends_with("t.jsonl"));
    let output = ptc_command(&[
        "run",
        "-q",
        "--mission",
        "Total the prices and notify the team",
        "--data",
        utf8(&data),
        "--tools",
        utf8(&tools),
        "--llm",
        "replay:t.jsonl",
        "--max-turns",
        "3",
        "--dump-step",
        utf8(&dump),
        "--otlp",
        &phoenix.url(),
    ])
    .current_dir(&dir.0)
    .output()
    .expect("run ptc");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    assert!(output.status.success());
    let step: Step =
        serde_json::from_str(&std::fs::read_to_string(&dump).expect("the dumped step"))
            .expect("a step");

    let mut spans = phoenix.spans(6);
    spans.sort_by(|a, b| {
        let key = |s: &Value| s["start_time"].as_str().unwrap_or_default().to_string();
        key(a).cmp(&key(b))
    });
    // One trace; each span under the one its name says.
    let traces: std::collections::BTreeSet<&str> = spans
        .iter()
        .map(|s| s["context"]["trace_id"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(traces.len(), 1, "{spans:#?}");
    let name_of = |id: &Value| -> String {
        spans
            .iter()
            .find(|s| s["context"]["span_id"] == *id)
            .map_or("-".to_string(), |s| {
                s["name"].as_str().unwrap_or("?").to_string()
            })
    };
    let tree: Vec<(String, String, String)> = spans
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or("?").to_string(),
                s["span_kind"].as_str().unwrap_or("?").to_string(),
                name_of(&s["parent_id"]),
            )
        })
        .collect();
    let row = |name: &str, kind: &str, parent: &str| {
        (name.to_string(), kind.to_string(), parent.to_string())
    };
    assert_eq!(
        tree,
        vec![
            row("invoke_agent", "AGENT", "-"),
            row("agent_turn", "UNKNOWN", "invoke_agent"),
            row("chat t.jsonl", "LLM", "agent_turn"),
            row("agent_turn", "UNKNOWN", "invoke_agent"),
            row("chat t.jsonl", "LLM", "agent_turn"),
            row("execute_tool notify", "TOOL", "agent_turn"),
        ]
    );
    // The tool call under the second turn, the chat spans under their own turns.
    let turn = |n: usize| &span(&spans, "agent_turn", n)["context"]["span_id"];
    assert_eq!(span(&spans, "chat t.jsonl", 0)["parent_id"], *turn(0));
    assert_eq!(span(&spans, "chat t.jsonl", 1)["parent_id"], *turn(1));
    assert_eq!(
        span(&spans, "execute_tool notify", 0)["parent_id"],
        *turn(1)
    );

    // Usage: each request's and the run's, as the Step has them.
    let usage = |s: &Value| {
        let a = &s["attributes"];
        json!([
            a["gen_ai.provider.name"],
            a["gen_ai.request.model"],
            a["gen_ai.usage.input_tokens"],
            a["gen_ai.usage.output_tokens"],
            a["gen_ai.usage.cache_read.input_tokens"],
        ])
    };
    let expected = |tokens: &ptc_turn::TokenUsage| {
        json!([
            "replay",
            "t.jsonl",
            tokens.prompt_tokens(),
            tokens.output_tokens,
            tokens.cache_read_tokens
        ])
    };
    for (n, turn) in step.turns.iter().enumerate() {
        assert_eq!(
            usage(span(&spans, "chat t.jsonl", n)),
            expected(&turn.usage().tokens)
        );
    }
    assert_eq!(
        usage(span(&spans, "invoke_agent", 0)),
        expected(&step.usage.tokens)
    );
    assert_eq!(
        usage(span(&spans, "chat t.jsonl", 1)),
        json!(["replay", "t.jsonl", 1650, 25, 700])
    );
    let tool = &span(&spans, "execute_tool notify", 0)["attributes"];
    assert_eq!(tool["gen_ai.operation.name"], "execute_tool");
    assert_eq!(tool["gen_ai.tool.name"], "notify");
    assert_eq!(tool["outcome"], "ok");

    // Each turn's program and output as events of its span.
    let events = |n: usize| -> Vec<(String, Value)> {
        span(&spans, "agent_turn", n)["events"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter(|e| e["name"] == "program" || e["name"] == "output")
            .map(|e| {
                let name = e["name"].as_str().unwrap_or_default().to_string();
                let key = format!("ptc.{name}");
                (name, e["attributes"][key.as_str()].clone())
            })
            .collect()
    };
    assert_eq!(
        events(0),
        vec![
            ("program".to_string(), json!(step.turns[0].program())),
            ("output".to_string(), json!("total: 7\n")),
        ]
    );
    assert_eq!(
        events(1),
        vec![
            (
                "program".to_string(),
                json!("(tool/notify {:total total})\n(return {:total total})")
            ),
            ("output".to_string(), json!("{:total 7}")),
        ]
    );
}
