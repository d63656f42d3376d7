//! Turns that did not move a mission forward, found in a PTC run's Step: what a turn cost
//! without bringing the answer nearer, by cause, so that a report can count where the turns
//! went.
//!
//! Found mechanically (each turn at most once, the first cause that applies):
//!
//! | cause | the turn |
//! |---|---|
//! | `no program` | had no program in its reply |
//! | `reply cut off` | stopped at the reply limit |
//! | `error: KIND` | failed with an error of that kind (`undefined_symbol`, `type_error`, ...) |
//! | `signature mismatch` | returned a value of the wrong shape |
//! | `program repeated` | ran the same program as an earlier turn, with the same outcome (value or error, prints, tool calls and their results): a program that reads state and moves on, run once per item, is not lost |
//! | `call repeated` | made only tool calls an earlier turn had made with the same arguments and that had succeeded then (a retry after a failure is not lost) |
//!
//! A last turn that gives up with `(fail ...)` is the run's answer, not a lost turn.
//! | `printed again` | printed only what an earlier turn had printed already |
//!
//! Turns lost for reasons a program does not show (the model printed what the prompt did not
//! show it, or asked again what the feedback left out) are found by reading the transcripts;
//! a report adds them from a file of annotations ([`Annotation`]).

use std::collections::{HashMap, HashSet};

use ptc_turn::{ErrorKind, Step, TurnResult};
use serde::{Deserialize, Serialize};

/// One turn that did not move the mission forward.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LostTurn {
    /// The turn's number, from 1.
    pub turn: u32,
    /// Why, as a short phrase that groups alike turns (the table above).
    pub cause: String,
}

/// A lost turn found by reading a transcript, for a run of a configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Annotation {
    /// The configuration's label.
    pub config: String,
    /// The mission.
    pub mission: String,
    /// The run, from 1.
    pub run: u32,
    /// The turn, from 1.
    pub turn: u32,
    /// The cause, as a short phrase that groups alike turns.
    pub cause: String,
    /// What happened, in a sentence.
    pub note: String,
}

/// The file of a transcript directory that holds its [`Annotation`]s, a JSON array.
pub const ANNOTATIONS_FILE: &str = "lost-turns.json";

