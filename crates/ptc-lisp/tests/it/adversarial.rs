//! Adversarial programs: every case in `tests/adversarial/*.txt` must end with a clean, typed
//! error within 1.5 times its configured limits, and the process must keep running.
//!
//! Case format:
//!
//! ```text
//! ;; ==== case-name
//! ;; limits: timeout_ms=200 max_steps=1000     (optional; see `limits_from`)
//! (program ...)                                (`{{repeat N "text"}}` expands to text N times)
//! ;; !! error[kind] line:col: message           (the exact error the run must end with)
//! ```
//!
//! Every case runs under the defaults of [`base_limits`] (200 ms, 64 MiB, 100 ms per tool call)
//! unless it says otherwise, against the tools of [`fixture`]. The wall-clock time of the whole
//! run (reading, analysis, evaluation and tool calls) must stay within 1.5 times the case's
//! budget (its timeout plus the time its tool calls were allowed to take) plus one second for a
//! busy machine's scheduling: a run the sandbox failed to stop overshoots by far more. This is
//! the one test file with a timing assertion; the limits are small so that it stays fast.
//!
//! `UPDATE_GOLDEN=1 cargo test -p ptc-lisp --test it adversarial` rewrites the expectation
//! lines (review the diff).

use crate::limits::limits_from;
use crate::rewrite;

use pretty_assertions::assert_eq;
use ptc_lisp::pr_str;
use ptc_lisp::{
    Limits, Outcome, RunOutcome, Runtime, ToolError, ToolSpec, Tools, UserNamespace, Value,
};
use std::time::{Duration, Instant};

/// The limits every case starts from.
fn base_limits() -> Limits {
    Limits {
        timeout: Duration::from_millis(200),
        max_memory_bytes: 16 << 20,
        tool_timeout: Some(Duration::from_millis(100)),
        ..Limits::default()
    }
}

fn fixture() -> Runtime {
    let tools = Tools::new()
        .with(
            ToolSpec::new("echo", "Returns its arguments").with_params(["x"]),
            |args: &[Value]| Ok(Value::vector(args.iter().cloned())),
        )
        .with(
            ToolSpec::new("panics", "A tool with a bug"),
            |_args: &[Value]| -> Result<Value, ToolError> {
                panic!("index out of range in the tool")
            },
        )
        .with(
            ToolSpec::new("hangs", "A tool that never answers"),
            |_args: &[Value]| -> Result<Value, ToolError> {
                loop {
                    std::thread::park();
                }
            },
        )
        .with(
            ToolSpec::new("fails", "A tool that always fails"),
            |_args: &[Value]| Err(ToolError::new("the service is down")),
        )
        .with(
            ToolSpec::new("big", "Returns n items").with_params(["n"]),
            |args: &[Value]| {
                let n = args.first().and_then(Value::as_int).unwrap_or(0);
                Ok(Value::vector((0..n.min(10_000_000)).map(Value::Int)))
            },
        );
    Runtime::new().with_tools(tools)
}

struct Case {
    name: String,
    line: usize,
    limits: Vec<(String, String)>,
    source: String,
    expect: Vec<String>,
}

fn parse_cases(text: &str, file: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(name) = line.strip_prefix(";; ==== ") {
            cases.push(Case {
                name: name.trim().to_string(),
                line: i + 1,
                limits: Vec::new(),
                source: String::new(),
                expect: Vec::new(),
            });
            continue;
        }
        let Some(case) = cases.last_mut() else {
            assert!(
                line.trim().is_empty() || line.starts_with(";;"),
                "{file}:{}: text before the first case",
                i + 1
            );
            continue;
        };
        if let Some(limits) = line.strip_prefix(";; limits:") {
            for setting in limits.split_whitespace() {
                let (k, v) = setting
                    .split_once('=')
                    .unwrap_or_else(|| panic!("{file}:{}: bad limit {setting}", i + 1));
                case.limits.push((k.to_string(), v.to_string()));
            }
        } else if line.starts_with(";; !!") || line.starts_with(";; =>") {
            case.expect.push(line.to_string());
        } else if !line.starts_with(";;") {
            case.source.push_str(line);
            case.source.push('\n');
        }
    }
    cases
}

