//! The one error type of `ptc-lisp`.
//!
//! Every error has a stable [`ErrorKind`] (what a host matches on, and what the agent reports to the
//! model as `error[kind]`), a message written for an LLM that has to fix its program, and, where the
//! error comes from a place in the source, that place as a byte span and a `line:column`.

use crate::span::{LineIndex, Pos, Span};
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What went wrong, as a stable machine-readable kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The text is not a well-formed program (unbalanced brackets, bad literal, ...).
    Parse,
    /// The program is well-formed text but a form is malformed (`(let [x] ...)`, `recur` not in
    /// tail position, ...).
    Syntax,
    /// A function was called with the wrong number of arguments.
    Arity,
    /// A value of the wrong type was given (`(+ 1 "a")`, calling a number, ...).
    Type,
    /// An argument has the right type but an unusable value (`(nth [1] 5)` is [`ErrorKind::Index`]).
    Argument,
    /// An index outside a collection.
    Index,
    /// Integer overflow or division by zero.
    Arithmetic,
    /// A name that is neither local, defined, a builtin, a tool nor a data key.
    UndefinedSymbol,
    /// A bare name that is both a tool and a data key.
    AmbiguousReference,
    /// A host tool failed, panicked or timed out.
    Tool,
    /// A form outside the PTC-Lisp subset (`defmacro`, `eval`, `slurp`, ...).
    Unsupported,
    /// An exception thrown by the program (`throw`, `ex-info`) and not caught.
    Thrown,
    /// The run took longer than its wall-clock limit.
    Timeout,
    /// The run used up its evaluation step budget.
    StepLimit,
    /// Calls nested deeper than the recursion limit.
    DepthLimit,
    /// The values built by the run exceeded its memory budget.
    MemoryLimit,
    /// The run called more tools than allowed.
    ToolCallLimit,
    /// The run printed more than allowed.
    OutputLimit,
    /// The program text exceeds a size, nesting or literal-length bound.
    ProgramLimit,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 19] = [
        ErrorKind::Parse,
        ErrorKind::Syntax,
        ErrorKind::Arity,
        ErrorKind::Type,
        ErrorKind::Argument,
        ErrorKind::Index,
        ErrorKind::Arithmetic,
        ErrorKind::UndefinedSymbol,
        ErrorKind::AmbiguousReference,
        ErrorKind::Tool,
        ErrorKind::Unsupported,
        ErrorKind::Thrown,
        ErrorKind::Timeout,
        ErrorKind::StepLimit,
        ErrorKind::DepthLimit,
        ErrorKind::MemoryLimit,
        ErrorKind::ToolCallLimit,
        ErrorKind::OutputLimit,
        ErrorKind::ProgramLimit,
    ];

    /// The kind named `name` (the inverse of [`ErrorKind::as_str`]).
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The stable snake_case name, as in `error[undefined_symbol]`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Parse => "parse",
            ErrorKind::Syntax => "syntax",
            ErrorKind::Arity => "arity",
            ErrorKind::Type => "type",
            ErrorKind::Argument => "argument",
            ErrorKind::Index => "index",
            ErrorKind::Arithmetic => "arithmetic",
            ErrorKind::UndefinedSymbol => "undefined_symbol",
            ErrorKind::AmbiguousReference => "ambiguous_reference",
            ErrorKind::Tool => "tool",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Thrown => "thrown",
            ErrorKind::Timeout => "timeout",
            ErrorKind::StepLimit => "step_limit",
            ErrorKind::DepthLimit => "depth_limit",
            ErrorKind::MemoryLimit => "memory_limit",
            ErrorKind::ToolCallLimit => "tool_call_limit",
            ErrorKind::OutputLimit => "output_limit",
            ErrorKind::ProgramLimit => "program_limit",
        }
    }

    /// Whether this kind is a sandbox limit (the program may be correct but too expensive).
    pub fn is_limit(self) -> bool {
        matches!(
            self,
            ErrorKind::Timeout
                | ErrorKind::StepLimit
                | ErrorKind::DepthLimit
                | ErrorKind::MemoryLimit
                | ErrorKind::ToolCallLimit
                | ErrorKind::OutputLimit
                | ErrorKind::ProgramLimit
        )
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error from reading, analysing or running a program.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct Error {
    /// What went wrong, as a stable kind.
    pub kind: ErrorKind,
    /// What went wrong and what to do instead, written for the model that wrote the program.
    pub message: String,
    /// Where in the source the error arose, when known.
    pub span: Option<Span>,
    /// `span.start` as line and column, filled in by [`Error::locate`].
    pub pos: Option<Pos>,
    /// The data map of an `ex-info` exception.
    pub data: Option<Value>,
    /// The exception an `ex-info` exception was given as its cause (`ex-cause`).
    pub cause: Option<Value>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(pos) = self.pos {
            write!(f, "{pos}: ")?;
        }
        f.write_str(&self.message)?;
        // The data of an uncaught ex-info is often what explains it.
        if let Some(data) = &self.data
            && !matches!(data, Value::Nil)
        {
            write!(f, " {}", crate::format::message_text(data, 10, 200, 10_000))?;
        }
        Ok(())
    }
}

