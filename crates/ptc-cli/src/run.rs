//! `ptc run`: an agent run against a real or replayed model, shown turn by turn, checkpointed
//! as it goes and resumable.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use ptc_agent::store::{JsonlStore, RunStore};
use ptc_agent::{Agent, AgentBuilder, AsyncTool, RecordingLlm, RunObserver, RunOptions, RunUsage};
use ptc_store::SqliteStore;
use ptc_turn::{Message, Step, TraceMode, Turn};

use crate::bill::RunBill;
use crate::config_file::Config;
use crate::exit;
use crate::input::{check_writable, data_entries, fixture_tools, read_file};
use crate::mcp::{McpSession, block_on, resolve, with_servers};
use crate::options::{AgentOptions, HistoryOptions, InputOptions, LimitOptions, McpOptions};
use crate::report;
use crate::show;

/// What defines an agent on the command line: its mission, model, settings, input and tools.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// What the agent must do. `{{name}}` placeholders are filled from the data.
    #[arg(long, value_name = "TEXT", required_unless_present = "mission_file")]
    pub mission: Option<String>,
    /// Read the mission from this file.
    #[arg(long, value_name = "FILE", conflicts_with = "mission")]
    pub mission_file: Option<PathBuf>,
    #[command(flatten)]
    pub agent: AgentOptions,
    #[command(flatten)]
    pub input: InputOptions,
    #[command(flatten)]
    pub limits: LimitOptions,
    #[command(flatten)]
    pub history: HistoryOptions,
    #[command(flatten)]
    pub mcp: McpOptions,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub spec: AgentArgs,
    /// Print one JSON object at the end (outcome, value as JSON and as Clojure text, turns,
    /// usage) instead of the turn-by-turn trace.
    #[arg(long)]
    pub json: bool,
    /// Which runs show and keep their turns: `always`; `never` (neither the turn-by-turn trace
    /// nor the --dump-step file has them: the outcome, usage and bill only); `on-error` (the
    /// turns are shown and written only when the run fails, shown once it has) [default:
    /// always].
    #[arg(long, value_name = "MODE")]
    pub trace: Option<TraceMode>,
    /// Write the whole run (every turn, the messages sent, usage) as JSON to this file, however
    /// the run ends. The file is checked before the first request.
    #[arg(long, value_name = "FILE.json")]
    pub dump_step: Option<PathBuf>,
    /// Write the model's replies to this file, as a transcript that `--llm replay:FILE` plays
    /// back to the same programs and outcome (with --resume: the replies of this session).
    #[arg(long, value_name = "FILE.jsonl")]
    pub transcript: Option<PathBuf>,
    /// When the run returns, write its program to this file as a compiled agent, which
    /// `ptc exec FILE` runs on other data without a model. A failed run writes nothing.
    #[arg(long, value_name = "FILE.json")]
    pub compile_to: Option<PathBuf>,
    /// Export the run as OpenTelemetry traces (GenAI conventions: a span for the run, each
    /// turn, model request and tool call; programs and outputs as events) to this OTLP/HTTP
    /// collector: its base URL (`/v1/traces` is added) or its traces URL. Sent before `ptc`
    /// exits.
    #[arg(long, value_name = "URL", env = "PTC_OTLP_ENDPOINT")]
    pub otlp: Option<String>,
    /// Record each turn in this file as it completes: JSON lines, or an SQLite database when
    /// the name ends in .db, .sqlite or .sqlite3. A run that stops can then be resumed.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Continue the run recorded in the --checkpoint file from its last completed turn (give
    /// the same mission, tools, data and settings).
    #[arg(long, requires = "checkpoint")]
    pub resume: bool,
    /// The run's name in the checkpoint file, which can hold several runs.
    #[arg(
        long,
        value_name = "ID",
        default_value = "run",
        requires = "checkpoint"
    )]
    pub run_id: String,
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
        let _ = writeln!(stdout, "{}", show::turn_usage(turn));
        let _ = writeln!(stdout);
        let _ = stdout.flush();
    }
}

