//! Whether PTC-Lisp gives the result a conformance case records, decided in one place for the
//! engine's conformance test and for `cargo xtask conformance --pending` (the test includes this
//! file with `#[path]`, next to `cases.rs`).

use crate::cases::{Case, Outcome, PtcOutcome};
use ptc_lisp::pr_str;
use ptc_lisp::read_value;
use ptc_lisp::{ErrorKind, Outcome as RunResult, Runtime, UserNamespace, Value};
use std::fmt;

/// Why a case fails, coarse enough to sort a to-do list by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FailureKind {
    /// PTC-Lisp does not know a name the program uses.
    Undefined,
    /// PTC-Lisp cannot read the program text.
    Parse,
    /// Clojure throws and PTC-Lisp returns a value.
    ShouldThrow,
    /// Both give a value, and the values differ.
    WrongValue,
    /// PTC-Lisp fails with some other error where Clojure (or the case's deviation) expects a
    /// value, or with an error of another kind than the deviation states.
    Error,
}

impl FailureKind {
    pub const ALL: [FailureKind; 5] = [
        FailureKind::Undefined,
        FailureKind::Parse,
        FailureKind::ShouldThrow,
        FailureKind::WrongValue,
        FailureKind::Error,
    ];

    /// The tag written in the pending list, as `[undefined]`.
    pub fn tag(self) -> &'static str {
        match self {
            FailureKind::Undefined => "undefined",
            FailureKind::Parse => "parse",
            FailureKind::ShouldThrow => "should-throw",
            FailureKind::WrongValue => "wrong-value",
            FailureKind::Error => "error",
        }
    }

    pub fn from_tag(tag: &str) -> Option<FailureKind> {
        FailureKind::ALL.into_iter().find(|k| k.tag() == tag)
    }

    /// What the tag means, for summaries.
    pub fn description(self) -> &'static str {
        match self {
            FailureKind::Undefined => "undefined symbol",
            FailureKind::Parse => "parse error",
            FailureKind::ShouldThrow => "should throw",
            FailureKind::WrongValue => "wrong value",
            FailureKind::Error => "unexpected error",
        }
    }
}

/// A failed case: why, and what happened instead, on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    pub text: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.kind.tag(), self.text)
    }
}

/// The longest failure text kept; error messages that list every builtin would drown the list.
const MAX_TEXT_CHARS: usize = 240;

fn failure(kind: FailureKind, text: String) -> Failure {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = match one_line.char_indices().nth(MAX_TEXT_CHARS) {
        Some((cut, _)) => format!("{}...", &one_line[..cut]),
        None => one_line,
    };
    Failure { kind, text }
}

/// Run the case's program in a fresh runtime and compare with its recorded result.
pub fn check_case(case: &Case) -> Result<(), Failure> {
    let outcome = case.outcome.as_ref().ok_or_else(|| {
        failure(
            FailureKind::Error,
            "the case has no result line; run `cargo xtask conformance --regenerate`".into(),
        )
    })?;
    check(&case.program_text(), outcome, case.ptc.as_ref())
}

/// Equality for comparing with Clojure's printed results: like `=`, except that lists and
/// vectors must be the same kind (they print differently), floats match when within a relative
/// 1e-12, and NaN matches NaN.
fn conforms(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Float(a), Value::Float(b)) => {
            (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
        }
        (Value::List(a), Value::List(b)) | (Value::Vector(a), Value::Vector(b)) => {
            a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| conforms(x, y))
        }
        (Value::Map(a), Value::Map(b)) => {
            a.len() == b.len()
                && a.iter().all(|(k, v)| {
                    b.get_entry(k).is_some_and(|(_, w)| conforms(v, w))
                        || b.iter().any(|(k2, w)| conforms(k, k2) && conforms(v, w))
                })
        }
        (Value::Set(a), Value::Set(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|x| b.contains(x) || b.iter().any(|y| conforms(x, y)))
        }
        (Value::Regex(a), Value::Regex(b)) => a.as_str() == b.as_str(),
        _ => actual == expected,
    }
}

