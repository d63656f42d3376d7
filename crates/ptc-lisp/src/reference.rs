//! The language reference, generated from the builtin registry and the table of special forms
//! below, so the documentation cannot drift from the language: every example here and in the
//! registry is run by the test suite.
//!
//! - [`markdown`] is `docs/language.md` (written by `cargo xtask docs`).
//! - [`compact`] is the short reference an agent puts in its system prompt.
//!
//! ```
//! let text = ptc_lisp::reference::compact();
//! assert!(text.contains("(/ 7 2) is 3.5"));
//! assert!(ptc_lisp::reference::markdown().starts_with("# PTC-Lisp language reference"));
//! ```

use crate::builtins::{self, Builtin};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Whether a form is built into the evaluator or rewritten into other forms first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormKind {
    /// Evaluated by the language itself (`if`, `let`, `fn`, ...).
    Special,
    /// Rewritten into special forms before evaluation, like a Clojure macro (`when`, `->`, ...).
    Macro,
}

/// One special or macro-like form, documented like a builtin.
#[derive(Debug, Clone, Copy)]
pub struct FormDoc {
    pub name: &'static str,
    pub kind: FormKind,
    /// How it is written; several shapes separated by spaces.
    pub signature: &'static str,
    /// One line saying what it does.
    pub doc: &'static str,
    /// A program using it ...
    pub example: &'static str,
    /// ... and that program's result as `pr-str` prints it (`(fail x)` shows as `failed: x`).
    pub expected: &'static str,
}

macro_rules! form {
    ($kind:ident, $name:literal, $sig:literal, $doc:literal, $ex:literal => $expected:literal) => {
        FormDoc {
            name: $name,
            kind: FormKind::$kind,
            signature: $sig,
            doc: $doc,
            example: $ex,
            expected: $expected,
        }
    };
}

