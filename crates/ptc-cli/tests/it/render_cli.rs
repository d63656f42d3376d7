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
