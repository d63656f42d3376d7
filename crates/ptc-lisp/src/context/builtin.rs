//! What a builtin function is: a registry entry with its name, arity, documentation, example
//! and implementation. The entries themselves are the library (`crate::builtins`).

use super::{Ctx, EvalResult};
use crate::error::Error;
use crate::value::Value;

/// A registry entry's function: the builtin's own entry (for its name) and the arguments.
pub(crate) type BuiltinFn = fn(&mut Ctx, &'static Builtin, &[Value]) -> EvalResult;

/// One builtin function.
pub struct Builtin {
    /// The canonical name (`map`, `clojure.string/join`, `Math/floor`).
    pub name: &'static str,
    pub min_args: u8,
    /// `None` for variadic builtins.
    pub max_args: Option<u8>,
    /// How it is called, e.g. `(get m k)` or `(get m k default)`; several forms separated by
    /// spaces.
    pub signature: &'static str,
    /// One line saying what it does.
    pub doc: &'static str,
    /// A program using it ...
    pub example: &'static str,
    /// ... and that program's result, as `pr-str` prints it.
    pub expected: &'static str,
    /// Checks the argument count, counts the call as a step, and runs the implementation.
    pub f: BuiltinFn,
}

impl Builtin {
    /// Whether `argc` arguments are accepted (the entries check the count themselves).
    #[cfg(test)]
    pub(crate) fn accepts(&self, argc: usize) -> bool {
        argc >= self.min_args as usize && self.max_args.is_none_or(|max| argc <= max as usize)
    }

    /// The error for a call with `argc` arguments, which the builtin does not take.
    #[cold]
    pub fn arity_error(&self, argc: usize) -> Error {
        let expected = match self.max_args {
            Some(max) if max == self.min_args => format!("{max}"),
            Some(max) => format!("{} to {max}", self.min_args),
            None => format!("at least {}", self.min_args),
        };
        Error::arity(format!(
            "{} called with {argc} argument{}, expects {expected}; usage: {}",
            self.name,
            if argc == 1 { "" } else { "s" },
            self.signature
        ))
    }
}
