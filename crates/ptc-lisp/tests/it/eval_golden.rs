//! Golden tests of the evaluator: programs and their expected outcomes, as data.
//!
//! Each file in `tests/eval/` holds cases:
//!
//! ```text
//! ;; ==== case-name (REQUIREMENT-IDS covered, if any)
//! ;; limits: max_steps=1000 timeout_ms=50     (optional)
//! (program ...)
//! ;; => value                                  (the program ran to its end)
//! ;; return => value | ;; fail => value         (it called return / fail)
//! ;; !! error[kind] line:col: message           (it failed with this error)
//! ;; prints: ["one entry", "another"]           (optional: exact println entries)
//! ;; tools: ["fetch-users(\"admin\")"]           (optional: exact tool calls, with args)
//! ;; ---- next turn                             (optional: another program run with the
//!                                               memory the previous one left)
//! ```
//!
//! Every case runs against the same fixture: the tools and data built by `fixture()`.
//! `UPDATE_GOLDEN=1 cargo test -p ptc-lisp --test it eval_golden` rewrites the expectation lines in place
//! (review the diff before committing).

use crate::limits::limits_from;
use crate::rewrite;

use pretty_assertions::assert_eq;
use ptc_lisp::pr_str;
use ptc_lisp::{
    Limits, Outcome, RunOutcome, Runtime, ToolError, ToolOutcome, ToolSpec, Tools, UserNamespace,
    Value,
};
use std::time::Duration;

fn fixture() -> Runtime {
    let tools = Tools::new()
        .with(
            ToolSpec::new("fetch-users", "Users with a role").with_params(["role"]),
            |args: &[Value]| {
                let role = args.first().map(pr_str).unwrap_or_default();
                Ok(ptc_lisp::from_json_str(&format!(
                    r#"[{{"name": "Ann", "role": {role}}}, {{"name": "Bo", "role": {role}}}]"#
                ))
                .expect("fixture JSON"))
            },
        )
        .with(
            ToolSpec::new("send-email", "Sends an email").with_params(["message"]),
            |_args: &[Value]| Ok(Value::Nil),
        )
        .with(
            ToolSpec::new("get-inventory", "Stock levels"),
            |_args: &[Value]| Ok(Value::map([(Value::keyword("laptop"), Value::Int(3))])),
        )
        .with(
            ToolSpec::new("broken", "Always fails"),
            |_args: &[Value]| Err(ToolError::new("the service is down")),
        )
        .with(
            ToolSpec::new("panics", "Panics"),
            |_args: &[Value]| -> Result<Value, ToolError> { panic!("tool bug") },
        )
        .with(
            ToolSpec::new("slow", "Never answers in time"),
            |_args: &[Value]| {
                std::thread::sleep(Duration::from_millis(300));
                Ok(Value::Nil)
            },
        )
        .with(
            ToolSpec::new("report", "Both a tool and a data key"),
            |_args: &[Value]| Ok(Value::Nil),
        );
    let data = ptc_lisp::from_json_str(
        r#"{
            "products": [
                {"name": "Laptop", "price": 1200, "category": "electronics"},
                {"name": "Mouse", "price": 25, "category": "electronics"},
                {"name": "Desk", "price": 300, "category": "furniture"}
            ],
            "count": 99,
            "report": "quarterly",
            "config": {"threshold": 100, "mode": "strict"}
        }"#,
    )
    .expect("fixture JSON");
    Runtime::new()
        .with_tools(tools)
        .with_data_map(&data)
        .expect("fixture data is a map")
}

#[derive(Default)]
struct Turn {
    limits: Vec<(String, String)>,
    program: String,
    expect: Vec<String>,
}

struct Case {
    name: String,
    line: usize,
    turns: Vec<Turn>,
}

fn is_expectation(line: &str) -> bool {
    [
        ";; =>",
        ";; return =>",
        ";; fail =>",
        ";; !!",
        ";; prints:",
        ";; tools:",
    ]
    .iter()
    .any(|p| line.starts_with(p))
}

