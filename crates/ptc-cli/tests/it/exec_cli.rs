//! `ptc run --compile-to` and `ptc exec`: a replayed run compiled to a file, then run on other
//! data without a model, as text and as JSON, with its exit statuses.

use crate::support;

use pretty_assertions::assert_eq;
use support::{Scratch, mask_timings, ptc, utf8};

fn text(bytes: &[u8]) -> String {
    mask_timings(&String::from_utf8_lossy(bytes))
}

const TRANSCRIPT: &str = concat!(
    r#"{"content": "```clojure\n(defn total [items] (reduce + (map :price items)))\n```", "usage": {"input_tokens": 900, "output_tokens": 40}}"#,
    "\n",
    r#"{"content": "```clojure\n(tool/notify {:total (total data/items)})\n(return {:total (total data/items)})\n```", "usage": {"input_tokens": 950, "output_tokens": 25}}"#,
    "\n"
);

const TOOLS: &str =
    r#"{"notify": {"description": "Tell the team", "params": ["message"], "returns": "sent"}}"#;

/// Compiles the replayed run into `compiled.json` in `dir`.
fn compile(dir: &Scratch) -> std::path::PathBuf {
    let transcript = dir.file("t.jsonl", TRANSCRIPT);
    let data = dir.file("data.json", r#"{"items": [{"price": 2}, {"price": 5}]}"#);
    let tools = dir.file("tools.json", TOOLS);
    let compiled = dir.path("compiled.json");
    let output = ptc(&[
        "--quiet",
        "run",
        "--mission",
        "Total the prices and notify the team",
        "--data",
        utf8(&data),
        "--tools",
        utf8(&tools),
        "--llm",
        &format!("replay:{}", utf8(&transcript)),
        "--signature",
        "(items [{price :int}]) -> {total :int}",
        "--compile-to",
        utf8(&compiled),
    ]);
    assert_eq!(text(&output.stderr), "");
    assert_eq!(output.status.code(), Some(0));
    assert!(
        text(&output.stdout).ends_with(&format!("compiled agent written to {}\n", utf8(&compiled))),
        "{}",
        text(&output.stdout)
    );
    compiled
}

#[test]
fn a_compiled_run_executes_on_other_data_without_a_model() {
    let dir = Scratch::new("exec-text");
    let compiled = compile(&dir);
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&compiled).unwrap()).unwrap();
    assert_eq!(
        file["programs"],
        serde_json::json!([
            "(defn total [items] (reduce + (map :price items)))",
            "(tool/notify {:total (total data/items)})\n(return {:total (total data/items)})"
        ])
    );
    assert_eq!(file["tools"], serde_json::json!(["notify"]));
    assert_eq!(
        file["metadata"]["tokens"],
        serde_json::json!({"input_tokens": 1850, "output_tokens": 65, "cache_read_tokens": 0, "cache_write_tokens": 0})
    );

    let data = dir.file(
        "other.json",
        r#"{"items": [{"price": 10}, {"price": 1}, {"price": 4}]}"#,
    );
    let tools = dir.file("tools.json", TOOLS);
    let output = ptc(&[
        "exec",
        utf8(&compiled),
        "--data",
        utf8(&data),
        "--tools",
        utf8(&tools),
    ]);
    assert_eq!(text(&output.stderr), "");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        text(&output.stdout),
        "--- stage 1 of 2 ---\n\
         program:\n\
         \x20 (defn total [items] (reduce + (map :price items)))\n\
         value: #'user/total\n\n\
         --- stage 2 of 2 ---\n\
         program:\n\
         \x20 (tool/notify {:total (total data/items)})\n\
         \x20 (return {:total (total data/items)})\n\
         tool calls:\n\
         \x20 notify({:total 15}) -> \"sent\"  (<t>)\n\
         value: {:total 15}\n\n\
         === result ===\n\
         returned after 2 of 2 stages:\n\
         \x20 {:total 15}\n"
    );

    let output = ptc(&[
        "exec",
        utf8(&compiled),
        "--data",
        utf8(&data),
        "--tools",
        utf8(&tools),
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (
            &report["ok"],
            &report["value"],
            &report["value_clojure"],
            &report["turns"]
        ),
        (
            &serde_json::json!(true),
            &serde_json::json!({"total": 15}),
            &serde_json::json!("{:total 15}"),
            &serde_json::json!(2)
        )
    );
}