/// Whether Clojure's exception is itself about an unknown name, so that PTC-Lisp's
/// `undefined_symbol` is the fitting answer.
fn clojure_cannot_resolve(message: &str) -> bool {
    [
        "Unable to resolve symbol",
        "Unable to resolve var",
        "No such var",
        "No such namespace",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// Whether Clojure's exception comes from its reader (reading the program, or text given to
/// `clojure.edn/read-string`), so that PTC-Lisp's `parse` error is the fitting answer.
fn clojure_cannot_read(class: &str, message: &str) -> bool {
    class.contains("ReaderException")
        || [
            "EOF while reading",
            "Unmatched delimiter",
            "No dispatch macro",
            "Invalid leading character",
            "Invalid token",
            "No reader function for tag",
            "Map literal must contain an even number of forms",
            "Duplicate key",
        ]
        .iter()
        .any(|m| message.starts_with(m))
}

/// The kind of failure an unexpected PTC-Lisp error stands for.
fn error_kind(kind: ErrorKind) -> FailureKind {
    match kind {
        ErrorKind::UndefinedSymbol => FailureKind::Undefined,
        ErrorKind::Parse => FailureKind::Parse,
        _ => FailureKind::Error,
    }
}

/// Compare the run of `program` with what Clojure gave (`outcome`) or, for an intended
/// deviation, with what PTC-Lisp should give (`ptc`). Where Clojure throws, any PTC-Lisp error
/// passes except an undefined symbol or a parse error that Clojure's exception does not explain:
/// those mean the function or syntax is missing, not that it fails for the right reason.
pub fn check(program: &str, outcome: &Outcome, ptc: Option<&PtcOutcome>) -> Result<(), Failure> {
    let run = Runtime::new()
        .run_str(program, &UserNamespace::new())
        .outcome;
    let actual = match &run {
        RunResult::Value(v) | RunResult::Returned(v) => Ok(v),
        RunResult::Failed(v) => {
            return Err(failure(
                FailureKind::Error,
                format!("called fail with {}", pr_str(v)),
            ));
        }
        RunResult::Error(e) => Err(e),
    };
    match (ptc, outcome, actual) {
        (Some(PtcOutcome::Error(kind)), _, Err(e)) if e.kind.as_str() == kind => Ok(()),
        (Some(PtcOutcome::Error(kind)), _, Err(e)) => Err(failure(
            error_kind(e.kind),
            format!("expected error[{kind}], got {}", e.render()),
        )),
        (Some(PtcOutcome::Error(kind)), _, Ok(v)) => Err(failure(
            FailureKind::ShouldThrow,
            format!("expected error[{kind}], got {}", pr_str(v)),
        )),
        (Some(PtcOutcome::Value(text)), _, actual) | (None, Outcome::Value(text), actual) => {
            match actual {
                // Some printed values cannot be read back (`:two words`); compare the text.
                Ok(v) if pr_str(v) == *text => Ok(()),
                Ok(v) if read_value(text).is_ok_and(|expected| conforms(v, &expected)) => Ok(()),
                Ok(v) => Err(failure(
                    FailureKind::WrongValue,
                    format!("expected {text}, got {}", pr_str(v)),
                )),
                Err(e) => Err(failure(
                    error_kind(e.kind),
                    format!("expected {text}, got {}", e.render()),
                )),
            }
        }
        (None, Outcome::Error { class, message }, Err(e)) => match e.kind {
            ErrorKind::UndefinedSymbol if !clojure_cannot_resolve(message) => Err(failure(
                FailureKind::Undefined,
                format!("Clojure throws {class}, PTC-Lisp: {}", e.render()),
            )),
            ErrorKind::Parse if !clojure_cannot_read(class, message) => Err(failure(
                FailureKind::Parse,
                format!("Clojure throws {class}, PTC-Lisp: {}", e.render()),
            )),
            _ => Ok(()),
        },
        (None, Outcome::Error { class, .. }, Ok(v)) => Err(failure(
            FailureKind::ShouldThrow,
            format!("Clojure throws {class}, PTC-Lisp returned {}", pr_str(v)),
        )),
    }
}
