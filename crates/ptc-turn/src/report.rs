//! How a run ended and what it used, as the JSON a program reads: the fields `ptc run --json`
//! and `ptc exec --json` print, as library types, so an embedder reporting its own runs writes
//! the same JSON.

use ptc_lisp::{pr_str, to_json};
use serde::Serialize;

use crate::step::{Step, StepOutcome};
use crate::usage::Usage;

/// How a step ended: `outcome` (`returned` or `failed`), the value as JSON and as Clojure text
/// when there is one, and for a failure its kind, reason and the model errors that caused it.
///
/// ```
/// use ptc_lisp::Value;
/// use ptc_turn::{OutcomeReport, Step, StepOutcome, Task, Turns, Usage};
///
/// let step = Step {
///     outcome: StepOutcome::Returned { value: Value::Int(3) },
///     task: Task::new("Add 1 and 2"),
///     turns: Turns::new(),
///     usage: Usage::default(),
/// };
/// assert_eq!(
///     serde_json::to_string(&OutcomeReport::of(&step)).unwrap(),
///     r#"{"outcome":"returned","value":3,"value_clojure":"3"}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutcomeReport {
    /// `returned` or `failed`.
    pub outcome: &'static str,
    /// The value returned (or that came with the failure), as JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// The same value as Clojure text, which keeps what JSON cannot (keywords, sets, ratios).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_clojure: Option<String>,
    /// The failure's kind (`llm_error`, `max_turns_exceeded`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<&'static str>,
    /// Why the run failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The model errors behind an `llm_error` failure, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub llm_errors: Vec<String>,
}

impl OutcomeReport {
    /// How `step` ended.
    pub fn of(step: &Step) -> OutcomeReport {
        let value_fields =
            |value: Option<&ptc_lisp::Value>| (value.map(to_json), value.map(pr_str));
        match &step.outcome {
            StepOutcome::Returned { value } => {
                let (value, value_clojure) = value_fields(Some(value));
                OutcomeReport {
                    outcome: "returned",
                    value,
                    value_clojure,
                    failure: None,
                    reason: None,
                    llm_errors: Vec::new(),
                }
            }
            StepOutcome::Failed {
                kind,
                reason,
                value,
                llm_errors,
            } => {
                let (value, value_clojure) = value_fields(value.as_ref());
                OutcomeReport {
                    outcome: "failed",
                    value,
                    value_clojure,
                    failure: Some(kind.as_str()),
                    reason: Some(reason.clone()),
                    llm_errors: llm_errors.clone(),
                }
            }
        }
    }
}

/// What a run used, in the units a report reads: requests, tokens as the provider reported
/// them, and milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsageReport {
    /// Requests sent to the model, retries included.
    pub llm_requests: u32,
    /// Prompt tokens billed at the full price.
    pub input_tokens: u64,
    /// Tokens of the replies.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: u64,
    /// Wall-clock time of the run.
    pub duration_ms: u64,
    /// Time spent waiting for the model.
    pub llm_duration_ms: u64,
    /// Time spent running programs.
    pub program_duration_ms: u64,
}

impl UsageReport {
    /// `usage` in report units.
    pub fn of(usage: &Usage) -> UsageReport {
        let t = &usage.tokens;
        UsageReport {
            llm_requests: usage.llm_requests,
            input_tokens: t.input_tokens,
            output_tokens: t.output_tokens,
            cache_read_tokens: t.cache_read_tokens,
            cache_write_tokens: t.cache_write_tokens,
            duration_ms: usage.duration_us / 1000,
            llm_duration_ms: usage.llm_duration_us / 1000,
            program_duration_ms: usage.eval_duration_us / 1000,
        }
    }
}

/// A run's report: how it ended, how many turns it took of how many, and what it used. `ptc
/// run --json` prints these fields, with the run's modelled bill and the files it wrote beside
/// them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepReport {
    /// How it ended.
    #[serde(flatten)]
    pub outcome: OutcomeReport,
    /// Turns taken.
    pub turns: usize,
    /// Turns allowed.
    pub max_turns: u32,
    /// What it used.
    pub usage: UsageReport,
}

impl StepReport {
    /// The report of `step`.
    pub fn of(step: &Step) -> StepReport {
        StepReport {
            outcome: OutcomeReport::of(step),
            turns: step.turns.len(),
            max_turns: step.task.max_turns,
            usage: UsageReport::of(&step.usage),
        }
    }
}