/// Every special form and macro-like form.
pub const FORMS: &[FormDoc] = &[
    form!(Special, "def", "(def name value) (def name \"doc\" value)", "Defines name in the user namespace; definitions last into later turns.", "(def rate 0.2) (* 100 rate)" => "20.0"),
    form!(Special, "defn", "(defn name [params] body) (defn name \"doc\" ([x] ...) ([x y] ...))", "Defines a function in the user namespace (defn- is the same).", "(defn sq [x] (* x x)) (sq 5)" => "25"),
    form!(Special, "declare", "(declare name ...)", "Names a definition that comes later, so earlier code may refer to it.", "(declare b) (defn a [] (b)) (defn b [] :b) (a)" => ":b"),
    form!(Special, "fn", "(fn [params] body) (fn name [params] body) (fn ([x] ...) ([x y] ...))", "A function; params may be destructured and end with & rest.", "((fn [x & more] [x more]) 1 2 3)" => "[1 (2 3)]"),
    form!(Special, "#()", "#(... % %2 %&)", "A short function: % (or %1) is the first argument, %2 the second, %& the rest.", "(map #(* % 10) [1 2])" => "(10 20)"),
    form!(Special, "let", "(let [name value ...] body)", "Binds names (or destructuring patterns) in order, then evaluates the body.", "(let [{:keys [a b] :or {b 2}} {:a 1} [x & xs] [3 4]] [a b x xs])" => "[1 2 3 (4)]"),
    form!(Special, "if", "(if test then) (if test then else)", "then when test is truthy (anything but nil and false), else otherwise.", "(if (empty? []) :empty :full)" => ":empty"),
    form!(Special, "do", "(do expr ...)", "Evaluates the expressions in order; the value of the last one.", "(do (println \"hi\") 42)" => "42"),
    form!(Special, "and", "(and x ...)", "The first falsey value, or the last value.", "[(and 1 nil 2) (and 1 2)]" => "[nil 2]"),
    form!(Special, "or", "(or x ...)", "The first truthy value, or the last value.", "(or nil false :default)" => ":default"),
    form!(Special, "quote", "(quote form) 'form", "The form itself as data, unevaluated.", "'(a b 1)" => "(a b 1)"),
    form!(Special, "loop", "(loop [name init ...] body)", "A loop: recur in tail position jumps back with new values.", "(loop [i 0 acc []] (if (< i 3) (recur (inc i) (conj acc i)) acc))" => "[0 1 2]"),
    form!(Special, "recur", "(recur value ...)", "Jumps to the innermost loop or function with new values (tail position only).", "((fn [n acc] (if (zero? n) acc (recur (dec n) (* acc n)))) 5 1)" => "120"),
    form!(Special, "letfn", "(letfn [(name [params] body) ...] body)", "Local functions that may call each other.", "(letfn [(ev? [n] (if (zero? n) true (od? (dec n)))) (od? [n] (if (zero? n) false (ev? (dec n))))] (ev? 10))" => "true"),
    form!(Special, "case", "(case x value expr ... default) (case x (v1 v2) expr ...)", "The expr for the constant equal to x, else the default (an error without one).", "(case :b :a 1 (:b :c) 2 0)" => "2"),
    form!(Special, "try", "(try body (catch Exception e handler) (finally cleanup))", "Catches errors thrown in body; e is a map with :message (ex-message works on it).", "(try (nth [1] 5) (catch IndexOutOfBoundsException e :out-of-range) (finally (println \"done\")))" => ":out-of-range"),
    form!(Special, "throw", "(throw (ex-info message data))", "Throws an exception; catch it with try.", "(try (throw (ex-info \"bad\" {:id 1})) (catch Exception e (ex-data e)))" => "{:id 1}"),
    form!(Special, "for", "(for [x xs :let [y ...] :when test :while test ...] expr)", "A list comprehension; several bindings nest, the last varies fastest.", "(for [x [1 2 3] :when (odd? x) y [:a :b]] [x y])" => "([1 :a] [1 :b] [3 :a] [3 :b])"),
    form!(Special, "doseq", "(doseq [x xs ...] body)", "Like for, for side effects; returns nil.", "(doseq [x [1 2]] (println x))" => "nil"),
    form!(Special, "return", "(return value)", "Ends the program successfully with value.", "(do (return {:done true}) :not-reached)" => "{:done true}"),
    form!(Special, "fail", "(fail reason)", "Ends the program as failed, with reason.", "(fail \"no matching order\")" => "failed: \"no matching order\""),
    form!(Special, "comment", "(comment ...)", "Ignores its contents; nil.", "(comment (this is not run))" => "nil"),
    form!(Macro, "when", "(when test body ...)", "The body when test is truthy, else nil.", "(when (pos? 3) :yes)" => ":yes"),
    form!(Macro, "when-not", "(when-not test body ...)", "The body when test is falsey, else nil.", "(when-not (pos? 3) :yes)" => "nil"),
    form!(Macro, "if-not", "(if-not test then else)", "(if (not test) then else).", "(if-not (empty? [1]) :some :none)" => ":some"),
    form!(Macro, "cond", "(cond test expr ... :else expr)", "The expr after the first truthy test, else nil.", "(let [n 0] (cond (neg? n) :neg (zero? n) :zero :else :pos))" => ":zero"),
    form!(Macro, "condp", "(condp pred x v1 e1 ... default)", "The expr for the first v with (pred v x) truthy, else the default.", "(condp = 2 1 :one 2 :two :many)" => ":two"),
    form!(Macro, "if-let", "(if-let [name test] then else)", "Binds name to test's value and evaluates then when it is truthy, else else.", "(if-let [x (first [7])] (* x 2) :none)" => "14"),
    form!(Macro, "when-let", "(when-let [name test] body ...)", "Binds name and evaluates the body when test's value is truthy, else nil.", "(when-let [m (re-find #\"\\d+\" \"a12\")] (parse-long m))" => "12"),
    form!(Macro, "if-some", "(if-some [name test] then else)", "Like if-let, but only nil counts as missing (false is kept).", "(if-some [x false] [x] :none)" => "[false]"),
    form!(Macro, "when-some", "(when-some [name test] body ...)", "Like when-let, but only nil counts as missing.", "(when-some [x 0] (inc x))" => "1"),
    form!(Macro, "when-first", "(when-first [name coll] body ...)", "Binds name to the first item and evaluates the body when coll is not empty.", "(when-first [x [5 6]] (* x 2))" => "10"),
    form!(Macro, "->", "(-> x (f a) g ...)", "Threads x through the forms as their first argument.", "(-> {:a 1} (assoc :b 2) (dissoc :a))" => "{:b 2}"),
    form!(Macro, "->>", "(->> x (f a) g ...)", "Threads x through the forms as their last argument.", "(->> [1 2 3 4] (filter even?) (map inc))" => "(3 5)"),
    form!(Macro, "as->", "(as-> x name form ...)", "Threads x through the forms, bound to name wherever it is needed.", "(as-> 5 n (* n 2) (- 100 n))" => "90"),
    form!(Macro, "some->", "(some-> x form ...)", "Like ->, but stops at the first nil.", "(some-> {:a {:b 5}} :a :b inc)" => "6"),
    form!(Macro, "some->>", "(some->> x form ...)", "Like ->>, but stops at the first nil.", "(some->> nil (map inc))" => "nil"),
    form!(Macro, "cond->", "(cond-> x test form ...)", "Threads x through each form whose test is truthy (as first argument).", "(cond-> {:a 1} true (assoc :b 2) false (assoc :c 3))" => "{:a 1, :b 2}"),
    form!(Macro, "cond->>", "(cond->> x test form ...)", "Like cond->, threading as last argument.", "(cond->> [1 2 3] true (map inc) false (filter odd?))" => "(2 3 4)"),
    form!(Macro, "dotimes", "(dotimes [i n] body ...)", "Evaluates the body with i from 0 to n-1, for side effects; nil.", "(dotimes [i 2] (println i))" => "nil"),
];

