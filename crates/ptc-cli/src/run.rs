//! `ptc run`: an agent run against a real or replayed model, shown turn by turn.

use crate::eval::read_file;
use crate::mcp::{McpArgs, McpSession, with_servers};
use crate::show;
use clap::Args;
use ptc_agent::{
    Agent, ProviderOptions, RecordingLlm, RunObserver, RunOptions, parse_llm_spec_with,
};
use ptc_compression::CompressionConfig;
use ptc_lisp::Value;
use ptc_turn::{Message, Step, Turn};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What the agent must do. `{{name}}` placeholders are filled from the data.
    #[arg(long, value_name = "TEXT")]
    pub mission: String,
    /// Input data: a JSON object whose top-level keys become `data/<key>`.
    #[arg(long, value_name = "FILE.json")]
    pub data: Option<PathBuf>,
    /// Fixture tools: `{"name": {"description": "...", "params": ["a"], "returns": <json>}}`.
    #[arg(long, value_name = "FILE.json")]
    pub tools: Option<PathBuf>,
    /// The model: `openai:MODEL`, `anthropic:MODEL`, `openai-compatible:URL:MODEL` or
    /// `replay:FILE.jsonl`. Keys come from OPENAI_API_KEY, ANTHROPIC_API_KEY and
    /// OPENAI_COMPATIBLE_API_KEY.
    #[arg(long, value_name = "SPEC")]
    pub llm: String,
    /// The shape of the value to return, e.g. `{total :float, ids [:int]}`.
    #[arg(long, value_name = "SIG")]
    pub signature: Option<String>,
    /// The most turns the run may take.
    #[arg(long, value_name = "N", default_value_t = ptc_turn::DEFAULT_MAX_TURNS)]
    pub max_turns: u32,
    /// History compression: `off` (the default), `on`, or a strategy with options such as
    /// `single-user-coalesced?println_limit=10`.
    #[arg(long, value_name = "SPEC", default_value = "off")]
    pub compression: CompressionConfig,
    /// The most tokens each reply may have; a reply cut off there is flagged, and the model
    /// is told to write a shorter program.
    #[arg(long, value_name = "N", default_value_t = ptc_agent::llm::DEFAULT_MAX_TOKENS)]
    pub max_tokens: u32,
    /// The longest one model request may take, in seconds (fractions allowed) [default: 120].
    #[arg(long, value_name = "SECONDS", value_parser = ProviderOptions::parse_timeout)]
    pub request_timeout: Option<Duration>,
    /// Retries of a model request after a transient failure [default: 3].
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// Write the whole run (every turn, the messages sent, usage) as JSON to this file.
    #[arg(long, value_name = "FILE.json")]
    pub dump_step: Option<PathBuf>,
    /// Write the model's replies to this file, as a transcript that `--llm replay:FILE`
    /// plays back.
    #[arg(long, value_name = "FILE.jsonl")]
    pub transcript: Option<PathBuf>,
    #[command(flatten)]
    pub mcp: McpArgs,
}

/// The input data entries of a JSON file, in the file's order.
pub fn data_entries(path: &PathBuf) -> Result<Vec<(String, Value)>, String> {
    let value = ptc_lisp::json::from_json_str(&read_file(path)?)
        .map_err(|e| format!("{}: {}", path.display(), e.message))?;
    let Value::Map(map) = value else {
        return Err(format!(
            "{}: the data must be a JSON object whose keys become data/<key>, not {}",
            path.display(),
            value.type_name()
        ));
    };
    Ok(map
        .iter()
        .map(|(key, value)| {
            let name = match key {
                Value::Keyword(k) => k.as_str().to_string(),
                Value::Str(s) => s.to_string(),
                other => ptc_lisp::format::pr_str(other),
            };
            (name, value.clone())
        })
        .collect())
}

/// Prints each turn as soon as it is recorded.
struct Live;

impl RunObserver for Live {
    fn on_request(&self, turn: u32, messages: &[Message]) {
        let chars: usize = messages.iter().map(|m| m.content.chars().count()).sum();
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(
            stdout,
            "--- turn {turn}: asking the model ({} messages, {chars} characters) ---",
            messages.len()
        );
        let _ = stdout.flush();
    }

    fn on_turn(&self, turn: &Turn) {
        let mut stdout = std::io::stdout().lock();
        let _ = write!(stdout, "{}", show::turn_report(turn, true));
        let _ = writeln!(stdout);
        let _ = stdout.flush();
    }
}

pub fn run(args: RunArgs) -> ExitCode {
    with_servers(&args.mcp, |mcp| match execute(&args, mcp) {
        Ok(step) if step.is_success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    })
}

fn execute(args: &RunArgs, mcp: Option<&McpSession>) -> Result<Step, String> {
    let options = ProviderOptions {
        timeout: args.request_timeout,
        retries: args.retries,
    };
    let llm =
        RecordingLlm::new(parse_llm_spec_with(&args.llm, &options).map_err(|e| e.to_string())?);
    let mut builder = Agent::builder(&args.mission)
        .llm(llm.clone())
        .max_turns(args.max_turns)
        .max_tokens(args.max_tokens)
        .compression_config(args.compression);
    if let Some(path) = &args.tools {
        let tools = ptc_lisp::Tools::from_fixture_json(&read_file(path)?)
            .map_err(|e| format!("{}: {}", path.display(), e.message))?;
        builder = builder.lisp_tools(&tools);
    }
    if let Some(mcp) = mcp {
        for tool in mcp.servers.tools() {
            builder = builder.tool_arc(tool);
        }
    }
    if let Some(path) = &args.data {
        for (name, value) in data_entries(path)? {
            builder = builder.data_value(name, value);
        }
    }
    if let Some(signature) = &args.signature {
        builder = builder.signature(signature);
    }
    let agent = builder.build().map_err(|e| e.to_string())?;
    let own_runtime;
    let runtime = match mcp {
        Some(mcp) => &mcp.runtime,
        None => {
            own_runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("could not start the async runtime: {e}"))?;
            &own_runtime
        }
    };
    let step = runtime
        .block_on(agent.run_with(RunOptions::new().observer(&Live)))
        .map_err(|e| e.to_string())?;
    if let Some(path) = &args.dump_step {
        let json = serde_json::to_string_pretty(&step)
            .map_err(|e| format!("cannot write the step as JSON: {e}"))?;
        std::fs::write(path, json + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.transcript {
        let text = llm
            .transcript_jsonl()
            .map_err(|e| format!("cannot write the transcript: {e}"))?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let mut stdout = std::io::stdout().lock();
    let _ = write!(stdout, "=== result ===\n{}", show::outcome_line(&step));
    let _ = write!(stdout, "{}", show::usage_lines(&step.usage));
    if let Some(path) = &args.dump_step {
        let _ = writeln!(stdout, "step written to {}", path.display());
    }
    if let Some(path) = &args.transcript {
        let _ = writeln!(stdout, "transcript written to {}", path.display());
    }
    Ok(step)
}
