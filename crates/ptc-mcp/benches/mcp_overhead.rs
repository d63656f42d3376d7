//! What a call through MCP stdio costs on top of the server's own round trip: 1,000 calls to
//! server-everything's `echo` tool, each way, after 100 to warm up, reporting the median and
//! 90th percentile of single calls.
//!
//! - *server round trip*: a minimal client written here writes the `tools/call` request on
//!   the server's stdin and reads its reply line, nothing else;
//! - *ptc-mcp tool*: [`ptc_agent::Tool::call`] of the `McpTool` (argument check, rmcp,
//!   the bounded transport, the result converted to a value);
//! - *program*: a PTC-Lisp program `(tool/echo "hi")` run in the sandbox, as `ptc eval` runs
//!   it (read, analyze, evaluate, and the blocking bridge to the async tool).
//!
//! Run with `cargo xtask bench mcp_overhead` (or `cargo bench -p ptc-mcp`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ptc_agent::Tool;
use ptc_lisp::{UserNamespace, Value};
use ptc_mcp::{McpServers, ServerConfig};

const WARM_UP: usize = 100;
const CALLS: usize = 1000;

fn main() {
    // `cargo bench -- FILTER` passes the filter on; run only when it names this benchmark.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if args
        .iter()
        .any(|filter| !"mcp_overhead".contains(filter.as_str()))
    {
        return;
    }
    let command = ptc_mcp_testkit::server_command(ptc_mcp_testkit::EVERYTHING)
        .unwrap_or_else(|e| panic!("{e}"));

    let raw = raw_round_trips(&command.display().to_string());

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let servers = runtime
        .block_on(McpServers::connect([ServerConfig::stdio(
            "everything",
            command.display().to_string(),
            ["stdio"],
        )]))
        .unwrap_or_else(|e| panic!("{e}"));
    let echo = servers.tool("echo").expect("echo").clone();
    let tool = measure(|| {
        let result = runtime.block_on(echo.call(vec![Value::string("hi")]));
        assert_eq!(result, Ok(Value::string("Echo: hi")));
    });
    let sandbox = ptc_lisp::Runtime::new()
        .with_tools(ptc_agent::sandbox_tools(&servers.tools(), runtime.handle()).expect("tools"));
    let memory = UserNamespace::new();
    let program = measure(|| {
        let out = sandbox.run_str(r#"(tool/echo "hi")"#, &memory);
        assert_eq!(out.outcome.value(), Some(&Value::string("Echo: hi")));
    });
    runtime.block_on(servers.close());

    println!("mcp_overhead: {CALLS} calls to server-everything's echo over stdio, each way");
    report("server round trip (bare JSON-RPC)", &raw, None);
    report("ptc-mcp tool call", &tool, Some(&raw));
    report("PTC-Lisp program (tool/echo ...)", &program, Some(&raw));
}

/// Single-call times, after the warm-up.
fn measure(mut call: impl FnMut()) -> Vec<Duration> {
    for _ in 0..WARM_UP {
        call();
    }
    (0..CALLS)
        .map(|_| {
            let started = Instant::now();
            call();
            started.elapsed()
        })
        .collect()
}

/// The server's own round trip: the handshake, then one request line and one reply line per
/// call, with no parsing beyond finding the reply.
fn raw_round_trips(command: &str) -> Vec<Duration> {
    let mut child = Command::new(command)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut send = |text: &str| {
        stdin.write_all(text.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    };
    send(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#,
    );
    stdout.read_line(&mut line).expect("initialize reply");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let mut id = 1u64;
    let times = measure(|| {
        send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hi"}}}}}}"#
        ));
        let wanted = format!("\"id\":{id}");
        loop {
            line.clear();
            stdout.read_line(&mut line).expect("reply");
            // Notifications may come between; the reply carries the request's id.
            if line.contains(&wanted) {
                break;
            }
        }
        id += 1;
    });
    drop(send);
    let _ = child.kill();
    let _ = child.wait();
    times
}

fn percentile(times: &[Duration], p: f64) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index]
}

fn report(label: &str, times: &[Duration], baseline: Option<&[Duration]>) {
    let median = percentile(times, 0.5);
    let p90 = percentile(times, 0.9);
    let mut line = format!(
        "  {label:<36} median {:>7.1} us   p90 {:>7.1} us",
        micros(median),
        micros(p90)
    );
    if let Some(base) = baseline {
        let overhead = micros(median) - micros(percentile(base, 0.5));
        line.push_str(&format!("   overhead (median) {overhead:>+7.1} us"));
    }
    println!("{line}");
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
