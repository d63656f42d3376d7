//! `ptc eval` end to end: program sources, data and tool files, output modes, errors.

use pretty_assertions::assert_eq;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn temp(name: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ptc-eval-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).expect("write a test file");
    path
}

fn ptc(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ptc");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("piped stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
    }
    child.wait_with_output().expect("ptc finishes")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_expression_prints_its_output_then_its_result() {
    let program = r#"(println "hi" 1) {:a [1 2.0 "x"]}"#;
    let out = ptc(&["eval", "-e", program], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "hi 1\n{:a [1 2.0 \"x\"]}\n");
    assert_eq!(stderr(&out), "");
    let out = ptc(&["eval", "--prints-to-stderr", "-e", program], None);
    assert_eq!(stdout(&out), "{:a [1 2.0 \"x\"]}\n");
    assert_eq!(stderr(&out), "hi 1\n");
}

#[test]
fn a_program_comes_from_a_file_or_standard_input() {
    let file = temp("prog.clj", "(defn sq [x] (* x x))\n(map sq [1 2 3])\n");
    let out = ptc(&["eval", file.to_str().expect("utf-8 path")], None);
    assert_eq!(stdout(&out), "(1 4 9)\n");
    let out = ptc(&["eval", "-"], Some("(reduce + (range 5))"));
    assert_eq!(stdout(&out), "10\n");
}

#[test]
fn data_keys_and_fixture_tools_are_available() {
    let data = temp(
        "data.json",
        r#"{"products": [{"name": "Desk", "price": 300}, {"name": "Pen", "price": 2}]}"#,
    );
    let tools = temp(
        "tools.json",
        r#"{"get-rate": {"description": "VAT rate", "params": ["country"], "returns": 0.25}}"#,
    );
    let program = r#"(let [rate (tool/get-rate "SE")] (->> data/products (map :price) (reduce +) (* (+ 1 rate))))"#;
    let out = ptc(
        &[
            "eval",
            "--data",
            data.to_str().expect("utf-8"),
            "--tools",
            tools.to_str().expect("utf-8"),
            "-e",
            program,
        ],
        None,
    );
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), "377.5\n".to_string())
    );
}

#[test]
fn json_output_reports_result_prints_tool_calls_and_errors() {
    let tools = temp(
        "tools-json.json",
        r#"{"ping": {"description": "Ping", "returns": {"z": "pong", "a": [1.5, null]}}}"#,
    );
    let out = ptc(
        &[
            "eval",
            "--json",
            "--tools",
            tools.to_str().expect("utf-8"),
            "-e",
            r#"(println "calling") (tool/ping {:n 1})"#,
        ],
        None,
    );
    let mut report: serde_json::Value =
        serde_json::from_str(&stdout(&out)).expect("one JSON object");
    report["tool_calls"][0]["duration_us"] = 0.into();
    assert_eq!(
        report,
        serde_json::json!({
            "schema": 1,
            "command": "eval",
            "ok": true,
            "value": {"z": "pong", "a": [1.5, null]},
            "value_clojure": "{:z \"pong\", :a [1.5 nil]}",
            "prints": ["calling"],
            "tool_calls": [{
                "name": "ping",
                "args": [{"n": 1}],
                "args_clojure": ["{:n 1}"],
                "result": {"z": "pong", "a": [1.5, null]},
                "result_clojure": "{:z \"pong\", :a [1.5 nil]}",
                "duration_us": 0
            }],
            "error": null
        })
    );
    let out = ptc(
        &["eval", "--json", "-e", "(+ 1\n  (undefined-thing))"],
        None,
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        report["error"],
        serde_json::json!({
            "kind": "undefined_symbol",
            "message": "undefined symbol undefined-thing",
            "line": 2,
            "column": 4,
            "rendered": "error[undefined_symbol] 2:4: undefined symbol undefined-thing"
        })
    );
}

