//! `ptc run` end to end with a replayed model: the trace, the JSON report, exit statuses,
//! arguments and the configuration file.

use crate::support;

use pretty_assertions::assert_eq;
use ptc_turn::Step;
use std::path::{Path, PathBuf};
use std::process::Output;
use support::{Scratch, mask_timings, ptc, ptc_command as command};

fn temp(name: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ptc-run-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).expect("write a test file");
    path
}

fn text(bytes: &[u8]) -> String {
    mask_timings(&String::from_utf8_lossy(bytes))
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The error `ptc` printed for a command line it refused (exit status 2).
fn refusal(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    text(&output.stderr)
}

/// A bill as `--json` shows it: the total in input-token equivalents, and the input, cache-read
/// and cache-write tokens it prices.
fn bill(billed: f64, input: u64, cache_read: u64, cache_write: u64) -> serde_json::Value {
    serde_json::json!({
        "billed": billed, "input_tokens": input,
        "cache_read_tokens": cache_read, "cache_write_tokens": cache_write
    })
}

/// The `cost` object of `--json`: the run's requests billed under `pricing` (the `bill`'s fields
/// at the top), the same run sending its full history, their ratio, and what the provider
/// reported, priced alike (`None` when it reported no cache figures).
fn cost_report(
    pricing: &str,
    requests: u64,
    run: serde_json::Value,
    full_history: serde_json::Value,
    ratio: f64,
    reported: Option<serde_json::Value>,
) -> serde_json::Value {
    let mut cost = serde_json::json!({
        "pricing": pricing, "requests": requests,
        "full_history": full_history, "ratio": ratio, "reported": reported
    });
    let fields = cost.as_object_mut().expect("an object");
    fields.extend(run.as_object().expect("a bill").clone());
    cost
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
        mask_bill(&text(&output.stdout)),
        format!(
            "--- turn 1: asking the model (2 messages, {} characters) ---\n\
             program:\n\
             \x20 (def total \"Sum of all prices\" (reduce + (map :price data/items)))\n\
             \x20 (println \"total:\" total)\n\
             output:\n\
             \x20 total: 7\n\
             value: nil\n\
             turn 1: 900 tokens in, 40 out; <t> (model <t>, program <t>)\n\n\
             --- turn 2: asking the model (4 messages, {} characters) ---\n\
             program:\n\
             \x20 (tool/notify {{:total total}})\n\
             \x20 (return {{:total total}})\n\
             tool calls:\n\
             \x20 notify({{:total 7}}) -> \"sent\"  (<t>)\n\
             value: {{:total 7}}\n\
             turn 2: 950 tokens in (+700 read from the prompt cache), 25 out; <t> (model <t>, \
             program <t>)\n\n\
             === result ===\n\
             returned after 2 of 3 turns:\n\
             \x20 {{:total 7}}\n\
             model requests: 2 (replayed from a transcript: no model was asked, nothing was \
             billed)\n\
             tokens as recorded: 1850 in, 65 out (prompt cache: 700 read, 0 written)\n\
             time: <t> (model <t>, programs <t>)\n\
             modelled bill of 2 requests (billed-equivalent input tokens; token counts \
             estimated at about 4 characters a token):\n\
             \x20 anthropic:  # (# input, # cache read, # cache write); full history #: #x\n\
             \x20 openai:     # (# input, # cache read, # cache write); full history #: #x\n\
             \x20 ideal:      # (# input, # cache read, # cache write); full history #: #x\n\
             reported by the provider: 1,850 input, 700 cache read, 0 cache write: 2,200 \
             billed-equivalent under openai prices\n\
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
    assert_eq!(
        step.turns.iter().map(|t| t.ends_run()).collect::<Vec<_>>(),
        [false, true]
    );
    assert_eq!(step.task.max_turns, 3);
    assert_eq!(step.usage.tokens.input_tokens, 1850);
    // The second request was the last one sent: rendered again, it is the request as recorded.
    let rendered = ptc(&["render", "--step", path(&dump), "--compression", "on"]);
    let recorded = ptc(&["render", "--step", path(&dump), "--recorded", "--turn", "2"]);
    assert_eq!(text(&rendered.stderr), "");
    assert_eq!(text(&rendered.stdout), text(&recorded.stdout));
    for file in [transcript, data, tools, dump] {
        let _ = std::fs::remove_file(file);
    }
}

/// The modelled bill's lines with every number as `#`: the numbers follow the size of the
/// system prompt (the bill itself is tested in `ptc-compression`).
fn mask_bill(text: &str) -> String {
    let number = regex::Regex::new(r"\d[\d,.]*").expect("valid pattern");
    text.lines()
        .map(|line| {
            if ["  anthropic:", "  openai:", "  ideal:"]
                .iter()
                .any(|p| line.starts_with(p))
            {
                number.replace_all(line, "#").into_owned()
            } else {
                line.to_string()
            }
        })
        .map(|line| line + "\n")
        .collect()
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
    assert!(
        stdout.contains(
            "error[undefined_symbol]: undefined symbol customer-for; did you mean customer-of?\n \
             --> turn 3:3:19\n  |\n3 |   (let [customer (customer-for (first orders))]\n  |  \
             \x20                ^^^^^^^^^^^^\n"
        ),
        "{stdout}"
    );
}

#[test]
fn running_out_of_turns_exits_with_three() {
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
    assert_eq!(output.status.code(), Some(3));
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
    assert_eq!(
        refusal(&output),
        "error: unknown model spec `gemini:pro`; use openai:MODEL, anthropic:MODEL, \
         openai-compatible:URL:MODEL, replay:FILE, file:DIR or human\n"
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
    let error = refusal(&output);
    assert!(
        error.starts_with("error: replay transcript /nonexistent/t.jsonl: cannot read it"),
        "{error}"
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
    assert_eq!(
        refusal(&output),
        "error: the agent's signature: invalid signature at line 1, column 4: unknown type \
         :nope; the types are :string :int :float :bool :keyword :any :map, [T] and {field \
         T}\n  {a :nope}\n     ^\n"
    );
    let _ = std::fs::remove_file(transcript);
}

#[test]
fn json_reports_the_outcome_value_and_usage_alone_on_stdout() {
    let dir = Scratch::new("json");
    let transcript = dir.file(
        "t.jsonl",
        concat!(
            r#"{"content": "(def xs [1 2.5])", "usage": {"input_tokens": 50, "output_tokens": 5}}"#,
            "\n",
            r#"{"content": "(return {:sum (reduce + xs) :tags #{:a} :none nil})"}"#,
            "\n"
        ),
    );
    let output = ptc(&[
        "run",
        "--json",
        "--mission",
        "Add up",
        "--llm",
        &format!("replay:{}", path(&transcript)),
    ]);
    assert_eq!(text(&output.stderr), "");
    assert_eq!(output.status.code(), Some(0));
    let mut report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("one JSON object");
    for field in ["duration_ms", "llm_duration_ms", "program_duration_ms"] {
        assert!(report["usage"][field].is_u64(), "{field}");
        report["usage"][field] = 0.into();
    }
    assert_eq!(report["usage"]["compression"]["strategy"], "uncompressed");
    report["usage"]["compression"] = serde_json::Value::Null;
    assert_eq!(
        report,
        serde_json::json!({
            "schema": 1,
            "command": "run",
            "ok": true,
            "value": {"sum": 3.5, "tags": ["a"], "none": null},
            "error": null,
            "value_clojure": "{:sum 3.5, :tags #{:a}, :none nil}",
            "turns": 2,
            "max_turns": 5,
            "usage": {
                "llm_requests": 2, "input_tokens": 50, "output_tokens": 5,
                "cache_read_tokens": 0, "cache_write_tokens": 0,
                "duration_ms": 0, "llm_duration_ms": 0, "program_duration_ms": 0,
                "system_prompt_chars": 4549, "system_prompt_tokens": 1138,
                "definitions_kept": 1, "memory_kept_bytes": 48,
                // Asserted in full by json_schema_cli.
                "compression": null
            },
            // The replay names no provider and recorded no cache figures: Anthropic's profile,
            // as the default strategy assumes. Both requests share the system prompt, which
            // the first writes to the cache and the second reads.
            "cost": cost_report(
                "anthropic",
                2,
                bill(1579.05, 8, 1148, 1165),
                bill(1579.05, 8, 1148, 1165),
                1.0,
                None
            ),
            "step_file": null,
            "checkpoint": null
        })
    );
    let looping = dir.file("loop.jsonl", "{\"content\": \"(def a 1)\"}\n");
    let output = ptc(&[
        "run",
        "--json",
        "--mission",
        "Never ends",
        "--max-turns",
        "1",
        "--llm",
        &format!("replay:{}", path(&looping)),
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "a single shot returns its last value"
    );
    let output = ptc(&[
        "run",
        "--json",
        "--mission",
        "Fails",
        "--llm",
        &format!(
            "replay:{}",
            path(&dir.file("fail.jsonl", "{\"content\": \"(fail {:why :no-data})\"}\n"))
        ),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        (&report["ok"], &report["error"], &report["value"]),
        (
            &serde_json::json!(false),
            &serde_json::json!({"kind": "failed", "message": "{:why :no-data}"}),
            &serde_json::json!({"why": "no-data"})
        )
    );
}

#[test]
fn json_carries_the_modelled_bill_beside_the_full_history_and_the_reported_cache() {
    let dir = Scratch::new("bill");
    dir.file(
        "t.jsonl",
        concat!(
            r#"{"content": "(def xs (map :price data/items))\n(println \"prices:\" xs)", "usage": {"input_tokens": 60, "output_tokens": 30, "cache_write_tokens": 2040}}"#,
            "\n",
            r#"{"content": "(tool/notify {:total (reduce + xs)})\n(println \"sent\")", "usage": {"input_tokens": 20, "output_tokens": 20, "cache_read_tokens": 2040, "cache_write_tokens": 60}}"#,
            "\n",
            r#"{"content": "(return {:total (reduce + xs)})", "usage": {"input_tokens": 15, "output_tokens": 12, "cache_read_tokens": 2100, "cache_write_tokens": 40}}"#,
            "\n"
        ),
    );
    dir.file(
        "data.json",
        r#"{"items": [{"name": "pen", "price": 2}, {"name": "ink", "price": 5}]}"#,
    );
    dir.file(
        "tools.json",
        r#"{"notify": {"description": "Tell the team", "params": ["message"], "returns": "sent"}}"#,
    );
    let cost = |args: &[&str]| {
        let mut all = vec![
            "run",
            "--json",
            "--mission",
            "Total the prices and notify the team",
            "--data",
            "data.json",
            "--tools",
            "tools.json",
            "--compression",
            "on",
            "--llm",
            "replay:t.jsonl",
        ];
        all.extend_from_slice(args);
        let output = command(&all).current_dir(&dir.0).output().expect("run ptc");
        assert_eq!(
            (output.status.code(), text(&output.stderr)),
            (Some(0), String::new())
        );
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
        report["cost"].clone()
    };
    // Recorded cache writes are Anthropic's: the run is billed under its profile, and what the
    // provider reported is priced the same way (15 + 60 + 20 input, 4,140 read at 0.1, 2,140
    // written at 1.25).
    assert_eq!(
        cost(&[]),
        cost_report(
            "anthropic",
            3,
            bill(1838.8, 11, 2428, 1268),
            bill(1849.2, 11, 2432, 1276),
            0.9944,
            Some(bill(3184.0, 95, 4140, 2140))
        )
    );
    // The profile can be named in ptc.toml, and a flag wins over the file (95 input, 4,140 read
    // at 0.25, 2,140 written at the input price).
    dir.file("ptc.toml", "[agent]\npricing = \"openai?read=0.25\"\n");
    let from_file = cost(&[]);
    assert_eq!(
        (
            &from_file["pricing"],
            &from_file["billed"],
            &from_file["full_history"]["billed"],
            &from_file["reported"]["billed"]
        ),
        (
            &serde_json::json!("openai?read=0.25"),
            &serde_json::json!(1979.0),
            &serde_json::json!(1991.0),
            &serde_json::json!(3270.0)
        )
    );
    assert_eq!(cost(&["--pricing", "ideal"])["pricing"], "ideal");
    let output = command(&[
        "run",
        "--pricing",
        "gemini",
        "--mission",
        "x",
        "--llm",
        "replay:t.jsonl",
    ])
    .current_dir(&dir.0)
    .output()
    .expect("run ptc");
    let error = refusal(&output);
    assert!(
        error.contains("invalid value 'gemini' for '--pricing <PROFILE>'"),
        "{error}"
    );
}

#[test]
fn the_mission_comes_from_a_flag_or_a_file_and_may_not_be_empty() {
    let dir = Scratch::new("mission");
    let transcript = dir.file("t.jsonl", "{\"content\": \"(return 1)\"}\n");
    let llm = format!("replay:{}", path(&transcript));
    let output = ptc(&["run", "--mission", "  ", "--llm", &llm]);
    assert_eq!(
        refusal(&output),
        "error: the mission is empty; say what the agent must do\n"
    );
    let mission = dir.file("mission.txt", "Return one.\n");
    let output = ptc(&[
        "run",
        "--json",
        "--mission-file",
        path(&mission),
        "--llm",
        &llm,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let output = ptc(&["run", "--llm", &llm]);
    let error = refusal(&output);
    assert!(error.contains("--mission <TEXT>"), "{error}");
}

#[test]
fn a_url_after_openai_is_refused_with_the_spec_to_use() {
    let output = ptc(&[
        "run",
        "--mission",
        "x",
        "--llm",
        "openai:http://localhost:8000/v1:qwen",
    ]);
    assert_eq!(
        refusal(&output),
        "error: `openai:http://localhost:8000/v1:qwen` names a URL, but openai: takes a model \
         name (the server is OpenAI's, or OPENAI_BASE_URL); for another server write \
         openai-compatible:URL:MODEL, e.g. openai-compatible:http://localhost:8000/v1:qwen\n"
    );
    // Without a model, the spec suggested is not one that fails in turn.
    let output = ptc(&[
        "run",
        "--mission",
        "x",
        "--llm",
        "openai:http://localhost:8000/v1",
    ]);
    assert_eq!(
        refusal(&output),
        "error: `openai:http://localhost:8000/v1` names a URL, but openai: takes a model name \
         (the server is OpenAI's, or OPENAI_BASE_URL); for another server write \
         openai-compatible:URL:MODEL, e.g. openai-compatible:http://localhost:8000/v1:MODEL with \
         the model's name for MODEL\n"
    );
}

#[test]
fn an_unwritable_step_file_is_refused_before_the_first_request() {
    let dir = Scratch::new("dump");
    let transcript = dir.file("t.jsonl", "{\"content\": \"(return 1)\"}\n");
    let target = dir.path("missing-dir").join("step.json");
    let output = ptc(&[
        "run",
        "--mission",
        "x",
        "--llm",
        &format!("replay:{}", path(&transcript)),
        "--dump-step",
        path(&target),
    ]);
    assert_eq!(text(&output.stdout), "", "no turn was run");
    assert_eq!(
        refusal(&output),
        format!(
            "error: cannot write the step to {}: No such file or directory (os error 2)\n",
            target.display()
        )
    );
    // A failed run is written too.
    let failing = dir.file("f.jsonl", "{\"content\": \"(fail :no)\"}\n");
    let step_file = dir.path("step.json");
    let output = ptc(&[
        "run",
        "--mission",
        "x",
        "--llm",
        &format!("replay:{}", path(&failing)),
        "--dump-step",
        path(&step_file),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let step: Step = serde_json::from_str(&std::fs::read_to_string(&step_file).expect("written"))
        .expect("a step");
    assert_eq!(step.turns.len(), 1);
    assert!(step.turns[0].ends_run(), "the program called fail");
}

#[test]
fn options_come_from_flags_then_the_environment_then_ptc_toml() {
    let dir = Scratch::new("config");
    dir.file("t.jsonl", "{\"content\": \"(def a 1)\"}\n{\"content\": \"(def b 2)\"}\n{\"content\": \"(return 3)\"}\n");
    dir.file(
        "ptc.toml",
        "[agent]\nllm = \"replay:t.jsonl\"\nmax-turns = 2\n\n[input]\ndata = \"data.json\"\n",
    );
    dir.file("data.json", "{\"n\": 7}");
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["run", "--json", "--mission", "Use {{n}}"];
        all.extend_from_slice(args);
        let mut command = command(&all);
        command.current_dir(&dir.0);
        for (name, value) in env {
            command.env(name, value);
        }
        let output = command.output().expect("run ptc");
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
        (
            output.status.code(),
            report["ok"].clone(),
            text(&output.stderr),
        )
    };
    // The file's turn budget of 2 runs out before the return on turn 3; the data comes from
    // the file's [input] table, relative to the file.
    assert_eq!(
        run(&[], &[]),
        (Some(3), serde_json::json!(false), String::new())
    );
    // A flag wins over the file.
    assert_eq!(
        run(&["--max-turns", "3"], &[]),
        (Some(0), serde_json::json!(true), String::new())
    );
    // The environment wins over the file, and a flag over the environment.
    let (status, _, stderr) = run(&[], &[("PTC_LLM", "gemini:pro")]);
    assert_eq!(status, Some(2));
    assert!(
        stderr.starts_with("error: unknown model spec `gemini:pro`"),
        "{stderr}"
    );
    assert_eq!(
        run(
            &["--llm", "replay:t.jsonl", "--max-turns", "3"],
            &[("PTC_LLM", "gemini:pro")]
        )
        .0,
        Some(0)
    );
    // --config names another file; unknown keys are errors that say where.
    let other = dir.file("other.toml", "[agent]\nmax-turn = 3\n");
    let (status, _, stderr) = run(&["--config", path(&other)], &[]);
    assert_eq!(status, Some(2));
    assert!(
        stderr.starts_with(&format!(
            "error: {}: TOML parse error at line 2, column 1",
            other.display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("unknown field `max-turn`"), "{stderr}");
}

#[test]
fn help_shows_the_exit_status_table() {
    for args in [
        &["--help"][..],
        &["run", "--help"],
        &["eval", "--help"],
        &["mcp", "list", "--help"],
    ] {
        let output = ptc(args);
        assert!(
            text(&output.stdout).ends_with(
                "Exit status (every subcommand):\n  \
                 0  the program or the run returned a value (or the command did what it was \
                 asked)\n  \
                 1  the program or the run failed (an error, (fail ...), a model that could not \
                 be reached)\n  \
                 2  unusable arguments or input (an unknown option, a missing or invalid file, \
                 an MCP\n     server that could not be started or reached)\n  \
                 3  a limit stopped it (a sandbox limit of a program; the turn budget or deadline \
                 of a run)\n  \
                 4  ptc worker's store could not be reached for longer than its \
                 --outage-limit\n\
                 130  Ctrl-C stopped a run (the turns completed so far are kept: --dump-step, \
                 --checkpoint)\n"
            ),
            "{args:?}: {}",
            text(&output.stdout)
        );
    }
}

#[test]
fn logs_show_each_turn_with_verbose_as_text_or_json_and_quiet_keeps_only_the_result() {
    let dir = Scratch::new("logs");
    let transcript = dir.file(
        "t.jsonl",
        concat!(
            r#"{"content": "(def a 1)", "usage": {"input_tokens": 900, "output_tokens": 40}}"#,
            "\n",
            r#"{"content": "(return a)"}"#,
            "\n"
        ),
    );
    let llm = format!("replay:{}", path(&transcript));
    let args = ["run", "--mission", "x", "--llm", &llm];
    let output = ptc(&[&["-v"][..], &args].concat());
    assert_eq!(
        text(&output.stderr),
        " INFO agent_run:agent_turn: turn 1 of 5: ok; 900 tokens in, 40 out; <t> (model <t>, \
         program <t>)\n INFO agent_run:agent_turn: turn 2 of 5: ok; 0 tokens in, 0 out; <t> \
         (model <t>, program <t>)\n"
    );
    let output = ptc(&[&args[..], &["--log-format", "json", "-v"]].concat());
    let first: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&output.stderr)
            .lines()
            .next()
            .expect("a log line"),
    )
    .expect("a JSON log line");
    assert_eq!(first["level"], "INFO");
    assert_eq!(first["fields"]["gen_ai.usage.input_tokens"], 900);
    assert_eq!(first["fields"]["gen_ai.usage.output_tokens"], 40);
    assert_eq!(first["spans"][0]["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(first["spans"][0]["gen_ai.provider.name"], "replay");
    let output = ptc(&[&["-q"][..], &args].concat());
    assert_eq!(text(&output.stderr), "");
    assert_eq!(
        text(&output.stdout),
        "=== result ===\nreturned after 2 of 5 turns:\n  1\n"
    );
}

#[test]
fn openai_and_anthropic_specs_go_to_the_base_url_of_the_environment() {
    let server = support::ModelServer::start(vec!["(return 42)".to_string()], usize::MAX);
    let output = command(&[
        "run",
        "--json",
        "--mission",
        "x",
        "--llm",
        "openai:gpt-test",
    ])
    .env("OPENAI_API_KEY", "test-key")
    .env("OPENAI_BASE_URL", &server.base_url)
    .output()
    .expect("run ptc");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["value"], 42);
    let output = command(&[
        "run",
        "--mission",
        "x",
        "--llm",
        "anthropic:claude-test",
        "--retries",
        "0",
    ])
    .env("ANTHROPIC_API_KEY", "test-key")
    .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    .output()
    .expect("run ptc");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stdout).contains(
            "could not connect to anthropic:claude-test at http://127.0.0.1:9/v1/messages"
        ),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn headers_from_flags_reach_the_model_server_and_bad_ones_are_refused() {
    let server = support::ModelServer::start(vec!["(return 42)".to_string()], usize::MAX);
    let output = command(&[
        "run",
        "--json",
        "--mission",
        "x",
        "--llm",
        &server.spec(),
        "--header",
        "X-Title: Weekly report",
        "--header",
        "api-key:gateway-key",
    ])
    .output()
    .expect("run ptc");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let headers = server.headers.recv().expect("one request");
    let custom: Vec<(&str, &str)> = headers
        .iter()
        .filter(|(name, _)| name == "x-title" || name == "api-key")
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        custom,
        [("x-title", "Weekly report"), ("api-key", "gateway-key")]
    );

    let output = command(&[
        "run",
        "--mission",
        "x",
        "--llm",
        &server.spec(),
        "--header",
        "X-Title",
    ])
    .output()
    .expect("run ptc");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains(
            "invalid value 'X-Title' for '--header <'NAME: VALUE'>': expected 'NAME: VALUE', \
             e.g. 'X-Title: My app'"
        ),
        "{}",
        text(&output.stderr)
    );
    let output = command(&[
        "run",
        "--mission",
        "x",
        "--llm",
        &server.spec(),
        "--header",
        "X Title: a",
    ])
    .output()
    .expect("run ptc");
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("`X Title` is not a valid HTTP header name"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_turn_that_keeps_more_than_max_kept_bytes_fails_and_the_run_goes_on() {
    let transcript = temp(
        "kept.jsonl",
        "{\"content\": \"(def rows (vec (range 100)))\"}\n{\"content\": \"(return 1)\"}\n",
    );
    let dump = temp("kept-step.json", "");
    let output = ptc(&[
        "run",
        "--mission",
        "Keep rows",
        "--max-kept-bytes",
        "100",
        "--dump-step",
        path(&dump),
        "--llm",
        &format!("replay:{}", path(&transcript)),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let step: ptc_turn::Step =
        serde_json::from_str(&std::fs::read_to_string(&dump).expect("the dumped step"))
            .expect("a step");
    let error = step.turns[0].error().expect("turn 1 kept too much");
    assert_eq!(
        (error.kind.as_str(), error.message.split(';').next()),
        (
            "memory_kept_limit",
            Some(
                "your definitions would take more than 100 bytes kept between turns, the most a \
                 run may keep (largest: rows (more than 100 bytes))"
            )
        )
    );
    let _ = std::fs::remove_file(transcript);
    let _ = std::fs::remove_file(dump);
}

#[test]
fn float_precision_rounds_the_returned_value() {
    let transcript = temp(
        "floats.jsonl",
        "{\"content\": \"(return {:mean (/ 10.0 3) :n 3})\"}\n",
    );
    let output = ptc(&[
        "run",
        "--mission",
        "Average",
        "--float-precision",
        "2",
        "--json",
        "--llm",
        &format!("replay:{}", path(&transcript)),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(report["value_clojure"], "{:mean 3.33, :n 3}");
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
             error[reply_cut_off]: Your reply was cut off at the limit of 8 tokens before its program was \
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
    // The reply limit may come from ptc.toml as well.
    let dir = Scratch::new("reply-limit");
    dir.file(
        "ptc.toml",
        &format!(
            "[agent]\nllm = \"replay:{}\"\nmax-tokens = 12\n",
            path(&transcript)
        ),
    );
    let output = command(&["run", "--mission", "Add 1 and 2"])
        .current_dir(&dir.0)
        .output()
        .expect("run ptc");
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("cut off at the limit of 12 tokens"),
        "{}",
        text(&output.stdout)
    );
    for file in [transcript, written] {
        let _ = std::fs::remove_file(file);
    }
}

#[test]
fn llm_tools_from_a_file_ask_the_runs_model() {
    let tools = temp(
        "llm-tools.json",
        r#"{"classify": {"signature": "(text :string) -> {label :keyword}",
            "prompt": "Classify this ticket: {{text}}", "description": "Labels a ticket",
            "field-descriptions": {"label": "one of :bug :feature"}}}"#,
    );
    let transcript = temp(
        "llm-tools.jsonl",
        concat!(
            r#"{"content": "(return (:label (tool/classify \"it crashes\")))", "usage": {"input_tokens": 800, "output_tokens": 20}}"#,
            "\n",
            r#"{"content": "{\"label\": \"bug\"}", "usage": {"input_tokens": 90, "output_tokens": 6}}"#,
            "\n"
        ),
    );
    let output = ptc(&[
        "run",
        "--mission",
        "Label the ticket",
        "--llm-tools",
        path(&tools),
        "--json",
        "--llm",
        &format!("replay:{}", path(&transcript)),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(report["value_clojure"], ":bug");
    assert_eq!(
        (
            &report["usage"]["llm_requests"],
            &report["usage"]["input_tokens"],
            &report["usage"]["output_tokens"]
        ),
        (&2.into(), &890.into(), &26.into())
    );
    // A tool that cannot work is refused before the first request.
    let bad = temp(
        "llm-tools-bad.json",
        r#"{"classify": {"signature": "(text :string) -> :string", "prompt": "{{txt}}"}}"#,
    );
    let output = ptc(&[
        "run",
        "--mission",
        "Label",
        "--llm-tools",
        path(&bad),
        "--llm",
        &format!("replay:{}", path(&transcript)),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        format!(
            "error: --llm-tools {}: the prompt of tool/classify uses {{{{txt}}}} but its \
             signature's parameters are (text); every placeholder must be a parameter\n",
            bad.display()
        )
    );
    for file in [tools, transcript, bad] {
        let _ = std::fs::remove_file(file);
    }
}

// A run killed while a program runs leaves every reply it was given in its transcript: each is
// written the moment it arrives, not when the run ends.
#[test]
fn a_killed_run_keeps_its_transcript() {
    let dir = Scratch::new("killed");
    let replies = concat!(
        r#"{"content": "(def xs [1 2 3])"}"#,
        "\n",
        r#"{"content": "(loop [i 0] (recur (inc i)))"}"#,
        "\n"
    );
    let transcript = dir.file("replies.jsonl", replies);
    let written = dir.path("written.jsonl");
    let mut child = command(&[
        "run",
        "--mission",
        "Loop for ever",
        "--llm",
        &format!("replay:{}", path(&transcript)),
        "--timeout-ms",
        "60000",
        "--max-steps",
        "100000000000",
        "--transcript",
        path(&written),
    ])
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .expect("start ptc");
    // The second reply is written before its endless program starts.
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&written).map_or(0, |t| t.lines().count()) < 2 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the replies were not written while the run went on"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        child.try_wait().expect("the process"),
        None,
        "still running"
    );
    child.kill().expect("kill ptc");
    child.wait().expect("reap ptc");
    let lines: Vec<String> = std::fs::read_to_string(&written)
        .expect("the transcript")
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("a JSON line")["content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(lines, ["(def xs [1 2 3])", "(loop [i 0] (recur (inc i)))"]);
}

#[test]
fn trace_on_error_shows_and_writes_the_turns_of_a_failed_run_alone() {
    let dir = Scratch::new("trace-mode");
    let ok = dir.file("ok.jsonl", "{\"content\": \"(return 1)\"}\n");
    let fail = dir.file("fail.jsonl", "{\"content\": \"(fail \\\"no\\\")\"}\n");
    let run = |transcript: &Path, mode: &str| {
        let step_file = dir.path(&format!("{mode}.json"));
        let output = ptc(&[
            "run",
            "--mission",
            "One",
            "--llm",
            &format!("replay:{}", path(transcript)),
            "--trace",
            mode,
            "--dump-step",
            path(&step_file),
        ]);
        let step: Step =
            serde_json::from_str(&std::fs::read_to_string(&step_file).expect("written"))
                .expect("a step");
        let shown = text(&output.stdout);
        (
            output.status.code(),
            shown.contains("program:\n"),
            step.turns.len(),
        )
    };
    assert_eq!(
        [
            run(&ok, "always"),
            run(&fail, "always"),
            run(&ok, "never"),
            run(&fail, "never"),
            run(&ok, "on-error"),
            run(&fail, "on-error"),
        ],
        [
            (Some(0), true, 1),
            (Some(1), true, 1),
            (Some(0), false, 0),
            (Some(1), false, 0),
            (Some(0), false, 0),
            (Some(1), true, 1),
        ]
    );
    let output = ptc(&[
        "run",
        "--mission",
        "One",
        "--llm",
        "replay:x",
        "--trace",
        "sometimes",
    ]);
    assert_eq!(
        refusal(&output),
        "error: invalid value 'sometimes' for '--trace <MODE>': `sometimes` is not a trace mode; \
         write always, never or on-error\n\nFor more information, try '--help'.\n"
    );
}