/// The run's settings, from the command line over the configuration file.
pub struct Resolved {
    pub agent: AgentOptions,
    pub input: InputOptions,
    pub limits: LimitOptions,
    pub history: HistoryOptions,
    pub mcp: McpOptions,
}

impl Resolved {
    pub fn new(args: &AgentArgs, config: &Config) -> Resolved {
        Resolved {
            agent: args.agent.clone().or(config.agent.clone()),
            input: args.input.clone().or(config.input.clone()),
            limits: args.limits.clone().or(config.limits.clone()),
            history: args.history.clone().or(config.history.clone()),
            mcp: resolve(&args.mcp, config),
        }
    }
}

pub fn run(args: RunArgs, config: &Config, quiet: bool) -> ExitCode {
    let settings = Resolved::new(&args.spec, config);
    with_servers(&settings.mcp, |mcp| {
        match execute(&args, &settings, mcp, quiet) {
            Ok(status) => exit::code(status),
            Err(message) => {
                eprintln!("error: {message}");
                exit::code(exit::USAGE)
            }
        }
    })
}

pub fn mission(args: &AgentArgs) -> Result<String, String> {
    let text = match (&args.mission, &args.mission_file) {
        (Some(text), _) => text.clone(),
        (None, Some(path)) => read_file(path)?,
        (None, None) => {
            return Err("give the mission with --mission TEXT or --mission-file FILE".into());
        }
    };
    if text.trim().is_empty() {
        return Err("the mission is empty; say what the agent must do".into());
    }
    Ok(text.trim().to_string())
}

/// The agent, and the wrapper keeping the model's replies when `--transcript` asks for them.
fn agent(
    args: &RunArgs,
    settings: &Resolved,
    mcp: Option<&McpSession>,
) -> Result<(Agent, Option<RecordingLlm>), String> {
    let mut llm = settings.agent.llm()?;
    // Each reply goes to the file as it arrives: a run that crashes keeps what it was given.
    let recording = args
        .transcript
        .as_deref()
        .map(|path| {
            std::fs::File::create(path)
                .map(|file| RecordingLlm::writing_to(llm.clone(), file))
                .map_err(|e| format!("cannot write the transcript to {}: {e}", path.display()))
        })
        .transpose()?;
    if let Some(recording) = &recording {
        llm = Arc::new(recording.clone());
    }
    let builder = settings
        .agent
        .apply(Agent::builder(mission(&args.spec)?), llm)?;
    let agent = build_agent(builder, settings, mcp)?;
    Ok((agent, recording))
}

/// Builds the agent `builder` starts, with the settings' limits, history policy, tools and
/// data.
pub fn build_agent(
    builder: AgentBuilder,
    settings: &Resolved,
    mcp: Option<&McpSession>,
) -> Result<Agent, String> {
    let tools = mcp.map(|mcp| mcp.servers.tools()).unwrap_or_default();
    build_agent_with(builder, settings, &tools)
}

/// [`build_agent`] with the tools of MCP servers already connected (`tools`), after the
/// `--tools` of the settings, in this order whoever builds the agent: a run submitted to a
/// fleet and the worker that works it have the same tools in the same order.
pub fn build_agent_with(
    mut builder: AgentBuilder,
    settings: &Resolved,
    tools: &[Arc<dyn AsyncTool>],
) -> Result<Agent, String> {
    builder = builder.limits(settings.limits.limits());
    if let Some(policy) = settings.history.policy() {
        builder = builder.history_policy(policy);
    }
    if let Some(path) = &settings.input.tools {
        builder = builder.lisp_tools(&fixture_tools(path)?);
    }
    for tool in tools {
        builder = builder.tool_arc(tool.clone());
    }
    if let Some(path) = &settings.input.data {
        for (name, value) in data_entries(path)? {
            builder = builder.data_value(name, value);
        }
    }
    builder.build().map_err(|e| e.to_string())
}

