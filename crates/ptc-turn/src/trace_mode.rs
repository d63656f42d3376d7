//! Which runs keep their turns: the `trace` option of a run (always, never, or only when the
//! run failed), for services that keep the outcomes of many runs and the turns of few.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::step::Step;
use crate::turn::Turns;

/// Whether a finished [`Step`] keeps its turns. A step that does not keep them still has its
/// outcome, task and usage; only `turns` is emptied. A run's store (its checkpoints) is not
/// affected: it keeps every turn, since resuming needs them.
///
/// Read from `always` (or `true`), `never` (or `false`) and `on-error` (or `on_error`).
///
/// ```
/// use ptc_lisp::Value;
/// use ptc_turn::{Step, StepOutcome, Task, TraceMode, Turn, Turns, Usage};
///
/// let mut turns = Turns::new();
/// turns.push(Turn::success(1, "(return 1)", Value::Int(1))).unwrap();
/// let step = Step {
///     outcome: StepOutcome::Returned { value: Value::Int(1) },
///     task: Task::new("One"),
///     turns,
///     usage: Usage::default(),
/// };
/// let mode: TraceMode = "on-error".parse().unwrap();
/// assert_eq!(mode.apply(step.clone()).turns.len(), 0);
/// assert_eq!(TraceMode::Always.apply(step).turns.len(), 1);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceMode {
    /// Every step keeps its turns (the default).
    #[default]
    Always,
    /// No step keeps its turns.
    Never,
    /// Only a step that failed keeps its turns.
    OnError,
}

impl TraceMode {
    /// Whether `step` keeps its turns under this mode.
    pub fn keeps(self, step: &Step) -> bool {
        match self {
            TraceMode::Always => true,
            TraceMode::Never => false,
            TraceMode::OnError => !step.is_success(),
        }
    }

    /// `step`, with its turns only if this mode keeps them.
    pub fn apply(self, mut step: Step) -> Step {
        if !self.keeps(&step) {
            step.turns = Turns::new();
        }
        step
    }

    /// The mode's name: `always`, `never` or `on-error`.
    pub fn as_str(self) -> &'static str {
        match self {
            TraceMode::Always => "always",
            TraceMode::Never => "never",
            TraceMode::OnError => "on-error",
        }
    }
}

impl fmt::Display for TraceMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TraceMode {
    type Err = String;

    fn from_str(text: &str) -> Result<TraceMode, String> {
        match text.trim() {
            "always" | "true" => Ok(TraceMode::Always),
            "never" | "false" => Ok(TraceMode::Never),
            "on-error" | "on_error" => Ok(TraceMode::OnError),
            other => Err(format!(
                "`{other}` is not a trace mode; write always, never or on-error"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::{FailureKind, StepOutcome, Task};
    use crate::turn::{Turn, TurnError};
    use crate::usage::Usage;
    use pretty_assertions::assert_eq;
    use ptc_lisp::Value;

    fn step(failed: bool) -> Step {
        let mut turns = Turns::new();
        turns
            .push(Turn::failure(
                1,
                "(x)",
                TurnError::new("undefined_symbol", "x"),
            ))
            .expect("in order");
        Step {
            outcome: if failed {
                StepOutcome::Failed {
                    kind: FailureKind::MaxTurnsExceeded,
                    reason: "out of turns".into(),
                    value: None,
                    llm_errors: Vec::new(),
                }
            } else {
                StepOutcome::Returned {
                    value: Value::Int(1),
                }
            },
            task: Task::new("T"),
            turns,
            usage: Usage {
                llm_requests: 1,
                ..Usage::default()
            },
        }
    }

    #[test]
    fn each_mode_keeps_the_turns_of_the_steps_it_names() {
        let kept = |mode: TraceMode, failed: bool| mode.apply(step(failed)).turns.len();
        assert_eq!(
            [
                (
                    kept(TraceMode::Always, false),
                    kept(TraceMode::Always, true)
                ),
                (kept(TraceMode::Never, false), kept(TraceMode::Never, true)),
                (
                    kept(TraceMode::OnError, false),
                    kept(TraceMode::OnError, true)
                ),
            ],
            [(1, 1), (0, 0), (0, 1)]
        );
        // What a step is besides its turns stays.
        let trimmed = TraceMode::Never.apply(step(true));
        assert_eq!(
            (trimmed.usage.llm_requests, trimmed.is_success()),
            (1, false)
        );
    }

    #[test]
    fn modes_read_from_their_names_and_the_originals_values() {
        let read = |text: &str| text.parse::<TraceMode>();
        assert_eq!(
            ["always", "true", "never", "false", "on-error", "on_error"].map(read),
            [
                Ok(TraceMode::Always),
                Ok(TraceMode::Always),
                Ok(TraceMode::Never),
                Ok(TraceMode::Never),
                Ok(TraceMode::OnError),
                Ok(TraceMode::OnError)
            ]
        );
        assert_eq!(
            read("sometimes"),
            Err("`sometimes` is not a trace mode; write always, never or on-error".into())
        );
    }
}