fn parse_cases(text: &str, file: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(name) = line.strip_prefix(";; ==== ") {
            cases.push(Case {
                name: name.trim().to_string(),
                line: i + 1,
                turns: vec![Turn::default()],
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
        if line.starts_with(";; ----") {
            case.turns.push(Turn::default());
            continue;
        }
        let turn = case.turns.last_mut().expect("at least one turn");
        if let Some(limits) = line.strip_prefix(";; limits:") {
            for setting in limits.split_whitespace() {
                let (k, v) = setting
                    .split_once('=')
                    .unwrap_or_else(|| panic!("{file}:{}: bad limit {setting}", i + 1));
                turn.limits.push((k.to_string(), v.to_string()));
            }
        } else if is_expectation(line) {
            turn.expect.push(line.to_string());
        } else if !line.starts_with(";;") {
            turn.program.push_str(line);
            turn.program.push('\n');
        }
    }
    cases
}

/// The expectation lines an outcome produces, in the order the files use.
fn describe(out: &RunOutcome, want_prints: bool, want_tools: bool) -> Vec<String> {
    let mut lines = vec![match &out.outcome {
        Outcome::Value(v) => format!(";; => {}", pr_str(v)),
        Outcome::Returned(v) => format!(";; return => {}", pr_str(v)),
        Outcome::Failed(v) => format!(";; fail => {}", pr_str(v)),
        Outcome::Error(e) => format!(";; !! {}", e.render()),
    }];
    if want_prints || !out.prints.is_empty() {
        lines.push(format!(
            ";; prints: {}",
            serde_json::to_string(&out.prints).expect("strings serialize")
        ));
    }
    if want_tools || !out.tool_calls.is_empty() {
        let calls: Vec<String> = out
            .tool_calls
            .iter()
            .map(|c| {
                let args: Vec<String> = c.args.iter().map(pr_str).collect();
                let failed = match &c.result {
                    ToolOutcome::Ok(_) => String::new(),
                    ToolOutcome::Error(e) => format!(" !! {e}"),
                };
                format!("{}({}){failed}", c.name, args.join(" "))
            })
            .collect();
        lines.push(format!(
            ";; tools: {}",
            serde_json::to_string(&calls).expect("strings serialize")
        ));
    }
    lines
}

#[test]
fn golden_programs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/eval");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/eval exists")
        .map(|e| e.expect("readable dir").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    let mut total = 0;
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).expect("readable case file");
        let cases = parse_cases(&text, &file);
        let mut expected_all = Vec::new();
        let mut actual_all = Vec::new();
        for case in &cases {
            total += 1;
            let mut memory = UserNamespace::new();
            for (t, turn) in case.turns.iter().enumerate() {
                let runtime = fixture().with_limits(limits_from(Limits::default(), &turn.limits));
                let out = runtime.run_str(&turn.program, &memory);
                let want_prints = turn.expect.iter().any(|l| l.starts_with(";; prints:"));
                let want_tools = turn.expect.iter().any(|l| l.starts_with(";; tools:"));
                let actual = describe(&out, want_prints, want_tools);
                let label = format!("{file}:{} {} (turn {})", case.line, case.name, t + 1);
                expected_all.push(format!("{label}\n{}", turn.expect.join("\n")));
                actual_all.push(format!("{label}\n{}", actual.join("\n")));
                memory = out.namespace;
            }
        }
        if update {
            std::fs::write(&path, rewrite(&text, &actual_all)).expect("writable case file");
        } else {
            assert_eq!(
                expected_all.join("\n\n"),
                actual_all.join("\n\n"),
                "in {file}"
            );
        }
    }
    assert!(
        total >= 100,
        "expected at least 100 golden cases, found {total}"
    );
}

/// The file with each turn's expectation lines replaced by the actual ones.
fn rewrite(text: &str, actual: &[String]) -> String {
    rewrite::rewrite(
        text,
        actual,
        |line| line.starts_with(";; ==== ") || line.starts_with(";; ----"),
        is_expectation,
    )
}
