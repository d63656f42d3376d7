//! `ptc eval`: run one PTC-Lisp program.

use crate::mcp::{McpArgs, McpSession, merge_tools, with_servers};
use clap::Args;
use ptc_lisp::format::pr_str;
use ptc_lisp::{
    Limits, Outcome, Pos, Program, RunOutcome, Runtime, ToolOutcome, Tools, UserNamespace, Value,
};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The program text.
    #[arg(
        short = 'e',
        long = "expr",
        value_name = "PROGRAM",
        conflicts_with = "file"
    )]
    pub expr: Option<String>,
    /// A file holding the program, or `-` for standard input.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Input data: a JSON object whose top-level keys become `data/<key>`.
    #[arg(long, value_name = "FILE.json")]
    pub data: Option<PathBuf>,
    /// Fixture tools: `{"name": {"description": "...", "params": ["a"], "returns": <json>}}`.
    #[arg(long, value_name = "FILE.json")]
    pub tools: Option<PathBuf>,
    /// Print one JSON object: {"ok", "result", "prints", "tool_calls", "error"}.
    #[arg(long)]
    pub json: bool,
    /// Run the program N times in one process and report median parse and evaluate times.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: usize,
    /// Wall-clock limit for evaluation, in milliseconds.
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// Memory budget for the values the program builds, in bytes.
    #[arg(long, value_name = "BYTES")]
    pub max_memory: Option<usize>,
    /// Evaluation step budget (function calls, loop iterations, elements processed).
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u64>,
    #[command(flatten)]
    pub mcp: McpArgs,
}

/// The default limits with the ones given on the command line.
fn limits(args: &EvalArgs) -> Limits {
    let mut limits = Limits::default();
    if let Some(ms) = args.timeout_ms {
        limits.timeout = Duration::from_millis(ms);
    }
    if let Some(bytes) = args.max_memory {
        limits.max_memory_bytes = bytes;
    }
    if let Some(steps) = args.max_steps {
        limits.max_steps = steps;
    }
    limits
}

/// Read a file, naming it in the error.
pub(crate) fn read_file(path: &PathBuf) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Build a runtime from `--data` and `--tools` files and the tools of MCP servers.
pub(crate) fn runtime_from_files(
    data: Option<&PathBuf>,
    tools: Option<&PathBuf>,
    mcp: Option<&McpSession>,
) -> Result<Runtime, String> {
    let mut runtime = Runtime::new();
    let mut all_tools = match tools {
        Some(path) => Tools::from_fixture_json(&read_file(path)?)
            .map_err(|e| format!("{}: {}", path.display(), e.message))?,
        None => Tools::new(),
    };
    if let Some(mcp) = mcp {
        merge_tools(&mut all_tools, &mcp.sandbox_tools()?)?;
    }
    if !all_tools.is_empty() {
        runtime = runtime.with_tools(all_tools);
    }
    if let Some(path) = data {
        let value = ptc_lisp::json::from_json_str(&read_file(path)?)
            .map_err(|e| format!("{}: {}", path.display(), e.message))?;
        runtime = runtime
            .with_data_map(&value)
            .map_err(|e| format!("{}: {}", path.display(), e.message))?;
    }
    Ok(runtime)
}

fn program_text(args: &EvalArgs) -> Result<String, String> {
    match (&args.expr, &args.file) {
        (Some(expr), _) => Ok(expr.clone()),
        (None, Some(path)) if path.as_os_str() == "-" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(text)
        }
        (None, Some(path)) => read_file(path),
        (None, None) => {
            Err("give a program: ptc eval -e '(+ 1 2)', ptc eval FILE or ptc eval -".into())
        }
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

pub fn run(args: EvalArgs) -> ExitCode {
    with_servers(&args.mcp, |mcp| match execute(&args, mcp) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    })
}

fn execute(args: &EvalArgs, mcp: Option<&McpSession>) -> Result<ExitCode, String> {
    let source = program_text(args)?;
    let runtime =
        runtime_from_files(args.data.as_ref(), args.tools.as_ref(), mcp)?.with_limits(limits(args));
    let repeat = args.repeat.max(1);
    let mut parse_times = Vec::with_capacity(repeat);
    let mut eval_times = Vec::with_capacity(repeat);
    let mut last = None;
    for _ in 0..repeat {
        let started = Instant::now();
        let parsed = Program::parse_with(&source, &runtime.limits().read);
        parse_times.push(started.elapsed());
        let out = match parsed {
            Ok(program) => {
                let started = Instant::now();
                let out = runtime.run(&program, &UserNamespace::new());
                eval_times.push(started.elapsed());
                out
            }
            Err(e) => RunOutcome {
                outcome: Outcome::Error(e),
                failed_at: None,
                prints: Vec::new(),
                tool_calls: Vec::new(),
                memory: UserNamespace::new(),
                stats: Default::default(),
            },
        };
        last = Some(out);
    }
    let out = last.expect("ran at least once");
    if repeat > 1 {
        eprintln!(
            "{repeat} runs: median parse {:?}, median evaluate {:?}",
            median(parse_times),
            if eval_times.is_empty() {
                Duration::ZERO
            } else {
                median(eval_times)
            }
        );
    }
    if args.json {
        println!("{}", json_report(&out));
    } else {
        for line in &out.prints {
            eprintln!("{line}");
        }
        match &out.outcome {
            Outcome::Value(v) | Outcome::Returned(v) => println!("{}", pr_str(v)),
            Outcome::Failed(reason) => {
                eprintln!("{}", render_failure(reason, out.failed_at));
                return Ok(ExitCode::from(1));
            }
            Outcome::Error(e) => {
                eprintln!("{}", e.render());
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(
        if out.outcome.error().is_some() || matches!(out.outcome, Outcome::Failed(_)) {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// A `(fail reason)` shown like an error: `error[failed] 1:1: "reason"` (the position of the
/// `fail` form, the reason as Clojure prints it).
fn render_failure(reason: &Value, at: Option<Pos>) -> String {
    match at {
        Some(pos) => format!("error[failed] {pos}: {}", pr_str(reason)),
        None => format!("error[failed] {}", pr_str(reason)),
    }
}

fn json_report(out: &RunOutcome) -> serde_json::Value {
    let tool_calls: Vec<serde_json::Value> = out
        .tool_calls
        .iter()
        .map(|c| {
            let mut call = serde_json::json!({
                "name": c.name,
                "args": c.args.iter().map(pr_str).collect::<Vec<_>>(),
                "duration_us": c.duration_us,
            });
            match &c.result {
                ToolOutcome::Ok(v) => call["result"] = pr_str(v).into(),
                ToolOutcome::Error(e) => call["error"] = e.clone().into(),
            }
            call
        })
        .collect();
    let (ok, result, error) = match &out.outcome {
        Outcome::Value(v) | Outcome::Returned(v) => (true, Some(pr_str(v)), None),
        Outcome::Failed(reason) => (
            false,
            None,
            Some(serde_json::json!({
                "kind": "failed",
                "message": pr_str(reason),
                "line": out.failed_at.map(|p| p.line),
                "column": out.failed_at.map(|p| p.col),
                "rendered": render_failure(reason, out.failed_at),
            })),
        ),
        Outcome::Error(e) => (
            false,
            None,
            Some(serde_json::json!({
                "kind": e.kind.as_str(),
                "message": e.message,
                "line": e.pos.map(|p| p.line),
                "column": e.pos.map(|p| p.col),
                "rendered": e.render(),
            })),
        ),
    };
    serde_json::json!({
        "ok": ok,
        "result": result,
        "prints": out.prints,
        "tool_calls": tool_calls,
        "error": error,
    })
}
