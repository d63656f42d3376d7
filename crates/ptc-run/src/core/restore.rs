//! The namespace a resumed run starts with.
//!
//! Definitions cannot be stored as they are (a function is code bound to the values it closed
//! over), so they are made again: the program of each successful turn runs once more, in
//! order, with every tool call answered from the turn's record. The programs are
//! deterministic given their inputs and their tools' answers, so this rebuilds the namespace
//! the run had, and no tool is called twice: while restoring, no tool (no MCP server, no
//! service) is reached at all, and nothing is awaited. The functions restored call tools by
//! name, so once the restoring is over their calls go to the run's real tools.

use ptc_lisp::{
    Outcome, Progress, RunOutcome, Runtime, ToolAnswer, ToolCallRecord, ToolError, ToolOutcome,
    ToolRequest, UserNamespace, Value,
};
use ptc_turn::{ErrorKind, Turn};

use crate::outcome::Ending;
use crate::recent_values::recent_values_of;
use crate::sandbox::evaluating;

/// What a resumed run starts from, besides its turns.
pub struct Restored {
    /// The namespace after the turns.
    pub memory: UserNamespace,
    /// How the last turn's program ended: a run whose last committed turn returned or failed
    /// had ended, even if its end was never recorded (its process died in between).
    pub last_ending: Ending,
}

/// The namespace after `turns`, made by running each successful turn's program again in
/// `runtime` with its recorded tool answers, and how the last turn's program ended.
pub fn restore_namespace(runtime: &Runtime, turns: &[Turn]) -> Result<Restored, String> {
    let mut memory = UserNamespace::new();
    let mut last_ending = Ending::Continue;
    for (index, turn) in turns.iter().enumerate() {
        let last = index + 1 == turns.len();
        let called_fail = turn.error().is_some_and(|e| e.kind == ErrorKind::FAILED);
        // A failed turn left no definitions; only the last one, if it called (fail ...),
        // runs again, for the reason the run failed with.
        let runs_again = turn.is_success() || (last && called_fail);
        if !runs_again {
            continue;
        }
        // Each program reads `*1 *2 *3 *e` as they were when it first ran.
        let runtime = runtime
            .clone()
            .with_recent_values(recent_values_of(&turns[..index]));
        let out = run_recorded(&runtime, turn, &memory)
            .map_err(|panic| format!("running turn {} again failed: {panic}", turn.number()))?;
        let number = turn.number();
        match out.outcome {
            Outcome::Value(_) => last_ending = Ending::Continue,
            Outcome::Returned(_) => last_ending = Ending::Returned,
            // The last turn called (fail ...): the run had failed with this reason.
            Outcome::Failed(reason) if called_fail => {
                last_ending = Ending::Failed(reason);
                continue;
            }
            Outcome::Failed(_) => {
                return Err(format!(
                    "turn {number} succeeded when it ran, but failed when run again to \
                     restore its definitions"
                ));
            }
            Outcome::Error(error) => {
                return Err(format!(
                    "turn {number} succeeded when it ran, but running it again to restore \
                     its definitions failed: {error}"
                ));
            }
        }
        if called_fail {
            return Err(format!(
                "turn {number} called (fail ...) when it ran, but not when run again"
            ));
        }
        let names =
            |defs: &[ptc_lisp::Definition]| defs.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
        if names(&out.namespace.definitions()) != names(turn.memory()) {
            return Err(format!(
                "running turn {number} again did not make the definitions it made when it ran"
            ));
        }
        memory = out.namespace;
    }
    Ok(Restored {
        memory,
        last_ending,
    })
}

/// Runs `turn`'s program with `memory`, each tool call answered from the turn's record.
fn run_recorded(
    runtime: &Runtime,
    turn: &Turn,
    memory: &UserNamespace,
) -> Result<RunOutcome, String> {
    let mut recorded = Recorded::new(turn);
    let mut progress = evaluating(|| runtime.start(turn.program(), memory))?;
    loop {
        match progress {
            Progress::Finished(out) => return Ok(out),
            Progress::Suspended(run) => {
                let answers = recorded.answer_all(run.requests());
                progress = evaluating(|| run.resume(answers))?;
            }
        }
    }
}

/// The tool calls one turn made, each answered once.
struct Recorded {
    number: u32,
    calls: Vec<Option<ToolCallRecord>>,
}

impl Recorded {
    fn new(turn: &Turn) -> Recorded {
        Recorded {
            number: turn.number(),
            calls: turn.tool_calls().iter().cloned().map(Some).collect(),
        }
    }

    /// The recorded answers to `requests` (they took no time: no tool is called).
    fn answer_all(&mut self, requests: &[ToolRequest]) -> Vec<ToolAnswer> {
        requests
            .iter()
            .map(|r| ToolAnswer::new(self.answer(&r.name, &r.args), std::time::Duration::ZERO))
            .collect()
    }

    /// What the tool `name` answered to `args` in this turn (calls from `pmap` workers may
    /// come in another order than recorded).
    fn answer(&mut self, name: &str, args: &[Value]) -> Result<Value, ToolError> {
        let found = self.calls.iter_mut().find(|call| {
            call.as_ref()
                .is_some_and(|c| c.name == name && c.args == args)
        });
        match found.and_then(Option::take) {
            Some(call) => match call.result {
                ToolOutcome::Ok(value) => Ok(value),
                ToolOutcome::Error(message) => Err(ToolError::new(message)),
            },
            None => Err(ToolError::new(format!(
                "turn {} has no recorded call of tool/{name} with these arguments to answer from",
                self.number
            ))),
        }
    }
}
