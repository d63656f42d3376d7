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
fn an_expression_prints_its_result_and_output_goes_to_stderr() {
    let out = ptc(
        &["eval", "-e", r#"(println "hi" 1) {:a [1 2.0 "x"]}"#],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
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
        r#"{"ping": {"description": "Ping", "returns": "pong"}}"#,
    );
    let out = ptc(
        &[
            "eval",
            "--json",
            "--tools",
            tools.to_str().expect("utf-8"),
            "-e",
            r#"(println "calling") (tool/ping 1)"#,
        ],
        None,
    );
    let mut report: serde_json::Value =
        serde_json::from_str(&stdout(&out)).expect("one JSON object");
    report["tool_calls"][0]["duration_us"] = 0.into();
    assert_eq!(
        report,
        serde_json::json!({
            "ok": true,
            "result": "\"pong\"",
            "prints": ["calling"],
            "tool_calls": [{"name": "ping", "args": ["1"], "result": "\"pong\"", "duration_us": 0}],
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
fn a_failing_program_exits_1_with_kind_position_and_message() {
    let out = ptc(&["eval", "-e", "(let [x 1]\n  (nth [x] 5))"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "error[index] 2:3: nth: index 5 is out of bounds for a vector of 1 items\n"
    );
    let out = ptc(&["eval", "-e", "(+ 1 2"], None);
    assert_eq!(
        stderr(&out),
        "error[parse] 1:7: unclosed '(' opened at 1:1\n"
    );
}

#[test]
fn a_program_over_the_size_limit_is_an_error_where_the_limit_is_crossed() {
    // 1,100 lines of 1,024 bytes: the 1 MiB limit ends with line 1,024.
    let line = format!("{:<1023}\n", "(inc 1)");
    let program = line.repeat(1100);
    let out = ptc(&["eval", "-"], Some(&program));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        "error[program_limit] 1025:1: program is 1126400 bytes; the limit is 1048576 bytes: split \
         the work into smaller programs\n"
    );
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
    assert_eq!(stdout(&out), "");
    assert_eq!(stderr(&out), "checking\nerror[failed] 3:3: \"x\"\n");
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
fn limits_are_set_from_the_command_line() {
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
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error[memory_limit] 1:1: memory limit exceeded: the values built by this program \
         exceed 100000 bytes; work on smaller pieces (take, filter first) instead of \
         materializing everything\n"
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
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error[step_limit] 1:1: step limit exceeded: the program took more than 1000 \
         evaluation steps; look for an infinite loop or process less data per turn\n"
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