/// Rules that hold across the language, for both references.
const RULES: &[&str] = &[
    "Programs are Clojure 1.11; everything behaves as in Clojure except what these rules say.",
    "The value of the last form is the result; println output is shown too. (return v) ends the \
     program with v, (fail reason) ends it as failed.",
    "def and defn define names in the user namespace; they last into later turns.",
    "tool/name calls a host tool, data/name reads an input value (a bare name works when nothing \
     else has it).",
    "No ratios: (/ 7 2) is 3.5 and (/ 6 2) is 3. Integers are 64-bit; overflow is an error, not a \
     silent wrap. (float x) is a 64-bit float.",
    "Key leniency for JSON data: get, get-in, keywords as functions, destructuring and where find \
     a string key when given a keyword, and a keyword key when given a string.",
    "Regexes use Java syntax and run in linear time: no look-ahead, look-behind, backreferences or \
     possessive quantifiers; \\w \\d \\s match ASCII only, as in Java. Java methods that return \
     arrays (.split) return vectors.",
    "String positions and lengths count characters (Java counts UTF-16 units).",
    "Dates: (java.time.LocalDate/parse \"2024-03-15\") with .plusDays .isBefore compare sort, \
     printed as #object[java.time.LocalDate \"2024-03-15\"], (str d) is \"2024-03-15\"; \
     (java.util.Date. millis) and #inst are instants, shown in UTC.",
    "Nothing reads the clock or randomness (no LocalDate/now, rand, shuffle): take today's date \
     from the data or a tool.",
    "Not available: defmacro, eval, atom/swap!/reset!, slurp/spit, future (use pmap or pcalls), \
     import, and Java classes and methods beyond those listed.",
];

/// The builtins of each family, in the registry's order of families, each sorted by name.
fn families() -> Vec<(&'static str, Vec<&'static Builtin>)> {
    builtins::all()
}

/// Escape text for a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Inline code for a Markdown table cell; backticks inside widen the fence.
fn code(text: &str) -> String {
    let text = cell(text);
    if text.contains('`') {
        format!("`` {text} ``")
    } else {
        format!("`{text}`")
    }
}

/// `docs/language.md`: every special form and builtin, with signature, description, example and
/// result.
/// Why some rules are as they are; part of the generated reference.
const DESIGN_NOTES: &str = "
## How names are found

A bare name is looked up in this order: a local binding (`let`, a function parameter, ...), a
definition of the user namespace (`def`, `defn`, from this program or an earlier turn), a builtin,
and finally a tool (`tool/name`) or an input value (`data/name`) of that name. A name that is both
a tool and an input value is an `ambiguous_reference` error that asks for the explicit namespace.
`tool/name` and `data/name` always reach the tool or the input, whatever shadows the bare name.

Builtins come before the tool and data fallback on purpose: input data is whatever the host
passes in, and a data key named `count`, `filter` or `name` must not change what `(count xs)`
means in every program. A program that wants the data writes `data/count`. User definitions come
before builtins, so a program may define its own `shuffle` or `format`.

## Why there are no atoms

`atom`, `swap!`, `reset!` and `@` are refused. A program is run once per turn and its definitions
are carried to the next turn only if the turn succeeds; an atom defined in an earlier turn would be
shared mutable state that a failed turn could still change, breaking that guarantee, and `pmap`
workers would race on it. Everything atoms are used for in short programs has a direct form:
accumulate with `reduce` or `loop`/`recur`, and keep values across turns with `def`.
";

