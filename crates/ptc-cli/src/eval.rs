//! `ptc eval`: run one PTC-Lisp program.

use clap::Args;
use ptc_lisp::{
    Outcome, Pos, Program, RunOutcome, Runtime, ToolOutcome, Tools, UserNamespace, Value,
};
use ptc_lisp::{pr_str, to_json};
use ptc_turn::{ErrorKind, ErrorReport, TurnError};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::config_file::Config;
use crate::diagnostic;
use crate::exit;
use crate::input::{fixture_tools, read_file};
use crate::mcp::{McpSession, merge_tools, resolve, with_servers};
use crate::options::{InputOptions, LimitOptions, McpOptions};
use crate::report;

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
    #[command(flatten)]
    pub input: InputOptions,
    #[command(flatten)]
    pub limits: LimitOptions,
    /// Print one JSON object: {"ok", "result", "value", "prints", "tool_calls", "error"}, with
    /// each value both as Clojure text and as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print what the program prints on standard error instead of standard output.
    #[arg(long)]
    pub prints_to_stderr: bool,
    /// Run the program N times in one process and report median parse and evaluate times.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    #[command(flatten)]
    pub mcp: McpOptions,
}

/// Build a runtime from the data and tools files and the tools of MCP servers.
pub(crate) fn runtime_from_files(
    input: &InputOptions,
    mcp: Option<&McpSession>,
) -> Result<Runtime, String> {
    let mut runtime = Runtime::new();
    let mut tools = match &input.tools {
        Some(path) => fixture_tools(path)?,
        None => Tools::new(),
    };
    if let Some(mcp) = mcp {
        merge_tools(&mut tools, &mcp.sandbox_tools()?)?;
    }
    if !tools.is_empty() {
        runtime = runtime.with_tools(tools);
    }
    if let Some(path) = &input.data {
        let value = ptc_lisp::from_json_str(&read_file(path)?)
            .map_err(|e| format!("{}: {}", path.display(), e.message))?;
        runtime = runtime
            .with_data_map(&value)
            .map_err(|e| format!("{}: {}", path.display(), e.message))?;
    }
    Ok(runtime)
}

/// The program and the name its errors show it under.
fn program_text(args: &EvalArgs) -> Result<(String, String), String> {
    match (&args.expr, &args.file) {
        (Some(expr), _) => Ok((expr.clone(), "<expr>".into())),
        (None, Some(path)) if path.as_os_str() == "-" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok((text, "<stdin>".into()))
        }
        (None, Some(path)) => Ok((read_file(path)?, path.display().to_string())),
        (None, None) => {
            Err("give a program: ptc eval -e '(+ 1 2)', ptc eval FILE or ptc eval -".into())
        }
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

pub fn run(args: EvalArgs, config: &Config) -> ExitCode {
    let mcp = resolve(&args.mcp, config);
    with_servers(&mcp, |mcp| match execute(&args, config, mcp) {
        Ok(status) => exit::code(status),
        Err(message) => {
            eprintln!("error: {message}");
            exit::code(exit::USAGE)
        }
    })
}

fn execute(args: &EvalArgs, config: &Config, mcp: Option<&McpSession>) -> Result<u8, String> {
    let (source, origin) = program_text(args)?;
    let input = args.input.clone().or(config.input.clone());
    let limits = args.limits.clone().or(config.limits.clone()).limits();
    let runtime = runtime_from_files(&input, mcp)?.with_limits(limits);
    let repeat = args.repeat.max(1) as usize;
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
                namespace: UserNamespace::new(),
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
    let status = status(&out.outcome);
    if args.json {
        println!("{}", json_report(&out));
        return Ok(status);
    }
    // What the program printed comes first, as it happened before the value was known.
    let prints = out
        .prints
        .iter()
        .map(|line| format!("{line}\n"))
        .collect::<String>();
    let mut stdout = std::io::stdout().lock();
    if args.prints_to_stderr {
        eprint!("{prints}");
    } else {
        let _ = stdout.write_all(prints.as_bytes());
    }
    match &out.outcome {
        Outcome::Value(v) | Outcome::Returned(v) => {
            let _ = writeln!(stdout, "{}", pr_str(v));
        }
        Outcome::Failed(reason) => {
            let _ = stdout.flush();
            let shown = match out.failed_at {
                Some(pos) => diagnostic::turn_error(
                    &source,
                    &origin,
                    &TurnError::new(ErrorKind::FAILED, pr_str(reason)).at(pos.line, pos.col),
                ),
                None => render_failure(reason, None),
            };
            eprintln!("{shown}");
        }
        Outcome::Error(e) => {
            let _ = stdout.flush();
            eprintln!("{}", diagnostic::program_error(&source, &origin, e));
        }
    }
    let _ = stdout.flush();
    Ok(status)
}

/// The exit status for how a program ended.
fn status(outcome: &Outcome) -> u8 {
    match outcome {
        Outcome::Value(_) | Outcome::Returned(_) => exit::OK,
        Outcome::Error(e) if e.kind.is_limit() => exit::LIMIT,
        Outcome::Error(_) | Outcome::Failed(_) => exit::FAILED,
    }
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
                "args": c.args.iter().map(to_json).collect::<Vec<_>>(),
                "args_clojure": c.args.iter().map(pr_str).collect::<Vec<_>>(),
                "duration_us": c.duration_us,
            });
            match &c.result {
                ToolOutcome::Ok(v) => {
                    call["result"] = to_json(v);
                    call["result_clojure"] = pr_str(v).into();
                }
                ToolOutcome::Error(e) => call["error"] = e.clone().into(),
            }
            call
        })
        .collect();
    let (ok, value, error) = match &out.outcome {
        Outcome::Value(v) | Outcome::Returned(v) => (true, Some(v), None),
        Outcome::Failed(reason) => (
            false,
            Some(reason),
            Some(ErrorReport {
                line: out.failed_at.map(|p| p.line),
                column: out.failed_at.map(|p| p.col),
                rendered: Some(render_failure(reason, out.failed_at)),
                ..ErrorReport::new(ErrorKind::FAILED, pr_str(reason))
            }),
        ),
        Outcome::Error(e) => (
            false,
            None,
            Some(ErrorReport {
                line: e.pos.map(|p| p.line),
                column: e.pos.map(|p| p.col),
                rendered: Some(e.render()),
                ..ErrorReport::new(e.kind, e.message.clone())
            }),
        ),
    };
    report::envelope(
        "eval",
        serde_json::json!({
            "ok": ok,
            "value": value.map(to_json),
            "value_clojure": value.map(pr_str),
            "error": error,
            "prints": out.prints,
            "tool_calls": tool_calls,
        }),
    )
}