impl Error {
    /// An error of `kind` with `message` and no position.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            span: None,
            pos: None,
            data: None,
            cause: None,
        }
    }

    /// An error of `kind` at `span` of the source.
    pub fn at(kind: ErrorKind, span: Span, message: impl Into<String>) -> Error {
        Error::new(kind, message).with_span(span)
    }

    pub(crate) fn with_span(mut self, span: Span) -> Error {
        self.span = Some(span);
        self
    }

    /// Attach `span` unless the error already carries a more precise one.
    pub fn or_span(mut self, span: Span) -> Error {
        if self.span.is_none() {
            self.span = Some(span);
        }
        self
    }

    /// Resolve the span to a line and column in `src`.
    pub fn locate(mut self, src: &str) -> Error {
        if let (Some(span), None) = (self.span, self.pos) {
            self.pos = Some(LineIndex::new(src).pos(span.start as usize));
        }
        self
    }

    /// The form the CLI and the agent show: `error[kind] line:col: message`.
    pub fn render(&self) -> String {
        format!("error[{}] {self}", self.kind)
    }

    pub(crate) fn parse(span: Span, message: impl Into<String>) -> Error {
        Error::at(ErrorKind::Parse, span, message)
    }
    pub(crate) fn syntax(span: Span, message: impl Into<String>) -> Error {
        Error::at(ErrorKind::Syntax, span, message)
    }
    pub(crate) fn arity(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Arity, message)
    }
    pub(crate) fn type_error(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Type, message)
    }
    pub(crate) fn argument(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Argument, message)
    }
    pub(crate) fn index(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Index, message)
    }
    pub(crate) fn arithmetic(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Arithmetic, message)
    }
    pub(crate) fn unsupported(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Unsupported, message)
    }
    pub(crate) fn memory_limit(limit_bytes: usize) -> Error {
        Error::new(
            ErrorKind::MemoryLimit,
            format!(
                "memory limit exceeded: the values built by this program exceed {} bytes; \
                 work on smaller pieces (take, filter first) instead of materializing everything",
                limit_bytes
            ),
        )
    }
}

/// Key marking a map as a caught exception (the map a `catch` binds), so that `throw` can
/// rethrow it as it was.
pub(crate) const EXCEPTION_MARKER: &str = "ptc/exception";

/// Shorthand used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_name() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(kind.as_str()), Some(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
        assert_eq!(ErrorKind::from_name("no_such_kind"), None);
    }

    #[test]
    fn render_shows_kind_position_and_message() {
        let err = Error::parse(Span::new(4, 5), "unclosed '(' opened at 1:1").locate("(a\n (b");
        assert_eq!(err.render(), "error[parse] 2:2: unclosed '(' opened at 1:1");
        let err = Error::arity("inc expects 1 argument, got 2");
        assert_eq!(err.render(), "error[arity] inc expects 1 argument, got 2");
    }
}
