//! What a program's outcome makes of its turn and of the run. An agent run and a compiled
//! agent both judge their programs here, so that a compiled agent answers exactly as the run
//! it was compiled from: the same signature check, the same rounding of floats, the same limit
//! on what is kept between turns, the same failure for `(fail ...)`.

use ptc_lisp::{Compact, Outcome, UserNamespace, Value};
use ptc_turn::{ErrorKind, FailureKind, StepOutcome, Turn, TurnError, preview};

use crate::float_precision::round_floats;
use crate::kept;
use crate::settings::RunSettings;
use crate::signature::Signature;

/// The settings of a run that decide what a program's outcome becomes.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// The signature a returned value must match.
    pub signature: Option<&'a Signature>,
    /// Decimals the floats of a returned value are rounded to.
    pub float_precision: Option<u32>,
    /// The most the `user/` namespace may hold after a turn that goes on; `None` for no limit
    /// (compiled agents written before the limit was kept with them).
    pub max_kept_bytes: Option<usize>,
    /// Whether a program's last value is the answer (a single-shot agent).
    pub last_value_is_answer: bool,
}

/// How a turn's program ended, as far as the run is concerned.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// Nothing that ends the run (a value, or an error to recover from).
    Continue,
    /// A valid `(return ...)` (or, single-shot, a valid last value).
    Returned,
    /// `(fail reason)`.
    Failed(Value),
}

/// A judged program: its turn (without prints, tool calls, memory or usage), the namespace to
/// keep when it succeeded, and how it ended.
pub struct Judged {
    /// The turn, without prints, tool calls, memory or usage.
    pub turn: Turn,
    /// The namespace to keep, when the turn succeeded.
    pub kept: Option<UserNamespace>,
    /// How the program ended, as far as the run is concerned.
    pub ending: Ending,
}

impl<'s> Rules<'s> {
    /// The rules of a run with `settings` and `signature` whose task allows `max_turns`.
    pub fn for_run(
        signature: Option<&'s Signature>,
        settings: &RunSettings,
        max_turns: u32,
    ) -> Rules<'s> {
        Rules {
            signature,
            float_precision: settings.float_precision,
            max_kept_bytes: Some(settings.max_kept_bytes),
            last_value_is_answer: max_turns <= 1,
        }
    }
}

impl Rules<'_> {
    /// The turn `number` of `program`, which ended with `outcome` and left `memory`.
    pub fn judge(
        &self,
        number: u32,
        program: impl Into<String>,
        outcome: Outcome,
        memory: UserNamespace,
    ) -> Judged {
        let program = program.into();
        match outcome {
            Outcome::Returned(value) => self.returned(number, program, value, memory),
            Outcome::Value(value) if self.last_value_is_answer => {
                self.returned(number, program, value, memory)
            }
            Outcome::Value(value) => {
                let checked = match self.max_kept_bytes {
                    Some(limit) => kept::check(&memory, limit),
                    None => Ok(()),
                };
                match checked {
                    Ok(()) => Judged {
                        turn: Turn::success(number, program, value),
                        kept: Some(memory),
                        ending: Ending::Continue,
                    },
                    Err(error) => Judged {
                        turn: Turn::failure(number, program, error),
                        kept: None,
                        ending: Ending::Continue,
                    },
                }
            }
            Outcome::Failed(reason) => Judged {
                turn: Turn::failure(
                    number,
                    program,
                    TurnError::new(
                        ErrorKind::FAILED,
                        format!("the program called (fail ...): {}", reason_text(&reason)),
                    ),
                )
                .with_run_ended(),
                kept: None,
                ending: Ending::Failed(reason),
            },
            Outcome::Error(error) => Judged {
                turn: Turn::failure(number, program, &error),
                kept: None,
                ending: Ending::Continue,
            },
        }
    }

    /// A turn that returned `value`: the answer (its floats rounded) if it matches the
    /// signature, else a failed turn whose feedback shows the expected shape and the value.
    fn returned(
        &self,
        number: u32,
        program: String,
        value: Value,
        memory: UserNamespace,
    ) -> Judged {
        match self.check_return(&value) {
            Ok(()) => {
                let value = match self.float_precision {
                    Some(digits) => round_floats(&value, digits),
                    None => value,
                };
                Judged {
                    turn: Turn::success(number, program, value).with_run_ended(),
                    kept: Some(memory),
                    ending: Ending::Returned,
                }
            }
            Err(error) => Judged {
                turn: Turn::failure(number, program, error),
                kept: None,
                ending: Ending::Continue,
            },
        }
    }

    fn check_return(&self, value: &Value) -> Result<(), TurnError> {
        let Some(signature) = self.signature else {
            return Ok(());
        };
        signature.validate(value).map_err(|mismatches| {
            let redacted = signature.redact(value);
            let shown = preview(&redacted, Compact::new(10, 200).with_firewall_hidden());
            let mut message = format!(
                "the returned value does not match the expected output.\nExpected: {}\nReturned: \
                 {shown}",
                signature.output()
            );
            for mismatch in &mismatches {
                message.push_str("\n- ");
                message.push_str(&mismatch.to_string());
            }
            message.push_str("\nFix the value and call (return ...) again.");
            TurnError::new(ErrorKind::SIGNATURE_MISMATCH, message)
        })
    }
}

/// The outcome of the run after `turn`, which ended as `ending`; `None` when the run goes on.
/// Without a second chance (a single-shot run, a compiled agent) a failed turn ends the run.
pub fn run_outcome(turn: &Turn, ending: Ending, second_chance: bool) -> Option<StepOutcome> {
    match (ending, turn.error()) {
        (Ending::Returned, _) => Some(StepOutcome::Returned {
            value: turn.value().cloned().unwrap_or_default(),
        }),
        (Ending::Failed(reason), _) => Some(StepOutcome::Failed {
            kind: FailureKind::Failed,
            reason: reason_text(&reason),
            value: Some(reason),
            llm_errors: Vec::new(),
        }),
        (Ending::Continue, Some(error)) if !second_chance => Some(StepOutcome::Failed {
            kind: if error.kind == ErrorKind::SIGNATURE_MISMATCH {
                FailureKind::SignatureMismatch
            } else {
                FailureKind::ProgramError
            },
            reason: error.to_string(),
            value: None,
            llm_errors: Vec::new(),
        }),
        (Ending::Continue, _) => None,
    }
}

/// A `(fail ...)` reason as text: a string as it is, anything else printed.
fn reason_text(reason: &Value) -> String {
    match reason {
        Value::Str(s) => s.to_string(),
        other => ptc_lisp::print_str(other),
    }
}
