//! `ptc demo`: the bundled example, run offline against a recorded model.
//!
//! The example's files (`examples/demo/` in the repository) are compiled into the binary, so
//! the demo runs anywhere without network access or keys.

use crate::show;
use clap::Args;
use ptc_agent::{Agent, ReplayLlm, RunObserver, RunOptions};
use ptc_compression::{Compression, RenderOptions, Rendered, Uncompressed};
use ptc_lisp::Value;
use ptc_turn::{Message, Step, Turn};
use std::io::Write;
use std::process::ExitCode;

const MISSION: &str = include_str!("../../../examples/demo/mission.txt");
const DATA: &str = include_str!("../../../examples/demo/data.json");
const TOOLS: &str = include_str!("../../../examples/demo/tools.json");
const SIGNATURE: &str = include_str!("../../../examples/demo/signature.txt");
const TRANSCRIPT: &str = include_str!("../../../examples/demo/transcript.jsonl");
const MAX_TURNS: u32 = 6;

#[derive(Debug, Args)]
pub struct DemoArgs {}

/// Prints what the model sees before each turn and what came of its reply.
struct Narrator;

impl Narrator {
    fn print(text: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }
}

impl RunObserver for Narrator {
    fn on_request(&self, turn: u32, messages: &[Message]) {
        Narrator::print(&format!(
            "\n========== turn {turn} of {MAX_TURNS} ==========\n\
             The model sees the system prompt and then (compressed history):\n{}",
            show::messages_text(messages)
        ));
    }

    fn on_turn(&self, turn: &Turn) {
        Narrator::print(&format!(
            "\nThe model replies:\n{}\nRunning the program:\n{}",
            show::quoted(turn.raw_response(), "  | "),
            show::turn_report(turn, false)
        ));
    }
}

pub fn run(_args: &DemoArgs) -> ExitCode {
    match execute() {
        Ok(step) if step.is_success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn agent() -> Result<Agent, String> {
    let llm = ReplayLlm::from_jsonl("examples/demo/transcript.jsonl", TRANSCRIPT)
        .map_err(|e| e.to_string())?;
    let tools = ptc_lisp::Tools::from_fixture_json(TOOLS).map_err(|e| e.message)?;
    let Value::Map(data) = ptc_lisp::from_json_str(DATA).map_err(|e| e.message)? else {
        return Err("the demo data is not a JSON object".into());
    };
    let mut builder = Agent::builder(MISSION.trim())
        .llm(llm)
        .lisp_tools(&tools)
        .signature(SIGNATURE.trim())
        .max_turns(MAX_TURNS)
        .compression(true);
    for (key, value) in data.iter() {
        if let Value::Keyword(name) = key {
            builder = builder.data_value(name.as_str(), value.clone());
        }
    }
    builder.build().map_err(|e| e.to_string())
}

fn execute() -> Result<Step, String> {
    let agent = agent()?;
    let prompt = agent.system_prompt();
    Narrator::print(&format!(
        "ptc demo: an agent solves a support task in PTC-Lisp, offline.\n\
         The model's replies are a recorded transcript (examples/demo/transcript.jsonl); the \
         programs, tools and history compression run for real.\n\n\
         Mission:\n{}\
         Expected output: {}\n\
         Tools: {}\n\
         System prompt: {} characters, ~{} tokens (sent unchanged on every turn, not shown)\n",
        show::quoted(agent.mission(), "  "),
        SIGNATURE.trim(),
        agent
            .tool_specs()
            .iter()
            .map(|s| format!("tool/{}", s.name))
            .collect::<Vec<_>>()
            .join(", "),
        prompt.chars,
        prompt.estimated_tokens,
    ));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("could not start the async runtime: {e}"))?;
    let step = runtime
        .block_on(agent.run_with(RunOptions::new().with_observer(&Narrator)))
        .map_err(|e| e.to_string())?;
    Narrator::print(&closing(&step, &agent));
    Ok(step)
}

/// How the run ended, what its requests cost against the full history's, and the history it
/// left rendered compressed and uncompressed.
fn closing(step: &Step, agent: &Agent) -> String {
    let opts = RenderOptions::from_task(&step.task).with_limits(agent.compression().limits());
    let strategy = agent.compression().build_for(agent.pricing());
    let memory = step.turns.last().map_or(&[][..], Turn::memory);
    let compressed = strategy.to_messages(&step.turns, memory, &opts);
    let full = Uncompressed.to_messages(&step.turns, memory, &opts);
    let bills = show::bills(
        &*strategy,
        &step.turns,
        &opts,
        false,
        &show::default_profiles(),
    );
    let system = ptc_compression::tokenizer::HeuristicTokenizer;
    let system_tokens = ptc_compression::Tokenizer::count_text(&system, &step.task.system_prompt);
    let name = format!("compressed ({}):", strategy.name());
    let line = |name: &str, rendered: &Rendered| {
        format!(
            "  {name:<30} {:>2} messages, ~{} tokens (~{} without the system prompt)\n",
            rendered.messages.len(),
            rendered.stats.estimated_tokens,
            rendered
                .stats
                .estimated_tokens
                .saturating_sub(system_tokens),
        )
    };
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let (c, u) = (
        compressed.stats.estimated_tokens,
        full.stats.estimated_tokens,
    );
    let billed: Vec<String> = bills
        .iter()
        .map(|b| {
            format!(
                "{:.2} ({})",
                b.ratio().unwrap_or(1.0),
                b.strategy.profile.name()
            )
        })
        .collect();
    format!(
        "\n========== the run ==========\n{}{}\n\
         ========== what the requests cost ==========\n{}\
         billed, compressed / full history: {}\n\n\
         ========== the history after {} turns, as the next request would send it ==========\n\
         {}{}\
         compressed / uncompressed size: {:.2} ({:.2} without the system prompt)\n\n\
         Run it yourself, from the repository's root (`cargo install --locked --path \
         crates/ptc-cli` puts ptc on the PATH):\n  ptc run --mission-file examples/demo/mission.txt \
         --data examples/demo/data.json --tools examples/demo/tools.json \
         --signature \"$(cat examples/demo/signature.txt)\" --max-turns {MAX_TURNS} \
         --compression on --llm replay:examples/demo/transcript.jsonl\n",
        show::outcome_line(step, show::Unit::Turn),
        show::usage_lines(&step.usage, true),
        show::bill_lines(&bills),
        billed.join(", "),
        step.turns.len(),
        line(&name, &compressed),
        line("uncompressed (full history):", &full),
        ratio(c, u),
        ratio(
            c.saturating_sub(system_tokens),
            u.saturating_sub(system_tokens)
        ),
    )
}
