//! `ptc preview`: the system prompt and the first request, without a model; and the
//! system-prompt options of `ptc run`, which it shows.

use crate::support;

use pretty_assertions::assert_eq;
use std::process::Output;
use support::{Scratch, ptc, utf8};

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn preview_prints_the_whole_system_prompt_and_the_first_message_without_a_model() {
    let dir = Scratch::new("preview");
    let prompt = dir.file("prompt.txt", "Write PTC-Lisp. Call (return v).");
    let data = dir.file("data.json", r#"{"users": ["ann", "bo"]}"#);
    let output = ptc(&[
        "preview",
        "--mission",
        "Count the users",
        "--data",
        utf8(&data),
        "--system-prompt-file",
        utf8(&prompt),
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        stdout(&output),
        "=== system (32 chars, about 8 tokens) ===\n\
         Write PTC-Lisp. Call (return v).\n\
         === user (109 chars) ===\n\
         Count the users\n\n\
         ;; === data/ ===\n\
         data/users                    ; list[2], whole: [\"ann\" \"bo\"]\n\n\
         Turns left: 5\n\
         === cacheable prefix: the system prompt and the first 94 bytes of message 1 ===\n"
    );
}

#[test]
fn preview_json_is_the_request_and_the_prefix_wraps_the_generated_prompt() {
    let output = ptc(&[
        "preview",
        "--mission",
        "Go",
        "--system-prompt-prefix",
        "You work for ACME.",
        "--system-prompt-extra",
        "Be brief.",
        "--max-turns",
        "1",
        "--temperature",
        "0.5",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        (&json["schema"], &json["command"]),
        (&1.into(), &"preview".into())
    );
    let request = &json["request"];
    let system = request["system"].as_str().expect("system");
    assert!(
        system
            .starts_with("You work for ACME.\n\nYou solve a task by writing one PTC-Lisp program")
    );
    assert!(system.ends_with("\n\nBe brief."));
    assert_eq!(
        request["messages"],
        serde_json::json!([{
            "role": "user",
            "content": "Go\n\nFINAL TURN - you must call (return result) or (fail reason) now."
        }])
    );
    assert_eq!(request["temperature"], 0.5);
}

#[test]
fn preview_reports_what_a_run_would_refuse() {
    let output = ptc(&[
        "preview",
        "--mission",
        "x",
        "--system-prompt-file",
        "no-such-prompt.txt",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: --system-prompt-file no-such-prompt.txt: cannot be read: No such file or \
         directory (os error 2)\n"
    );
}

#[test]
fn sampling_flags_reach_the_request() {
    let output = ptc(&[
        "preview",
        "--mission",
        "Go",
        "--top-p",
        "0.9",
        "--seed",
        "7",
        "--stop",
        "END",
        "--stop",
        "STOP",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let request =
        serde_json::from_slice::<serde_json::Value>(&output.stdout).expect("JSON")["request"]
            .clone();
    assert_eq!(
        request["sampling"],
        serde_json::json!({"top_p": 0.9, "stop": ["END", "STOP"], "seed": 7})
    );
    assert_eq!(request["turn"], 1);
}

#[test]
fn prompt_limit_cuts_the_system_prompt_and_says_so() {
    let output = ptc(&[
        "preview",
        "--mission",
        "Go",
        "--prompt-limit",
        "40",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        json["request"]["system"],
        "You solve tasks by writing PTC-Lisp prog\n\n[System prompt cut to its first 40 of 4549 \
         characters by its size limit; the rest was left out.]"
    );
    // Without the option the prompt is the generated one, whole.
    let output = ptc(&["preview", "--mission", "Go", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        json["request"]["system"]
            .as_str()
            .map(|s| s.chars().count()),
        Some(4549)
    );
}

#[test]
fn parallel_tool_calls_reach_the_request() {
    let output = ptc(&[
        "preview",
        "--mission",
        "Go",
        "--reply",
        "tool-call",
        "--parallel-tool-calls",
        "false",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        json["request"]["sampling"],
        serde_json::json!({"parallel_tool_calls": false})
    );
}
