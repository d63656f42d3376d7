//! The one JSON schema of `--json` (docs/json.md): the exact line every command prints, with
//! `schema` and `command` first in meaning and the same names for the same things. Timings
//! are the only figures masked.

use crate::support;

use pretty_assertions::assert_eq;
use support::{Scratch, ptc, utf8};

/// Standard output with every duration set to 0, the one part of a report that varies.
fn stdout(output: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut masked = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("_ms\":").or_else(|| rest.find("_us\":")) {
        let (head, tail) = rest.split_at(at + 5);
        masked.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        masked.push('0');
        rest = &tail[digits..];
    }
    masked.push_str(rest);
    masked
}

const USAGE_ZERO: &str = "\"usage\":{\"cache_read_tokens\":0,\"cache_write_tokens\":0,\
     \"duration_ms\":0,\"input_tokens\":0,\"llm_duration_ms\":0,\"llm_requests\":LLM,\
     \"output_tokens\":0,\"program_duration_ms\":0}";

fn usage(llm_requests: u32) -> String {
    USAGE_ZERO.replace("LLM", &llm_requests.to_string())
}

/// The `usage` of `ptc run`: that of a step, with the system prompt's size, what the run kept
/// after its last turn and what compression did to its last request.
fn run_usage(llm_requests: u32, compression: &str, definitions: usize, bytes: usize) -> String {
    format!(
        "\"usage\":{{\"cache_read_tokens\":0,\"cache_write_tokens\":0,\"compression\":{{\
         {compression}}},\"definitions_kept\":{definitions},\"duration_ms\":0,\
         \"input_tokens\":0,\"llm_duration_ms\":0,\"llm_requests\":{llm_requests},\
         \"memory_kept_bytes\":{bytes},\"output_tokens\":0,\"program_duration_ms\":0,\
         \"system_prompt_chars\":4549,\"system_prompt_tokens\":1138}}"
    )
}

#[test]
fn eval_prints_the_value_the_prints_and_the_tool_calls() {
    let dir = Scratch::new("json-eval");
    let tools = dir.file(
        "tools.json",
        r#"{"ping": {"description": "Ping", "params": ["n"], "returns": {"pong": true}}}"#,
    );
    let output = ptc(&[
        "eval",
        "--json",
        "--tools",
        utf8(&tools),
        "-e",
        r#"(println "hi") (tool/ping {:n 1}) (/ 1 3)"#,
    ]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stdout(&output),
        "{\"command\":\"eval\",\"error\":null,\"ok\":true,\"prints\":[\"hi\"],\"schema\":1,\
         \"tool_calls\":[{\"args\":[{\"n\":1}],\"args_clojure\":[\"{:n 1}\"],\"duration_us\":0,\
         \"name\":\"ping\",\"result\":{\"pong\":true},\"result_clojure\":\"{:pong true}\"}],\
         \"value\":0.3333333333333333,\"value_clojure\":\"1/3\"}\n"
    );
}

