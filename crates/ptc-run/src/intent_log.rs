//! The intent log as a run sees it: the key each tool call is made under, and a call as the
//! log holds it (recorded before it was made, with its outcome once it completed).

use std::fmt;
use std::time::Duration;

use ptc_lisp::{ToolAnswer, ToolError, ToolOutcome, Value};

/// The key a tool is given with each call, the same whenever the same call is retried: the
/// run's id, the turn's number and the call's index in the turn (from 0, in the order the
/// program made its calls), written `RUN:TURN:CALL` (its `Display`). Turn and index are the
/// last two fields, so a run id holding `:` still gives each call its own key.
///
/// ```
/// use ptc_run::IdempotencyKey;
///
/// let key = IdempotencyKey::new("ticket-42", 3, 0);
/// assert_eq!(key.to_string(), "ticket-42:3:0");
/// assert_eq!(IdempotencyKey::parse("ticket-42:3:0"), Some(key));
/// assert_eq!(IdempotencyKey::parse("a:b:3:0").map(|k| k.run_id().to_string()), Some("a:b".into()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdempotencyKey {
    run_id: String,
    turn: u32,
    call: u32,
}

impl IdempotencyKey {
    /// The key of call `call` (from 0) of turn `turn` of run `run_id`.
    pub fn new(run_id: impl Into<String>, turn: u32, call: u32) -> IdempotencyKey {
        IdempotencyKey {
            run_id: run_id.into(),
            turn,
            call,
        }
    }

    /// The key written as `RUN:TURN:CALL`, or `None` if `text` is not one.
    pub fn parse(text: &str) -> Option<IdempotencyKey> {
        let (rest, call) = text.rsplit_once(':')?;
        let (run_id, turn) = rest.rsplit_once(':')?;
        let number = |s: &str| {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse().ok())
                .flatten()
        };
        Some(IdempotencyKey::new(run_id, number(turn)?, number(call)?))
    }

    /// The run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The turn's number.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// The call's index in its turn, from 0.
    pub fn call(&self) -> u32 {
        self.call
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.run_id, self.turn, self.call)
    }
}

/// A tool call as a run's intent log holds it: recorded under `key` before it was made, and
/// with its outcome once it completed.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCall {
    /// Which call it is.
    pub key: IdempotencyKey,
    /// The tool's name.
    pub tool: String,
    /// The arguments, as the program passed them.
    pub args: Vec<Value>,
    /// Its outcome once completed; `None` while it is in flight (it may or may not have
    /// reached its tool).
    pub outcome: Option<ToolOutcome>,
}

/// The answer of a call the intent log holds as completed with `outcome`: the program gets the
/// recorded result, and the tool is not called again.
pub fn answer_from_log(outcome: ToolOutcome) -> ToolAnswer {
    let result = match outcome {
        ToolOutcome::Ok(value) => Ok(value),
        ToolOutcome::Error(message) => Err(ToolError::new(message)),
    };
    ToolAnswer::new(result, Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_key_reads_back_as_written_and_nothing_else_is_a_key() {
        for key in [
            IdempotencyKey::new("ticket-42", 1, 0),
            IdempotencyKey::new("tenant:7:job:3", 12, 4),
            IdempotencyKey::new("", 3, 9),
        ] {
            assert_eq!(IdempotencyKey::parse(&key.to_string()), Some(key));
        }
        assert_eq!(
            IdempotencyKey::new("tenant:7", 2, 1).to_string(),
            "tenant:7:2:1"
        );
        for text in [
            "run", "run:1", "run:1:", "run::1", "run:x:1", "run:1:-1", "run:+1:2",
        ] {
            assert_eq!(IdempotencyKey::parse(text), None, "{text}");
        }
        assert_eq!(IdempotencyKey::parse("run:1:99999999999"), None);
    }

    #[test]
    fn a_completed_call_answers_with_its_recorded_result() {
        assert_eq!(
            answer_from_log(ToolOutcome::Ok(Value::Int(40))),
            ToolAnswer::new(Ok(Value::Int(40)), Duration::ZERO)
        );
        assert_eq!(
            answer_from_log(ToolOutcome::Error("refused".into())),
            ToolAnswer::new(Err(ToolError::new("refused")), Duration::ZERO)
        );
    }
}
