//! The stable kind of a turn's error and of a report's error, as one type.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

/// The stable snake_case kind of an error: a program error's [`ptc_lisp::ErrorKind`]
/// (`undefined_symbol`, `type`, ...), a problem the run found with the model's reply (the
/// constants below), or, in a report, how a run failed ([`crate::FailureKind`]).
///
/// It serializes as its name alone, so a saved step reads the same as when kinds were strings,
/// and a step saved by a newer version with a kind this one does not know still loads.
///
/// ```
/// use ptc_turn::{ErrorKind, FailureKind, TurnError};
///
/// let error = TurnError::new(ErrorKind::FAILED, "no adults");
/// assert_eq!(error.kind, ErrorKind::from(FailureKind::Failed));
/// assert_eq!(
///     serde_json::to_string(&error).unwrap(),
///     r#"{"kind":"failed","message":"no adults"}"#
/// );
/// let undefined = ErrorKind::from(ptc_lisp::ErrorKind::UndefinedSymbol);
/// assert_eq!(undefined.as_str(), "undefined_symbol");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorKind(Cow<'static, str>);

impl ErrorKind {
    /// The program called `(fail ...)`.
    pub const FAILED: ErrorKind = ErrorKind::named("failed");
    /// The returned value does not match the run's signature.
    pub const SIGNATURE_MISMATCH: ErrorKind = ErrorKind::named("signature_mismatch");
    /// The model's reply held no program.
    pub const NO_PROGRAM: ErrorKind = ErrorKind::named("no_program");
    /// The model's reply was cut off by its token limit before its program was complete.
    pub const REPLY_CUT_OFF: ErrorKind = ErrorKind::named("reply_cut_off");
    /// What a program defined would be more than a run may keep between turns.
    pub const MEMORY_KEPT_LIMIT: ErrorKind = ErrorKind::named("memory_kept_limit");
    /// The run itself went wrong (a bug, not the program's fault).
    pub const INTERNAL: ErrorKind = ErrorKind::named("internal");

    /// The kind called `name` (snake_case by convention).
    pub const fn named(name: &'static str) -> ErrorKind {
        ErrorKind(Cow::Borrowed(name))
    }

    /// The kind's name, as serialized.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&'static str> for ErrorKind {
    fn from(name: &'static str) -> ErrorKind {
        ErrorKind::named(name)
    }
}

impl From<String> for ErrorKind {
    fn from(name: String) -> ErrorKind {
        ErrorKind(Cow::Owned(name))
    }
}

impl From<ptc_lisp::ErrorKind> for ErrorKind {
    fn from(kind: ptc_lisp::ErrorKind) -> ErrorKind {
        ErrorKind::named(kind.as_str())
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_kind_reads_back_as_the_name_it_was_written_with() {
        for name in [
            "failed",
            "signature_mismatch",
            "a_kind_from_a_newer_version",
        ] {
            let json = serde_json::to_string(&ErrorKind::from(name.to_string())).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            let back: ErrorKind = serde_json::from_str(&json).unwrap();
            assert_eq!(back, ErrorKind::named(name));
        }
    }
}
