//! The builtin registry.
//!
//! Each builtin is one [`Builtin`] entry: name, arity, signature, one-line doc, an example with
//! its expected result, and the implementation. The language reference and the agent's system
//! prompt are generated from these entries, and a test runs every example, so documentation
//! cannot drift from behaviour. Families live in one file each.

pub(crate) mod args;
mod arrays;
mod bits;
pub(crate) mod build;
pub(crate) mod coll;
mod core_helpers;
pub(crate) mod delay;
mod edn;
mod exceptions;
pub(crate) mod function;
pub(crate) mod group;
mod hash;
mod hierarchy;
pub(crate) mod interop;
pub(crate) mod io;
mod kinds;
mod meta;
pub(crate) mod number;
pub(crate) mod parallel;
pub(crate) mod precision;
pub(crate) mod predicate;
mod printf;
pub(crate) mod ptc;
pub(crate) mod regex;
mod rounding;
pub(crate) mod seq;
mod seq_more;
pub(crate) mod set;
mod sorted_range;
pub(crate) mod string;
pub(crate) mod tagged;
pub(crate) mod time;
mod tower;
pub(crate) mod transduce;
mod transduce_more;
mod walk;

pub(crate) use crate::context::Builtin;
pub(crate) use crate::eval::got;

use crate::error::{Error, Result};
use crate::value::{Function, Value};
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// Define a builtin entry: `builtin!("name", implementation, "(sig)", "doc", "example" =>
/// "result")`. The arity is the one the implementation's parameter types declare (see
/// [`args`]).
macro_rules! builtin {
    ($name:literal, $f:expr, $sig:literal, $doc:literal, $ex:literal => $expected:literal) => {
        $crate::builtins::Builtin {
            name: $name,
            min_args: $crate::builtins::args::arity($f).0,
            max_args: $crate::builtins::args::arity($f).1,
            signature: $sig,
            doc: $doc,
            example: $ex,
            expected: $expected,
            f: {
                fn entry(
                    ctx: &mut $crate::eval::Ctx,
                    builtin: &'static $crate::builtins::Builtin,
                    args: &[$crate::value::Value],
                ) -> $crate::eval::EvalResult {
                    $crate::builtins::args::invoke(ctx, builtin, args, $f)
                }
                entry
            },
        }
    };
}
pub(crate) use builtin;

/// Every family, in the order the reference lists them.
pub(crate) fn families() -> [(&'static str, &'static [Builtin]); 32] {
    [
        ("Numbers", number::BUILTINS),
        ("Big numbers and ratios", tower::BUILTINS),
        ("Bit operations and unchecked arithmetic", bits::BUILTINS),
        ("Predicates", predicate::BUILTINS),
        (
            "Predicates on abilities, names and identity",
            kinds::BUILTINS,
        ),
        ("Sequences", seq::BUILTINS),
        ("More sequence functions", seq_more::BUILTINS),
        ("Maps and collections", coll::BUILTINS),
        ("Strings", string::BUILTINS),
        ("Output and errors", io::BUILTINS),
        ("Exception constructors", exceptions::BUILTINS),
        ("Regular expressions", regex::BUILTINS),
        ("Java methods", interop::BUILTINS),
        ("Dates", time::BUILTINS),
        ("Functions", function::BUILTINS),
        ("Grouping and splitting", group::BUILTINS),
        ("Sets (clojure.set, also set/)", set::BUILTINS),
        ("Walking nested data", walk::BUILTINS),
        ("Hierarchies", hierarchy::BUILTINS),
        ("Metadata", meta::BUILTINS),
        ("UUIDs and tagged literals", tagged::BUILTINS),
        ("Reading data from text", edn::BUILTINS),
        ("Transducers and early termination", transduce::BUILTINS),
        (
            "More transducers: halt-when, eduction, iteration",
            transduce_more::BUILTINS,
        ),
        ("Sorted collections: ranges of keys", sorted_range::BUILTINS),
        ("Delays", delay::BUILTINS),
        ("Hashes", hash::BUILTINS),
        ("Arrays (as vectors) and typed vectors", arrays::BUILTINS),
        ("Clojure's helper functions", core_helpers::BUILTINS),
        ("PTC extensions: predicates and aggregation", ptc::BUILTINS),
        ("PTC extensions: parallel calls", parallel::BUILTINS),
        ("PTC extensions: rounding and powers", rounding::BUILTINS),
    ]
}