#[test]
fn a_repeat_of_zero_is_refused() {
    let out = ptc(&["eval", "--repeat", "0", "-e", "1"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: invalid value '0' for '--repeat <N>'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn fixture_tools_check_their_arity() {
    let tools = temp(
        "tools-arity.json",
        r#"{"notify": {"description": "Tell", "params": ["to", "text"], "returns": "sent"}}"#,
    );
    let out = ptc(
        &[
            "eval",
            "--tools",
            tools.to_str().expect("utf-8"),
            "-e",
            "(tool/notify \"ann\")",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with(
            "error[tool]: tool/notify failed: tool/notify takes 2 arguments (to text), got 1\n"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_failing_program_exits_1_with_kind_message_and_its_source_line() {
    let out = ptc(&["eval", "-e", "(let [x 1]\n  (nth [x] 5))"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "error[index]: nth: index 5 is out of bounds for a vector of 1 items\n \
         --> <expr>:2:3\n  |\n2 |   (nth [x] 5))\n  |   ^^^^^^^^^^^\n"
    );
    let out = ptc(&["eval", "-e", "(+ 1 2"], None);
    assert_eq!(
        stderr(&out),
        "error[parse]: unclosed '(' opened at 1:1\n --> <expr>:1:7\n  |\n1 | (+ 1 2\n  |       \
         ^\n"
    );
    let file = temp("broken.clj", "(def a 1)\n(str a b)\n");
    let out = ptc(&["eval", file.to_str().expect("utf-8")], None);
    assert_eq!(
        stderr(&out),
        format!(
            "error[undefined_symbol]: undefined symbol b\n --> {}:2:8\n  |\n2 | (str a b)\n  |  \
             \x20     ^\n",
            file.display()
        )
    );
}

#[test]
fn a_program_over_the_size_limit_is_an_error_where_the_limit_is_crossed() {
    // 1,100 lines of 1,024 bytes: the 1 MiB limit ends with line 1,024.
    let line = format!("{:<1023}\n", "(inc 1)");
    let program = line.repeat(1100);
    let out = ptc(&["eval", "-"], Some(&program));
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out).lines().take(2).collect::<Vec<_>>(),
        [
            "error[program_limit]: program is 1126400 bytes; the limit is 1048576 bytes: split \
             the work into smaller programs",
            "    --> <stdin>:1025:1"
        ]
    );
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn a_program_that_calls_fail_exits_1_like_an_error_at_the_fail_form() {
    let out = ptc(
        &[
            "eval",
            "-e",
            "(println \"checking\")\n(when true\n  (fail \"x\"))",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "checking\n");
    assert_eq!(
        stderr(&out),
        "error[failed]: \"x\"\n --> <expr>:3:3\n  |\n3 |   (fail \"x\"))\n  |   ^\n"
    );
    let out = ptc(&["eval", "--json", "-e", "(fail {:code 4})"], None);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    assert_eq!(
        report["error"],
        serde_json::json!({
            "kind": "failed",
            "message": "{:code 4}",
            "line": 1,
            "column": 1,
            "rendered": "error[failed] 1:1: {:code 4}"
        })
    );
}

#[test]
fn repeat_reports_median_parse_and_evaluate_times() {
    let out = ptc(&["eval", "--repeat", "5", "-e", "(+ 1 2)"], None);
    assert_eq!(stdout(&out), "3\n");
    let err = stderr(&out);
    assert!(
        err.starts_with("5 runs: median parse ") && err.contains(", median evaluate "),
        "{err}"
    );
}

#[test]
fn bad_input_files_are_reported_with_their_name() {
    let data = temp("bad.json", "[1, 2");
    let out = ptc(
        &["eval", "--data", data.to_str().expect("utf-8"), "-e", "1"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(&format!("error: {}: invalid JSON: EOF", data.display())),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_program_stopped_by_a_limit_exits_3() {
    let out = ptc(
        &[
            "eval",
            "--max-memory",
            "100000",
            "-e",
            "(vec (range 100000))",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        stderr(&out),
        "error[memory_limit]: memory limit exceeded: the values built by this program exceed \
         100000 bytes; work on smaller pieces (take, filter first) instead of materializing \
         everything\n --> <expr>:1:1\n  |\n1 | (vec (range 100000))\n  | ^^^^^^^^^^^^^^^^^^^^\n"
    );
    let out = ptc(
        &[
            "eval",
            "--max-steps",
            "1000",
            "-e",
            "(loop [i 0] (recur (inc i)))",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).starts_with(
            "error[step_limit]: step limit exceeded: the program took more than 1000 evaluation \
             steps; look for an infinite loop or process less data per turn\n"
        ),
        "{}",
        stderr(&out)
    );
    // Each flag changes its own limit only.
    let out = ptc(
        &[
            "eval",
            "--max-steps",
            "1000",
            "--max-memory",
            "100000",
            "--timeout-ms",
            "5000",
            "-e",
            "(count (vec (range 100)))",
        ],
        None,
    );
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), "100\n".to_string())
    );
}