#[test]
fn exec_errors_and_failures_use_the_exit_status_table() {
    let dir = Scratch::new("exec-errors");
    let compiled = compile(&dir);
    let tools = dir.file("tools.json", TOOLS);

    // Input that does not match the signature: unusable input.
    let bad = dir.file("bad.json", r#"{"items": 3}"#);
    let output = ptc(&[
        "exec",
        utf8(&compiled),
        "--data",
        utf8(&bad),
        "--tools",
        utf8(&tools),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        "error: the input data does not match the signature's parameters: data/items: expected \
         list, got integer 3\n"
    );

    // The tools it calls are missing.
    let good = dir.file("good.json", r#"{"items": []}"#);
    let output = ptc(&["exec", utf8(&compiled), "--data", utf8(&good)]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        format!(
            "error: {} calls tool/notify but was not given it; give the tools with --tools or \
             --mcp\n",
            utf8(&compiled)
        )
    );

    // A program stopped by a sandbox limit fails.
    let output = ptc(&[
        "--quiet",
        "exec",
        utf8(&compiled),
        "--data",
        utf8(&good),
        "--tools",
        utf8(&tools),
        "--max-steps",
        "1",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stdout),
        "=== result ===\nfailed (program_error) after 2 of 2 stages:\n  1:22: step limit exceeded: \
         the program took more than 1 evaluation steps; look for an infinite loop or process \
         less data per turn\n"
    );

    // A file of a newer format.
    let newer = dir.file("newer.json", r#"{"format": 9}"#);
    let output = ptc(&["exec", utf8(&newer)]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        format!(
            "error: {}: the compiled agent has format version 9, but this version reads only \
             versions 1 to 2; upgrade to run it, or compile the agent again\n",
            utf8(&newer)
        )
    );
}

#[test]
fn a_failed_run_writes_no_compiled_agent_and_says_so() {
    let dir = Scratch::new("exec-failed");
    let transcript = dir.file("t.jsonl", "{\"content\": \"(fail \\\"no data\\\")\"}\n");
    let compiled = dir.path("compiled.json");
    let output = ptc(&[
        "--quiet",
        "run",
        "--mission",
        "Give up",
        "--llm",
        &format!("replay:{}", utf8(&transcript)),
        "--compile-to",
        utf8(&compiled),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        format!(
            "no compiled agent written to {}: cannot compile: the run failed (failed) after 1 \
             turn(s): no data\n",
            utf8(&compiled)
        )
    );
    assert!(!compiled.exists());
}

/// What `ptc run --json` returned with `replies` (one program each) on `data` and `settings`,
/// and what `ptc exec --json` of the compiled agent it wrote returns on the same data: each as
/// `outcome value_clojure`.
fn run_then_exec(name: &str, replies: &[&str], data: &str, settings: &[&str]) -> [String; 2] {
    let dir = Scratch::new(name);
    let transcript: String = replies
        .iter()
        .map(|program| format!("{}\n", serde_json::json!({ "content": program })))
        .collect();
    let transcript = dir.file("t.jsonl", &transcript);
    let data = dir.file("data.json", data);
    let compiled = dir.path("compiled.json");
    let replay = format!("replay:{}", utf8(&transcript));
    let mut args = vec![
        "run",
        "--json",
        "--mission",
        "Work it out",
        "--data",
        utf8(&data),
        "--llm",
        &replay,
        "--compile-to",
        utf8(&compiled),
    ];
    args.extend_from_slice(settings);
    let ran = ptc(&args);
    assert_eq!(text(&ran.stderr), "");
    let executed = ptc(&["exec", utf8(&compiled), "--data", utf8(&data), "--json"]);
    assert_eq!(text(&executed.stderr), "");
    [ran, executed].map(|output| {
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        format!(
            "{} {}",
            if report["ok"] == true {
                "returned"
            } else {
                "failed"
            },
            report["value_clojure"].as_str().unwrap_or_default()
        )
    })
}

#[test]
fn earlier_values_reach_the_compiled_agent() {
    assert_eq!(
        run_then_exec("exec-star-1", &["(+ 2 3)", "(return *1)"], "{}", &[]),
        ["returned 5", "returned 5"]
    );
    assert_eq!(
        run_then_exec(
            "exec-star-e",
            &["(first data/xs 2)", "(return (:message *e))"],
            r#"{"xs": [1]}"#,
            &[]
        ),
        [
            "returned \"first called with 2 arguments, expects 1; usage: (first coll)\"",
            "returned \"first called with 2 arguments, expects 1; usage: (first coll)\""
        ]
    );
}

#[test]
fn the_compiled_agent_rounds_floats_as_the_run_did() {
    assert_eq!(
        run_then_exec(
            "exec-float-precision",
            &["(return {:mean (/ (reduce + data/xs) (double (count data/xs)))})"],
            r#"{"xs": [1, 2, 7]}"#,
            &["--float-precision", "2"]
        ),
        ["returned {:mean 3.33}", "returned {:mean 3.33}"]
    );
}
