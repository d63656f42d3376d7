//! What earlier runs left for the next one to read, as Clojure's REPL offers it: `*1`, `*2`,
//! `*3` (the values of the three most recent runs that ended without an error, newest first)
//! and `*e` (the most recent error). A lone program has no recent values; an agent, or a REPL,
//! gives each run those of the runs before.

use crate::value::Value;

/// The values `*1 *2 *3 *e` stand for in a run (see [`Runtime::with_recent_values`]).
///
/// [`Runtime::with_recent_values`]: crate::Runtime::with_recent_values
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecentValues {
    results: [Value; 3],
    error: Value,
}

impl RecentValues {
    /// The recent values from the values of earlier runs, newest first (only the first three are
    /// kept; missing ones are nil), and the most recent error as the program should read it
    /// (nil for none).
    ///
    /// ```
    /// use ptc_lisp::{RecentValues, Runtime, UserNamespace, Value};
    ///
    /// let recent = RecentValues::new([Value::Int(42), Value::Int(7)], Value::Nil);
    /// let runtime = Runtime::new().with_recent_values(recent);
    /// let outcome = runtime.run_str("[*1 *2 *3 *e]", &UserNamespace::new()).outcome;
    /// assert_eq!(ptc_lisp::pr_str(outcome.value().unwrap()), "[42 7 nil nil]");
    /// ```
    pub fn new(results: impl IntoIterator<Item = Value>, error: Value) -> RecentValues {
        let mut kept: [Value; 3] = Default::default();
        for (slot, value) in kept.iter_mut().zip(results) {
            *slot = value;
        }
        RecentValues {
            results: kept,
            error,
        }
    }

    /// The value a recent-value name stands for: `*1`, `*2`, `*3` or `*e`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match name {
            "*1" => Some(&self.results[0]),
            "*2" => Some(&self.results[1]),
            "*3" => Some(&self.results[2]),
            "*e" => Some(&self.error),
            _ => None,
        }
    }
}
