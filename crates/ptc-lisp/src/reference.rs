//! The language reference, generated from the builtin registry and the language catalogue (the
//! special forms, macro-like forms and refused names the analyzer dispatches on), so the
//! documentation cannot drift from the language: every example is run by the test suite.
//!
//! - [`markdown`] is `docs/language.md` (written by `cargo xtask docs`).
//! - [`compact`] is the short reference an agent puts in its system prompt.
//! - [`lookup`] and [`sections`] give the entries one by one (a REPL's `(doc x)`).
//!
//! ```
//! let text = ptc_lisp::reference::compact();
//! assert!(text.contains("(/ 7 2) is the ratio 7/2"));
//! assert!(ptc_lisp::reference::markdown().starts_with("# PTC-Lisp language reference"));
//! ```

use crate::analyze::{FORMS, FORMS_LEFT_OUT_OF_PROMPT, FormEntry, FormRole, REFUSED};

pub use crate::analyze::differences::{DIFFERENCES, Difference, REFUSAL_DEVIATIONS};
use crate::builtins::{self, Builtin};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Rules that hold across the language, for both references.
const RULES: &[&str] = &[
    "Programs are Clojure 1.11; everything behaves as in Clojure except what these rules say.",
    "The value of the last form is the result; println output is shown too. (return v) ends the \
     program with v, (fail reason) ends it as failed.",
    "def and defn define names in the user namespace; they last into later turns.",
    "tool/name calls a host tool, data/name reads an input value (a bare name works when nothing \
     else has it).",
    "(/ 7 2) is the ratio 7/2 and (/ 7.0 2) is 3.5. Integer overflow is an error, not a wrap: +' \
     -' *' inc' give big integers (7N) instead.",
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
    "Keywords, maps and sets are functions of their keys: (:name user), ({:a 1} :a), (#{1 2} 1).",
];

/// The builtins of each family, in the registry's order of families, each sorted by name.
fn families() -> Vec<(&'static str, Vec<&'static Builtin>)> {
    builtins::all()
}

/// What a reference entry documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A special form, evaluated by the language itself (`if`, `let`, `fn`, ...).
    SpecialForm,
    /// A macro-like form, rewritten into special forms (`when`, `->`, `cond`, ...).
    MacroForm,
    /// A builtin function.
    Function,
}

/// How many arguments a builtin function takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arity {
    /// The fewest arguments.
    pub min: u8,
    /// The most arguments; `None` when it takes any number more.
    pub max: Option<u8>,
}

/// One documented name of the language: a form or a builtin function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The canonical name (`map`, `clojure.string/join`, `when-let`, `#()`).
    pub name: &'static str,
    /// A form or a function.
    pub kind: EntryKind,
    /// How it is written; several shapes separated by spaces.
    pub signature: &'static str,
    /// One line saying what it does.
    pub doc: &'static str,
    /// A program using it ...
    pub example: &'static str,
    /// ... and that program's result as `pr-str` prints it (`failed: x` for `(fail x)`).
    pub expected: &'static str,
    /// For a function, the arguments it takes.
    pub arity: Option<Arity>,
}

impl Entry {
    fn of_form(f: &FormEntry) -> Entry {
        Entry {
            name: f.name,
            kind: match f.role {
                FormRole::Macro(_) => EntryKind::MacroForm,
                FormRole::Special(_) | FormRole::Reader => EntryKind::SpecialForm,
            },
            signature: f.signature,
            doc: f.doc,
            example: f.example,
            expected: f.expected,
            arity: None,
        }
    }

    fn of_builtin(b: &Builtin) -> Entry {
        Entry {
            name: b.name,
            kind: EntryKind::Function,
            signature: b.signature,
            doc: b.doc,
            example: b.example,
            expected: b.expected,
            arity: Some(Arity {
                min: b.min_args,
                max: b.max_args,
            }),
        }
    }
}

/// The entry documenting `name`: a builtin (written with any alias programs may use, such as
/// `str/join` for `clojure.string/join`) or a form (`defn-` finds `defn`).
///
/// ```
/// use ptc_lisp::reference::{EntryKind, lookup};
/// assert_eq!(lookup("str/upper-case").map(|e| e.name), Some("clojure.string/upper-case"));
/// assert_eq!(lookup("when-let").map(|e| e.kind), Some(EntryKind::MacroForm));
/// assert!(lookup("no-such-thing").is_none());
/// ```
pub fn lookup(name: &str) -> Option<Entry> {
    if let Some(b) = builtins::lookup(name) {
        return Some(Entry::of_builtin(b));
    }
    FORMS
        .iter()
        .find(|f| f.name == name || f.aliases.contains(&name))
        .map(Entry::of_form)
}

