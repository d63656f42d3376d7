//! `ptc run` end to end with a replayed model.

use pretty_assertions::assert_eq;
use ptc_turn::Step;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mask_timings(text: &str) -> String {
    regex::Regex::new(r"\d+\.\d ms")
        .expect("valid pattern")
        .replace_all(text, "<t> ms")
        .into_owned()
}

fn temp(name: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ptc-run-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).expect("write a test file");
    path
}

fn ptc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptc"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("run ptc")
}

fn text(bytes: &[u8]) -> String {
    mask_timings(&String::from_utf8_lossy(bytes))
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn a_replayed_run_shows_each_turn_and_a_summary_and_dumps_the_step() {
    let transcript = temp(
        "transcript.jsonl",
        concat!(
            r#"{"content": "First the prices.\n```clojure\n(def total \"Sum of all prices\" (reduce + (map :price data/items)))\n(println \"total:\" total)\n```", "usage": {"input_tokens": 900, "output_tokens": 40}}"#,
            "\n",
            r#"{"content": "```clojure\n(tool/notify {:total total})\n(return {:total total})\n```", "usage": {"input_tokens": 950, "output_tokens": 25, "cache_read_tokens": 700}}"#,
            "\n"
        ),
    );
    let data = temp(
        "data.json",
        r#"{"items": [{"name": "pen", "price": 2}, {"name": "ink", "price": 5}]}"#,
    );
    let tools = temp(
        "tools.json",
        r#"{"notify": {"description": "Tell the team", "params": ["message"], "returns": "sent"}}"#,
    );
    let dump = std::env::temp_dir().join(format!("ptc-run-{}-step.json", std::process::id()));
    let output = ptc(&[
        "run",
        "--mission",
        "Total the prices and notify the team",
        "--data",
        path(&data),
        "--tools",
        path(&tools),
        "--llm",
        &format!("replay:{}", path(&transcript)),
        "--signature",
        "{total :int}",
        "--max-turns",
        "3",
        "--compression",
        "on",
        "--dump-step",
        path(&dump),
    ]);
    assert_eq!(text(&output.stderr), "");
    assert!(output.status.success());
    assert_eq!(
        text(&output.stdout),
        format!(
            "--- turn 1: asking the model (2 messages, {} characters) ---\n\
             program:\n\
             \x20 (def total \"Sum of all prices\" (reduce + (map :price data/items)))\n\
             \x20 (println \"total:\" total)\n\
             output:\n\
             \x20 total: 7\n\
             value: nil\n\n\
             --- turn 2: asking the model (2 messages, {} characters) ---\n\
             program:\n\
             \x20 (tool/notify {{:total total}})\n\
             \x20 (return {{:total total}})\n\
             tool calls:\n\
             \x20 notify({{:total 7}}) -> \"sent\"  (<t> ms)\n\
             value: {{:total 7}}\n\n\
             === result ===\n\
             returned after 2 of 3 turns:\n\
             \x20 {{:total 7}}\n\
             model requests: 2\n\
             tokens: 1850 in, 65 out (prompt cache: 700 read, 0 written)\n\
             time: <t> ms (model <t> ms, programs <t> ms)\n\
             step written to {}\n",
            first_request_chars(&dump, 0),
            first_request_chars(&dump, 1),
            dump.display()
        )
    );
    let step: Step =
        serde_json::from_str(&std::fs::read_to_string(&dump).expect("the dump")).expect("a step");
    assert_eq!(step.turns.len(), 2);
    assert_eq!(step.turns[1].tool_calls()[0].name, "notify");
    assert_eq!(step.task.max_turns, 3);
    assert_eq!(step.usage.tokens.input_tokens, 1850);
    for file in [transcript, data, tools, dump] {
        let _ = std::fs::remove_file(file);
    }
}

/// Characters of the messages sent for turn `index`, read from the dumped step.
fn first_request_chars(dump: &Path, index: usize) -> usize {
    let step: Step =
        serde_json::from_str(&std::fs::read_to_string(dump).expect("dump")).expect("step");
    step.turns[index]
        .messages()
        .iter()
        .map(|m| m.content.chars().count())
        .sum()
}

#[test]
fn the_demo_files_replay_to_their_return() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo");
    let mission = std::fs::read_to_string(root.join("mission.txt")).expect("mission");
    let signature = std::fs::read_to_string(root.join("signature.txt")).expect("signature");
    let output = ptc(&[
        "run",
        "--mission",
        mission.trim(),
        "--data",
        path(&root.join("data.json")),
        "--tools",
        path(&root.join("tools.json")),
        "--signature",
        signature.trim(),
        "--max-turns",
        "6",
        "--compression",
        "on",
        "--llm",
        &format!("replay:{}", path(&root.join("transcript.jsonl"))),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains(
            "=== result ===\nreturned after 5 of 6 turns:\n  {:credited [\"c-04\" \"c-17\" \
             \"c-08\"], :total-credit 30, :late-orders [\"A-1002\" \"A-1004\" \"A-1006\" \
             \"A-1008\"]}\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("error[undefined_symbol]:\n  3:19: undefined symbol customer-for; did you mean customer-of?\n"));
}

#[test]
fn running_out_of_turns_exits_with_one() {
    let transcript = temp(
        "loop.jsonl",
        "{\"content\": \"(def a 1)\"}\n{\"content\": \"(def b 2)\"}\n",
    );
    let output = ptc(&[
        "run",
        "--mission",
        "Never finishes",
        "--max-turns",
        "2",
        "--llm",
        &format!("replay:{}", path(&transcript)),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stdout).contains(
            "=== result ===\nfailed (max_turns_exceeded) after 2 of 2 turns:\n  no (return ...) \
             or (fail ...) after 2 turns\n"
        ),
        "{}",
        text(&output.stdout)
    );
    let _ = std::fs::remove_file(transcript);
}

#[test]
fn bad_arguments_are_errors_that_say_what_to_do() {
    let output = ptc(&["run", "--mission", "x", "--llm", "gemini:pro"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        "error: unknown model spec `gemini:pro`; use openai:MODEL, anthropic:MODEL, \
         openai-compatible:URL:MODEL or replay:FILE\n"
    );
    let output = ptc(&[
        "run",
        "--mission",
        "x",
        "--llm",
        "replay:/nonexistent/t.jsonl",
        "--signature",
        "{a :nope}",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr)
            .starts_with("error: replay transcript /nonexistent/t.jsonl: cannot read it")
    );
    let transcript = temp("one.jsonl", "{\"content\": \"(return 1)\"}\n");
    let output = ptc(&[
        "run",
        "--mission",
        "x",
        "--llm",
        &format!("replay:{}", path(&transcript)),
        "--signature",
        "{a :nope}",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        "error: the agent's signature: invalid signature at line 1, column 4: unknown type \
         :nope; the types are :string :int :float :bool :keyword :any :map, [T] and {field \
         T}\n  {a :nope}\n     ^\n"
    );
    let _ = std::fs::remove_file(transcript);
}

#[test]
fn a_cut_off_reply_is_shown_and_the_transcript_written() {
    let transcript = temp(
        "cut-off.jsonl",
        concat!(
            r#"{"content": "Let me explain the data first. It has", "stop_reason": "length", "usage": {"input_tokens": 900, "output_tokens": 8}}"#,
            "\n",
            r#"{"content": "(return 3)\n```", "stop_reason": "stop", "usage": {"input_tokens": 950, "output_tokens": 6}}"#,
            "\n"
        ),
    );
    let written =
        std::env::temp_dir().join(format!("ptc-run-{}-written.jsonl", std::process::id()));
    let output = ptc(&[
        "run",
        "--mission",
        "Add 1 and 2",
        "--llm",
        &format!("replay:{}", path(&transcript)),
        "--max-tokens",
        "8",
        "--transcript",
        path(&written),
    ]);
    assert_eq!(text(&output.stderr), "");
    assert!(output.status.success());
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains(
            "no program in the reply:\n\
             \x20 | Let me explain the data first. It has\n\
             reply cut off at the token limit (stop reason: length)\n\
             error[reply_cut_off]:\n\
             \x20 Your reply was cut off at the limit of 8 tokens before its program was \
             complete, so nothing ran. Write a shorter program, with little or no text around \
             it.\n"
        ),
        "{stdout}"
    );
    // The stray closing fence after the second program does not stop it from running.
    assert!(
        stdout.contains("program:\n  (return 3)\nvalue: 3\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(&format!("transcript written to {}\n", written.display())),
        "{stdout}"
    );
    // The transcript written replays the same replies.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&written)
        .expect("the transcript")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        lines
            .iter()
            .map(|l| (l["content"].as_str(), l["stop_reason"].as_str()))
            .collect::<Vec<_>>(),
        vec![
            (
                Some("Let me explain the data first. It has"),
                Some("length")
            ),
            (Some("(return 3)\n```"), Some("stop")),
        ]
    );
    for file in [transcript, written] {
        let _ = std::fs::remove_file(file);
    }
}
