//! `ptc-bench`: run the agent missions against a model and write a report.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use ptc_agent::{ProviderOptions, ReplyForm, RetryPolicy};
use ptc_bench::harness::{AgentKind, DEFAULT_CONTEXT_TOKENS};
use ptc_bench::{EvalOptions, evaluate};

/// Run every mission N times per compression configuration against a model, and write
/// REPORT.md, report.json and one transcript per run.
#[derive(Debug, Parser)]
#[command(name = "ptc-bench", version)]
struct Cli {
    /// The model: `openai:MODEL`, `anthropic:MODEL`, `openai-compatible:URL:MODEL`,
    /// `replay:FILE.jsonl` (one transcript for every run), `replay-dir:DIR` (each run's own
    /// transcript, DIR/<config>/<mission>/<run>.jsonl, as an earlier evaluation wrote them) or
    /// `file:DIR` (each run answered through the files of DIR/<config>/<mission>/<run>/: the
    /// request written there as req-N.md and req-N.json, the reply read from reply-N.txt or
    /// reply-N.json; the request timeout is how long each reply may take, 30 minutes by
    /// default).
    #[arg(long, value_name = "SPEC")]
    llm: String,
    /// Runs per mission and configuration [default: 1; replaying a directory: every run it
    /// holds].
    #[arg(long, value_name = "N")]
    runs: Option<u32>,
    /// One configuration per compression spec: `off`, `on`, or a strategy with options such as
    /// `rolling-window?window=3`. The first is the baseline of the comparisons [default: off
    /// and on; replaying a directory: the configurations it holds].
    #[arg(long, value_name = "SPEC")]
    compression: Vec<String>,
    /// The agent: `ptc` (one configuration per compression spec) or `tool-calls` (plain tool
    /// calling: the tools as native function tools, the data in the first message, the answer
    /// through `final_answer`); repeatable, in the order given. The first configuration is the
    /// baseline [default: ptc].
    #[arg(long, value_name = "AGENT", value_parser = agent)]
    agent: Vec<AgentKind>,
    /// How a PTC agent's model hands over its programs: `fenced` (a ```clojure block) or
    /// `tool-call` (a call of the native tool `run_program`; configurations are labelled
    /// `LABEL.tool-call`).
    #[arg(long, value_name = "FORM", value_parser = reply, default_value = "fenced")]
    reply: ReplyForm,
    /// The context window, in tokens (estimated at 4 characters a token): a larger request
    /// fails as a provider refuses it.
    #[arg(long, value_name = "TOKENS", default_value_t = DEFAULT_CONTEXT_TOKENS)]
    context_tokens: usize,
    /// Only the missions whose names match this glob (`*` and `?`); repeatable.
    #[arg(long, value_name = "GLOB")]
    missions: Vec<String>,
    /// Where the missions are.
    #[arg(long, value_name = "DIR", default_value = "benchmarks/missions")]
    missions_dir: PathBuf,
    /// Where the report and the transcripts go.
    #[arg(long, value_name = "DIR", default_value = "target/eval")]
    out: PathBuf,
    /// Runs at once.
    #[arg(long, value_name = "N", default_value_t = 4)]
    jobs: usize,
    /// The sampling temperature [default: the provider's].
    #[arg(long, value_name = "T")]
    temperature: Option<f32>,
    /// The sampling seed of every request (OpenAI-compatible servers), for replies that repeat
    /// [default: none].
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// The most tokens each reply may have [default: 4096].
    #[arg(long, value_name = "N")]
    max_tokens: Option<u32>,
    /// The longest one model request may take, in seconds (fractions allowed) [default: 120;
    /// answered through files: 1800].
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    request_timeout: Option<Duration>,
    /// Retries of a model request after a transient failure [default: 3].
    #[arg(long, value_name = "N")]
    retries: Option<u32>,
    /// Ask an OpenAI-compatible server for streamed replies, so that a request that times out
    /// stops the server's work on it (for local servers; some report no token usage then).
    #[arg(long)]
    stream: bool,
    /// Also write each run's whole Step (programs, results, errors and the messages each
    /// request sent) under steps/<config>/<mission>/<run>.json in the output directory, and each
    /// PTC run's page beside it (<run>.html), linked from REPORT.html.
    #[arg(long)]
    steps: bool,
}

/// An agent's name.
fn agent(text: &str) -> Result<AgentKind, String> {
    match text.trim() {
        "ptc" => Ok(AgentKind::Ptc),
        "tool-calls" => Ok(AgentKind::ToolCalls),
        other => Err(format!("`{other}` is not an agent: use ptc or tool-calls")),
    }
}

/// A reply form's name.
fn reply(text: &str) -> Result<ReplyForm, String> {
    text.parse()
}

/// A positive number of seconds, fractions allowed.
fn seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("the timeout must be a positive number of seconds, not {text}"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let options = EvalOptions {
        llm: cli.llm,
        compression: cli.compression,
        agents: cli.agent,
        reply: cli.reply,
        context_tokens: cli.context_tokens,
        runs: cli.runs,
        missions_dir: cli.missions_dir,
        missions: cli.missions,
        out_dir: cli.out.clone(),
        jobs: cli.jobs.max(1),
        temperature: cli.temperature,
        seed: cli.seed,
        max_tokens: cli.max_tokens,
        provider: ProviderOptions {
            request_timeout: cli.request_timeout,
            retry: cli.retries.map(|max_retries| RetryPolicy {
                max_retries,
                ..RetryPolicy::default()
            }),
            stream: cli.stream,
            headers: Vec::new(),
        },
        progress: true,
        write_steps: cli.steps,
    };
    match evaluate(&options) {
        Ok(report) => {
            for c in &report.configs {
                let s = &c.total;
                println!(
                    "{}: {}/{} runs passed ({:.1} %), {:.1} turns per run",
                    c.label,
                    s.passed,
                    s.runs,
                    s.pass_rate * 100.0,
                    s.mean_turns
                );
            }
            for c in &report.comparisons {
                println!("{}", c.summary);
            }
            println!(
                "report: {} and {}",
                cli.out.join("REPORT.md").display(),
                cli.out.join("report.json").display()
            );
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
