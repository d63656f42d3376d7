//! `ptc exec`: a compiled agent (written by `ptc run --compile-to`) run on new input data
//! without a model, and the writing of that file at the end of `ptc run`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use ptc_agent::{Agent, CompiledAgent, ExecError};
use ptc_turn::Step;

use crate::config_file::Config;
use crate::exit;
use crate::input::{check_writable, data_entries, fixture_tools};
use crate::mcp::{McpSession, block_on, resolve, with_servers};
use crate::options::{InputOptions, LimitOptions, McpOptions};
use crate::report;
use crate::show;

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The compiled agent, a file written by `ptc run --compile-to`.
    #[arg(value_name = "FILE.json")]
    pub file: PathBuf,
    #[command(flatten)]
    pub input: InputOptions,
    #[command(flatten)]
    pub limits: LimitOptions,
    #[command(flatten)]
    pub mcp: McpOptions,
    /// Print one JSON object at the end (outcome, value as JSON and as Clojure text, stages,
    /// time) instead of each stage and the result.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &ExecArgs, config: &Config, quiet: bool) -> ExitCode {
    let input = args.input.clone().or(config.input.clone());
    let limits = args.limits.clone().or(config.limits.clone());
    let mcp = resolve(&args.mcp, config);
    with_servers(&mcp, |session| {
        match execute(args, &input, &limits, session, quiet) {
            Ok(status) => exit::code(status),
            Err(message) => {
                eprintln!("error: {message}");
                exit::code(exit::USAGE)
            }
        }
    })
}

fn execute(
    args: &ExecArgs,
    input: &InputOptions,
    limits: &LimitOptions,
    mcp: Option<&McpSession>,
    quiet: bool,
) -> Result<u8, String> {
    let mut compiled = CompiledAgent::load(&args.file)
        .map_err(|e| format!("{}: {e}", args.file.display()))?
        .with_limits(limits.limits());
    if let Some(path) = &input.tools {
        compiled = compiled.with_lisp_tools(&fixture_tools(path)?);
    }
    if let Some(mcp) = mcp {
        for tool in mcp.servers.tools() {
            compiled = compiled.with_tool_arc(tool);
        }
    }
    let data = match &input.data {
        Some(path) => data_entries(path)?.into_iter().collect(),
        None => Default::default(),
    };
    let step = block_on(mcp, compiled.run_data(data))?.map_err(|error| match error {
        ExecError::MissingTools(names) => format!(
            "{} calls {} but was not given {}; give the tools with --tools or --mcp",
            args.file.display(),
            names
                .iter()
                .map(|t| format!("tool/{t}"))
                .collect::<Vec<_>>()
                .join(", "),
            if names.len() == 1 { "it" } else { "them" }
        ),
        other => other.to_string(),
    })?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let _ = writeln!(stdout, "{}", report::step_json("exec", &step));
    } else {
        if !quiet {
            for turn in step.turns.iter() {
                let _ = writeln!(
                    stdout,
                    "--- stage {} of {} ---",
                    turn.number(),
                    compiled.programs().len()
                );
                let _ = writeln!(stdout, "{}", show::turn_report(turn, true));
            }
        }
        let _ = write!(
            stdout,
            "=== result ===\n{}",
            show::outcome_line(&step, show::Unit::Stage)
        );
    }
    let _ = stdout.flush();
    Ok(exit::for_step(&step))
}

/// Refuses, before the run, an agent that cannot be compiled, and checks that `path` can be
/// written.
pub fn check_compile_to(agent: &Agent, path: &Path) -> Result<(), String> {
    agent.check_compilable().map_err(|e| e.to_string())?;
    let existed = path.exists();
    check_writable(path, "compiled agent")?;
    // A run that fails writes nothing, so the file made by the check goes again.
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Writes the compiled agent of a finished run to `path`: the line to print, or why nothing
/// was written.
pub fn write_compiled(agent: &Agent, step: &Step, path: &Path) -> Result<String, String> {
    let compiled = agent
        .compiled_from(step)
        .map_err(|e| format!("no compiled agent written to {}: {e}", path.display()))?;
    compiled.save(path).map_err(|e| e.to_string())?;
    Ok(format!("compiled agent written to {}", path.display()))
}
