//! The builtin functions names resolve to.
//!
//! The analyzer sits below the library of builtins (which calls back into the evaluator), so it
//! does not import the registry: the engine hands it one through this trait.

use crate::context::Builtin;
use crate::value::{Function, Value};

/// A registry of builtins, looked up by name with the aliases programs use (`str/`, `set/`,
/// `clojure.core/`, Java class names with or without their package).
pub(crate) trait Library: Sync {
    /// The builtin called `name`.
    fn builtin(&self, name: &str) -> Option<&'static Builtin>;
    /// The builtin called `name` as a function value (shared, so referring to one allocates
    /// nothing).
    fn function(&self, name: &str) -> Option<Function>;
    /// The value of a static field such as `Math/PI`.
    fn constant(&self, name: &str) -> Option<Value>;
    /// Every builtin name, for spelling suggestions.
    fn names(&self) -> Vec<&'static str>;
    /// The builtins of the Java class `class` (`Math` → `Math/abs`, ...), sorted.
    fn class_members(&self, class: &str) -> Vec<&'static str>;
    /// The builtins that are Java methods (`.toUpperCase`, ...), sorted.
    fn method_names(&self) -> Vec<&'static str>;
    /// The builtin map destructuring of a rest argument expands to: a sequence of key/value
    /// pairs (`& {:keys [a]}`) as a map. It is not in the registry: programs cannot call it.
    fn destructure_map(&self) -> &'static Builtin;
    /// The builtin `with-out-str` expands to: it calls its function of no arguments and
    /// returns what that printed. Not in the registry either.
    fn capture_output(&self) -> &'static Builtin;
    /// The builtin `delay` expands to: it makes its function of no arguments into a delay.
    /// Not in the registry either.
    fn make_delay(&self) -> &'static Builtin;
    /// The builtin `with-precision` expands to: it evaluates its function of no arguments with
    /// big-decimal results rounded to a number of digits. Not in the registry either.
    fn with_precision(&self) -> &'static Builtin;
}
