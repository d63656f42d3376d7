//! The system prompt: how a turn works, the rules for `return` and `fail`, the namespaces, the
//! reply format, the expected output, and a compact language reference generated from the
//! builtin registry.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ptc_compression::{HeuristicTokenizer, Tokenizer};

use crate::prompt_custom::PromptCustomization;
use ptc_run::signature::{Signature, Type};

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
    /// Whether the program comes as a call of the native tool `run_program` rather than in a
    /// fenced block.
    pub program_by_tool_call: bool,
    /// Whether every request shows earlier turns compacted, without their programs, rather
    /// than as they were until compaction pays.
    pub compacted_history: bool,
}

const INTRO: &str = "\
You solve tasks by writing PTC-Lisp programs (Clojure, run in a sandbox). The host runs each \
one and shows what it printed, its value or error, and its tool calls; you write the next until \
one returns the answer.";

const INTRO_SINGLE: &str = "\
You solve a task by writing one PTC-Lisp program (Clojure, run in a sandbox once): you get a \
single turn.";

const REPLY_BY_TOOL_CALL: &str = "\
Reply by calling the tool `run_program` with the program as `program`, a sentence of thought \
before the call if you like; its result is what the program did.";

const REPLY_FORMAT: &str = "\
Reply with the program in a ```clojure block, a sentence of thought before it if you like \
(several blocks run as one program).";

/// What a program can use and how a run goes, for runs of several turns.
const MULTI_TURN_RULES: &str = "\
- `(tool/NAME arg ...)` calls a listed tool (arguments in order, or one map by parameter name). \
Tools may have side effects: call each only as often as needed. A failed call throws; `(try ... \
(catch Exception e (ex-message e)))` catches it, else the program ends (also inside `pmap`), and \
earlier calls stand.
- `data/NAME` is a listed input, shown whole when small, else as its shape and a sample.
- `(return value)` ends the run with the answer, `(fail \"reason\")` when it cannot be done; \
otherwise you see the result and go on.
- `(def name \"docstring\" value)` and `defn` keep values for later programs; nothing else \
carries over, and a failed program keeps none of its definitions.
- `(println ...)` shows values (`pr-str` keeps quotes); long output keeps its first and last \
lines.
- Each message ends with the turns left; on the last, return or fail.";

/// What later messages show of earlier turns without compression, or under a strategy that
/// compacts only once that pays. Both say the same, so that compression costs nothing in the
/// prompt and a server's prompt cache serves both.
const HISTORY_GROWING: &str = "\
- Later messages repeat your programs (the text around them may be left out) and their results; \
a long history is compacted to your definitions, all tool calls and the output (`;; turn 2 \
printed x in full`: `(println x)` shows it again).";

/// What later messages show of earlier turns under a strategy that shows no program of an
/// earlier turn (`single-user-coalesced`, `aggressive`).
const HISTORY_COMPACTED: &str = "\
- Later messages show earlier turns compacted to your definitions, all tool calls and the \
output, without your code.";

const SINGLE_SHOT_RULES: &str = "\
- `(tool/NAME arg ...)` calls a listed tool (arguments in order, or one map by parameter name); \
call each only as often as needed. A failed call throws; `(try ... (catch Exception e \
(ex-message e)))` catches it.
- `data/NAME` is a listed input: whole when small, else its shape and a sample.
- `(return value)` gives the answer (else the last value is), `(fail \"reason\")` when it cannot \
be done. An error ends the run: keep the program simple.";

/// The system prompt for an agent with these settings.
pub(crate) fn build(input: &PromptInput<'_>) -> SystemPrompt {
    let single = input.max_turns <= 1;
    let custom = input.custom;
    let mut parts: Vec<String> = vec![
        if single { INTRO_SINGLE } else { INTRO }.to_string(),
        PromptCustomization::section(&custom.reply_format, || {
            if input.program_by_tool_call {
                REPLY_BY_TOOL_CALL.to_string()
            } else {
                default_reply_format()
            }
        }),
        if single {
            SINGLE_SHOT_RULES.to_string()
        } else {
            format!(
                "{MULTI_TURN_RULES}\n{}",
                if input.compacted_history {
                    HISTORY_COMPACTED
                } else {
                    HISTORY_GROWING
                }
            )
        },
        PromptCustomization::section(&custom.language_reference, default_language_reference),
    ];
    if let Some(signature) = input.signature {
        parts.push(expected_output(signature, input.field_descriptions));
    }
    SystemPrompt::new(custom.apply(parts))
}

/// The generated reply-format paragraph: the reply format the model is asked for (one program
/// in a ```` ```clojure ```` block). Replace it with `AgentBuilder::reply_format_section`.
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
    let fields: &[ptc_run::signature::Field] = match signature.output().without_optional() {
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
    if text.contains(":map") {
        notes.push("`:map` is any map; keywords and strings as keys both do.");
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

/// The generated language paragraph: what differs from Clojure and what PTC-Lisp adds, each
/// line generated by `ptc-lisp` from its catalogue, its registry and its list of deliberate
/// differences (which a test keeps equal to the conformance corpus), and how to read the
/// reference of anything else with `(doc name)`. A capable model knows Clojure; this is what
/// it cannot know. Replace it with `AgentBuilder::language_reference_section`, e.g. with the
/// whole compact reference ([`ptc_lisp::reference::compact`]) for a model that knows little
/// Clojure.
pub fn default_language_reference() -> String {
    use ptc_lisp::reference::{differences_line, extensions_described, refused_line};
    format!(
        "Everything is as in Clojure, except: {}.\nNot available (errors say what to use): {}, \
         Java beyond common String, Math and LocalDate methods.\n`(doc name)` shows the \
         reference of any function, form, tool/ or definition.\nAdded:\n{}",
        differences_line(),
        refused_line(),
        extensions_described().trim_end()
    )
}
