//! The system prompt: how a turn works, the rules for `return` and `fail`, the namespaces, the
//! reply format, the expected output, and a compact language reference generated from the
//! builtin registry.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ptc_compression::{HeuristicTokenizer, Tokenizer};

use crate::prompt_custom::PromptCustomization;
use crate::signature::{Signature, Type};

/// A generated system prompt and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemPrompt {
    /// The prompt text, sent unchanged on every turn.
    pub text: String,
    /// Its length in characters.
    pub chars: usize,
    /// Its estimated length in tokens (about four characters a token, the estimate the history
    /// stats use).
    pub estimated_tokens: usize,
}

impl SystemPrompt {
    fn new(text: String) -> SystemPrompt {
        SystemPrompt {
            chars: text.chars().count(),
            estimated_tokens: HeuristicTokenizer.count_text(&text),
            text,
        }
    }
}

/// What the prompt depends on.
pub(crate) struct PromptInput<'a> {
    pub max_turns: u32,
    pub signature: Option<&'a Signature>,
    pub field_descriptions: &'a BTreeMap<String, String>,
    pub custom: &'a PromptCustomization,
    /// Whether every request shows earlier turns compacted, without their programs, rather
    /// than as they were until compaction pays.
    pub compacted_history: bool,
}

const INTRO: &str = "\
You solve tasks by writing programs in PTC-Lisp, a small and safe subset of Clojure. The host \
runs each program in a sandbox and tells you what it did; then you write the next program, \
until you can give the answer.";

const INTRO_SINGLE: &str = "\
You solve a task by writing one program in PTC-Lisp, a small and safe subset of Clojure. The \
host runs it in a sandbox once: you get a single turn.";

const REPLY_FORMAT: &str = "\
## Your reply

Think briefly if you need to, then give exactly one program in a ```clojure block:

```clojure
(your-program)
```

A reply without a ```clojure block is wasted: nothing runs. Several blocks run in order, as \
one program.";

const NAMESPACES: &str = "\
## What a program can use

- `tool/NAME`: the host's tools, listed in the message, e.g. `(tool/search \"rust\")`. Tools \
may have side effects (they send, book, write): call each only as often as the task needs.
- `data/NAME`: the input data, listed in the message with its type and a sample. It is \
read-only.
- The functions and special forms of the reference below. There are no atoms, no Java \
interop, no files and no network except through tools.";

const MULTI_TURN_RULES: &str = "\
## How turns work

- A program that does not call `return` only shows you its value (or what it printed), and \
the run goes on. When a program computes the answer, wrap the answer in `(return ...)` in that \
same program, e.g.

```clojure
(return (->> data/users (filter :active) (mapv :email)))
```

- `(def name \"docstring\" value)` and `(defn name \"docstring\" [args] body)` keep values and \
functions for your later programs (your `user/` namespace).
- `(println ...)` output is shown to you in the next message; print what you need to see. A \
definition made without printing is shown as a short sample.
- The tool calls you made are listed in later messages; do not repeat ones that already did \
their job.
- When a program fails with an error, its definitions are discarded, but the tool calls it \
made before the error happened and are not undone (the next message lists them with what it \
printed). Read the error and fix the program without repeating calls that already did their \
job; earlier definitions are still there.
- If the task cannot be done, call `(fail \"reason\")`.
- Each message says how many turns are left. On the final turn you must call `return` or \
`fail`.";

/// What later messages show of earlier turns without compression, or under a strategy that
/// compacts only once that pays. Both say the same, so that compression costs nothing in the
/// prompt and a server's prompt cache serves both.
const HISTORY_GROWING: &str = "\
## Earlier turns

Later messages repeat your earlier programs and what each did; once a long history is \
compacted, they show the names, docstrings and types of your definitions instead of your code, \
so give each a docstring saying what it holds. Output printed long ago may be replaced by a line \
such as `;; turn 2 printed policy in full (...)`: print that name again to see it.";

/// What later messages show of earlier turns under a strategy that shows no program of an
/// earlier turn (`single-user-coalesced`, `aggressive`).
const HISTORY_COMPACTED: &str = "\
## Earlier turns

