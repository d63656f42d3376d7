//! The exit status of every subcommand: one table, shown in `--help`.

use std::process::ExitCode;

use ptc_turn::{FailureKind, Step, StepOutcome};

/// The program or the run returned a value (or the command did what it was asked).
pub const OK: u8 = 0;
/// The program or the run failed: an error, `(fail ...)`, a model that could not be reached.
pub const FAILED: u8 = 1;
/// The command could not start: unusable arguments, a missing or invalid file, an MCP server
/// that could not be started or reached.
pub const USAGE: u8 = 2;
/// A limit stopped it: a sandbox limit of a program (time, steps, memory, ...), or the turn
/// budget or the deadline of a run.
pub const LIMIT: u8 = 3;
/// `ptc worker` gave up: its store could not be reached for longer than `--outage-limit`.
pub const STORE_UNREACHABLE: u8 = 4;
/// Ctrl-C (SIGINT) stopped a run; 128 + the signal's number, as shells report it.
pub const INTERRUPTED: u8 = 130;

/// The table printed at the end of `--help`.
pub const HELP: &str = "\
Exit status (every subcommand):
  0  the program or the run returned a value (or the command did what it was asked)
  1  the program or the run failed (an error, (fail ...), a model that could not be reached)
  2  unusable arguments or input (an unknown option, a missing or invalid file, an MCP
     server that could not be started or reached)
  3  a limit stopped it (a sandbox limit of a program; the turn budget or deadline of a run)
  4  ptc worker's store could not be reached for longer than its --outage-limit
130  Ctrl-C stopped a run (the turns completed so far are kept: --dump-step, --checkpoint)";

pub fn code(status: u8) -> ExitCode {
    ExitCode::from(status)
}

/// The status of a finished run.
pub fn for_step(step: &Step) -> u8 {
    match &step.outcome {
        StepOutcome::Returned { .. } => OK,
        StepOutcome::Failed {
            kind:
                FailureKind::MaxTurnsExceeded
                | FailureKind::Timeout
                | FailureKind::TurnBudgetExhausted
                | FailureKind::MaxDepthExceeded,
            ..
        } => LIMIT,
        StepOutcome::Failed {
            kind: FailureKind::Interrupted,
            ..
        } => INTERRUPTED,
        StepOutcome::Failed { .. } => FAILED,
    }
}
