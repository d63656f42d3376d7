//! `pmap` and `pcalls` run host tool calls concurrently and record them in item order.

use pretty_assertions::assert_eq;
use ptc_lisp::pr_str;
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

/// A runtime with a `count` tool that counts the calls it receives. `(tool/count n)` returns
/// `n`, or a string of `n` bytes for `n` of 1,000 or more.
fn runtime_with_counting_tool(received: Arc<AtomicUsize>, limits: ptc_lisp::Limits) -> Runtime {
    let tools = Tools::new().with(
        ToolSpec::new(
            "count",
            "Counts its calls; returns n, or n bytes for large n",
        )
        .with_params(["n"]),
        move |args: &[Value]| {
            received.fetch_add(1, Ordering::SeqCst);
            match args {
                [Value::Int(n)] if *n >= 1_000 => Ok(Value::string("x".repeat(*n as usize))),
                [x] => Ok(x.clone()),
                _ => Err(ptc_lisp::ToolError::new("expected one argument")),
            }
        },
    );
    Runtime::new().with_tools(tools).with_limits(limits)
}

/// The recorded calls as `name(args) => result`, results longer than 20 characters shown by
/// their length.
fn recorded_calls(out: &ptc_lisp::RunOutcome) -> Vec<String> {
    out.tool_calls
        .iter()
        .map(|c| {
            let args = c.args.iter().map(pr_str).collect::<Vec<_>>().join(" ");
            let result = match &c.result {
                ToolOutcome::Ok(Value::Str(s)) if s.len() > 20 => format!("{} bytes", s.len()),
                ToolOutcome::Ok(v) => pr_str(v),
                ToolOutcome::Error(message) => format!("error: {message}"),
            };
            format!("{}({args}) => {result}", c.name)
        })
        .collect()
}

