//! One turn of an agent run, and the append-only list of turns.

use crate::error_kind::ErrorKind;
use crate::message::Message;
use crate::usage::Usage;
use ptc_lisp::{Definition, ToolCallRecord, Value};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a turn failed: a program error (from [`ptc_lisp::Error`]) or a problem the agent found
/// with the model's response (no program in it, a return value that does not match the
/// signature, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnError {
    /// A stable snake_case kind, such as `undefined_symbol` or `no_program`.
    pub kind: ErrorKind,
    /// What went wrong, written for the model that has to fix its program.
    pub message: String,
    /// 1-based line of the program where the error arose, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column (in characters), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub col: Option<u32>,
}

impl TurnError {
    /// An error of `kind` with `message`, at no particular place.
    pub fn new(kind: impl Into<ErrorKind>, message: impl Into<String>) -> TurnError {
        TurnError {
            kind: kind.into(),
            message: message.into(),
            line: None,
            col: None,
        }
    }

    /// The same error, located at `line:col` of the program.
    pub fn at(mut self, line: u32, col: u32) -> TurnError {
        self.line = Some(line);
        self.col = Some(col);
        self
    }
}

impl From<&ptc_lisp::Error> for TurnError {
    fn from(error: &ptc_lisp::Error) -> TurnError {
        TurnError {
            kind: error.kind.into(),
            message: error.message.clone(),
            line: error.pos.map(|p| p.line),
            col: error.pos.map(|p| p.col),
        }
    }
}

impl From<ptc_lisp::Error> for TurnError {
    fn from(error: ptc_lisp::Error) -> TurnError {
        TurnError::from(&error)
    }
}

impl fmt::Display for TurnError {
    /// `line:col: message` when the place is known (the form `ptc_lisp::Error` displays),
    /// otherwise the message alone.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.col) {
            (Some(line), Some(col)) => write!(f, "{line}:{col}: {}", self.message),
            (Some(line), None) => write!(f, "{line}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// What a turn's program produced: the value of its last form, or the error that stopped it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnResult {
    /// The value of the program's last form.
    Value(Value),
    /// Why the program failed.
    Error(TurnError),
}

/// One turn of a run: the model's response, the program taken from it, and everything running
/// that program produced.
///
/// A turn is immutable: its fields are private and only readable, so a turn that has been
/// recorded cannot be changed by anything holding it, and whether it succeeded can never
/// disagree with its result. Build one with [`Turn::success`] or [`Turn::failure`] and the
/// `with_*` methods, then append it to [`Turns`].
///
/// ```
/// use ptc_lisp::Value;
/// use ptc_turn::{Turn, TurnError};
///
/// let ok = Turn::success(1, "(+ 1 2)", Value::Int(3)).with_prints(vec!["hi".into()]);
/// assert!(ok.is_success());
/// assert_eq!(ok.value(), Some(&Value::Int(3)));
///
/// let failed = Turn::failure(2, "(foo)", TurnError::new("undefined_symbol", "foo is not defined"));
/// assert_eq!(failed.error().map(|e| e.kind.as_str()), Some("undefined_symbol"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    number: u32,
    /// The program run in this turn; empty when none could be taken from the response.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    program: String,
    result: TurnResult,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    prints: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCallRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    memory: Vec<Definition>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    raw_response: String,
    /// Why the model stopped writing, in the provider's words; absent in steps written before
    /// it was recorded, and for providers that do not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Usage::is_zero")]
    usage: Usage,
    /// Whether the run ended with this turn (its program returned an answer or called
    /// `fail`), so no request followed it; absent (false) in steps written before it was
    /// recorded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    ends_run: bool,
}

impl Turn {
    /// A turn whose program ran to completion with `value` as the value of its last form.
    pub fn success(number: u32, program: impl Into<String>, value: Value) -> Turn {
        Turn::new(number, program.into(), TurnResult::Value(value))
    }

    /// A turn that failed with `error`. `program` is empty when the response held no program.
    pub fn failure(number: u32, program: impl Into<String>, error: impl Into<TurnError>) -> Turn {
        Turn::new(number, program.into(), TurnResult::Error(error.into()))
    }

    fn new(number: u32, program: String, result: TurnResult) -> Turn {
        Turn {
            number,
            program,
            result,
            prints: Vec::new(),
            tool_calls: Vec::new(),
            memory: Vec::new(),
            raw_response: String::new(),
            stop_reason: None,
            messages: Vec::new(),
            usage: Usage::default(),
            ends_run: false,
        }
    }

    /// The text of each `println` call of the program, in order (one entry per call, however
    /// many lines it printed).
    pub fn with_prints(mut self, prints: Vec<String>) -> Turn {
        self.prints = prints;
        self
    }

    /// The tool calls the program made, in the order they were made.
    pub fn with_tool_calls(mut self, tool_calls: Vec<ToolCallRecord>) -> Turn {
        self.tool_calls = tool_calls;
        self
    }