/// Every documented name, section by section: the special forms, the macro-like forms, then
/// the builtins family by family (each sorted by name).
pub fn sections() -> Vec<(&'static str, Vec<Entry>)> {
    let forms = |special: bool| -> Vec<Entry> {
        FORMS
            .iter()
            .filter(|f| matches!(f.role, FormRole::Macro(_)) != special)
            .map(Entry::of_form)
            .collect()
    };
    let mut out = vec![
        ("Special forms", forms(true)),
        ("Macro-like forms", forms(false)),
    ];
    out.extend(
        families()
            .into_iter()
            .map(|(family, list)| (family, list.into_iter().map(Entry::of_builtin).collect())),
    );
    out
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

/// `docs/language.md`: the rules, every special form, macro-like form and builtin with signature,
/// description, example and result, and the Clojure names that are refused with what to use
/// instead.
pub fn markdown() -> String {
    let mut out = String::new();
    out.push_str("# PTC-Lisp language reference\n\n");
    out.push_str(
        "<!-- Generated by `cargo xtask docs` from the builtin registry and the language \
         catalogue; do not edit. Every example is run by the test suite. -->\n\n",
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
    for (index, (title, entries)) in sections().into_iter().enumerate() {
        if index == 2 {
            out.push_str("\n## Functions\n");
        }
        let (heading, column) = if index < 2 {
            ("##", "Form")
        } else {
            ("###", "Function")
        };
        let _ = write!(
            out,
            "\n{heading} {title}\n\n| {column} | Usage | Description | Example | Result |\n|---|---|---|---|---|\n"
        );
        for e in entries {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                code(e.name),
                code(e.signature),
                cell(e.doc),
                code(e.example),
                code(e.expected)
            );
        }
    }
    out.push_str(
        "\n## Not supported\n\nThese Clojure names are refused with an `unsupported` error that \
         says what to write instead. The ones marked *definable* are refused only where the \
         program has no definition of that name.\n\n| Names | Instead |\n|---|---|\n",
    );
    for r in REFUSED {
        let names: Vec<String> = r.names.iter().map(|n| code(n)).collect();
        let definable = match r.refusal {
            crate::analyze::Refusal::Always => "",
            crate::analyze::Refusal::Undefined => " (*definable*)",
        };
        let _ = writeln!(out, "| {}{definable} | {} |", names.join(" "), cell(r.hint));
    }
    out
}

/// The first shape of a form's signature: `(def name value)` of `(def name value) (def name
/// "doc" value)`.
fn first_shape(signature: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in signature.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return &signature[..=i];
                }
            }
            _ => {}
        }
    }
    signature
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

/// The PTC-Lisp additions to Clojure, each as it is called: the line of a
/// system prompt that lists what a model cannot know from Clojure. `(where field op value)
/// (all-of pred ...) ... (pmap f coll) ...`.
///
/// ```
/// let line = ptc_lisp::reference::extensions();
/// assert!(line.contains("(sum-by field coll)"));
/// assert!(line.contains("(pmap f coll & colls)"));
/// ```
pub fn extensions() -> String {
    let shapes: Vec<&str> = families()
        .into_iter()
        .filter(|(family, _)| family.starts_with("PTC extensions"))
        .flat_map(|(_, list)| list)
        .map(|b| b.signature)
        .collect();
    shapes.join(" ")
}

/// The PTC-Lisp additions to Clojure, one line each: how it is called and what it does. The
/// system prompt's list of what a model cannot know from Clojure, for models that should not
/// spend a turn on `(doc name)` to learn what `where` takes or what `avg-by` gives for none.
///
/// ```
/// let lines = ptc_lisp::reference::extensions_described();
/// assert!(lines.contains(
///     "- (avg-by field coll): The average of the field over the items that have it, as a \
///      float; nil for none.\n"
/// ));
/// ```
pub fn extensions_described() -> String {
    let mut out = String::new();
    for b in families()
        .into_iter()
        .filter(|(family, _)| family.starts_with("PTC extensions"))
        .flat_map(|(_, list)| list)
    {
        out.push_str("- ");
        out.push_str(b.signature);
        out.push_str(": ");
        out.push_str(b.doc);
        out.push('\n');
    }
    out
}