fn error_of(out: &ptc_lisp::RunOutcome) -> (ptc_lisp::ErrorKind, String) {
    match &out.outcome {
        Outcome::Error(e) => (e.kind, e.message.clone()),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn a_throwing_item_keeps_the_tool_calls_of_every_item_in_item_order() {
    let received = Arc::new(AtomicUsize::new(0));
    let runtime = runtime_with_counting_tool(received.clone(), ptc_lisp::Limits::default());
    let program = r#"
        (pmap (fn [x]
                (tool/count x)
                (when (= x 2) (throw (ex-info "item 2 is bad" {:x x})))
                (tool/count (* 10 x)))
              [1 2 3 4])"#;
    let out = runtime.run_str(program, &UserNamespace::new());
    assert_eq!(
        error_of(&out),
        (ptc_lisp::ErrorKind::Thrown, "item 2 is bad".to_string())
    );
    assert_eq!(
        recorded_calls(&out),
        vec![
            "count(1) => 1",
            "count(10) => 10",
            "count(2) => 2",
            "count(3) => 3",
            "count(30) => 30",
            "count(4) => 4",
            "count(40) => 40",
        ]
    );
    assert_eq!(received.load(Ordering::SeqCst), 7);
}

#[test]
fn the_first_failing_item_is_the_error_and_later_limits_lose_no_tool_call() {
    // Item 0 throws; taking back item 2 goes over the output limit. The error is item 0's,
    // and the calls of items 2 and 3 are recorded all the same.
    let received = Arc::new(AtomicUsize::new(0));
    let runtime = runtime_with_counting_tool(
        received.clone(),
        ptc_lisp::Limits {
            max_output_bytes: 40,
            ..ptc_lisp::Limits::default()
        },
    );
    let program = r#"
        (pmap (fn [x]
                (tool/count x)
                (when (zero? x) (throw (ex-info "item 0 is bad" {})))
                (println "item" x "prints 20 bytes")
                (tool/count (* 10 x)))
              [0 1 2 3])"#;
    let out = runtime.run_str(program, &UserNamespace::new());
    assert_eq!(
        error_of(&out),
        (ptc_lisp::ErrorKind::Thrown, "item 0 is bad".to_string())
    );
    // 22 bytes each: the second item's print does not fit.
    assert_eq!(out.prints, vec!["item 1 prints 20 bytes"]);
    assert_eq!(
        recorded_calls(&out),
        vec![
            "count(0) => 0",
            "count(1) => 1",
            "count(10) => 10",
            "count(2) => 2",
            "count(20) => 20",
            "count(3) => 3",
            "count(30) => 30",
        ]
    );
    assert_eq!(received.load(Ordering::SeqCst), 7);
}

#[test]
fn merged_workers_over_the_memory_limit_keep_every_tool_call() {
    // Each item has a fifth of the budget. Items 1 and 3 receive more than that and stop with
    // the memory limit; together they are also over the run's budget when their memory is
    // taken back, at item 3. The calls of items 3 and 4 happened all the same.
    let received = Arc::new(AtomicUsize::new(0));
    let runtime = runtime_with_counting_tool(
        received.clone(),
        ptc_lisp::Limits {
            max_memory_bytes: 100_000,
            ..ptc_lisp::Limits::default()
        },
    );
    let out = runtime.run_str(
        "(pmap #(tool/count %) [10 60000 11 60000 12])",
        &UserNamespace::new(),
    );
    assert_eq!(error_of(&out).0, ptc_lisp::ErrorKind::MemoryLimit);
    assert_eq!(
        recorded_calls(&out),
        vec![
            "count(10) => 10",
            "count(60000) => 60000 bytes",
            "count(11) => 11",
            "count(60000) => 60000 bytes",
            "count(12) => 12",
        ]
    );
    assert_eq!(received.load(Ordering::SeqCst), 5);
    assert!(
        out.stats.memory_bytes > 100_000,
        "the workers' memory counts: {}",
        out.stats.memory_bytes
    );
}

#[test]
fn worker_prints_over_the_output_limit_keep_every_tool_call() {
    // Each item may print up to the run's remaining output, so each one's 30 bytes fit; taken
    // back together in item order they do not. The prints that fit are kept, the rest are
    // dropped as a sequential run would never have made them; every tool call is kept.
    let received = Arc::new(AtomicUsize::new(0));
    let runtime = runtime_with_counting_tool(
        received.clone(),
        ptc_lisp::Limits {
            max_output_bytes: 80,
            ..ptc_lisp::Limits::default()
        },
    );
    let program = r#"
        (println "before")
        (pcalls (fn [] (println "first item printed 30 bytes!!") (tool/count 1))
                (fn [] (tool/count 2) (println "second item printed 30 bytes!"))
                (fn [] (println "third item printed 30 bytes!!!") (tool/count 3))
                (fn [] (tool/count 4) (println "fourth item printed 30 bytes!") (tool/count 40)))
        (tool/count 5)"#;
    let out = runtime.run_str(program, &UserNamespace::new());
    let (kind, message) = error_of(&out);
    assert_eq!(kind, ptc_lisp::ErrorKind::OutputLimit, "{message}");
    assert_eq!(
        out.prints,
        vec![
            "before",
            "first item printed 30 bytes!!",
            "second item printed 30 bytes!"
        ]
    );
    assert_eq!(
        recorded_calls(&out),
        vec![
            "count(1) => 1",
            "count(2) => 2",
            "count(3) => 3",
            "count(4) => 4",
            "count(40) => 40",
        ]
    );
    assert_eq!(received.load(Ordering::SeqCst), 5);
}

#[test]
fn items_started_after_slow_tool_calls_keep_the_whole_time_limit() {
    // 20 items on 8 threads: the last ones start after two rounds of 60 ms calls, longer
    // together than the 100 ms time limit, which counts evaluation only.
    let tools = Tools::new().with(
        ToolSpec::new("slow", "Waits 60 ms, then returns its argument").with_params(["x"]),
        |args: &[Value]| {
            std::thread::sleep(Duration::from_millis(60));
            Ok(args.first().cloned().unwrap_or_default())
        },
    );
    let limits = ptc_lisp::Limits {
        timeout: Duration::from_millis(100),
        ..ptc_lisp::Limits::default()
    };
    let out = Runtime::new()
        .with_tools(tools)
        .with_limits(limits)
        .run_str(
            "(reduce + (pmap tool/slow (range 20)))",
            &UserNamespace::new(),
        );
    assert_eq!(out.outcome, Outcome::Value(Value::Int(190)));
}