    /// The user namespace after the turn, in definition order.
    pub fn with_memory(mut self, memory: Vec<Definition>) -> Turn {
        self.memory = memory;
        self
    }

    /// The model's response exactly as received, including any text around the program.
    pub fn with_raw_response(mut self, raw_response: impl Into<String>) -> Turn {
        self.raw_response = raw_response.into();
        self
    }

    /// Why the model stopped writing the reply, in the provider's words: `stop` or `length`
    /// (OpenAI-compatible servers), `end_turn` or `max_tokens` (Anthropic), ...
    pub fn with_stop_reason(mut self, stop_reason: impl Into<String>) -> Turn {
        self.stop_reason = Some(stop_reason.into());
        self
    }

    /// The messages sent to the model for this turn, exactly as sent.
    pub fn with_messages(mut self, messages: Vec<Message>) -> Turn {
        self.messages = messages;
        self
    }

    /// What the turn cost.
    pub fn with_usage(mut self, usage: Usage) -> Turn {
        self.usage = usage;
        self
    }

    /// The run ended with this turn: its program returned the answer or called `fail`, so
    /// no request follows it.
    pub fn with_run_ended(mut self) -> Turn {
        self.ends_run = true;
        self
    }

    /// 1-based position of the turn in its run.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// The full program run in this turn; empty when the response held none.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The value or the error the program ended with.
    pub fn result(&self) -> &TurnResult {
        &self.result
    }

    /// Whether the program ran to completion.
    pub fn is_success(&self) -> bool {
        matches!(self.result, TurnResult::Value(_))
    }

    /// The value of the program's last form, for a successful turn.
    pub fn value(&self) -> Option<&Value> {
        match &self.result {
            TurnResult::Value(v) => Some(v),
            TurnResult::Error(_) => None,
        }
    }

    /// Why the turn failed, for a failed turn.
    pub fn error(&self) -> Option<&TurnError> {
        match &self.result {
            TurnResult::Value(_) => None,
            TurnResult::Error(e) => Some(e),
        }
    }

    /// One entry per `println` call, in order.
    pub fn prints(&self) -> &[String] {
        &self.prints
    }

    /// The tool calls made, in order.
    pub fn tool_calls(&self) -> &[ToolCallRecord] {
        &self.tool_calls
    }

    /// The user namespace after this turn, in definition order.
    pub fn memory(&self) -> &[Definition] {
        &self.memory
    }

    /// The model's response exactly as received (empty when not recorded).
    pub fn raw_response(&self) -> &str {
        &self.raw_response
    }

    /// Why the model stopped writing the reply, in the provider's words, when recorded.
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }

    /// Whether the reply was cut off by the reply token limit rather than finished (see
    /// [`is_cut_off`]).
    pub fn reply_cut_off(&self) -> bool {
        self.stop_reason.as_deref().is_some_and(is_cut_off)
    }

    /// The messages sent to the model for this turn.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// What the turn cost.
    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// Whether the run ended with this turn, so that no request followed it.
    pub fn ends_run(&self) -> bool {
        self.ends_run
    }
}

/// Whether a provider's stop reason says the reply hit the reply token limit: `length` from
/// OpenAI-compatible servers, `max_tokens` from Anthropic.
///
/// ```
/// assert!(ptc_turn::is_cut_off("length"));
/// assert!(ptc_turn::is_cut_off("max_tokens"));
/// assert!(!ptc_turn::is_cut_off("stop"));
/// ```
pub fn is_cut_off(stop_reason: &str) -> bool {
    matches!(stop_reason, "length" | "max_tokens")
}

/// A turn that cannot be appended because its number is not the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOrderError {
    /// The number the next turn must have.
    pub expected: u32,
    /// The number the rejected turn has.
    pub found: u32,
}

impl fmt::Display for TurnOrderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "turn number {} is out of order: the next turn must be number {} \
             (use Turns::next_number when creating it)",
            self.found, self.expected
        )
    }
}

impl std::error::Error for TurnOrderError {}

/// The turns of a run, in order: append-only. Turns are numbered 1, 2, 3, ... with
/// no gaps, so the number of turns taken is always `len()`; recorded turns can be read
/// (the type dereferences to `&[Turn]`) but never changed or removed.
///
/// ```
/// use ptc_lisp::Value;
/// use ptc_turn::{Turn, Turns};
///
/// let mut turns = Turns::new();
/// turns.push(Turn::success(turns.next_number(), "(def x 1)", Value::Int(1))).unwrap();
/// assert_eq!(turns.len(), 1);
/// assert!(turns.push(Turn::success(5, "x", Value::Int(1))).is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Vec<Turn>")]
pub struct Turns(Vec<Turn>);

impl Turns {
    /// No turns yet.
    pub fn new() -> Turns {
        Turns::default()
    }

    /// The number the next appended turn must have.
    pub fn next_number(&self) -> u32 {
        u32::try_from(self.0.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1)
    }

