//! The record of a whole run: what it was asked, every turn it took, how it ended, what it cost.

use crate::error_kind::ErrorKind;
use crate::turn::Turns;
use crate::usage::Usage;
use ptc_lisp::{ToolSpec, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a run was given: enough to render, at any time later, exactly the messages the model
/// saw (or would see under another compression strategy).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// The mission text, always the first part of the first user message.
    pub mission: String,
    #[serde(default)]
    /// The system prompt, sent unchanged as the first message.
    pub system_prompt: String,
    /// The tools of the `tool/` namespace, in the order they are shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// The input data of the `data/` namespace, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, Value>,
    /// What some `data/` inputs mean, by name, shown on their lines of the first message.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data_descriptions: BTreeMap<String, String>,
    /// The output signature the returned value was checked against, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// What the output fields mean, by field name: shown under the expected output, and
    /// handed to the next run when this one's value becomes its input.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub field_descriptions: BTreeMap<String, String>,
    /// The most turns the run may take (5 unless set).
    #[serde(default = "default_max_turns")]
    pub max_turns: u32,
}

/// The default turn budget of a run.
pub const DEFAULT_MAX_TURNS: u32 = 5;

fn default_max_turns() -> u32 {
    DEFAULT_MAX_TURNS
}

impl Task {
    /// A task with `mission`, no tools or data, and the default turn budget.
    pub fn new(mission: impl Into<String>) -> Task {
        Task {
            mission: mission.into(),
            system_prompt: String::new(),
            tools: Vec::new(),
            data: BTreeMap::new(),
            data_descriptions: BTreeMap::new(),
            signature: None,
            field_descriptions: BTreeMap::new(),
            max_turns: DEFAULT_MAX_TURNS,
        }
    }
}

/// Why a run failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureKind {
    /// The program called `(fail reason)`.
    Failed,
    /// The turn budget ran out before the program returned.
    MaxTurnsExceeded,
    /// The model could not be reached or kept answering with errors.
    LlmError,
    /// The returned value did not match the run's signature.
    SignatureMismatch,
    /// A program error ended a run that could not retry (a single-shot run).
    ProgramError,
    /// The run took longer than its overall time limit.
    Timeout,
    /// The run was chained onto a step that had failed, so it did not start.
    ChainedFailure,
    /// A sub-agent would have run deeper below the top run than its `max_depth` allows, so it
    /// did not start.
    MaxDepthExceeded,
    /// The turns shared by a run and all its sub-agents (`turn_budget`) were used up.
    TurnBudgetExhausted,
    /// The run was stopped from outside (its stop signal fired, e.g. Ctrl-C) before it ended.
    Interrupted,
}

impl FailureKind {
    /// The stable snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Failed => "failed",
            FailureKind::MaxTurnsExceeded => "max_turns_exceeded",
            FailureKind::LlmError => "llm_error",
            FailureKind::SignatureMismatch => "signature_mismatch",
            FailureKind::ProgramError => "program_error",
            FailureKind::Timeout => "timeout",
            FailureKind::ChainedFailure => "chained_failure",
            FailureKind::MaxDepthExceeded => "max_depth_exceeded",
            FailureKind::TurnBudgetExhausted => "turn_budget_exhausted",
            FailureKind::Interrupted => "interrupted",
        }
    }
}

impl From<FailureKind> for ErrorKind {
    fn from(kind: FailureKind) -> ErrorKind {
        ErrorKind::named(kind.as_str())
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    /// The program called `(return value)` (or, single-shot, its last form had this value).
    Returned {
        /// The value the run returned.
        value: Value,
    },
    /// The run ended without a value.
    Failed {
        /// Why, as a stable kind.
        kind: FailureKind,
        /// Why, in words.
        reason: String,
        /// The value given to `(fail ...)`, when the program failed itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
        /// When the model could not be reached (`llm_error`): the error of every request sent
        /// for the turn, in order, retries included; `reason` names the first and the last.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        llm_errors: Vec<String>,
    },
}

/// The outcome of a run together with every turn it took (the full program of
/// each turn is here; there is no separate trace) and its cost.
///
/// Only turns are stored, never summaries of them: any rendering of the history is
/// derived from the turns when needed, so a serialized step can be rendered again under any
/// compression strategy. A JSON round trip is lossless.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// How the run ended.
    pub outcome: StepOutcome,
    /// What the run was given.
    pub task: Task,
    #[serde(default)]
    /// Every turn, oldest first, each with its full program.
    pub turns: Turns,
    /// The run's total cost (the sum of its turns' usage, plus requests that produced no turn).
    #[serde(default, skip_serializing_if = "Usage::is_zero")]
    pub usage: Usage,
}

impl Step {
    /// The returned value, when the run succeeded.
    pub fn value(&self) -> Option<&Value> {
        match &self.outcome {
            StepOutcome::Returned { value } => Some(value),
            StepOutcome::Failed { .. } => None,
        }
    }

    /// Whether the run returned a value.
    pub fn is_success(&self) -> bool {
        matches!(self.outcome, StepOutcome::Returned { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::{Turn, TurnError};
    use pretty_assertions::assert_eq;

    fn failed_step() -> Step {
        let mut turns = Turns::new();
        turns
            .push(
                Turn::failure(
                    1,
                    "(foo)",
                    TurnError::new("undefined_symbol", "foo").at(1, 2),
                )
                .with_raw_response("```clojure\n(foo)\n```"),
            )
            .expect("turn 1");
        Step {
            outcome: StepOutcome::Failed {
                kind: FailureKind::MaxTurnsExceeded,
                reason: "no return after 1 turn".into(),
                value: None,
                llm_errors: Vec::new(),
            },
            task: Task {
                max_turns: 1,
                ..Task::new("Do it")
            },
            turns,
            usage: Usage::default(),
        }
    }

    #[test]
    fn failure_kinds_have_stable_names() {
        for kind in [
            FailureKind::Failed,
            FailureKind::MaxTurnsExceeded,
            FailureKind::LlmError,
            FailureKind::SignatureMismatch,
            FailureKind::ProgramError,
            FailureKind::Timeout,
            FailureKind::ChainedFailure,
            FailureKind::MaxDepthExceeded,
            FailureKind::TurnBudgetExhausted,
            FailureKind::Interrupted,
        ] {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
    }

    // DBG-003 for a step that holds no values (values need the reader; see tests/step_json.rs).
    #[test]
    fn a_failed_step_reads_back_from_its_json() {
        let step = failed_step();
        let json = serde_json::to_string_pretty(&step).unwrap();
        let back: Step = serde_json::from_str(&json).unwrap();
        assert_eq!(back, step);
        assert_eq!(serde_json::to_string_pretty(&back).unwrap(), json);
        assert!(!back.is_success());
        assert_eq!(back.value(), None);
    }

    #[test]
    fn a_missing_turn_budget_reads_as_the_default() {
        let task: Task = serde_json::from_str(r#"{"mission":"m"}"#).unwrap();
        assert_eq!(task.max_turns, DEFAULT_MAX_TURNS);
    }
}
