//! `ptc render` end to end: a step saved as JSON, rendered by the binary.

use pretty_assertions::assert_eq;
use ptc_compression::{CompressionConfig, RenderOptions, transcript};
use ptc_lisp::{Definition, ToolCallRecord, ToolOutcome, ToolSpec, Value};
use ptc_turn::{FailureKind, Step, StepOutcome, Task, Turn, TurnError, Turns};
use std::path::PathBuf;
use std::process::{Command, Output};

fn write_step(name: &str, step: &Step) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ptc-render-{}-{name}.json", std::process::id()));
    std::fs::write(
        &path,
        serde_json::to_string_pretty(step).expect("serialize"),
    )
    .expect("write the step");
    path
}

fn ptc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(args)
        .output()
        .expect("run ptc")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn failed_step() -> Step {
    let mut turns = Turns::new();
    turns
        .push(Turn::failure(
            1,
            "(tool/greet)",
            TurnError::new("arity", "greet expects 1 argument, got 0").at(1, 1),
        ))
        .expect("turn 1");
    Step {
        outcome: StepOutcome::Failed {
            kind: FailureKind::MaxTurnsExceeded,
            reason: "out of turns".into(),
            value: None,
            llm_errors: Vec::new(),
        },
        task: Task {
            system_prompt: "Write PTC-Lisp.".into(),
            tools: vec![ToolSpec::new("greet", "Greet someone").with_params(["name"])],
            max_turns: 2,
            ..Task::new("Greet Ada")
        },
        turns,
        usage: Default::default(),
    }
}