/// The annotations in `path`; none when the file does not exist.
pub fn read_annotations(path: &std::path::Path) -> Result<Vec<Annotation>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// The lost turns of a run, found mechanically (see the module's table).
pub fn lost_turns(step: &Step) -> Vec<LostTurn> {
    let mut lost = Vec::new();
    // Each program run so far, with what it did the last time it ran.
    let mut programs: HashMap<&str, String> = HashMap::new();
    let mut succeeded: HashSet<String> = HashSet::new();
    let mut printed: HashSet<&str> = HashSet::new();
    let last = step.turns.len();
    for (index, turn) in step.turns.iter().enumerate() {
        let program = turn.program().trim();
        let turn_calls: Vec<String> = turn
            .tool_calls()
            .iter()
            .map(|c| format!("{}{:?}", c.name, c.args))
            .collect();
        let outcome = format!(
            "{:?} {:?} {:?}",
            turn.result(),
            turn.prints(),
            turn.tool_calls()
                .iter()
                .map(|c| (&c.name, &c.args, &c.result))
                .collect::<Vec<_>>()
        );
        let cause = if turn.reply_cut_off() {
            Some("reply cut off".to_string())
        } else {
            match turn.result() {
                TurnResult::Error(error) if error.kind == ErrorKind::NO_PROGRAM => {
                    Some("no program".to_string())
                }
                TurnResult::Error(error) if error.kind == ErrorKind::SIGNATURE_MISMATCH => {
                    Some("signature mismatch".to_string())
                }
                TurnResult::Error(error)
                    if error.kind == ErrorKind::FAILED && index + 1 == last =>
                {
                    None
                }
                TurnResult::Error(error) => Some(format!("error: {}", error.kind)),
                _ if programs.get(program) == Some(&outcome) => {
                    Some("program repeated".to_string())
                }
                _ if !turn_calls.is_empty() && turn_calls.iter().all(|c| succeeded.contains(c)) => {
                    Some("call repeated".to_string())
                }
                _ if turn_calls.is_empty()
                    && turn.memory().is_empty()
                    && !turn.prints().is_empty()
                    && turn.prints().iter().all(|p| printed.contains(p.as_str())) =>
                {
                    Some("printed again".to_string())
                }
                _ => None,
            }
        };
        if let Some(cause) = cause {
            lost.push(LostTurn {
                turn: turn.number(),
                cause,
            });
        }
        programs.insert(program, outcome);
        for (call, key) in turn.tool_calls().iter().zip(turn_calls) {
            if call.result.value().is_some() {
                succeeded.insert(key);
            }
        }
        printed.extend(turn.prints().iter().map(String::as_str));
    }
    lost
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ptc_lisp::ToolOutcome;
    use ptc_lisp::Value;
    use ptc_turn::{StepOutcome, Task, ToolCallRecord, Turn, TurnError, Turns, Usage};

    #[test]
    fn turns_are_lost_to_the_first_cause_that_applies() {
        let turns = vec![
            Turn::success(1, "(println (count data/xs))", Value::Nil).with_prints(vec!["3".into()]),
            Turn::failure(2, "", TurnError::new(ErrorKind::NO_PROGRAM, "no program")),
            Turn::failure(3, "(foo)", TurnError::new("undefined_symbol", "foo")),
            Turn::success(4, "(println (count data/xs))", Value::Nil).with_prints(vec!["3".into()]),
            Turn::success(5, "(println 3)", Value::Nil).with_prints(vec!["3".into()]),
            Turn::success(6, "(return 3)", Value::Int(3)),
        ];
        let step = Step {
            outcome: StepOutcome::Returned {
                value: Value::Int(3),
            },
            task: Task::default(),
            turns: Turns::try_from(turns).unwrap(),
            usage: Usage::default(),
        };
        assert_eq!(
            lost_turns(&step),
            vec![
                LostTurn {
                    turn: 2,
                    cause: "no program".into()
                },
                LostTurn {
                    turn: 3,
                    cause: "error: undefined_symbol".into()
                },
                LostTurn {
                    turn: 4,
                    cause: "program repeated".into()
                },
                LostTurn {
                    turn: 5,
                    cause: "printed again".into()
                },
            ]
        );
    }

    fn call(name: &str, arg: &str, result: ToolOutcome) -> ToolCallRecord {
        ToolCallRecord {
            name: name.into(),
            args: vec![Value::from(arg)],
            result,
            duration_us: 0,
        }
    }

    #[test]
    fn moving_on_retrying_and_giving_up_are_not_lost() {
        let sent = || ToolOutcome::Ok(Value::from("sent"));
        let turns = vec![
            // A failed send, then the same send again: a retry.
            Turn::success(1, "(send-all)", Value::Nil).with_tool_calls(vec![call(
                "send",
                "a",
                ToolOutcome::Error("429".into()),
            )]),
            Turn::success(2, "(tool/send \"a\")", Value::Nil).with_tool_calls(vec![call(
                "send",
                "a",
                sent(),
            )]),
            // The same program, moving on to the next item: not a repeat.
            Turn::success(3, "(next!)", Value::Nil).with_prints(vec!["b done".into()]),
            Turn::success(4, "(next!)", Value::Nil).with_prints(vec!["c done".into()]),
            // The same program with the same outcome, and a send that had worked: lost.
            Turn::success(5, "(next!)", Value::Nil).with_prints(vec!["c done".into()]),
            Turn::success(6, "(tool/send \"a\") (println 1)", Value::Nil)
                .with_tool_calls(vec![call("send", "a", sent())]),
            // Giving up is the answer.
            Turn::failure(7, "(fail \"no\")", TurnError::new(ErrorKind::FAILED, "no")),
        ];
        let step = Step {
            outcome: StepOutcome::Returned { value: Value::Nil },
            task: Task::default(),
            turns: Turns::try_from(turns).unwrap(),
            usage: Usage::default(),
        };
        assert_eq!(
            lost_turns(&step),
            vec![
                LostTurn {
                    turn: 5,
                    cause: "program repeated".into()
                },
                LostTurn {
                    turn: 6,
                    cause: "call repeated".into()
                },
            ]
        );
    }
}