/// Completes at the first Ctrl-C, which stops the run with the turns completed so far kept;
/// a second one quits at once. If the handler cannot be installed, Ctrl-C keeps its default
/// effect and this never completes.
async fn ctrl_c(quiet: bool) {
    if tokio::signal::ctrl_c().await.is_err() {
        return std::future::pending().await;
    }
    if !quiet {
        eprintln!("\nstopping the run at Ctrl-C (press it again to quit at once)");
    }
    tokio::spawn(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(i32::from(exit::INTERRUPTED));
        }
    });
}

/// The store of `--checkpoint`: SQLite for a database name, JSON lines otherwise.
fn open_store(path: &Path) -> Result<Box<dyn RunStore>, String> {
    let sqlite = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "db" | "sqlite" | "sqlite3"));
    if sqlite {
        return SqliteStore::open(path)
            .map(|store| Box::new(store) as Box<dyn RunStore>)
            .map_err(|e| e.to_string());
    }
    let store = JsonlStore::open(path).map_err(|e| e.to_string())?;
    if let Some(torn) = store.torn() {
        eprintln!(
            "warning: {} ended in a record cut short (line {}, {} bytes written when the \
             process stopped); it was removed, and the run continues from the last whole turn",
            path.display(),
            torn.line,
            torn.bytes
        );
    }
    Ok(Box::new(store))
}

fn execute(
    args: &RunArgs,
    settings: &Resolved,
    mcp: Option<&McpSession>,
    quiet: bool,
) -> Result<u8, String> {
    let (agent, recording) = agent(args, settings, mcp)?;
    if let Some(path) = &args.dump_step {
        check_writable(path, "step")?;
    }
    if let Some(path) = &args.compile_to {
        crate::exec::check_compile_to(&agent, path)?;
    }
    let store = args.checkpoint.as_deref().map(open_store).transpose()?;
    let trace_mode = args.trace.unwrap_or_default();
    let trace = !args.json && !quiet && trace_mode == TraceMode::Always;
    let step = block_on(mcp, async {
        let mut options = RunOptions::new().with_stop_signal(ctrl_c(quiet));
        if trace {
            options = options.with_observer(&Live);
        }
        let Some(store) = store.as_deref() else {
            return agent.run_with(options).await.map_err(|e| e.to_string());
        };
        let path = args.checkpoint.as_deref().unwrap_or(Path::new(""));
        let recorded = store.load(&args.run_id).await.map_err(|e| e.to_string())?;
        match (args.resume, recorded) {
            (false, None) => agent
                .run_with(options.with_store(store, args.run_id.as_str()))
                .await
                .map_err(|e| e.to_string()),
            (false, Some(_)) => Err(format!(
                "{} already holds run `{}`; add --resume to continue it, or give another \
                 --checkpoint file or --run-id",
                path.display(),
                args.run_id
            )),
            (true, None) => Err(format!(
                "{} holds no run `{}` to resume",
                path.display(),
                args.run_id
            )),
            (true, Some(checkpoint)) => {
                if trace {
                    println!("{}", resume_line(path, &args.run_id, &checkpoint));
                }
                agent
                    .resume(store, &args.run_id, options)
                    .await
                    .map_err(|e| e.to_string())
            }
        }
    })??;
    if !args.json && !quiet && trace_mode == TraceMode::OnError && !step.is_success() {
        for turn in step.turns.iter() {
            Live.on_turn(turn);
        }
    }
    let written = args
        .dump_step
        .as_deref()
        .map(|path| write_step(&trace_mode.apply(step.clone()), path));
    let transcript_written =
        args.transcript
            .as_deref()
            .zip(recording.as_ref())
            .map(|(path, recording)| match recording.write_error() {
                Some(e) => Err(format!(
                    "cannot write the transcript to {}: {e}",
                    path.display()
                )),
                None => Ok(()),
            });
    let compiled = args
        .compile_to
        .as_deref()
        .map(|path| crate::exec::write_compiled(&agent, &step, path));
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let bill = RunBill::new(&step, &agent, settings.agent.pricing, false);
        let usage = agent.run_usage(&step);
        let _ = writeln!(stdout, "{}", json_report(&step, args, &bill, &usage));
    } else {
        let _ = write!(
            stdout,
            "=== result ===\n{}",
            show::outcome_line(&step, show::Unit::Turn)
        );
    }
    if !args.json {
        // `-q` asks for the result without the usage and the bill; the files written are still
        // named, since they are what the command was asked to do.
        if !quiet {
            let replayed = settings
                .agent
                .llm
                .as_deref()
                .is_some_and(|spec| spec.trim_start().starts_with("replay:"));
            let _ = write!(stdout, "{}", show::usage_lines(&step.usage, replayed));
            let bill = RunBill::new(&step, &agent, settings.agent.pricing, true);
            let _ = write!(stdout, "{}", bill.text());
        }
        if let Some(Ok(())) = &written
            && let Some(path) = &args.dump_step
        {
            let _ = writeln!(stdout, "step written to {}", path.display());
        }
        if let Some(Ok(())) = &transcript_written
            && let Some(path) = &args.transcript
        {
            let _ = writeln!(stdout, "transcript written to {}", path.display());
        }
        if let Some(Ok(line)) = &compiled {
            let _ = writeln!(stdout, "{line}");
        }
    }
    let _ = stdout.flush();
    let compiled_error = match compiled {
        // A failed run has nothing to compile; its exit status already says it failed.
        Some(Err(message)) if step.is_success() => Some(Err(message)),
        Some(Err(message)) => {
            eprintln!("{message}");
            None
        }
        _ => None,
    };
    let errors: Vec<String> = [written, transcript_written, compiled_error]
        .into_iter()
        .flatten()
        .filter_map(Result::err)
        .collect();
    for message in &errors {
        eprintln!("error: {message}");
    }
    if errors.is_empty() {
        Ok(exit::for_step(&step))
    } else {
        Ok(exit::FAILED)
    }
}