    /// Append `turn`, whose number must be [`Turns::next_number`].
    pub fn push(&mut self, turn: Turn) -> Result<&Turn, TurnOrderError> {
        let expected = self.next_number();
        if turn.number != expected {
            return Err(TurnOrderError {
                expected,
                found: turn.number,
            });
        }
        self.0.push(turn);
        Ok(&self.0[self.0.len() - 1])
    }

    /// The turns, oldest first.
    pub fn as_slice(&self) -> &[Turn] {
        &self.0
    }
}

impl std::ops::Deref for Turns {
    type Target = [Turn];
    fn deref(&self) -> &[Turn] {
        &self.0
    }
}

impl<'a> IntoIterator for &'a Turns {
    type Item = &'a Turn;
    type IntoIter = std::slice::Iter<'a, Turn>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl TryFrom<Vec<Turn>> for Turns {
    type Error = TurnOrderError;
    fn try_from(turns: Vec<Turn>) -> Result<Turns, TurnOrderError> {
        let mut out = Turns(Vec::with_capacity(turns.len()));
        for turn in turns {
            out.push(turn)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ptc_lisp::{ErrorKind, Pos};

    #[test]
    fn turn_errors_come_from_lisp_errors_with_their_place() {
        let mut error = ptc_lisp::Error::new(ErrorKind::UndefinedSymbol, "foo is not defined");
        error.pos = Some(Pos { line: 3, col: 7 });
        let turn_error = TurnError::from(&error);
        assert_eq!(
            turn_error,
            TurnError::new("undefined_symbol", "foo is not defined").at(3, 7)
        );
        assert_eq!(turn_error.to_string(), "3:7: foo is not defined");
        assert_eq!(
            TurnError::new("no_program", "no program found").to_string(),
            "no program found"
        );
    }

    // ARC-001, DBG-002: a turn records number, program, result, prints, tool calls, memory and
    // success, plus the raw response and the messages sent.
    #[test]
    fn turns_expose_everything_they_recorded() {
        let turn = Turn::success(1, "(println 1)", Value::Nil)
            .with_prints(vec!["1".into()])
            .with_raw_response("```clojure\n(println 1)\n```")
            .with_messages(vec![Message::user("go")]);
        assert_eq!(turn.number(), 1);
        assert_eq!(turn.program(), "(println 1)");
        assert!(turn.is_success());
        assert_eq!(turn.value(), Some(&Value::Nil));
        assert_eq!(turn.error(), None);
        assert_eq!(turn.prints(), ["1".to_string()]);
        assert_eq!(turn.raw_response(), "```clojure\n(println 1)\n```");
        assert_eq!(turn.messages(), [Message::user("go")]);
        let failed = Turn::failure(2, "", TurnError::new("no_program", "no code"));
        assert!(!failed.is_success());
        assert_eq!(failed.value(), None);
    }

    // ARC-002: turns are appended in order and never changed.
    #[test]
    fn turns_are_append_only_and_numbered_without_gaps() {
        let mut turns = Turns::new();
        assert_eq!(turns.next_number(), 1);
        turns
            .push(Turn::success(1, "1", Value::Int(1)))
            .expect("first turn");
        assert_eq!(
            turns.push(Turn::success(3, "3", Value::Int(3))),
            Err(TurnOrderError {
                expected: 2,
                found: 3
            })
        );
        turns
            .push(Turn::success(2, "2", Value::Int(2)))
            .expect("second turn");
        assert_eq!(turns.len(), 2);
        assert_eq!(
            turns.iter().map(Turn::number).collect::<Vec<_>>(),
            vec![1, 2]
        );
    }

    #[test]
    fn a_turn_that_ended_the_run_says_so_and_older_turns_read_as_not_ending_it() {
        let ended = Turn::success(1, "(return 3)", Value::Int(3)).with_run_ended();
        assert!(ended.ends_run());
        let json = serde_json::to_string(&ended).expect("serializes");
        assert_eq!(
            json,
            r#"{"number":1,"program":"(return 3)","result":{"value":"3"},"ends_run":true}"#
        );
        assert_eq!(serde_json::from_str::<Turn>(&json).expect("reads"), ended);
        let older = r#"{"number":1,"program":"(+ 1 2)","result":{"value":"3"}}"#;
        let read: Turn = serde_json::from_str(older).expect("reads");
        assert!(!read.ends_run());
        assert_eq!(serde_json::to_string(&read).expect("serializes"), older);
    }

    #[test]
    fn turn_lists_with_gaps_are_rejected_when_read() {
        let json = r#"[{"number":1,"result":{"error":{"kind":"k","message":"m"}}},
                       {"number":3,"result":{"error":{"kind":"k","message":"m"}}}]"#;
        let error = serde_json::from_str::<Turns>(json).expect_err("gap");
        assert!(
            error.to_string().contains("the next turn must be number 2"),
            "{error}"
        );
    }
}
