//! `pmap` and `pcalls` run host tool calls concurrently and record them in item order.

use pretty_assertions::assert_eq;
use ptc_lisp::format::pr_str;
use ptc_lisp::{Outcome, Runtime, ToolOutcome, ToolSpec, Tools, UserNamespace, Value};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A runtime with a `wait` tool that sleeps 100 ms and returns its argument, and counts how many
/// calls run at the same moment.
fn runtime_with_slow_tool(peak: Arc<AtomicUsize>) -> Runtime {
    let running = Arc::new(AtomicUsize::new(0));
    let tools = Tools::new().with(
        ToolSpec::new("wait", "Waits 100 ms, then returns its argument").with_params(["x"]),
        move |args: &[Value]| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(100));
            running.fetch_sub(1, Ordering::SeqCst);
            Ok(args.first().cloned().unwrap_or_default())
        },
    );
    Runtime::new().with_tools(tools)
}

fn recorded_args(out: &ptc_lisp::RunOutcome) -> Vec<String> {
    out.tool_calls
        .iter()
        .map(|c| {
            assert!(matches!(c.result, ToolOutcome::Ok(_)), "{} failed", c.name);
            c.args.iter().map(pr_str).collect::<Vec<_>>().join(" ")
        })
        .collect()
}

#[test]
fn ten_slow_tool_calls_overlap_and_are_recorded_in_order() {
    let peak = Arc::new(AtomicUsize::new(0));
    let runtime = runtime_with_slow_tool(peak.clone());
    let started = Instant::now();
    let out = runtime.run_str("(pmap #(tool/wait %) (range 10))", &UserNamespace::new());
    let elapsed = started.elapsed();
    match &out.outcome {
        Outcome::Value(v) => assert_eq!(pr_str(v), "(0 1 2 3 4 5 6 7 8 9)"),
        other => panic!("pmap failed: {other:?}"),
    }
    // Run one after another, the calls take a second; eight at a time, two rounds of 100 ms.
    assert!(
        elapsed < Duration::from_millis(600),
        "ten 100 ms tool calls took {elapsed:?}"
    );
    assert!(
        peak.load(Ordering::SeqCst) > 1,
        "the calls never overlapped"
    );
    assert_eq!(
        recorded_args(&out),
        (0..10).map(|i| i.to_string()).collect::<Vec<_>>()
    );
}

#[test]
fn pcalls_record_tool_calls_and_prints_in_argument_order() {
    let peak = Arc::new(AtomicUsize::new(0));
    let runtime = runtime_with_slow_tool(peak.clone());
    let program = r#"
        (pcalls (fn [] (println "first") (tool/wait :a))
                (fn [] (tool/wait :b) (println "second") :done)
                (fn [] (println "third") (tool/wait :c)))"#;
    let out = runtime.run_str(program, &UserNamespace::new());
    match &out.outcome {
        Outcome::Value(v) => assert_eq!(pr_str(v), "(:a :done :c)"),
        other => panic!("pcalls failed: {other:?}"),
    }
    assert_eq!(out.prints, vec!["first", "second", "third"]);
    assert_eq!(recorded_args(&out), vec![":a", ":b", ":c"]);
    assert!(
        peak.load(Ordering::SeqCst) > 1,
        "the calls never overlapped"
    );
}

#[test]
fn parallel_items_share_the_tool_call_limit() {
    // Which items get the three calls depends on the threads' timing; how many do does not.
    let peak = Arc::new(AtomicUsize::new(0));
    let runtime = runtime_with_slow_tool(peak).with_limits(ptc_lisp::Limits {
        max_tool_calls: 3,
        ..ptc_lisp::Limits::default()
    });
    let out = runtime.run_str("(pmap tool/wait (range 6))", &UserNamespace::new());
    match &out.outcome {
        Outcome::Error(e) => assert_eq!(e.kind, ptc_lisp::ErrorKind::ToolCallLimit),
        other => panic!("expected the tool call limit, got {other:?}"),
    }
    assert_eq!(out.tool_calls.len(), 3);
}

#[test]
fn busy_workers_stop_at_the_run_timeout() {
    // More busy items than threads: each thread's items together must stay within the run's
    // remaining time, so the run ends with a timeout rather than item after item running out
    // its own full budget.
    let runtime = Runtime::new().with_limits(ptc_lisp::Limits {
        timeout: Duration::from_millis(100),
        max_steps: u64::MAX,
        ..ptc_lisp::Limits::default()
    });
    let out = runtime.run_str(
        "(pmap (fn [_] (loop [i 0] (recur (inc i)))) (range 20))",
        &UserNamespace::new(),
    );
    match &out.outcome {
        Outcome::Error(e) => assert_eq!(e.kind, ptc_lisp::ErrorKind::Timeout),
        other => panic!("expected a timeout, got {other:?}"),
    }
}