/// Expand `{{repeat N "text"}}` (text may use `\n`, `\"` and `\\`; `{i}` in it becomes the
/// repetition's number).
fn expand(source: &str) -> String {
    let mut out = String::new();
    let mut rest = source;
    while let Some(start) = rest.find("{{repeat ") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "{{repeat ".len()..];
        let end = after.find("\"}}").expect("unterminated {{repeat ...}}") + 1;
        let (count, text) = after[..end].split_once(' ').expect("{{repeat N \"text\"}}");
        let count: usize = count.parse().expect("repeat count is a number");
        let text = text
            .trim()
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .expect("repeat text is quoted");
        let text = text
            .replace("\\n", "\n")
            .replace("\\\"", "\"")
            .replace("\\\\", "\\");
        if text.contains("{i}") {
            for i in 0..count {
                out.push_str(&text.replace("{i}", &i.to_string()));
            }
        } else {
            out.push_str(&text.repeat(count));
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Time a run may lose waiting for a core on a machine busy with other work.
const SCHEDULING_ALLOWANCE: Duration = Duration::from_secs(1);

/// What a run may take: its evaluation timeout plus the time its tool calls were allowed.
fn budget(limits: &Limits, out: &RunOutcome) -> Duration {
    let per_call = limits.tool_timeout.unwrap_or(Duration::MAX);
    let tools: Duration = out
        .tool_calls
        .iter()
        .map(|c| c.duration().min(per_call))
        .sum();
    limits.timeout + tools
}

fn describe(out: &RunOutcome) -> String {
    match &out.outcome {
        // Where a timeout strikes depends on how fast the machine ran, so it is left out.
        Outcome::Error(e) if e.kind == ptc_lisp::ErrorKind::Timeout => {
            format!(";; !! error[timeout] {}", e.message)
        }
        Outcome::Error(e) => format!(";; !! {}", e.render()),
        Outcome::Value(v) => format!(";; => {}", pr_str(v)),
        Outcome::Returned(v) => format!(";; => (return) {}", pr_str(v)),
        Outcome::Failed(v) => format!(";; => (fail) {}", pr_str(v)),
    }
}

#[test]
fn adversarial_programs_end_with_typed_errors_within_their_limits() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/adversarial");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/adversarial exists")
        .map(|e| e.expect("readable dir").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    let runtime = fixture();
    let mut total = 0;
    let mut slow = Vec::new();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).expect("readable case file");
        let cases = parse_cases(&text, &file);
        let mut expected = Vec::new();
        let mut actual = Vec::new();
        let filter = std::env::var("ADVERSARIAL_FILTER").ok();
        for case in &cases {
            if filter
                .as_ref()
                .is_some_and(|f| !case.name.contains(f.as_str()))
            {
                continue;
            }
            total += 1;
            let limits = limits_from(base_limits(), &case.limits);
            let source = expand(&case.source);
            let runtime = runtime.clone().with_limits(limits.clone());
            let started = Instant::now();
            let out = runtime.run_str(&source, &UserNamespace::new());
            let elapsed = started.elapsed();
            let allowed = budget(&limits, &out).mul_f64(1.5) + SCHEDULING_ALLOWANCE;
            // Shown with --nocapture, to see how close each case comes to its budget.
            eprintln!(
                "{file}:{} {}: {elapsed:?} of {allowed:?}: {}",
                case.line,
                case.name,
                describe(&out)
            );
            if elapsed > allowed {
                slow.push(format!(
                    "{file}:{} {}: took {elapsed:?}, allowed {allowed:?}",
                    case.line, case.name
                ));
            }
            if let Some(e) = out.outcome.error() {
                assert!(
                    !e.message.is_empty(),
                    "{file}:{} {}: an error without a message",
                    case.line,
                    case.name
                );
            }
            let label = format!("{file}:{} {}", case.line, case.name);
            expected.push(format!("{label}\n{}", case.expect.join("\n")));
            actual.push(format!("{label}\n{}", describe(&out)));
        }
        if update {
            std::fs::write(&path, rewrite(&text, &actual)).expect("writable case file");
        } else {
            assert_eq!(expected.join("\n\n"), actual.join("\n\n"), "in {file}");
        }
        for line in &actual {
            assert!(
                line.contains(";; !! error["),
                "every adversarial case must end with an error:\n{line}"
            );
        }
    }
    assert_eq!(slow, Vec::<String>::new(), "cases over their time budget");
    if std::env::var_os("ADVERSARIAL_FILTER").is_some() {
        return;
    }
    assert!(
        total >= 40,
        "expected at least 40 adversarial cases, found {total}"
    );
}

/// The file with each case's expectation line replaced by the actual one.
fn rewrite(text: &str, actual: &[String]) -> String {
    rewrite::rewrite(
        text,
        actual,
        |line| line.starts_with(";; ==== "),
        |line| line.starts_with(";; !!") || line.starts_with(";; =>"),
    )
}

/// Programs at the edge of the nesting limits run to completion: the defenses above (stack
/// segments, depth limits) must not refuse or crash what is allowed. Run on a thread with a
/// 2 MiB stack, the default for spawned threads, where a host is likely to run programs.
#[test]
fn programs_at_the_nesting_limits_run() {
    let cases: Vec<(String, &str)> =
        vec![
        // 199 levels of source nesting (the reader allows 200).
        (expand(r#"{{repeat 199 "(inc "}}0{{repeat 199 ")"}}"#), "199"),
        // `->` expanding to 990 levels (expansion allows 1,000).
        (expand(r#"(-> 0 {{repeat 990 "inc "}})"#), "990"),
        (expand(r#"(cond {{repeat 990 "false 1 "}} :else :last)"#), ":last"),
        // A value 999 levels deep, built, printed, compared and dropped.
        (
            "(let [v (loop [v [] i 0] (if (< i 998) (recur [v] (inc i)) v))] \
             [(count (str v)) (= v (vec v))])"
                .to_string(),
            "[1998 true]",
        ),
        // Closures holding closures, 990 deep, called and dropped.
        (
            "(let [f (loop [f (fn [] 0) i 0] (if (< i 990) (recur (fn [] (inc (f))) (inc i)) f))] \
             (f))"
                .to_string(),
            "990",
        ),
        // A lazy sequence made from 900 others, realized.
        (
            "(let [s (loop [s (range) i 0] (if (< i 900) (recur (map inc s) (inc i)) s))] \
             (vec (take 3 s)))"
                .to_string(),
            "[900 901 902]",
        ),
        // A comp chain 900 long.
        (
            "((loop [f identity i 0] (if (< i 900) (recur (comp f inc) (inc i)) f)) 0)".to_string(),
            "900",
        ),
    ];
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let runtime = Runtime::new();
            cases
                .iter()
                .map(|(source, _)| {
                    let out = runtime.run_str(source, &UserNamespace::new());
                    describe(&out)
                })
                .collect::<Vec<_>>()
        })
        .expect("thread starts");
    let actual = handle.join().expect("no stack overflow");
    let expected: Vec<String> = [
        "199",
        "990",
        ":last",
        "[1998 true]",
        "990",
        "[900 901 902]",
        "900",
    ]
    .iter()
    .map(|v| format!(";; => {v}"))
    .collect();
    assert_eq!(actual, expected);
}