/// Families the system prompt's compact reference leaves out entirely, for the same reason
/// as [`LEFT_OUT_OF_PROMPT`] (the full reference lists them).
pub(crate) const FAMILIES_LEFT_OUT_OF_PROMPT: &[&str] = &[
    "Predicates on abilities, names and identity",
    "More sequence functions",
    "Hierarchies",
    "Metadata",
    "UUIDs and tagged literals",
    // A model writes these as Clojure (or the original PTC-Lisp) has them whether it is told or
    // not (`+'`, `bigint`, `bit-and`, `floor`), and a task seldom needs them.
    "Big numbers and ratios",
    "Bit operations and unchecked arithmetic",
    "PTC extensions: rounding and powers",
    // Rare in the programs models write; Clojure's names and meanings, so nothing to learn.
    "More transducers: halt-when, eduction, iteration",
    "Sorted collections: ranges of keys",
    "Delays",
    "Hashes",
    "Arrays (as vectors) and typed vectors",
    "Clojure's helper functions",
    // `(Exception. message)`, listed with the output and error functions, stands for them.
    "Exception constructors",
];

/// Builtins the system prompt's compact reference leaves out: rarely written, and the full
/// reference, the registry and error messages still know them. A name earns its tokens in
/// every request only if models reach for it.
pub(crate) const LEFT_OUT_OF_PROMPT: &[&str] = &[
    "clojure.walk/walk",
    "clojure.walk/postwalk-demo",
    "clojure.walk/prewalk-demo",
    "clojure.walk/postwalk-replace",
    "clojure.walk/prewalk-replace",
    "clojure.string/re-quote-replacement",
    "clojure.set/join",
    "array-map",
    "flush",
    "newline",
    "ex-cause",
    // The original PTC-Lisp's; programs written for it work, new ones need not learn them.
    "zip",
    "entries",
];

struct Registry {
    by_name: FxHashMap<&'static str, (&'static Builtin, Function)>,
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut by_name = FxHashMap::default();
        for (_, family) in families() {
            for b in family {
                let previous = by_name.insert(b.name, (b, Function::builtin(b)));
                assert!(previous.is_none(), "builtin {} is registered twice", b.name);
            }
        }
        Registry { by_name }
    })
}

/// The builtin called `name`, accepting the namespace aliases LLMs use: `str/` and `string/`
/// for `clojure.string/`, `set/` for `clojure.set/`, and Java classes with or without their
/// package (`java.lang.Math/abs`, `java.time.LocalDate/parse`, `java.util.Date.`).
pub fn lookup(name: &str) -> Option<&'static Builtin> {
    entry(name).map(|(b, _)| *b)
}

/// [`lookup`], giving the builtin's function value (shared, so referring to `inc` allocates
/// nothing).
pub fn lookup_function(name: &str) -> Option<Function> {
    entry(name).map(|(_, f)| f.clone())
}

fn entry(name: &str) -> Option<&'static (&'static Builtin, Function)> {
    let reg = registry();
    if let Some(entry) = reg.by_name.get(name) {
        return Some(entry);
    }
    let canonical = canonical_name(name)?;
    reg.by_name.get(canonical.as_str())
}

/// The registry name an alias stands for, if `name` is written as an alias.
fn canonical_name(name: &str) -> Option<String> {
    if let Some((ns, local)) = name.split_once('/') {
        let ns = match ns {
            "str" | "string" | "s" => "clojure.string",
            "set" => "clojure.set",
            "clojure.core" => return Some(local.to_string()),
            "StrictMath" | "java.lang.StrictMath" => "Math",
            // `java.lang.Math` → `Math`, `java.time.LocalDate` → `LocalDate`.
            qualified if qualified.starts_with("java.") => qualified.rsplit('.').next()?,
            _ => return None,
        };
        return Some(format!("{ns}/{local}"));
    }
    // Constructors: `java.lang.Exception.` → `Exception.`; `Date.` → `java.util.Date.`.
    let class = name.strip_suffix('.')?;
    match class {
        "Date" => Some("java.util.Date.".to_string()),
        _ => class.rsplit_once('.').map(|(_, short)| format!("{short}.")),
    }
}

