//! The builtin registry as the analyzer sees it.

use crate::analyze::Library;
use crate::builtins::{self, args::Call};
use crate::context::{Builtin, Ctx, EvalResult};
use crate::value::{Function, Map, Value};

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

    fn destructure_map(&self) -> &'static Builtin {
        &SEQ_TO_MAP
    }

    fn capture_output(&self) -> &'static Builtin {
        &builtins::io::CAPTURE_OUTPUT
    }

    fn make_delay(&self) -> &'static Builtin {
        &builtins::delay::MAKE_DELAY
    }

    fn with_precision(&self) -> &'static Builtin {
        &builtins::precision::WITH_PRECISION
    }
}

/// Map destructuring of a sequence of key/value pairs (`& {:keys [a]}` rest arguments).
static SEQ_TO_MAP: Builtin = builtins::builtin!("destructure-map", seq_to_map, "", "", "" => "");

fn seq_to_map(_: &mut Ctx, _: Call, value: &Value) -> EvalResult {
    match value {
        Value::List(items) => {
            // Keyword arguments, optionally ending with a map of more options (Clojure 1.11).
            let mut m = Map::new();
            let trailing = match items.last() {
                Some(Value::Map(last)) if items.len() % 2 == 1 => Some(last.clone()),
                _ => None,
            };
            let pairs = items.len() - usize::from(trailing.is_some());
            let mut it = items.iter().take(pairs);
            while let Some(k) = it.next() {
                m.assoc_mut(k.clone(), it.next().cloned().unwrap_or_default());
            }
            for (k, v) in trailing.iter().flat_map(|t| t.iter()) {
                m.assoc_mut(k.clone(), v.clone());
            }
            Ok(Value::Map(m))
        }
        other => Ok(other.clone()),
    }
}
