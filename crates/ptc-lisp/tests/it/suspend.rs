//! Runs that suspend at host-answered tool calls (`Runtime::start`): what they ask for, how
//! they go on, on any thread, and how limits hold while they wait.

use pretty_assertions::assert_eq;
use ptc_lisp::{
    Error, ErrorKind, Limits, Progress, RunOutcome, Runtime, SuspendedRun, ToolAnswer, ToolOutcome,
    ToolSpec, Tools, UserNamespace, Value, pr_str,
};
use std::time::Duration;

/// A runtime whose `double` and `echo` tools are answered by the host.
fn runtime(limits: Limits) -> Runtime {
    let mut tools = Tools::new();
    tools.insert_awaited(ToolSpec::new("double", "Twice n").with_params(["n"]));
    tools.insert_awaited(ToolSpec::new("echo", "Its argument").with_params(["x"]));
    Runtime::new().with_tools(tools).with_limits(limits)
}

/// What the host of these tests answers.
fn answer(name: &str, args: &[Value]) -> Value {
    match (name, args) {
        ("double", [Value::Int(n)]) => Value::Int(2 * n),
        (_, [x]) => x.clone(),
        _ => Value::Nil,
    }
}

/// The requests of each suspension, as `name args` lines.
type Waits = Vec<Vec<String>>;

/// Drive `progress` to its end, answering every call (each "took" 5 ms), resuming each time on
/// a new thread when `hop` is set.
fn drive(mut progress: Progress, hop: bool) -> (RunOutcome, Waits) {
    let mut waits = Vec::new();
    loop {
        match progress {
            Progress::Finished(out) => return (out, waits),
            Progress::Suspended(run) => {
                waits.push(
                    run.requests()
                        .iter()
                        .map(|r| {
                            let args: Vec<String> = r.args.iter().map(pr_str).collect();
                            format!("{} {}", r.name, args.join(" "))
                        })
                        .collect(),
                );
                let answers: Vec<ToolAnswer> = run
                    .requests()
                    .iter()
                    .map(|r| {
                        ToolAnswer::new(Ok(answer(&r.name, &r.args)), Duration::from_millis(5))
                    })
                    .collect();
                progress = if hop {
                    std::thread::spawn(move || run.resume(answers))
                        .join()
                        .expect("the resuming thread")
                } else {
                    run.resume(answers)
                };
            }
        }
    }
}

fn suspended(progress: Progress) -> SuspendedRun {
    match progress {
        Progress::Suspended(run) => run,
        Progress::Finished(out) => panic!("finished instead of waiting: {:?}", out.outcome),
    }
}

