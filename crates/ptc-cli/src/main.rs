//! The `ptc` command. Each subcommand lives in its own module; `main` only reads the options
//! every subcommand shares (logging, the configuration file) and dispatches.

// The modules, in layer order: each may use only the modules declared above it (`cargo xtask
// layers`, part of `cargo xtask ci`, checks it). Each has a comment line of its own, so that
// formatting keeps the order.

// Program errors with the source line and a caret.
mod diagnostic;
// The exit status table.
mod exit;
// The files a command reads, and the check that an output can be written.
mod input;
// LLM tools declared in a file.
mod llm_tools;
// Logs on standard error.
mod logging;
// The options the subcommands share.
mod options;
// The configuration file, `ptc.toml`.
mod config_file;
// MCP servers, and `ptc mcp list`.
mod mcp;
// The `--json` output of every command: one versioned schema.
mod report;
// `ptc eval`.
mod eval;
// `ptc repl`.
mod repl;
// How turns, messages and the end of a run are printed.
mod show;
// What a run's requests cost.
mod bill;
// `ptc demo`.
mod demo;
// `ptc exec`, and writing a compiled agent.
mod exec;
// `ptc render`.
mod render;
// `ptc view`.
mod view;
// `ptc run`.
mod run;
// `ptc preview`.
mod preview;
// `ptc submit`, `ptc worker`, `ptc status` and `ptc requeue`: runs shared by a fleet of workers.
mod fleet;

use clap::{Parser, Subcommand};
use ptc_agent::otlp::OtlpExport;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "ptc",
    version,
    about = "Programmatic tool calling with PTC-Lisp",
    propagate_version = true,
    after_help = exit::HELP
)]
struct Cli {
    #[command(flatten)]
    log: logging::LogOptions,
    /// Read options from this TOML file instead of ./ptc.toml (flags and environment
    /// variables win over it).
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one PTC-Lisp program and print what it prints, then its result.
    #[command(after_help = exit::HELP)]
    Eval(eval::EvalArgs),
    /// An interactive session: definitions last from one input to the next.
    #[command(after_help = exit::HELP)]
    Repl(repl::ReplArgs),
    /// Print the messages a compression strategy makes of a recorded run (a serialized step),
    /// to see exactly what the model would see.
    #[command(after_help = exit::HELP)]
    Render(render::RenderArgs),
    /// Write a recorded run (a serialized step) as one self-contained HTML page: its turns,
    /// what the model saw, its tokens and its modelled bill.
    #[command(after_help = exit::HELP)]
    View(view::ViewArgs),
    /// Run an agent on a mission against a model, showing each turn as it happens.
    #[command(after_help = exit::HELP)]
    Run(Box<run::RunArgs>),
    /// Print the system prompt and the first request a `ptc run` with these options would
    /// send, without asking the model (`--llm` may be left out).
    #[command(after_help = exit::HELP)]
    Preview(Box<preview::PreviewArgs>),
    /// Run a compiled agent (written by `ptc run --compile-to`) on other input data, without
    /// a model.
    #[command(after_help = exit::HELP)]
    Exec(exec::ExecArgs),
    /// The tools of MCP servers: `ptc mcp list --mcp 'COMMAND ARGS...'`.
    #[command(subcommand, after_help = exit::HELP)]
    Mcp(mcp::McpCommand),
    /// Run the bundled example offline with a recorded model: each turn, the compressed
    /// history the model sees, and its size against the full history.
    #[command(after_help = exit::HELP)]
    Demo(demo::DemoArgs),
    /// Queue a run (the agent's mission and data) on a PostgreSQL database, for a fleet of
    /// `ptc worker`s.
    #[command(after_help = exit::HELP)]
    Submit(Box<fleet::SubmitArgs>),
    /// Work the runs queued on a PostgreSQL database: claim them under leases, resume each
    /// after its committed turns, commit every turn; Ctrl-C or SIGTERM hands the leases back.
    #[command(after_help = exit::HELP)]
    Worker(Box<fleet::WorkerArgs>),
    /// Where runs on a PostgreSQL database stand: queued, leased, ended; turns and claims.
    #[command(after_help = exit::HELP)]
    Status(fleet::StatusArgs),
    /// Make refused runs on a PostgreSQL database claimable again by every worker (after
    /// their settings, or the workers', were mended).
    #[command(after_help = exit::HELP)]
    Requeue(fleet::RequeueArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `ptc run --otlp URL`: the run's spans go to an OpenTelemetry collector too.
    let otlp = match &cli.command {
        Command::Run(args) => match args.otlp.as_deref().map(OtlpExport::start).transpose() {
            Ok(otlp) => otlp,
            Err(message) => {
                eprintln!("error: {message}");
                return exit::code(exit::USAGE);
            }
        },
        _ => None,
    };
    cli.log.init(otlp.as_ref());
    let config = || config_file::Config::load(cli.config.as_deref());
    let config = match &cli.command {
        Command::Eval(_)
        | Command::Repl(_)
        | Command::Run(_)
        | Command::Preview(_)
        | Command::Exec(_)
        | Command::Submit(_)
        | Command::Worker(_)
        | Command::Mcp(_) => match config() {
            Ok(config) => config,
            Err(message) => {
                eprintln!("error: {message}");
                return exit::code(exit::USAGE);
            }
        },
        Command::Render(_)
        | Command::View(_)
        | Command::Demo(_)
        | Command::Status(_)
        | Command::Requeue(_) => config_file::Config::default(),
    };
    match cli.command {
        Command::Eval(args) => eval::run(args, &config),
        Command::Repl(args) => repl::run(&args, &config),
        Command::Render(args) => match render::run(&args) {
            Ok(()) => exit::code(exit::OK),
            Err(message) => {
                eprintln!("error: {message}");
                exit::code(exit::USAGE)
            }
        },
        Command::View(args) => match view::run(&args) {
            Ok(()) => exit::code(exit::OK),
            Err(message) => {
                eprintln!("error: {message}");
                exit::code(exit::USAGE)
            }
        },
        Command::Run(args) => {
            let code = run::run(*args, &config, cli.log.quiet);
            if let Some(otlp) = otlp
                && let Err(message) = otlp.shutdown()
            {
                eprintln!("warning: {message}");
            }
            code
        }
        Command::Preview(args) => preview::run(&args, &config),
        Command::Exec(args) => exec::run(&args, &config, cli.log.quiet),
        Command::Demo(args) => demo::run(&args),
        Command::Mcp(command) => mcp::run(&command, &config),
        Command::Submit(args) => fleet::submit(&args, &config),
        Command::Worker(args) => fleet::worker(*args, &config),
        Command::Status(args) => fleet::status(&args),
        Command::Requeue(args) => fleet::requeue(&args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
