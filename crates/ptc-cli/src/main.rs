//! The `ptc` command. Each subcommand lives in its own module; `main` only dispatches.

mod eval;
mod render;
mod repl;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Eval(args) => return eval::run(args),
        Command::Repl(args) => return repl::run(&args),
        Command::Render(args) => render::run(&args),
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
