//! The builtin registry as the analyzer sees it.

use crate::analyze::Library;
use crate::builtins;
use crate::runtime::Builtin;
use crate::value::{Function, Value};

/// The builtins of `crate::builtins`, handed to the analyzer.
pub(crate) struct Builtins;

impl Library for Builtins {
    fn builtin(&self, name: &str) -> Option<&'static Builtin> {
        builtins::lookup(name)
    }

    fn function(&self, name: &str) -> Option<Function> {
        builtins::lookup_function(name)
    }

    fn constant(&self, name: &str) -> Option<Value> {
        builtins::constant(name)
    }

    fn names(&self) -> Vec<&'static str> {
        builtins::names().collect()
    }

    fn class_members(&self, class: &str) -> Vec<&'static str> {
        builtins::class_members(class)
    }

    fn method_names(&self) -> Vec<&'static str> {
        builtins::method_names()
    }
}
