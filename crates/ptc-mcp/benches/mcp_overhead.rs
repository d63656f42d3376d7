//! What a call through MCP stdio costs on top of the server's own round trip: 1,000 calls to
//! server-everything's `echo` tool each way (after 100 to warm up), the ways taking turns call
//! by call, reporting the median and 90th percentile of single calls.
//!
//! - *server round trip*: a minimal client written here writes the `tools/call` request on
//!   the server's stdin and reads its reply line, nothing else;
//! - *ptc-mcp tool*: [`ptc_agent::AsyncTool::call`] of the `McpTool` (argument check, rmcp,
//!   the bounded transport, the result converted to a value);
//! - *program*: a PTC-Lisp program `(tool/echo "hi")` run in the sandbox, as `ptc eval` runs
//!   it (read, analyze, evaluate, and the blocking bridge to the async tool).
//!
//! Run with `cargo xtask bench mcp_overhead` (or `cargo bench -p ptc-mcp`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ptc_agent::AsyncTool;
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

    let mut raw = RawClient::start(&command.display().to_string());
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
    let sandbox = ptc_lisp::Runtime::new()
        .with_tools(ptc_agent::sandbox_tools(&servers.tools(), runtime.handle()).expect("tools"));
    let memory = UserNamespace::new();
    // The three ways take turns, call by call, so that the machine's load weighs on each alike.
    let mut times: [Vec<Duration>; 3] = Default::default();
    for i in 0..WARM_UP + CALLS {
        let started = Instant::now();
        raw.echo();
        let bare = started.elapsed();
        let started = Instant::now();
        let result = runtime.block_on(echo.call(vec![Value::string("hi")]));
        let tool = started.elapsed();
        assert_eq!(result, Ok(Value::string("Echo: hi")));
        let started = Instant::now();
        let out = sandbox.run_str(r#"(tool/echo "hi")"#, &memory);
        let program = started.elapsed();
        assert_eq!(out.outcome.value(), Some(&Value::string("Echo: hi")));
        if i >= WARM_UP {
            for (all, time) in times.iter_mut().zip([bare, tool, program]) {
                all.push(time);
            }
        }
    }
    runtime.block_on(servers.close());
    let [raw, tool, program] = times;

    println!("mcp_overhead: {CALLS} calls to server-everything's echo over stdio, each way");
    report("server round trip (bare JSON-RPC)", &raw, None);
    report("ptc-mcp tool call", &tool, Some(&raw));
    report("PTC-Lisp program (tool/echo ...)", &program, Some(&raw));
}

/// A minimal client of the server's own protocol: the handshake, then one request line and
/// one reply line per call, with no parsing beyond finding the reply.
struct RawClient {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    line: String,
    id: u64,
}

impl RawClient {
    fn start(command: &str) -> RawClient {
        let mut child = Command::new(command)
            .arg("stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut client = RawClient {
            child,
            stdin,
            stdout,
            line: String::new(),
            id: 0,
        };
        client.send(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#,
        );
        client.reply_to(0);
        client.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        client
    }

    fn send(&mut self, text: &str) {
        self.stdin.write_all(text.as_bytes()).expect("write");
        self.stdin.write_all(b"\n").expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Reads lines up to the reply to request `id` (notifications may come between).
    fn reply_to(&mut self, id: u64) {
        let wanted = format!("\"id\":{id}");
        loop {
            self.line.clear();
            self.stdout.read_line(&mut self.line).expect("reply");
            if self.line.contains(&wanted) {
                return;
            }
        }
    }

    fn echo(&mut self) {
        self.id += 1;
        let id = self.id;
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hi"}}}}}}"#
        ));
        self.reply_to(id);
    }
}

impl Drop for RawClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
