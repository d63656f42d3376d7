//! A server that misbehaves (`fault-server.mjs`): every fault ends in a tool error of the turn
//! that met it, the run goes on, and every earlier turn and tool call stays in the Step.

use crate::support;

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, ScriptedLlm};
use ptc_lisp::pr_str;
use ptc_lisp::{ToolOutcome, Value};
use ptc_mcp::McpServers;
use ptc_turn::Step;

const TIMEOUT: Duration = Duration::from_secs(3);

fn reply(program: &str) -> String {
    format!("```clojure\n{program}\n```")
}

/// Runs three turns against a fresh fault server: one good call, then a good call and the
/// faulty one, then a return.
fn run_fault(fault_call: &str) -> (Step, McpServers, tokio::runtime::Runtime) {
    let runtime = support::runtime();
    let servers = runtime.block_on(support::connect(vec![support::fault(&[], TIMEOUT)]));
    let llm = ScriptedLlm::new([
        reply(r#"(tool/ok "first")"#),
        reply(&format!("(tool/ok \"second\")\n{fault_call}")),
        reply(r#"(return "done")"#),
    ]);
    let agent = support::agent_with(
        Agent::builder("Exercise the server").llm(llm).max_turns(3),
        &servers,
    );
    let step = runtime.block_on(agent.run()).expect("run");
    (step, servers, runtime)
}

/// The tool calls of each turn: name, and the value or error.
fn calls(step: &Step) -> Vec<Vec<(String, Result<String, String>)>> {
    step.turns
        .as_slice()
        .iter()
        .map(|turn| {
            turn.tool_calls()
                .iter()
                .map(|c| {
                    let result = match &c.result {
                        ToolOutcome::Ok(v) => Ok(pr_str(v)),
                        ToolOutcome::Error(e) => Err(e.clone()),
                    };
                    (c.name.clone(), result)
                })
                .collect()
        })
        .collect()
}

fn check_fault(fault_call: &str, tool: &str, error: &str) -> McpServers {
    let started = Instant::now();
    let (step, servers, runtime) = run_fault(fault_call);
    assert!(
        started.elapsed() < TIMEOUT + Duration::from_secs(8),
        "{tool} took {:?}",
        started.elapsed()
    );
    assert_eq!(step.value(), Some(&Value::string("done")), "{tool}");
    let ok = |text: &str| ("ok".to_string(), Ok(format!("\"ok: {text}\"")));
    assert_eq!(
        calls(&step),
        vec![
            vec![ok("first")],
            vec![ok("second"), (tool.to_string(), Err(error.to_string()))],
            vec![],
        ],
        "{tool}"
    );
    let turn = &step.turns.as_slice()[1];
    assert_eq!(
        turn.error().map(|e| (e.kind.as_str(), e.message.as_str())),
        Some(("tool", format!("tool/{tool} failed: {error}").as_str())),
        "{tool}"
    );
    runtime.block_on(servers.close());
    servers
}

#[test]
fn a_server_that_exits_in_the_middle_of_a_call() {
    check_fault(
        "(tool/exit)",
        "exit",
        "the MCP server fault is not running: it exited with status 3; its last words on \
         stderr: fault server: exiting in the middle of a call; it is being started again",
    );
}

#[test]
fn a_server_that_never_answers() {
    check_fault(
        "(tool/hang)",
        "hang",
        "no answer within 3 s; the call was cancelled",
    );
}

#[test]
fn a_server_that_sends_malformed_json_rpc() {
    let servers = check_fault(
        "(tool/malformed)",
        "malformed",
        "the server's reply is not a valid JSON-RPC message (key must be a string at line 1 \
         column 40); it began: {\"jsonrpc\": \"2.0\", \"id\": 4, \"result\": {oops",
    );
    let server = &servers.servers()[0];
    assert!(support::eventually(
        || server.stats().malformed_messages == 1
    ));
}

#[test]
fn a_server_that_floods_notifications() {
    let servers = check_fault(
        "(tool/flood 20000)",
        "flood",
        "no answer within 3 s; the call was cancelled",
    );
    let server = &servers.servers()[0];
    assert!(
        support::eventually(|| {
            let stats = server.stats();
            stats.log_messages > 0 && stats.progress > 0
        }),
        "{:?}",
        server.stats()
    );
}

#[test]
fn a_server_that_returns_fifty_megabytes() {
    let before = peak_memory_kib();
    check_fault(
        "(tool/huge 52428800)",
        "huge",
        "the server's reply is 52428873 bytes, more than the limit of 16777216 bytes for one \
         message; it was not read (ask for less, or raise the limit)",
    );
    // The reply was skipped as it arrived, never held whole.
    if let (Some(before), Some(after)) = (before, peak_memory_kib()) {
        assert!(
            after - before < 40 * 1024,
            "peak memory grew {} KiB",
            after - before
        );
    }
}

/// The process's peak resident memory, where the system reports it.
fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn text_over_the_result_limit_is_cut_with_a_note() {
    let session = support::Session::start(vec![
        support::fault(&[], TIMEOUT).with_max_result_bytes(1000),
    ]);
    session.check(&[
        ("(count (tool/huge 1000))", Ok("1000")),
        (
            "(subs (tool/huge 2000) 995)",
            Ok(
                "\"xxxxx\\n[... cut by the MCP client: the tool's text was 2000 bytes, more than \
                the limit of 1000 bytes for one result; the first 1000 are above]\"",
            ),
        ),
    ]);
    session.close();
}

#[test]
fn tools_are_listed_through_every_page_and_clashing_names_are_prefixed() {
    let session = support::Session::start(vec![
        support::everything(),
        support::fault(&["--tools-pages", "3", "--name-clash"], TIMEOUT),
    ]);
    let fault: Vec<(String, String)> = session
        .servers
        .mcp_tools()
        .iter()
        .filter(|t| t.tool_name().server == "fault")
        .map(|t| (t.tool_name().original.clone(), t.tool_name().name.clone()))
        .collect();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        fault,
        vec![
            pair("ok", "ok"),
            pair("exit", "exit"),
            pair("hang", "hang"),
            pair("malformed", "malformed"),
            pair("flood", "flood"),
            pair("huge", "huge"),
            pair("cancellations", "cancellations"),
            pair("echo", "fault.echo"),
            pair("github/search issues", "github-search-issues"),
            pair("2fa:check", "_2fa-check"),
        ]
    );
    assert_eq!(
        session
            .servers
            .tool("everything.echo")
            .map(|t| t.tool_name().original.as_str()),
        Some("echo")
    );
    assert_eq!(
        session
            .servers
            .tool("_2fa-check")
            .map(|t| ptc_agent::AsyncTool::description(t.as_ref()).to_string()),
        Some("A name that starts with a digit (the MCP tool \"2fa:check\" of server fault)".into())
    );
    session.check(&[
        (r#"(tool/everything.echo "x")"#, Ok(r#""Echo: x""#)),
        ("(tool/fault.echo)", Ok(r#""echo from the fault server""#)),
        // The call is sent with the server's name for the tool (which this server does not
        // answer).
        (
            "(tool/github-search-issues)",
            Err("tool/github-search-issues failed: unknown tool github/search issues"),
        ),
    ]);
    session.close();
}

/// The ids of the requests the fault server saw cancelled, once it has seen any (or after ten
/// seconds).
fn cancelled_requests(servers: &McpServers, runtime: &tokio::runtime::Runtime) -> String {
    let started = Instant::now();
    let cancellations = servers.tool("cancellations").unwrap().clone();
    let mut cancelled = Value::Nil;
    while started.elapsed() < Duration::from_secs(10) {
        cancelled = runtime
            .block_on(ptc_agent::AsyncTool::call(cancellations.as_ref(), vec![]))
            .expect("cancellations");
        if pr_str(&cancelled) != "{:cancelled []}" {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    pr_str(&cancelled)
}

#[test]
fn a_run_past_its_deadline_cancels_the_call_a_function_of_an_earlier_turn_made() {
    let runtime = support::runtime();
    let servers = runtime.block_on(support::connect(vec![support::fault(
        &[],
        Duration::from_secs(60),
    )]));
    let llm = ScriptedLlm::new([reply("(defn wait [] (tool/hang))"), reply("(wait)")]);
    let agent = support::agent_with(
        Agent::builder("Wait forever")
            .llm(llm)
            .max_turns(3)
            .deadline(Duration::from_secs(2)),
        &servers,
    );
    let step = runtime.block_on(agent.run()).expect("run");
    assert_eq!(
        step.outcome,
        ptc_turn::StepOutcome::Failed {
            kind: ptc_turn::FailureKind::Timeout,
            reason: "the run did not finish within its deadline of 2.0 s; turn 2 was cut off"
                .into(),
            value: None,
            llm_errors: Vec::new(),
        }
    );
    // initialize is request 0, tools/list 1, the hanging call 2.
    assert_eq!(cancelled_requests(&servers, &runtime), "{:cancelled [2]}");
    runtime.block_on(servers.close());
}

#[test]
fn a_run_that_ends_cancels_the_calls_it_was_waiting_for() {
    let runtime = support::runtime();
    let servers = runtime.block_on(support::connect(vec![support::fault(
        &[],
        Duration::from_secs(60),
    )]));
    let llm = ScriptedLlm::new([reply("(tool/hang)")]);
    let agent = support::agent_with(
        Agent::builder("Wait forever").llm(llm).max_turns(1),
        &servers,
    );
    let ended =
        runtime.block_on(async { tokio::time::timeout(Duration::from_secs(2), agent.run()).await });
    assert!(ended.is_err(), "the run should still be waiting");
    // initialize is request 0, tools/list 1, the hanging call 2.
    assert_eq!(cancelled_requests(&servers, &runtime), "{:cancelled [2]}");
    runtime.block_on(servers.close());
}