fn resume_line(path: &Path, id: &str, checkpoint: &ptc_agent::store::Checkpoint) -> String {
    match (&checkpoint.end, checkpoint.turns.len()) {
        (Some((ptc_turn::StepOutcome::Failed { kind, .. }, _)), n) if checkpoint.goes_on() => {
            format!(
                "resuming run `{id}` from {} after turn {n} of {}: it had ended on {}\n",
                path.display(),
                checkpoint.task.max_turns,
                kind.as_str()
            )
        }
        (Some(_), n) => format!(
            "run `{id}` in {} had already ended after {n} turn{}; its result:",
            path.display(),
            if n == 1 { "" } else { "s" }
        ),
        (None, 0) => format!(
            "resuming run `{id}` from {}: no turn was completed, starting with turn 1",
            path.display()
        ),
        (None, n) => format!(
            "resuming run `{id}` from {} after turn {n} of {}\n",
            path.display(),
            checkpoint.task.max_turns
        ),
    }
}

fn write_step(step: &Step, path: &Path) -> Result<(), String> {
    let json = serde_json::to_string_pretty(step)
        .map_err(|e| format!("cannot write the step as JSON: {e}"))?;
    std::fs::write(path, json + "\n").map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The end of a run for a program to read.
fn json_report(step: &Step, args: &RunArgs, bill: &RunBill, usage: &RunUsage) -> serde_json::Value {
    let mut report = report::step_json("run", step);
    if let (Some(fields), Ok(serde_json::Value::Object(more))) =
        (report["usage"].as_object_mut(), serde_json::to_value(usage))
    {
        fields.extend(more);
    }
    if let Some(fields) = report.as_object_mut() {
        fields.insert("cost".into(), bill.json());
        fields.insert("step_file".into(), serde_json::json!(args.dump_step));
        fields.insert("checkpoint".into(), serde_json::json!(args.checkpoint));
    }
    report
}