#[test]
fn renders_a_saved_step() {
    let path = write_step("failed", &failed_step());
    let output = ptc(&[
        "render",
        "--step",
        path.to_str().expect("utf-8 path"),
        "--compression",
        "single-user-coalesced",
    ]);
    assert_eq!(text(&output.stderr), "");
    assert!(output.status.success());
    assert_eq!(
        text(&output.stdout),
        "=== system ===\nWrite PTC-Lisp.\n\n\
         === user ===\nGreet Ada\n\n;; === tool/ ===\n\
         (tool/greet name)             ; Greet someone\n\n\
         ;; No tool calls made\n\n\
         === assistant ===\n```clojure\n(tool/greet)\n```\n\n\
         === user ===\nError: 1:1: greet expects 1 argument, got 0\n    (tool/greet)\n    ^\n\n\
         FINAL TURN - you must call (return result) or (fail reason) now.\n"
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn unreadable_inputs_are_explained() {
    let output = ptc(&["render", "--step", "/nonexistent/step.json"]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).starts_with("error: cannot read /nonexistent/step.json: "),
        "{}",
        text(&output.stderr)
    );

    let path = std::env::temp_dir().join(format!("ptc-render-{}-bad.json", std::process::id()));
    std::fs::write(&path, "{\"turns\": []}").expect("write");
    let output = ptc(&["render", "--step", path.to_str().expect("utf-8 path")]);
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("is not a serialized step: missing field `outcome`"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(path);

    let output = ptc(&["render", "--step", "x.json", "--compression", "tiny"]);
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("unknown compression strategy `tiny`"),
        "{stderr}"
    );
}

fn rich_step() -> Step {
    let users = Value::vector([
        Value::map([(Value::keyword("name"), Value::string("Ada"))]),
        Value::map([(Value::keyword("name"), Value::string("Grace"))]),
    ]);
    let mut turns = Turns::new();
    turns
        .push(
            Turn::success(1, "(def users (tool/users))", users.clone())
                .with_raw_response("```clojure\n(def users (tool/users))\n```")
                .with_tool_calls(vec![ToolCallRecord {
                    name: "users".into(),
                    args: vec![],
                    result: ToolOutcome::Ok(users.clone()),
                    duration_us: 10,
                }])
                .with_memory(vec![Definition {
                    name: "users".into(),
                    doc: None,
                    value: users,
                    params: Vec::new(),
                    last_return: None,
                }]),
        )
        .expect("turn 1");
    Step {
        outcome: StepOutcome::Returned {
            value: Value::Int(2),
        },
        task: Task {
            tools: vec![ToolSpec::new("users", "All users")],
            data: [("limit".to_string(), Value::Int(10))].into(),
            ..Task::new("Count users")
        },
        turns,
        usage: Default::default(),
    }
}

// Values travel as Clojure text, so this needs the PTC-Lisp reader to read the step back.
#[test]
fn renders_a_step_holding_values_as_the_library_does() {
    let step = rich_step();
    let path = write_step("rich", &step);
    for spec in [
        "off",
        "single-user-coalesced",
        "aggressive",
        "per-turn-summary",
    ] {
        let output = ptc(&[
            "render",
            "--step",
            path.to_str().expect("utf-8 path"),
            "--compression",
            spec,
        ]);
        assert_eq!(text(&output.stderr), "", "{spec}");
        let config = CompressionConfig::parse(spec).expect("valid");
        let opts = RenderOptions::from_task(&step.task);
        let rendered = config
            .build()
            .to_messages(&step.turns, step.turns[0].memory(), &opts);
        assert_eq!(
            text(&output.stdout),
            transcript(&rendered.messages),
            "{spec}"
        );
    }
    let _ = std::fs::remove_file(path);
}

/// A run of three turns whose first two kept the requests they sent; the third has none
/// recorded.
fn recorded_step() -> Step {
    use ptc_turn::Message;
    let system = Message::system("Write PTC-Lisp.");
    let mission = Message::user("Greet Ada");
    let mut turns = Turns::new();
    turns
        .push(
            Turn::failure(
                1,
                "(tool/greet)",
                TurnError::new("arity", "greet expects 1 argument, got 0").at(1, 1),
            )
            .with_messages(vec![system.clone(), mission.clone()]),
        )
        .expect("turn 1");
    turns
        .push(
            Turn::success(2, "(def n \"Ada\")", Value::string("Ada")).with_messages(vec![
                system,
                mission,
                Message::assistant("```clojure\n(tool/greet)\n```"),
                Message::user("Error: 1:1: greet expects 1 argument, got 0"),
            ]),
        )
        .expect("turn 2");
    turns
        .push(Turn::success(3, "(return n)", Value::string("Ada")))
        .expect("turn 3");
    Step {
        outcome: StepOutcome::Returned {
            value: Value::string("Ada"),
        },
        turns,
        ..failed_step()
    }
}

// PRE-001: the messages of each request are kept in the step, and printed as they were sent.
#[test]
fn prints_the_requests_a_run_recorded_as_sent() {
    let path = write_step("recorded", &recorded_step());
    let file = path.to_str().expect("utf-8 path");
    let output = ptc(&["render", "--step", file, "--recorded"]);
    assert_eq!(text(&output.stderr), "");
    assert!(output.status.success());
    assert_eq!(
        text(&output.stdout),
        "##### turn 1: the request as sent, 2 messages #####\n\
         === system ===\nWrite PTC-Lisp.\n\n\
         === user ===\nGreet Ada\n\n\
         ##### turn 2: the request as sent, 4 messages #####\n\
         === system ===\nWrite PTC-Lisp.\n\n\
         === user ===\nGreet Ada\n\n\
         === assistant ===\n```clojure\n(tool/greet)\n```\n\n\
         === user ===\nError: 1:1: greet expects 1 argument, got 0\n\n\
         ##### turn 3: no request recorded #####\n"
    );

    let output = ptc(&["render", "--step", file, "--recorded", "--turn", "1"]);
    assert!(output.status.success());
    assert_eq!(
        text(&output.stdout),
        "=== system ===\nWrite PTC-Lisp.\n\n=== user ===\nGreet Ada\n"
    );

    let output = ptc(&[
        "render",
        "--step",
        file,
        "--recorded",
        "--turn",
        "1",
        "--json",
    ]);
    assert!(output.status.success());
    assert_eq!(
        text(&output.stdout),
        "{\n  \"command\": \"render\",\n  \"requests\": [\n    {\n      \"messages\": [\n        \
         {\n          \"content\": \"Write PTC-Lisp.\",\n          \"role\": \"system\"\n        \
         },\n        {\n          \"content\": \"Greet Ada\",\n          \"role\": \"user\"\n        \
         }\n      ],\n      \"turn\": 1\n    }\n  ],\n  \"schema\": 1\n}\n"
    );

    let output = ptc(&["render", "--step", file, "--recorded", "--turn", "4"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        "error: --turn 4 is out of range: the step recorded 3 request(s), so N must be between 1 \
         and 3\n"
    );

    let output = ptc(&[
        "render",
        "--step",
        file,
        "--recorded",
        "--compression",
        "on",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        "error: the argument '--recorded' cannot be used with '--compression <SPEC>'\n\n\
         Usage: ptc render --step <FILE.json> --recorded\n\n\
         For more information, try '--help'.\n"
    );
    let _ = std::fs::remove_file(path);
}
