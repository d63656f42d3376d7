//! Continuing a run from a checkpoint: checking that the agent can continue it, and restoring
//! the definitions its turns made.
//!
//! Definitions cannot be stored as they are (a function is code bound to the values it closed
//! over), so they are made again: the program of each successful turn runs once more, in
//! order, with every tool call answered from the turn's record. The programs are
//! deterministic given their inputs and their tools' answers, so this rebuilds the namespace
//! the run had, and no tool is called twice: while restoring, no tool (no MCP server, no
//! service) is reached at all. The functions restored call tools by name, so once the
//! restoring is over their calls go to the run's real tools.

use ptc_lisp::{
    Limits, Outcome, Runtime, ToolAnswer, ToolCallRecord, ToolError, ToolOutcome, ToolRequest,
    UserNamespace, Value,
};
use ptc_turn::{Task, Turn};

use crate::agent::Inner;
use crate::program::{awaited_tools, run_program};
use crate::turn_history::history_of;

/// The sandbox every program of a run runs in, before the turn's tools are added.
pub(crate) fn runtime_for(limits: &Limits, task: &Task) -> Runtime {
    let mut runtime = Runtime::new()
        .with_limits(limits.clone())
        .with_firewalled_output(true);
    for (name, value) in &task.data {
        runtime = runtime.with_data(name.clone(), value.clone());
    }
    runtime
}

/// What differs between the task a run was started with and the one this agent would give
/// it, in words; `None` when they are the same.
pub(crate) fn task_difference(stored: &Task, now: &Task) -> Option<String> {
    let differs = |what: &str| {
        Some(format!(
            "its {what} differs from this agent's; resume it with the {what} it was started with"
        ))
    };
    if stored.mission != now.mission {
        return differs("mission");
    }
    if stored.tools != now.tools {
        let names = |task: &Task| {
            task.tools
                .iter()
                .map(|t| format!("tool/{}", t.name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Some(format!(
            "it was started with the tools [{}], this agent has [{}]; resume it with the tools \
             it was started with",
            names(stored),
            names(now)
        ));
    }
    if stored.data != now.data {
        return differs("input data");
    }
    if stored.max_turns != now.max_turns {
        return Some(format!(
            "it was started with a budget of {} turns, this agent has {}",
            stored.max_turns, now.max_turns
        ));
    }
    if stored.system_prompt != now.system_prompt {
        return differs("system prompt (signature or extra system-prompt text)");
    }
    None
}

/// The namespace after `turns`, made by running each successful turn's program again with
/// its recorded tool answers.
pub(crate) async fn restore_namespace(
    agent: &Inner,
    task: &Task,
    turns: &[Turn],
) -> Result<UserNamespace, String> {
    // The task's tools are the agent's (the resume checked).
    let runtime = runtime_for(&agent.settings.limits, task).with_tools(awaited_tools(&task.tools));
    let mut memory = UserNamespace::new();
    for (index, turn) in turns.iter().enumerate().filter(|(_, t)| t.is_success()) {
        let mut recorded = Recorded::new(turn);
        let span = tracing::Span::current();
        // Each program reads `*1 *2 *3 *e` as they were when it first ran.
        let runtime = runtime.clone().with_history(history_of(&turns[..index]));
        let out = run_program(&runtime, turn.program(), &memory, &span, |requests| {
            let answers = recorded.answer_all(requests);
            async move { answers }
        })
        .await
        .map_err(|panic| format!("running turn {} again failed: {panic}", turn.number()))?;
        let number = turn.number();
        match out.outcome {
            Outcome::Value(_) | Outcome::Returned(_) => {}
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
        let names =
            |defs: &[ptc_lisp::Definition]| defs.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
        if names(&out.memory.definitions()) != names(turn.memory()) {
            return Err(format!(
                "running turn {number} again did not make the definitions it made when it ran"
            ));
        }
        memory = out.memory;
    }
    Ok(memory)
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
    fn answer_all(&mut self, requests: Vec<ToolRequest>) -> Vec<ToolAnswer> {
        requests
            .into_iter()
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_first_difference_is_named() {
        let task = Task::new("m");
        assert_eq!(task_difference(&task, &task.clone()), None);
        assert_eq!(
            task_difference(&task, &Task::new("other")),
            Some(
                "its mission differs from this agent's; resume it with the mission it was \
                 started with"
                    .into()
            )
        );
        let more_turns = Task {
            max_turns: 9,
            ..task.clone()
        };
        assert_eq!(
            task_difference(&task, &more_turns),
            Some("it was started with a budget of 5 turns, this agent has 9".into())
        );
    }
}