pub fn markdown() -> String {
    let mut out = String::new();
    out.push_str("# PTC-Lisp language reference\n\n");
    out.push_str(
        "<!-- Generated by `cargo xtask docs` from the builtin registry and \
         `ptc_lisp::reference::FORMS`; do not edit. Every example is run by the test suite. -->\n\n",
    );
    out.push_str(
        "PTC-Lisp is the subset of Clojure that programs written by a language model run in: \
         small programs that call host tools, read input data and print what they want to see. \
         Differences from Clojure, each with the program that shows it, are listed in \
         [clojure-differences.md](clojure-differences.md).\n\n## Rules\n\n",
    );
    for rule in RULES {
        let _ = writeln!(out, "- {rule}");
    }
    out.push_str(DESIGN_NOTES);
    for (title, kind) in [
        ("Special forms", FormKind::Special),
        ("Macro-like forms", FormKind::Macro),
    ] {
        let _ = write!(
            out,
            "\n## {title}\n\n| Form | Usage | Description | Example | Result |\n|---|---|---|---|---|\n"
        );
        for f in FORMS.iter().filter(|f| f.kind == kind) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                code(f.name),
                code(f.signature),
                cell(f.doc),
                code(f.example),
                code(f.expected)
            );
        }
    }
    out.push_str("\n## Functions\n");
    for (family, list) in families() {
        let _ = write!(
            out,
            "\n### {family}\n\n| Function | Usage | Description | Example | Result |\n|---|---|---|---|---|\n"
        );
        for b in list {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                code(b.name),
                code(b.signature),
                cell(b.doc),
                code(b.example),
                code(b.expected)
            );
        }
    }
    out
}

/// Names of one family, with a shared `prefix/` written once: `Math/{abs ceil floor}`.
fn compact_names(list: &[&'static Builtin]) -> String {
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut plain = Vec::new();
    for b in list {
        match b.name.split_once('/') {
            Some((ns, local)) if !ns.is_empty() && !local.is_empty() => {
                let ns = if ns == "clojure.string" {
                    "str"
                } else if ns == "clojure.set" {
                    "set"
                } else {
                    ns
                };
                groups.entry(ns).or_default().push(local);
            }
            _ => plain.push(b.name),
        }
    }
    let mut parts: Vec<String> = Vec::new();
    if !plain.is_empty() {
        parts.push(plain.join(" "));
    }
    for (ns, locals) in groups {
        parts.push(format!("{ns}/{{{}}}", locals.join(" ")));
    }
    parts.join(" ")
}

/// The compact reference for a system prompt: the rules, the forms and every builtin name by
/// family (well under 2,000 tokens).
pub fn compact() -> String {
    let mut out = String::from("PTC-Lisp reference.\n");
    for rule in RULES {
        let _ = writeln!(out, "- {rule}");
    }
    out.push_str("Forms: ");
    let forms: Vec<&str> = FORMS.iter().map(|f| f.name).collect();
    out.push_str(&forms.join(" "));
    out.push_str(
        "; destructuring in let/fn/loop/for: [a b & more :as all] {:keys [a b] :or {a 1} :as m}; \
         catch classes: Exception ExceptionInfo ArithmeticException IllegalArgumentException \
         IndexOutOfBoundsException.\n",
    );
    for (family, list) in families() {
        let _ = writeln!(out, "{family}: {}", compact_names(&list));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::pr_str;
    use crate::engine::{Outcome, Runtime, UserNamespace};
    use pretty_assertions::assert_eq;

    /// What an example shows: its value, or `failed: reason`, or the error.
    fn run(program: &str) -> String {
        match Runtime::new()
            .run_str(program, &UserNamespace::new())
            .outcome
        {
            Outcome::Value(v) | Outcome::Returned(v) => pr_str(&v),
            Outcome::Failed(reason) => format!("failed: {}", pr_str(&reason)),
            Outcome::Error(e) => e.render(),
        }
    }

    #[test]
    fn every_example_gives_its_documented_result() {
        let mut wrong = Vec::new();
        let forms = FORMS.iter().map(|f| (f.name, f.example, f.expected));
        let builtins = families()
            .into_iter()
            .flat_map(|(_, list)| list)
            .map(|b| (b.name, b.example, b.expected));
        for (name, example, expected) in forms.chain(builtins) {
            let got = run(example);
            if got != expected {
                wrong.push(format!(
                    "{name}: {example}\n  documented: {expected}\n  actual:     {got}"
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "{} wrong examples:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }

    #[test]
    fn forms_are_unique_and_documented() {
        let mut names: Vec<&str> = FORMS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FORMS.len());
        for f in FORMS {
            assert!(f.signature.starts_with(['(', '#']), "{}", f.name);
            assert!(f.doc.ends_with('.'), "{}", f.name);
        }
    }

    #[test]
    fn compact_reference_stays_small() {
        let text = compact();
        // This text runs at about four characters per token (cl100k), so 7,000 characters keeps
        // it below 2,000 tokens with room to spare.
        assert!(
            text.len() < 7_000,
            "compact reference has {} bytes",
            text.len()
        );
        assert!(text.contains("str/{blank? capitalize"), "{text}");
        assert!(text.contains("Math/{abs"), "{text}");
    }

    #[test]
    fn markdown_cells_escape_pipes() {
        assert_eq!(code("(format \"%5d|\" 1)"), "`(format \"%5d\\|\" 1)`");
        assert_eq!(cell("a\nb"), "a b");
    }
}