/// Every deliberate difference from Clojure whose result a program can see, for a system
/// prompt: each entry of [`DIFFERENCES`] as its names and its note, `; ` between entries.
/// Naming a function without saying how it differs makes a model distrust it, so the note
/// goes with the names; `(doc name)` says the same.
///
/// ```
/// let line = ptc_lisp::reference::differences_line();
/// assert!(line.starts_with("type gives keywords (:integer :string :map ...); get, get-in and"));
/// ```
pub fn differences_line() -> String {
    DIFFERENCES
        .iter()
        .map(|d| format!("{} {}", d.names.join(", "), d.note))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The refused names a system prompt names in one line: the first name of each refused group
/// that models reach for (as the compact reference names them).
pub fn refused_line() -> String {
    REFUSED
        .iter()
        .filter(|r| r.in_prompt)
        .map(|r| r.names[0])
        .collect::<Vec<_>>()
        .join(" ")
}

/// The compact reference for a system prompt: the rules, how each form is written, the builtin
/// names by family (but a few families the full reference lists) and the refused names (well under
/// 2,000 tokens).
pub fn compact() -> String {
    let mut out = String::from("PTC-Lisp reference.\n");
    for rule in RULES {
        let _ = writeln!(out, "- {rule}");
    }
    for (title, entries) in sections().into_iter().take(2) {
        let shapes: Vec<&str> = entries
            .iter()
            .filter(|e| !FORMS_LEFT_OUT_OF_PROMPT.contains(&e.name))
            .map(|e| first_shape(e.signature))
            .collect();
        let _ = writeln!(out, "{title}: {}", shapes.join(" "));
    }
    out.push_str(
        "Destructuring in let/fn/loop/for: [a b & more :as all] {:keys [a b] :or {a 1} :as m}; \
         catch classes: Exception ExceptionInfo ArithmeticException IllegalArgumentException \
         IndexOutOfBoundsException.\n",
    );
    for (family, mut list) in families() {
        if builtins::FAMILIES_LEFT_OUT_OF_PROMPT.contains(&family) {
            continue;
        }
        list.retain(|b| !builtins::LEFT_OUT_OF_PROMPT.contains(&b.name));
        let _ = writeln!(out, "{family}: {}", compact_names(&list));
    }
    let refused: Vec<&str> = REFUSED
        .iter()
        .filter(|r| r.in_prompt)
        .map(|r| r.names[0])
        .collect();
    let _ = writeln!(
        out,
        "Not available (an error says what to use instead): {}, and Java classes and methods \
         beyond those listed.",
        refused.join(" ")
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Outcome, Runtime, UserNamespace};
    use crate::format::pr_str;
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

    /// Whether analysing `program` gives an error of `kind`.
    fn fails_with(program: &str, kind: crate::error::ErrorKind) -> bool {
        matches!(
            Runtime::new().run_str(program, &UserNamespace::new()).outcome,
            Outcome::Error(e) if e.kind == kind
        )
    }

    // The catalogue and the analyzer agree: every form it lists (and every alias) is taken as
    // that form, never as an undefined name; every refused name is refused with its hint.
    #[test]
    fn the_analyzer_accepts_every_form_and_refuses_every_refused_name() {
        use crate::error::ErrorKind;
        for f in FORMS.iter().filter(|f| f.role != FormRole::Reader) {
            for name in std::iter::once(&f.name).chain(f.aliases) {
                assert!(
                    !fails_with(&format!("({name})"), ErrorKind::UndefinedSymbol),
                    "{name} is in the catalogue but the analyzer does not know it"
                );
            }
        }
        for r in REFUSED {
            for name in r.names {
                let out = Runtime::new().run_str(&format!("({name} 1)"), &UserNamespace::new());
                match out.outcome {
                    Outcome::Error(e) => {
                        assert_eq!(e.kind, ErrorKind::Unsupported, "{name}");
                        assert!(e.message.ends_with(r.hint), "{name}: {}", e.message);
                    }
                    other => panic!("{name} is refused by the catalogue but gave {other:?}"),
                }
            }
        }
    }

    // Both references show every form and every refused group, from the same catalogue.
    #[test]
    fn both_references_show_the_whole_catalogue() {
        let (full, short) = (markdown(), compact());
        for f in FORMS {
            assert!(
                full.contains(&code(f.signature)),
                "{} missing from markdown",
                f.name
            );
            assert!(
                FORMS_LEFT_OUT_OF_PROMPT.contains(&f.name)
                    || short.contains(first_shape(f.signature)),
                "{} missing from compact",
                f.name
            );
        }
        for r in REFUSED {
            assert!(
                full.contains(&cell(r.hint)),
                "{:?} missing from markdown",
                r.names
            );
            assert!(
                !r.in_prompt || short.contains(r.names[0]),
                "{:?} missing from compact",
                r.names
            );
        }
    }

    #[test]
    fn families_left_out_of_the_prompt_exist_and_are_in_the_full_reference() {
        let (full, short) = (markdown(), compact());
        for family in builtins::FAMILIES_LEFT_OUT_OF_PROMPT {
            let (_, list) = families()
                .into_iter()
                .find(|(name, _)| name == family)
                .unwrap_or_else(|| panic!("no family {family}"));
            assert!(
                !short.contains(family),
                "{family} is in the compact reference"
            );
            for b in list {
                assert!(
                    full.contains(&code(b.signature)),
                    "{} missing from markdown",
                    b.name
                );
            }
        }
    }

    #[test]
    fn first_shapes_end_at_the_closing_bracket() {
        assert_eq!(
            first_shape("(def name value) (def name \"doc\" value)"),
            "(def name value)"
        );
        assert_eq!(first_shape("#(... % %2 %&)"), "#(... % %2 %&)");
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