#[test]
fn eval_prints_an_error_and_a_fail_in_the_error_object() {
    let output = ptc(&["eval", "--json", "-e", "(+ 1 (nope))"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "{\"command\":\"eval\",\"error\":{\"column\":7,\"kind\":\"undefined_symbol\",\"line\":1,\
         \"message\":\"undefined symbol nope\",\"rendered\":\"error[undefined_symbol] 1:7: \
         undefined symbol nope\"},\"ok\":false,\"prints\":[],\"schema\":1,\"tool_calls\":[],\
         \"value\":null,\"value_clojure\":null}\n"
    );
    // The value given to `fail` is the report's value, as in `ptc run --json`.
    let output = ptc(&["eval", "--json", "-e", "(fail {:code 4})"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "{\"command\":\"eval\",\"error\":{\"column\":1,\"kind\":\"failed\",\"line\":1,\
         \"message\":\"{:code 4}\",\"rendered\":\"error[failed] 1:1: {:code 4}\"},\"ok\":false,\
         \"prints\":[],\"schema\":1,\"tool_calls\":[],\"value\":{\"code\":4},\
         \"value_clojure\":\"{:code 4}\"}\n"
    );
}

#[test]
fn run_and_exec_print_the_same_step_report() {
    let dir = Scratch::new("json-run");
    let ok = dir.file(
        "ok.jsonl",
        concat!(
            r#"{"content": "(println \"adding\") (def xs [1 2])"}"#,
            "\n",
            r#"{"content": "(return {:sum (reduce + xs) :tags #{:a}})"}"#,
            "\n"
        ),
    );
    let output = ptc(&[
        "run",
        "--json",
        "--mission",
        "Add up",
        "--llm",
        &format!("replay:{}", utf8(&ok)),
    ]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stdout(&output),
        format!(
            "{{\"checkpoint\":null,\"command\":\"run\",\"cost\":{{\"billed\":1591.55,\
             \"cache_read_tokens\":1148,\"cache_write_tokens\":1175,\"full_history\":{{\
             \"billed\":1591.55,\"cache_read_tokens\":1148,\"cache_write_tokens\":1175,\
             \"input_tokens\":8}},\"input_tokens\":8,\"pricing\":\"anthropic\",\"ratio\":1.0,\
             \"reported\":null,\"requests\":2}},\"error\":null,\"max_turns\":5,\"ok\":true,\
             \"schema\":1,\"step_file\":null,\"turns\":2,{},\"value\":{{\"sum\":3,\
             \"tags\":[\"a\"]}},\"value_clojure\":\"{{:sum 3, :tags #{{:a}}}}\"}}\n",
            run_usage(
                2,
                "\"chars\":4642,\"compressed\":false,\"estimated_tokens\":1163,\
                 \"failed_turns_collapsed\":0,\"failed_turns_shown\":0,\"messages\":4,\
                 \"prints_dropped\":0,\"prints_shown\":1,\"prints_total\":1,\
                 \"strategy\":\"uncompressed\",\"tool_calls_dropped\":0,\"tool_calls_shown\":0,\
                 \"tool_calls_total\":0,\"turns\":1,\"turns_compressed\":0,\
                 \"uncompressed_chars\":4642,\"uncompressed_estimated_tokens\":1163",
                1,
                48
            )
        )
    );

    let fail = dir.file("fail.jsonl", "{\"content\": \"(fail {:why :no-data})\"}\n");
    let output = ptc(&[
        "run",
        "--json",
        "--mission",
        "Fails",
        "--llm",
        &format!("replay:{}", utf8(&fail)),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        format!(
            "{{\"checkpoint\":null,\"command\":\"run\",\"cost\":{{\"billed\":1438.0,\
             \"cache_read_tokens\":0,\"cache_write_tokens\":1148,\"full_history\":{{\
             \"billed\":1438.0,\"cache_read_tokens\":0,\"cache_write_tokens\":1148,\
             \"input_tokens\":3}},\"input_tokens\":3,\"pricing\":\"anthropic\",\"ratio\":1.0,\
             \"reported\":null,\"requests\":1}},\"error\":{{\"kind\":\"failed\",\
             \"message\":\"{{:why :no-data}}\"}},\"max_turns\":5,\"ok\":false,\"schema\":1,\
             \"step_file\":null,\"turns\":1,{},\"value\":{{\"why\":\"no-data\"}},\
             \"value_clojure\":\"{{:why :no-data}}\"}}\n",
            run_usage(
                1,
                "\"chars\":4569,\"compressed\":false,\"estimated_tokens\":1143,\
                 \"failed_turns_collapsed\":0,\"failed_turns_shown\":0,\"messages\":2,\
                 \"prints_dropped\":0,\"prints_shown\":0,\"prints_total\":0,\
                 \"strategy\":\"uncompressed\",\"tool_calls_dropped\":0,\"tool_calls_shown\":0,\
                 \"tool_calls_total\":0,\"turns\":0,\"turns_compressed\":0,\
                 \"uncompressed_chars\":4569,\"uncompressed_estimated_tokens\":1143",
                0,
                0
            )
        )
    );

    let compile = dir.file(
        "compile.jsonl",
        "{\"content\": \"(return {:total (reduce + data/xs)})\"}\n",
    );
    let first = dir.file("first.json", r#"{"xs": [1, 2]}"#);
    let other = dir.file("other.json", r#"{"xs": [5, 6]}"#);
    let compiled = dir.path("compiled.json");
    let output = ptc(&[
        "--quiet",
        "run",
        "--mission",
        "Total",
        "--data",
        utf8(&first),
        "--llm",
        &format!("replay:{}", utf8(&compile)),
        "--signature",
        "(xs [:int]) -> {total :int}",
        "--compile-to",
        utf8(&compiled),
    ]);
    assert_eq!(output.status.code(), Some(0));
    let output = ptc(&["exec", utf8(&compiled), "--data", utf8(&other), "--json"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stdout(&output),
        format!(
            "{{\"command\":\"exec\",\"error\":null,\"max_turns\":1,\"ok\":true,\"schema\":1,\
             \"turns\":1,{},\"value\":{{\"total\":11}},\"value_clojure\":\"{{:total 11}}\"}}\n",
            usage(0)
        )
    );
}

#[test]
fn render_and_preview_wrap_their_messages_in_the_envelope() {
    let dir = Scratch::new("json-render");
    let step = dir.file(
        "step.json",
        r#"{"outcome": {"returned": {"value": "ok"}}, "task": {"mission": "Greet",
            "max_turns": 2}, "turns": [], "usage": {}}"#,
    );
    let output = ptc(&["render", "--step", utf8(&step), "--recorded", "--json"]);
    assert_eq!(
        stdout(&output),
        "{\n  \"command\": \"render\",\n  \"requests\": [],\n  \"schema\": 1\n}\n"
    );
    let output = ptc(&["preview", "--mission", "Greet", "--json"]);
    assert_eq!(output.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let keys = |v: &serde_json::Value| {
        v.as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(
        (keys(&json), keys(&json["request"])),
        (
            vec!["command".into(), "request".into(), "schema".into()],
            vec![
                "cache_breakpoints".into(),
                "max_tokens".into(),
                "messages".into(),
                "system".into(),
                "turn".into()
            ]
        )
    );
    assert_eq!(
        (&json["schema"], &json["command"]),
        (&1.into(), &"preview".into())
    );
}