Later messages show earlier turns compacted: the names, docstrings and types of your \
definitions instead of your code, so give each a docstring saying what it holds.";

const SINGLE_SHOT_RULES: &str = "\
## Rules

- Call `(return value)` with the answer; without it, the value of the program's last \
expression is the answer.
- If the task cannot be done, call `(fail \"reason\")`.
- An error ends the run: there is no second try, so keep the program simple and check your \
work within it.";

/// The system prompt for an agent with these settings.
pub(crate) fn build(input: &PromptInput<'_>) -> SystemPrompt {
    let single = input.max_turns <= 1;
    let custom = input.custom;
    let mut parts: Vec<String> = vec![
        if single { INTRO_SINGLE } else { INTRO }.to_string(),
        PromptCustomization::section(&custom.reply_format, default_reply_format),
        NAMESPACES.to_string(),
        if single {
            SINGLE_SHOT_RULES
        } else {
            MULTI_TURN_RULES
        }
        .to_string(),
        PromptCustomization::section(&custom.language_reference, default_language_reference),
    ];
    // What differs between settings and tasks comes last, so that a server's prompt cache can
    // reuse the text before it from one task, or one compression setting, to the next.
    if !single {
        parts.push(
            if input.compacted_history {
                HISTORY_COMPACTED
            } else {
                HISTORY_GROWING
            }
            .to_string(),
        );
    }
    if let Some(signature) = input.signature {
        parts.push(expected_output(signature, input.field_descriptions));
    }
    SystemPrompt::new(custom.apply(parts))
}

/// The generated "Your reply" section: the reply format the model is asked for (one program in
/// a ```` ```clojure ```` block). Replace it with `AgentBuilder::reply_format_section`.
pub fn default_reply_format() -> String {
    REPLY_FORMAT.to_string()
}

/// The "Expected output" section: the return type and how to read it.
fn expected_output(signature: &Signature, descriptions: &BTreeMap<String, String>) -> String {
    let mut out = String::from("## Expected output\n\n");
    let _ = write!(
        out,
        "Call `(return value)` with a value of this shape:\n\n    {}\n",
        signature.output()
    );
    // In the signature's order, whatever order they were given in.
    let fields: &[crate::signature::Field] = match signature.output().without_optional() {
        Type::Record(fields) => fields,
        _ => &[],
    };
    let described: Vec<(&str, String)> = fields
        .iter()
        .filter_map(|field| {
            let text = descriptions.iter().find_map(|(name, text)| {
                let same = signature.output_field(name)? == field;
                same.then_some(text)
            })?;
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            (!text.is_empty()).then_some((field.name.as_str(), text))
        })
        .collect();
    if !described.is_empty() {
        out.push_str("\nThe fields:\n");
        for (name, text) in described {
            let _ = writeln!(out, "- `{name}`: {text}");
        }
    }
    let mut notes: Vec<&str> = Vec::new();
    let text = signature.output().to_string();
    if matches!(signature.output(), Type::Record(_)) || text.contains('{') {
        notes.push(
            "`{field T}` is a map with keyword keys, e.g. `{:total 12.5}`; extra keys are fine.",
        );
    }
    if text.contains('[') {
        notes.push("`[T]` is a list or vector whose items are all `T`.");
    }
    if text.contains(":float") {
        notes.push("`:float` accepts any number, integers included.");
    }
    if text.contains('?') {
        notes.push("`T?` may be nil, and a map field marked so may be left out.");
    }
    if signature.has_firewalled_fields() {
        notes.push(
            "Fields starting with `_` go to the caller only: fill them in, but they are hidden \
             from you in later messages.",
        );
    }
    for note in notes {
        out.push_str("\n- ");
        out.push_str(note);
    }
    out.trim_end().to_string()
}

/// The generated "Language reference" section: the compact reference `ptc-lisp` generates
/// from its language catalogue and builtin registry, so it names exactly what the engine
/// supports. Replace it with `AgentBuilder::language_reference_section`.
pub fn default_language_reference() -> String {
    format!(
        "## Language reference\n\n{}",
        ptc_lisp::reference::compact().trim_end()
    )
}