#[test]
fn a_run_waits_at_each_call_and_pmap_items_wait_together() {
    let source = "(def a (tool/double 1))
                  (println \"a\" a)
                  (def bs (pmap (fn [x] (+ a (tool/double x))) [10 20 30]))
                  (println \"bs\" bs)
                  (+ a (reduce + bs) (tool/echo 100))";
    let (out, waits) = drive(
        runtime(Limits::default()).start(source, &UserNamespace::new()),
        false,
    );
    assert_eq!(out.outcome.value(), Some(&Value::Int(2 + 126 + 100)));
    assert_eq!(
        waits,
        vec![
            vec!["double 1".to_string()],
            vec![
                "double 10".to_string(),
                "double 20".to_string(),
                "double 30".to_string()
            ],
            vec!["echo 100".to_string()],
        ]
    );
    assert_eq!(out.prints, ["a 2", "bs (22 42 62)"]);
    let recorded: Vec<(String, String, u64)> = out
        .tool_calls
        .iter()
        .map(|c| {
            let result = match &c.result {
                ToolOutcome::Ok(v) => pr_str(v),
                ToolOutcome::Error(e) => e.clone(),
            };
            (c.name.clone(), result, c.duration_us)
        })
        .collect();
    let call = |name: &str, result: &str| (name.to_string(), result.to_string(), 5_000);
    assert_eq!(
        recorded,
        [
            call("double", "2"),
            call("double", "20"),
            call("double", "40"),
            call("double", "60"),
            call("echo", "100"),
        ]
    );
    assert_eq!(out.namespace.get("a"), Some(&Value::Int(2)));
}

#[test]
fn a_run_resumed_on_other_threads_ends_as_on_one() {
    let source = "(defn total [xs] (reduce + (pmap tool/double xs)))
                  (str (total (range 20)) \" \" (tool/echo \"done\"))";
    let (here, here_waits) = drive(
        runtime(Limits::default()).start(source, &UserNamespace::new()),
        false,
    );
    let (hopped, hopped_waits) = drive(
        runtime(Limits::default()).start(source, &UserNamespace::new()),
        true,
    );
    assert_eq!(here.outcome.value(), Some(&Value::string("380 done")));
    assert_eq!(hopped.outcome, here.outcome);
    assert_eq!(hopped_waits, here_waits);
    // At most eight items at a time: 20 items wait in groups of 8, 8 and 4.
    let sizes: Vec<usize> = here_waits.iter().map(Vec::len).collect();
    assert_eq!(sizes, [8, 8, 4, 1]);
}

#[test]
fn deep_recursion_suspends_on_grown_stack_segments_and_still_hits_the_depth_limit() {
    let deep = "(defn down [n] (if (= n 0) (tool/echo 0) (+ 1 (down (dec n)))))";
    let (out, waits) = drive(
        runtime(Limits::default()).start(&format!("{deep} (down 1900)"), &UserNamespace::new()),
        true,
    );
    assert_eq!(out.outcome.value(), Some(&Value::Int(1900)));
    assert_eq!(waits.len(), 1);
    let (out, _) = drive(
        runtime(Limits::default()).start(&format!("{deep} (down 5000)"), &UserNamespace::new()),
        true,
    );
    assert_eq!(
        out.outcome.error().map(|e| e.kind),
        Some(ErrorKind::DepthLimit)
    );
}

#[test]
fn time_suspended_does_not_count_against_the_time_limit() {
    let limits = Limits {
        timeout: Duration::from_millis(50),
        ..Limits::default()
    };
    let run = suspended(runtime(limits).start("(+ 1 (tool/double 2))", &UserNamespace::new()));
    std::thread::sleep(Duration::from_millis(120));
    let (out, _) = drive(
        run.resume(vec![ToolAnswer::new(
            Ok(Value::Int(4)),
            Duration::from_millis(120),
        )]),
        false,
    );
    assert_eq!(out.outcome.value(), Some(&Value::Int(5)));
}

#[test]
fn a_stopped_run_ends_with_the_hosts_error_and_records_the_cancelled_calls() {
    let source = "(try (pmap tool/double [1 2]) (catch Exception e :caught))";
    let run = suspended(runtime(Limits::default()).start(source, &UserNamespace::new()));
    assert_eq!(run.requests().len(), 2);
    let Progress::Finished(out) =
        run.stop(Error::new(ErrorKind::Timeout, "the run's deadline passed"))
    else {
        panic!("the run went on");
    };
    let error = out.outcome.error().expect("an error");
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ErrorKind::Timeout, "the run's deadline passed")
    );
    let results: Vec<ToolOutcome> = out.tool_calls.iter().map(|c| c.result.clone()).collect();
    let cancelled =
        ToolOutcome::Error("the call was cancelled: the run's deadline passed".to_string());
    assert_eq!(results, [cancelled.clone(), cancelled]);
}

#[test]
fn missing_answers_and_tool_errors_are_the_programs_to_handle() {
    let source = "(try (tool/double 1) (catch Exception e (:message e)))";
    let run = suspended(runtime(Limits::default()).start(source, &UserNamespace::new()));
    let (out, _) = drive(run.resume(Vec::new()), false);
    assert_eq!(
        out.outcome.value(),
        Some(&Value::string(
            "tool/double failed: the host gave no answer"
        ))
    );
}

#[test]
fn a_dropped_run_is_unwound_and_the_thread_runs_on_unmetered() {
    let limits = Limits {
        max_steps: 10_000,
        ..Limits::default()
    };
    let run = suspended(runtime(limits).start(
        "(def big (vec (range 5000))) (tool/echo (count big))",
        &UserNamespace::new(),
    ));
    drop(run);
    // Host code on this thread walks values without the run's budget.
    let big = Value::vector((0..200_000).map(Value::Int));
    assert_eq!(pr_str(&big).len(), 1_288_891);
}

#[test]
fn a_run_that_cannot_suspend_reports_awaited_tools_as_tool_errors() {
    let out = runtime(Limits::default()).run_str("(tool/double 1)", &UserNamespace::new());
    let error = out.outcome.error().expect("an error");
    assert_eq!(error.kind, ErrorKind::Tool);
    assert_eq!(
        error.message,
        "tool/double failed: tool/double is answered by the host only in a run that can wait \
         for it; the host must run the program with Runtime::start"
    );
}

#[test]
fn a_program_that_does_not_read_finishes_at_once() {
    let progress = runtime(Limits::default()).start("(+ 1", &UserNamespace::new());
    let Progress::Finished(out) = progress else {
        panic!("a program that does not read cannot wait");
    };
    assert_eq!(out.outcome.error().map(|e| e.kind), Some(ErrorKind::Parse));
}

#[test]
fn pmap_items_started_after_long_waits_keep_the_whole_time_limit() {
    let limits = Limits {
        timeout: Duration::from_millis(100),
        ..Limits::default()
    };
    // 20 items, 8 at a time: three waits of 60 ms each, longer together than the time limit.
    let mut progress = runtime(limits).start(
        "(reduce + (pmap tool/double (range 20)))",
        &UserNamespace::new(),
    );
    let mut waits = 0;
    let out = loop {
        match progress {
            Progress::Finished(out) => break out,
            Progress::Suspended(run) => {
                waits += 1;
                std::thread::sleep(Duration::from_millis(60));
                let answers = run
                    .requests()
                    .iter()
                    .map(|r| {
                        ToolAnswer::new(Ok(answer(&r.name, &r.args)), Duration::from_millis(60))
                    })
                    .collect();
                progress = run.resume(answers);
            }
        }
    };
    assert_eq!(out.outcome.value(), Some(&Value::Int(380)));
    assert_eq!(waits, 3);
}
