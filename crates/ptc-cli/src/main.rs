//! The `ptc` command. Each subcommand lives in its own module; `main` only dispatches.

mod demo;
mod eval;
mod mcp;
mod render;
mod repl;
mod run;
mod show;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "ptc",
    version,
    about = "Programmatic tool calling with PTC-Lisp",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one PTC-Lisp program and print its result.
    Eval(eval::EvalArgs),
    /// An interactive session: definitions last from one input to the next.
    Repl(repl::ReplArgs),
    /// Print the messages a compression strategy makes of a recorded run (a serialized step),
    /// to see exactly what the model would see.
    Render(render::RenderArgs),
    /// Run an agent on a mission against a model, showing each turn as it happens.
    Run(run::RunArgs),
    /// The tools of MCP servers: `ptc mcp list --mcp 'COMMAND ARGS...'`.
    #[command(subcommand)]
    Mcp(mcp::McpCommand),
    /// Run the bundled example offline with a recorded model: each turn, the compressed
    /// history the model sees, and its size against the full history.
    Demo(demo::DemoArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Eval(args) => return eval::run(args),
        Command::Repl(args) => return repl::run(&args),
        Command::Render(args) => render::run(&args),
        Command::Run(args) => return run::run(args),
        Command::Demo(args) => return demo::run(&args),
        Command::Mcp(command) => return mcp::run(&command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
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