/// The value of a static field programs read (`Math/PI`, `Long/MAX_VALUE`,
/// `java.time.temporal.ChronoUnit/DAYS`, ...).
pub fn constant(name: &str) -> Option<Value> {
    number::constant(name)
        .or_else(|| time::constant(name))
        .or_else(|| arrays::constant(name))
}

/// Every builtin that is a Java method (`.toUpperCase`, ...), sorted, for messages.
pub(crate) fn method_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = names().filter(|n| n.starts_with('.')).collect();
    names.sort_unstable();
    names
}

/// Every builtin of the Java class `class` (`Math` → `Math/abs`, ...), sorted, for messages.
pub(crate) fn class_members(class: &str) -> Vec<&'static str> {
    let short = class.rsplit('.').next().unwrap_or(class);
    let mut names: Vec<&'static str> = names()
        .filter(|n| n.split_once('/').is_some_and(|(c, _)| c == short))
        .collect();
    names.sort_unstable();
    names
}

/// All builtin names.
pub fn names() -> impl Iterator<Item = &'static str> {
    registry().by_name.keys().copied()
}

/// All builtins, family by family, each family sorted by name.
pub fn all() -> Vec<(&'static str, Vec<&'static Builtin>)> {
    families()
        .into_iter()
        .map(|(family, builtins)| {
            let mut list: Vec<&'static Builtin> = builtins.iter().collect();
            list.sort_by_key(|b| b.name);
            (family, list)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Argument helpers shared by the families
// ---------------------------------------------------------------------------------------------

/// Refuse to grow a text being built past `len` bytes when that is more than the run's memory
/// budget (the run then ends with a memory limit error; see `value::meter`).
pub(crate) fn check_text(len: usize) -> Result<()> {
    if crate::value::meter::text_fits(len) {
        Ok(())
    } else {
        Err(Error::new(
            crate::error::ErrorKind::MemoryLimit,
            "memory limit exceeded: the text being built is larger than the memory budget",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve_to_canonical_names() {
        assert_eq!(lookup("map").map(|b| b.name), Some("map"));
        assert_eq!(lookup("clojure.core/map").map(|b| b.name), Some("map"));
        assert!(lookup("no-such-builtin").is_none());
    }

    /// The argument counts one form of a signature shows: `(get m k)` takes 2, `(vector &
    /// items)` any number from 0, `(apply f args* coll)` any number from 2.
    fn form_counts(form: &str) -> (usize, bool) {
        let mut words = form.split_whitespace().skip(1).peekable();
        let (mut count, mut more) = (0, false);
        while let Some(word) = words.next() {
            match word {
                "&" => {
                    more = true;
                    words.next();
                }
                w if w.ends_with('*') => more = true,
                _ => count += 1,
            }
        }
        (count, more)
    }

    #[test]
    fn every_form_of_a_signature_is_accepted() {
        assert_eq!(form_counts("get m k"), (2, false));
        assert_eq!(form_counts("vector & items"), (0, true));
        assert_eq!(form_counts("apply f args* coll"), (2, true));
        let mut refused = Vec::new();
        for (_, family) in all() {
            for b in family {
                for form in b.signature.split(") (") {
                    let form = form.trim_matches(|c| c == '(' || c == ')');
                    let (count, more) = form_counts(form);
                    let counts = if more {
                        count..count + 3
                    } else {
                        count..count + 1
                    };
                    for n in counts.filter(|n| !b.accepts(*n)) {
                        refused.push(format!("{} with {n} arguments ({form})", b.name));
                    }
                }
            }
        }
        assert_eq!(refused, Vec::<String>::new());
    }

    #[test]
    fn every_builtin_is_documented() {
        for (_, family) in all() {
            for b in family {
                assert!(!b.doc.is_empty(), "{} has no doc", b.name);
                assert!(b.signature.starts_with('('), "{} has no signature", b.name);
                assert!(!b.example.is_empty(), "{} has no example", b.name);
            }
        }
    }
}
