//! How a run ended and what it used, as the JSON a program reads: the fields `ptc run --json`
//! and `ptc exec --json` print, as library types, so an embedder reporting its own runs writes
//! the same JSON.

use ptc_lisp::{pr_str, to_json};
use serde::Serialize;

use crate::error_kind::ErrorKind;
use crate::step::{Step, StepOutcome};
use crate::usage::Usage;

/// The version of the JSON every `ptc ... --json` command prints, in each object's `schema`
/// field. It changes when a field is renamed or removed, never when one is added.
pub const JSON_SCHEMA: u32 = 1;

/// Why a run or a program did not give a value: the error object of every `--json` report.
///
/// `kind` is stable (`undefined_symbol`, `failed`, `llm_error`, `max_turns_exceeded`, ...);
/// `message` is in words. A program's error says where it happened (`line`, `column`) and how
/// `ptc` prints it (`rendered`); a run that could not reach its model lists the model's errors
/// (`llm_errors`). Fields that do not apply are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorReport {
    /// The stable kind.
    pub kind: ErrorKind,
    /// Why, in words.
    pub message: String,
    /// The line of the form that failed, from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The column of the form that failed, from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The error as `ptc` prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendered: Option<String>,
    /// The model errors behind an `llm_error`, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub llm_errors: Vec<String>,
}

impl ErrorReport {
    /// An error of `kind` with `message` and nothing else.
    pub fn new(kind: impl Into<ErrorKind>, message: impl Into<String>) -> ErrorReport {
        ErrorReport {
            kind: kind.into(),
            message: message.into(),
            line: None,
            column: None,
            rendered: None,
            llm_errors: Vec::new(),
        }
    }
}

/// How a step ended: `ok`, the value as JSON and as Clojure text when there is one (for a
/// `(fail value)`, the value given to it), and the error when it did not return.
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
///     r#"{"ok":true,"value":3,"value_clojure":"3","error":null}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutcomeReport {
    /// Whether a value was returned.
    pub ok: bool,
    /// The value returned (or that came with the failure), as JSON; `null` when none.
    pub value: Option<serde_json::Value>,
    /// The same value as Clojure text, which keeps what JSON cannot (keywords, sets, ratios).
    pub value_clojure: Option<String>,
    /// Why there is no value; `null` when there is one.
    pub error: Option<ErrorReport>,
}

impl OutcomeReport {
    /// How `step` ended.
    pub fn of(step: &Step) -> OutcomeReport {
        OutcomeReport::of_outcome(&step.outcome)
    }

    /// The report of `outcome`.
    pub fn of_outcome(outcome: &StepOutcome) -> OutcomeReport {
        match outcome {
            StepOutcome::Returned { value } => OutcomeReport {
                ok: true,
                value: Some(to_json(value)),
                value_clojure: Some(pr_str(value)),
                error: None,
            },
            StepOutcome::Failed {
                kind,
                reason,
                value,
                llm_errors,
            } => OutcomeReport {
                ok: false,
                value: value.as_ref().map(to_json),
                value_clojure: value.as_ref().map(pr_str),
                error: Some(ErrorReport {
                    llm_errors: llm_errors.clone(),
                    ..ErrorReport::new(*kind, reason.clone())
                }),
            },
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

/// A run's report: the schema version, how it ended, how many turns it took of how many, and
/// what it used. `ptc run --json` prints these fields, with the run's modelled bill and the
/// files it wrote beside them; `ptc exec --json` prints them too.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepReport {
    /// [`JSON_SCHEMA`].
    pub schema: u32,
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
            schema: JSON_SCHEMA,
            outcome: OutcomeReport::of(step),
            turns: step.turns.len(),
            max_turns: step.task.max_turns,
            usage: UsageReport::of(&step.usage),
        }
    }
}
