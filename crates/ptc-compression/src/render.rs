//! The text of every part of a rendering. Strategies choose which parts to show and where;
//! the wording lives only here (see docs/compression.md for the layout).

use crate::options::{RenderLimits, RenderOptions};
pub(crate) use crate::output::OUTPUT_HEADER;
use crate::output::{push_one_line, write_output, write_turn_output};
use crate::printed::Printed;
use crate::schema;
use crate::vocabulary::TypeVocabulary;
use ptc_lisp::{CollectionCut, Compact, HIDDEN, is_firewalled_key, is_firewalled_name};
use ptc_lisp::{Definition, ToolCallRecord, ToolOutcome, Value, ValueShape};
use ptc_turn::{Message, Turn, push_cut_note, push_preview};
use std::borrow::Cow;

/// Width the left part of a namespace line is padded to before its `; ` comment.
const NAME_WIDTH: usize = 30;

pub(crate) const TOOL_HEADER: &str = ";; === tool/ ===";
pub(crate) const DATA_HEADER: &str = ";; === data/ ===";
pub(crate) const USER_HEADER: &str = ";; === user/ (your prelude) ===";

/// The header of the prelude of `folded` turns: when turns shown as they happened follow, it
/// says that their definitions are in their programs, so that none looks lost.
pub(crate) fn prelude_header(folded: &[Turn], turns_after: bool) -> Cow<'static, str> {
    match folded.last() {
        Some(last) if turns_after => Cow::Owned(format!(
            ";; === user/ (your prelude: definitions up to turn {}; the turns below define more \
             in their programs) ===",
            last.number()
        )),
        _ => Cow::Borrowed(USER_HEADER),
    }
}
pub(crate) const USER_TURN_HEADER: &str = ";; === user/ (defined this turn) ===";
pub(crate) const TOOL_CALLS_HEADER: &str = ";; Tool calls made:";
pub(crate) const NO_TOOL_CALLS: &str = ";; No tool calls made";
pub(crate) const RESULT_PREFIX: &str = ";; Result: ";
pub(crate) const FINAL_TURN: &str =
    "FINAL TURN - you must call (return result) or (fail reason) now.";
/// The code-fence language of programs shown back to the model.
const FENCE: &str = "```clojure\n";

/// How much a summary shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detail {
    /// Descriptions, docstrings, samples and arguments.
    Full,
    /// Names and type labels only (the `aggressive` strategy).
    Minimal,
}

/// Which rules a summary follows where the seed design and the default strategy differ: the
/// seed removes every `;` from a docstring (DEF-007) and shows a definition's sample only when
/// nothing was printed (SAM-002); the default shows docstrings verbatim and a small value
/// whatever was printed (`rate ; = float 0.2`), since a model read the cleaned docstrings as
/// lost definitions and printed small values again to see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rules {
    Seed,
    Default,
}

/// How a `user/` section shows definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DefinitionStyle {
    /// Samples of values (when nothing was printed: SAM-001).
    pub samples: bool,
    pub detail: Detail,
    pub rules: Rules,
}

/// What a strategy showed and left out, for its stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub turns_compressed: usize,
    pub tool_calls_total: usize,
    pub tool_calls_shown: usize,
    pub prints_total: usize,
    pub prints_shown: usize,
    pub failed_shown: usize,
    pub failed_total: usize,
}

/// Writes parts separated by one blank line, leaving out parts that came out empty.
pub(crate) struct Parts<'o> {
    out: &'o mut String,
    base: usize,
}

impl<'o> Parts<'o> {
    pub(crate) fn new(out: &'o mut String) -> Parts<'o> {
        let base = out.len();
        Parts { out, base }
    }

    pub(crate) fn part(&mut self, write: impl FnOnce(&mut String)) {
        let mark = self.out.len();
        if mark > self.base {
            self.out.push_str("\n\n");
        }
        let start = self.out.len();
        write(self.out);
        if self.out.len() == start {
            self.out.truncate(mark);
        }
    }
}

/// The `Turns left: N` line, or the final-turn warning when the coming turn is the last.
/// `done` is the number of turns taken before the turn the line is read for.
pub(crate) fn write_turns_left(out: &mut String, max_turns: u32, done: usize) {
    let left = (max_turns as usize).saturating_sub(done);
    if left <= 1 {
        out.push_str(FINAL_TURN);
    } else {
        out.push_str("Turns left: ");
        push_usize(out, left);
    }
}

fn push_usize(out: &mut String, n: usize) {
    use std::fmt::Write;
    let _ = write!(out, "{n}");
}

/// Pad the current line (which started at byte `line_start`) and open its comment.
fn open_comment(out: &mut String, line_start: usize) {
    let width = out[line_start..].chars().count();
    let pad = if width < NAME_WIDTH {
        NAME_WIDTH - width
    } else {
        1
    };
    out.extend(std::iter::repeat_n(' ', pad));
    out.push_str("; ");
}

/// Whether a docstring shows anything on a summary line (see [`push_doc`]).
fn shows_text(doc: &str, rules: Rules) -> bool {
    doc.chars()
        .any(|c| !c.is_whitespace() && (c != ';' || rules == Rules::Default))
}

/// A docstring as a summary line shows it: on one line, trimmed; under the seed's rules
/// without `;` (DEF-007).
fn push_doc(out: &mut String, doc: &str, rules: Rules) {
    match rules {
        Rules::Default => push_one_line(out, doc.trim()),
        Rules::Seed => push_one_line(out, doc.replace(';', "").trim()),
    }
}

/// Keys shown of a record in a sample: enough for any record a tool returns, while a map used
/// as a lookup table (thousands of ids) still stays one line.
const RECORD_KEYS: usize = 30;

/// A value as a sample: collections cut to `sample_limit` items and strings to
/// `sample_printable_limit` characters, except that a record (a map, or the first map of a list)
/// shows every key, so the model sees the shape of the data without printing it. Values inside
/// a record are cut as usual.
pub(crate) fn push_sample(out: &mut String, value: &Value, limits: &RenderLimits) {
    match value {
        Value::Map(map) => push_record(out, map, limits),
        Value::List(items) | Value::Vector(items)
            if matches!(items.iter().next(), Some(Value::Map(_))) =>
        {
            let (open, close) = match value {
                Value::List(_) => ("(", ")"),
                _ => ("[", "]"),
            };
            let len = items.len();
            let shown = limits.sample_limit.min(len);
            out.push_str(open);
            for (i, item) in items.iter().take(shown).enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                match item {
                    Value::Map(map) if i == 0 => push_record(out, map, limits),
                    other => push_inner(out, other, limits),
                }
            }
            if shown < len {
                if shown > 0 {
                    out.push(' ');
                }
                out.push_str("...");
                out.push_str(close);
                push_cut_note(out, CollectionCut { total: len, shown });
            } else {
                out.push_str(close);
            }
        }
        other => push_preview(out, other, sample_form(limits)),
    }
}

/// The compact form of samples: every part a sample shows has its firewalled entries hidden.
fn sample_form(limits: &RenderLimits) -> Compact {
    Compact::new(limits.sample_limit, limits.sample_printable_limit).with_firewall_hidden()
}

/// `{:key value ...}` with every key (up to [`RECORD_KEYS`]).
fn push_record(out: &mut String, map: &ptc_lisp::Map, limits: &RenderLimits) {
    let len = map.len();
    let shown = len.min(RECORD_KEYS);
    out.push('{');
    for (i, (key, value)) in map.iter().take(shown).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        push_inner(out, key, limits);
        out.push(' ');
        if is_firewalled_key(key) && !matches!(value, Value::Nil) {
            push_inner(out, &Value::string(HIDDEN), limits);
        } else {
            push_inner(out, value, limits);
        }
    }
    if shown < len {
        out.push_str(" ...}");
        push_cut_note(out, CollectionCut { total: len, shown });
    } else {
        out.push('}');
    }
}

/// A value inside a sample: cut like a sample, without the note on how much was cut (only the
/// outermost collection gets one).
fn push_inner(out: &mut String, value: &Value, limits: &RenderLimits) {
    sample_form(limits).write(value, out);
}

/// A value as prompts show it: cut to `items` per collection and `chars` characters per
/// string, with firewalled fields hidden.
fn push_value(out: &mut String, value: &Value, items: usize, chars: usize) {
    push_preview(
        out,
        value,
        Compact::new(items, chars).with_firewall_hidden(),
    );
}

/// Whether a sample tells more than the type label: not for `nil` or an empty collection
/// (`x = nil`, `x = list[0]`), nor for functions.
fn sample_adds_information(value: &Value) -> bool {
    !matches!(
        ValueShape::of(value),
        ValueShape::Nil
            | ValueShape::List(0)
            | ValueShape::Map(0)
            | ValueShape::Set(0)
            | ValueShape::Function
    )
}

/// `;; === tool/ ===` and one line per tool.
pub(crate) fn write_tools(out: &mut String, opts: &RenderOptions<'_>, detail: Detail) {
    if opts.tools.is_empty() {
        return;
    }
    out.push_str(TOOL_HEADER);
    for tool in opts.tools {
        out.push('\n');
        let line = out.len();
        out.push_str("(tool/");
        out.push_str(&tool.name);
        for param in &tool.params {
            out.push(' ');
            out.push_str(param);
        }
        out.push(')');
        let signature = tool.signature.as_deref().filter(|s| !s.trim().is_empty());
        let description = match detail {
            Detail::Full => Some(tool.description.trim()).filter(|d| !d.is_empty()),
            Detail::Minimal => None,
        };
        if signature.is_some() || description.is_some() {
            open_comment(out, line);
        }
        if let Some(signature) = signature {
            push_one_line(out, signature.trim());
            if description.is_some() {
                out.push_str(" -- ");
            }
        }
        if let Some(description) = description {
            push_one_line(out, description);
        }
    }
}

/// The most characters of the schema line of a large input.
const SCHEMA_CHARS: usize = 1_500;

/// `;; === data/ ===` and one line per input: a small input whole, as the program sees it; a
/// large list of records by its shape over all of its items and its first record; anything
/// else by its type and a sample. Data is shown whether or not the program printed, so this
/// section never changes between turns.
pub(crate) fn write_data(out: &mut String, opts: &RenderOptions<'_>, detail: Detail) {
    if opts.data.is_empty() {
        return;
    }
    out.push_str(DATA_HEADER);
    for (name, value) in opts.data {
        out.push('\n');
        let line = out.len();
        out.push_str("data/");
        out.push_str(name);
        open_comment(out, line);
        if is_firewalled_name(name) {
            // A firewalled input is for programs only: its name and type, never its content.
            TypeVocabulary::write_label(out, ValueShape::of(value));
            out.push_str(", hidden");
        } else if detail == Detail::Minimal {
            TypeVocabulary::write_label(out, ValueShape::of(value));
        } else if !push_whole(out, value, opts.limits.data_inline_chars) {
            if schema::describable(value) {
                schema::write_schema(out, value, SCHEMA_CHARS);
                if let Value::List(items) | Value::Vector(items) = value
                    && let Some(Value::Map(first)) = items.iter().next()
                {
                    out.push_str("; first: ");
                    push_record(out, first, &opts.limits);
                }
            } else {
                TypeVocabulary::write_label(out, ValueShape::of(value));
                if sample_adds_information(value) {
                    out.push_str(", sample: ");
                    push_sample(out, value, &opts.limits);
                }
            }
        }
        let description = opts
            .data_descriptions
            .get(name)
            .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|d| detail == Detail::Full && !d.is_empty());
        if let Some(description) = description {
            out.push_str(" -- ");
            out.push_str(&description);
        }
    }
}

/// `list[3], whole: [...]` or `string = "R-13"`: the value whole, as a program sees it
/// (firewalled entries hidden), when
/// that takes at most `chars` characters; otherwise nothing, and `false`.
fn push_whole(out: &mut String, value: &Value, chars: usize) -> bool {
    if chars == 0 {
        return false;
    }
    let start = out.len();
    let shape = ValueShape::of(value);
    TypeVocabulary::write_label(out, shape);
    // A collection says it is all there, so that it is not taken for a sample.
    out.push_str(match shape {
        ValueShape::List(_) | ValueShape::Map(_) | ValueShape::Set(_) => ", whole: ",
        _ => " = ",
    });
    let before = out.len();
    // One more item and character than the budget could show, so that a cut means "too big".
    Compact::new(chars + 1, chars + 1)
        .with_firewall_hidden()
        .write(value, out);
    let fits = out[before..].chars().count() <= chars && !out[before..].contains('\n');
    if !fits {
        out.truncate(start);
    }
    fits
}

/// Return shapes of functions the final namespace does not know a return for, found in earlier
/// turns' namespaces: a function called in turn 2 keeps its `-> type` in turn 4. Only
/// an identical definition (same parameters and docstring) counts, so a redefinition never
/// inherits its predecessor's return type.
pub(crate) struct ReturnShapes<'t> {
    found: Vec<(&'t str, ValueShape)>,
}

impl<'t> ReturnShapes<'t> {
    pub(crate) fn find(memory: &'t [Definition], turns: &'t [Turn]) -> ReturnShapes<'t> {
        // Usually empty: the evaluator keeps a function's last return across turns.
        let mut wanted: Vec<&'t Definition> = memory
            .iter()
            .filter(|d| d.is_function() && d.last_return.is_none())
            .collect();
        let mut found = Vec::new();
        // Newest turn first, and each turn's namespace at most once.
        for turn in turns.iter().rev() {
            if wanted.is_empty() {
                break;
            }
            for old in turn.memory() {
                let Some(shape) = old.last_return else {
                    continue;
                };
                if let Some(i) = wanted.iter().position(|current| {
                    current.name == old.name
                        && current.params == old.params
                        && current.doc == old.doc
                }) {
                    found.push((old.name.as_str(), shape));
                    wanted.swap_remove(i);
                }
            }
        }
        ReturnShapes { found }
    }

    pub(crate) fn none() -> ReturnShapes<'t> {
        ReturnShapes { found: Vec::new() }
    }

    fn of(&self, def: &Definition) -> Option<ValueShape> {
        def.last_return.or_else(|| {
            self.found
                .iter()
                .find(|(name, _)| *name == def.name)
                .map(|(_, shape)| *shape)
        })
    }
}

/// One line of the `user/` namespace: a function or a value.
fn write_definition(
    out: &mut String,
    def: &Definition,
    returns: &ReturnShapes<'_>,
    style: DefinitionStyle,
    limits: &RenderLimits,
) {
    let DefinitionStyle {
        samples: show_samples,
        detail,
        rules,
    } = style;
    let line = out.len();
    let doc = match detail {
        Detail::Full => def.doc.as_deref().filter(|d| shows_text(d, rules)),
        Detail::Minimal => None,
    };
    if def.is_function() && !def.params.is_empty() {
        out.push('(');
        out.push_str(&def.name);
        for params in &def.params {
            out.push(' ');
            push_one_line(out, params);
        }
        out.push(')');
        let returns = returns.of(def);
        if doc.is_none() && returns.is_none() {
            return;
        }
        open_comment(out, line);
        if let Some(doc) = doc {
            out.push('"');
            push_doc(out, doc, rules);
            out.push('"');
            if returns.is_some() {
                out.push(' ');
            }
        }
        if let Some(shape) = returns {
            out.push_str("-> ");
            TypeVocabulary::write_label(out, shape);
        }
    } else {
        // Values, and functions whose parameters are unknown (`(def f inc)`): `f ; = #fn[...]`.
        out.push_str(&def.name);
        open_comment(out, line);
        if let Some(doc) = doc {
            out.push('"');
            push_doc(out, doc, rules);
            out.push_str("\" ");
        }
        out.push_str("= ");
        TypeVocabulary::write_label(out, ValueShape::of(&def.value));
        if is_firewalled_name(&def.name) {
            // A firewalled definition, like a firewalled input: its name and type only.
            out.push_str(", hidden");
        } else if detail == Detail::Full && sample_adds_information(&def.value) {
            // Under the default rules a small value is shown whatever the turn printed:
            // `rate ; = float 0.2`.
            let start = out.len();
            if rules == Rules::Default {
                out.push(' ');
                push_sample(out, &def.value, limits);
                if out[start..].chars().count() <= SHORT_RESULT {
                    return;
                }
                out.truncate(start);
            }
            if show_samples {
                out.push_str(", sample: ");
                push_sample(out, &def.value, limits);
            }
        }
    }
}

/// A `user/` section under `header` with `defs` in the given order.
pub(crate) fn write_user<'d>(
    out: &mut String,
    header: &str,
    defs: impl IntoIterator<Item = &'d Definition>,
    returns: &ReturnShapes<'_>,
    style: DefinitionStyle,
    limits: &RenderLimits,
) {
    let mut defs = defs.into_iter().peekable();
    if defs.peek().is_none() {
        return;
    }
    out.push_str(header);
    for def in defs {
        out.push('\n');
        write_definition(out, def, returns, style, limits);
    }
}

/// How a listed tool call shows its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultShown {
    /// Not at all (the seed summary once the model has printed).
    Not,
    /// Truncated like a sample.
    Sample,
    /// As its type label only: a call older than the newest `tool_call_limit` in a summary that
    /// lists every call.
    Label,
    /// Truncated like a sample when that takes at most [`SHORT_RESULT`] characters (a status
    /// such as `{:status "queued"}`), as its type label otherwise: for the calls of a turn that
    /// printed, whose output is what the model asked to see.
    Short,
}

/// The longest sample of a result shown whole when the turn printed (see [`ResultShown::Short`]).
pub(crate) const SHORT_RESULT: usize = 40;

/// One tool call to list, with how to show its result and the failed turn it happened in.
#[derive(Clone, Copy)]
pub(crate) struct ListedCall<'c> {
    pub call: &'c ToolCallRecord,
    pub result: ResultShown,
    /// The number of the failed turn that made the call, which the line names.
    pub failed_turn: Option<u32>,
}

/// `;   name(arg arg) -> result`: arguments space separated, each truncated with the argument
/// limits, parentheses always shown; the result as asked for; ` [failed turn N]` when the turn
/// that made the call failed.
pub(crate) fn write_tool_call(
    out: &mut String,
    listed: ListedCall<'_>,
    detail: Detail,
    limits: &RenderLimits,
) {
    let call = listed.call;
    out.push_str(";   ");
    out.push_str(&call.name);
    out.push('(');
    for (i, arg) in call.args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match detail {
            Detail::Full => push_value(out, arg, limits.arg_limit, limits.arg_printable_limit),
            Detail::Minimal => TypeVocabulary::write_label(out, ValueShape::of(arg)),
        }
    }
    out.push(')');
    let result = if detail == Detail::Full {
        listed.result
    } else {
        ResultShown::Not
    };
    match (result, &call.result) {
        (ResultShown::Not, _) => {}
        (ResultShown::Sample, ToolOutcome::Ok(value)) => {
            out.push_str(" -> ");
            push_sample(out, value, limits);
        }
        (ResultShown::Label, ToolOutcome::Ok(value)) => {
            out.push_str(" -> ");
            TypeVocabulary::write_label(out, ValueShape::of(value));
        }
        (ResultShown::Short, ToolOutcome::Ok(value)) => {
            out.push_str(" -> ");
            let start = out.len();
            push_sample(out, value, limits);
            if out[start..].chars().count() > SHORT_RESULT {
                out.truncate(start);
                TypeVocabulary::write_label(out, ValueShape::of(value));
            }
        }
        (_, ToolOutcome::Error(message)) => {
            out.push_str(" -> error: ");
            let cut = message.char_indices().nth(limits.sample_printable_limit);
            match cut {
                Some((byte, _)) => {
                    push_one_line(out, &message[..byte]);
                    out.push_str("...");
                }
                None => push_one_line(out, message),
            }
        }
    }
    if let Some(turn) = listed.failed_turn {
        out.push_str(" [failed turn ");
        push_usize(out, turn as usize);
        out.push(']');
    }
}

/// The characters of a call's line in full detail with its result as a type label, as a
/// sample and as a short result, in that order. The lines differ only in the result, so the
/// arguments and the sample are written once: a summary listing every call is weighed in all
/// three forms at once.
pub(crate) fn tool_call_sizes(
    call: &ToolCallRecord,
    failed_turn: Option<u32>,
    limits: &RenderLimits,
    line: &mut String,
) -> [usize; 3] {
    line.clear();
    let listed = ListedCall {
        call,
        result: ResultShown::Label,
        failed_turn,
    };
    write_tool_call(line, listed, Detail::Full, limits);
    let label_line = line.chars().count();
    let ToolOutcome::Ok(value) = &call.result else {
        // An error is shown the same way in every form.
        return [label_line; 3];
    };
    line.clear();
    TypeVocabulary::write_label(line, ValueShape::of(value));
    let label = line.chars().count();
    line.clear();
    push_sample(line, value, limits);
    let sample = line.chars().count();
    let sample_line = label_line - label + sample;
    let short_line = if sample > SHORT_RESULT {
        label_line
    } else {
        sample_line
    };
    [label_line, sample_line, short_line]
}

/// `header` and one line per call; nothing when there are none.
pub(crate) fn write_tool_calls<'c>(
    out: &mut String,
    header: &str,
    calls: impl IntoIterator<Item = ListedCall<'c>>,
    detail: Detail,
    limits: &RenderLimits,
) -> usize {
    let mut shown = 0;
    for listed in calls {
        if shown == 0 {
            out.push_str(header);
        }
        out.push('\n');
        write_tool_call(out, listed, detail, limits);
        shown += 1;
    }
    shown
}

/// The newest `limit` items of some turns' lists (tool calls or prints), found without touching
/// older items: one backward pass over the turns reads only list lengths, then iteration starts
/// at the first kept item (the oldest are dropped).
pub(crate) struct Newest<'t, T> {
    /// Per turn, the items that count (empty for a turn whose items are not listed here).
    lists: Vec<&'t [T]>,
    pub total: usize,
    /// The first kept item: turn index and offset in that turn's list.
    start: (usize, usize),
}

impl<'t, T> Newest<'t, T> {
    pub(crate) fn new(lists: Vec<&'t [T]>, limit: usize) -> Self {
        let mut total = 0;
        let mut start = (lists.len(), 0);
        for (i, list) in lists.iter().enumerate().rev() {
            let len = list.len();
            if total < limit && len > 0 {
                let wanted = limit - total;
                start = (i, len.saturating_sub(wanted));
            }
            total += len;
        }
        Newest {
            lists,
            total,
            start,
        }
    }

    /// How many items of turn `index` are dropped.
    fn dropped_in(&self, index: usize) -> usize {
        let len = self.lists.get(index).map_or(0, |l| l.len());
        match index.cmp(&self.start.0) {
            std::cmp::Ordering::Less => len,
            std::cmp::Ordering::Equal => self.start.1,
            std::cmp::Ordering::Greater => 0,
        }
    }

    /// Every item of turn `index`, with whether it is among the newest.
    pub(crate) fn all_in(&self, index: usize) -> impl Iterator<Item = (&'t T, bool)> + use<'t, T> {
        let list: &'t [T] = self.lists.get(index).copied().unwrap_or(&[]);
        let dropped = self.dropped_in(index);
        list.iter()
            .enumerate()
            .map(move |(i, item)| (item, i >= dropped))
    }

    /// All kept items with the index of their turn, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &'t T)> + '_ {
        (self.start.0..self.lists.len()).flat_map(move |i| {
            let list: &'t [T] = self.lists[i];
            list[self.dropped_in(i).min(list.len())..]
                .iter()
                .map(move |item| (i, item))
        })
    }
}

/// Which failed turns a summary stands in for, as [`FailedTurns`](crate::FailedTurns) and the
/// turns after them decide.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FailedSplit {
    /// Indices of failed turns shown as their own program/error pair, oldest first.
    pub pairs: Vec<usize>,
    /// Indices of failed turns a later turn recovered from, named in the summary by their
    /// error.
    pub fixed: Vec<usize>,
}

impl FailedSplit {
    /// Whether the summary lists turn `index`'s tool calls and prints: those of every turn not
    /// shown as a pair of its own.
    fn lists(&self, index: usize) -> bool {
        self.pairs.binary_search(&index).is_err()
    }
}

/// How a summary lists the tool calls of the turns it folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallListing {
    /// As the seed format says: the newest `tool_call_limit` calls, with results only while no
    /// folded turn has printed.
    Newest,
    /// Every call, so that no side effect is ever forgotten: the newest `tool_call_limit` with
    /// their results as samples, older ones with their results' type labels.
    Every,
}

pub(crate) const FAILED_CALLS_HEADER: &str =
    ";; Tool calls made before the error (they happened and are not undone):";
pub(crate) const FAILED_OUTPUT_HEADER: &str = ";; Output before the error:";
pub(crate) const FIXED_HEADER: &str = ";; Failed turns, fixed since:";

/// The stable start of every first user message: the mission, `tool/` and `data/`.
pub(crate) fn write_prefix(parts: &mut Parts<'_>, opts: &RenderOptions<'_>, detail: Detail) {
    parts.part(|out| out.push_str(opts.mission));
    parts.part(|out| write_tools(out, opts, detail));
    parts.part(|out| write_data(out, opts, detail));
}

/// The turns a summary folds and how it shows them: what every summary writer takes, as one
/// value.
#[derive(Clone, Copy)]
pub(crate) struct Folded<'a> {
    pub opts: &'a RenderOptions<'a>,
    /// The turns folded, oldest first.
    pub turns: &'a [Turn],
    /// The `user/` namespace after them.
    pub memory: &'a [Definition],
    pub detail: Detail,
    pub listing: CallListing,
    /// Whether turns after the folded ones follow the summary as they happened, with
    /// definitions of their own that the prelude does not list.
    pub turns_after: bool,
}

impl<'a> Folded<'a> {
    /// The same, with turns after the folded ones shown as they happened (or not).
    pub(crate) fn with_turns_after(self, turns_after: bool) -> Folded<'a> {
        Folded {
            turns_after,
            ..self
        }
    }

    /// `turns` with the namespace after the last of them, shown in full with every call listed
    /// (the default strategy's summaries).
    pub(crate) fn every_call(opts: &'a RenderOptions<'a>, turns: &'a [Turn]) -> Folded<'a> {
        Folded {
            opts,
            turns,
            memory: turns.last().map_or(&[][..], Turn::memory),
            detail: Detail::Full,
            listing: CallListing::Every,
            turns_after: false,
        }
    }
}

/// The parts of a summary user message after the stable prefix ([`write_prefix`]) and before the
/// turn count: `user/`, tool calls, output and the failed turns fixed since. `split` says which
/// failed turns are shown elsewhere as pairs; the calls and prints of every other turn are
/// listed here, those of failed turns marked as such.
pub(crate) fn write_history(
    parts: &mut Parts<'_>,
    folded: Folded<'_>,
    split: &FailedSplit,
    counts: &mut Counts,
) {
    let Folded {
        opts,
        turns,
        memory,
        detail,
        listing,
        turns_after,
    } = folded;
    let limits = &opts.limits;
    let calls = Newest::new(
        turns
            .iter()
            .enumerate()
            .map(|(i, t)| if split.lists(i) { t.tool_calls() } else { &[] })
            .collect(),
        limits.tool_call_limit,
    );
    let prints = Newest::new(
        turns
            .iter()
            .enumerate()
            .map(|(i, t)| if split.lists(i) { t.prints() } else { &[] })
            .collect(),
        limits.println_limit,
    );
    // SAM-001, SAM-002: samples when nothing listed was printed, the output otherwise.
    let printed = prints.total > 0;
    let returns = ReturnShapes::find(memory, turns);
    let header = prelude_header(turns, turns_after);
    let rules = match listing {
        CallListing::Newest => Rules::Seed,
        CallListing::Every => Rules::Default,
    };
    let style = DefinitionStyle {
        samples: !printed,
        detail,
        rules,
    };
    parts.part(|out| write_user(out, &header, memory, &returns, style, limits));
    let failed_turn = |i: usize| (!turns[i].is_success()).then(|| turns[i].number());
    parts.part(|out| {
        if calls.total == 0 {
            // FMT-013: said only when it is true of every turn, failed ones included.
            if !turns.is_empty() && turns.iter().all(|t| t.tool_calls().is_empty()) {
                out.push_str(NO_TOOL_CALLS);
            }
            return;
        }
        let shown = match listing {
            CallListing::Newest => {
                let result = if printed {
                    ResultShown::Not
                } else {
                    ResultShown::Sample
                };
                let listed = calls.iter().map(|(i, call)| ListedCall {
                    call,
                    result,
                    failed_turn: failed_turn(i),
                });
                write_tool_calls(out, TOOL_CALLS_HEADER, listed, detail, limits)
            }
            CallListing::Every => {
                let recent = if printed {
                    ResultShown::Short
                } else {
                    ResultShown::Sample
                };
                let listed = (0..turns.len()).flat_map(|i| {
                    calls.all_in(i).map(move |(call, newest)| ListedCall {
                        call,
                        result: if newest { recent } else { ResultShown::Label },
                        failed_turn: failed_turn(i),
                    })
                });
                write_tool_calls(out, TOOL_CALLS_HEADER, listed, detail, limits)
            }
        };
        counts.tool_calls_shown += shown;
    });
    parts.part(|out| {
        counts.prints_shown += match listing {
            // TRN-010: the seed format keeps the newest entries and drops the oldest.
            CallListing::Newest => {
                write_output(out, OUTPUT_HEADER, prints.iter().map(|(_, p)| p), limits)
            }
            CallListing::Every => {
                let printed = Printed::new(turns, |i| split.lists(i), opts);
                printed.write(out, printed.len(), memory, limits)
            }
        };
    });
    parts.part(|out| write_fixed(out, turns, &split.fixed));
    counts.turns_compressed += turns.iter().filter(|t| t.is_success()).count();
    counts.tool_calls_total += calls.total;
    counts.prints_total += prints.total;
}

/// `;; Failed turns, fixed since:` and one line per failed turn with its error.
fn write_fixed(out: &mut String, turns: &[Turn], fixed: &[usize]) {
    for (k, &i) in fixed.iter().enumerate() {
        if k == 0 {
            out.push_str(FIXED_HEADER);
        }
        let Some(error) = turns[i].error() else {
            continue;
        };
        out.push_str("\n;   turn ");
        push_usize(out, turns[i].number() as usize);
        out.push_str(": ");
        push_one_line(out, &error.to_string());
    }
}

/// The assistant message of a turn under compression: its full program, or the raw
/// response when no program could be taken from it.
pub(crate) fn program_text(turn: &Turn) -> Cow<'_, str> {
    let program = turn.program().trim_end_matches(['\n', '\r']);
    if program.trim().is_empty() {
        return verbatim_text(turn);
    }
    let mut out = String::with_capacity(program.len() + FENCE.len() + 4);
    out.push_str(FENCE);
    out.push_str(program);
    out.push_str("\n```");
    Cow::Owned(out)
}

/// The assistant message as the model wrote it.
/// The assistant message of a turn the default strategy shows as it happened: its program, or
/// the reply as written when that is no longer (a reply that is only the program, fenced its
/// own way), so that carrying a turn never costs more than the full history does. The text
/// around the program is the model's own thinking aloud: carried on every later request it
/// cost a fifth of the bill of a 24-turn run whose replies explain each step, and the system
/// prompt says it may be left out.
pub(crate) fn shorter_text(turn: &Turn) -> Cow<'_, str> {
    let program = program_text(turn);
    let verbatim = verbatim_text(turn);
    if verbatim.len() <= program.len() {
        verbatim
    } else {
        program
    }
}

/// The assistant message as the model wrote it.
pub(crate) fn verbatim_text(turn: &Turn) -> Cow<'_, str> {
    if !turn.raw_response().is_empty() {
        Cow::Borrowed(turn.raw_response())
    } else if !turn.program().trim().is_empty() {
        program_text(turn)
    } else {
        Cow::Borrowed("(empty response)")
    }
}

/// When a turn's feedback shows the value of the program's last form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueShown {
    Always,
    /// Only when the turn printed nothing: its output is what the model asked to see.
    WhenSilent,
    Never,
}

/// The user message answering a turn, without a turn count (the request's last message gets
/// the one turn count).
///
/// For a failed turn: `Error: MESSAGE`, then the tool calls it made before the error
/// and what it printed: those happened and are not undone. For a successful one: the
/// definitions it made (when `defined` is given), its tool calls with their results, its output
/// and its value as `value` says. Results are samples when the turn printed nothing; when it
/// printed, what it printed is what the model asked to see, so only short results (statuses)
/// and errors are shown whole and the others by their type label.
pub(crate) struct Feedback<'a, 't> {
    pub opts: &'a RenderOptions<'a>,
    /// Definitions new or changed in this turn, when the strategy shows them.
    pub defined: Option<&'a [&'t Definition]>,
    /// Tool calls and prints of this turn to show.
    pub calls: &'t [ToolCallRecord],
    pub prints: &'t [String],
    pub value: ValueShown,
}

impl Feedback<'_, '_> {
    pub(crate) fn message(&self, turn: &Turn) -> Message {
        let mut out = String::new();
        self.write(&mut out, turn);
        Message::user(out)
    }

    /// Append the message text to `out`.
    pub(crate) fn write(&self, out: &mut String, turn: &Turn) {
        let mut parts = Parts::new(out);
        let limits = &self.opts.limits;
        let printed = !self.prints.is_empty();
        let shown = results_shown(self.calls, printed, limits);
        let labelled = self
            .calls
            .iter()
            .zip(&shown)
            .filter(|(call, shown)| **shown == ResultShown::Short && !result_is_short(call, limits))
            .count();
        let listed = self
            .calls
            .iter()
            .zip(shown.iter().copied())
            .map(|(call, result)| ListedCall {
                call,
                result,
                failed_turn: None,
            });
        match turn.result() {
            ptc_turn::TurnResult::Error(error) => {
                parts.part(|out| {
                    out.push_str("Error: ");
                    out.push_str(&error.to_string());
                    write_error_place(out, turn.program(), error);
                });
                parts.part(|out| {
                    write_tool_calls(out, FAILED_CALLS_HEADER, listed, Detail::Full, limits);
                    write_labelled_note(out, labelled);
                });
                parts.part(|out| {
                    write_turn_output(out, FAILED_OUTPUT_HEADER, self.prints, limits);
                });
            }
            ptc_turn::TurnResult::Value(value) => {
                let printed = !self.prints.is_empty();
                if let Some(defined) = self.defined {
                    parts.part(|out| {
                        write_user(
                            out,
                            USER_TURN_HEADER,
                            defined.iter().copied(),
                            &ReturnShapes::none(),
                            DefinitionStyle {
                                samples: !printed,
                                detail: Detail::Full,
                                rules: Rules::Seed,
                            },
                            limits,
                        )
                    });
                }
                parts.part(|out| {
                    write_tool_calls(out, TOOL_CALLS_HEADER, listed, Detail::Full, limits);
                    write_labelled_note(out, labelled);
                });
                parts.part(|out| {
                    write_turn_output(out, OUTPUT_HEADER, self.prints, limits);
                });
                let show_value = match self.value {
                    ValueShown::Always => true,
                    ValueShown::WhenSilent => !printed,
                    ValueShown::Never => false,
                };
                if show_value {
                    parts.part(|out| {
                        out.push_str(RESULT_PREFIX);
                        push_sample(out, value, limits);
                    });
                }
            }
        }
    }
}

/// How the feedback on a turn shows each of its calls' results. A turn that printed nothing
/// shows every result as a sample. When it printed, its output is what the model asked to see,
/// but the results it has not seen may be what it needs next (a page's fields, the shape of a
/// lookup): the first call of each tool shows a sample, bounded like every sample, and the
/// others too while `tool_result_chars` lasts; the rest are short (a status) or their type.
fn results_shown(
    calls: &[ToolCallRecord],
    printed: bool,
    limits: &RenderLimits,
) -> Vec<ResultShown> {
    if !printed {
        return vec![ResultShown::Sample; calls.len()];
    }
    let mut budget = limits.tool_result_chars;
    let mut sample = String::new();
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let ToolOutcome::Ok(value) = &call.result else {
                return ResultShown::Sample;
            };
            sample.clear();
            push_sample(&mut sample, value, limits);
            let size = sample.chars().count();
            let first_of_its_tool = calls[..i].iter().all(|c| c.name != call.name);
            if first_of_its_tool || size <= budget {
                budget = budget.saturating_sub(size);
                ResultShown::Sample
            } else {
                ResultShown::Short
            }
        })
        .collect()
}

/// Whether a call's result shown [`ResultShown::Short`] is its sample, not its type.
fn result_is_short(call: &ToolCallRecord, limits: &RenderLimits) -> bool {
    let ToolOutcome::Ok(value) = &call.result else {
        return true;
    };
    let mut sample = String::new();
    push_sample(&mut sample, value, limits);
    sample.chars().count() <= SHORT_RESULT
}

/// The line after a call list some of whose results show only their type.
fn write_labelled_note(out: &mut String, labelled: usize) {
    if labelled == 0 {
        return;
    }
    out.push_str("\n;   (");
    push_usize(out, labelled);
    out.push_str(if labelled == 1 {
        " result is shown by its type only, for space: print what you need of it)"
    } else {
        " results are shown by their type only, for space: print what you need of them)"
    });
}

/// The line of the program an error points at, with a caret under its column, so that the
/// model need not count lines and columns. Long lines are shown around the column.
fn write_error_place(out: &mut String, program: &str, error: &ptc_turn::TurnError) {
    const BEFORE: usize = 50;
    const WIDTH: usize = 90;
    let (Some(line), Some(col)) = (error.line, error.col) else {
        return;
    };
    let Some(text) = program.lines().nth((line as usize).saturating_sub(1)) else {
        return;
    };
    let chars: Vec<char> = text.chars().collect();
    let col = (col as usize).saturating_sub(1).min(chars.len());
    let start = col.saturating_sub(BEFORE);
    let end = (start + WIDTH).min(chars.len());
    let shown: String = chars[start..end].iter().collect();
    if shown.trim().is_empty() {
        return;
    }
    let mut caret_at = col - start;
    out.push_str("\n    ");
    if start > 0 {
        out.push_str("...");
        caret_at += 3;
    }
    out.push_str(shown.trim_end());
    if end < chars.len() {
        out.push_str("...");
    }
    out.push_str("\n    ");
    out.extend(std::iter::repeat_n(' ', caret_at));
    out.push('^');
}

/// Ends the request with the advice on the last turn and its one turn count: appended to the last message
/// (always a user message) as its own part, so no earlier message carries a count that goes
/// stale. Returns the length of that message before the count: the end of what the next
/// request can repeat unchanged.
pub(crate) fn end_with_turns_left(
    messages: &mut [Message],
    opts: &RenderOptions<'_>,
    turns: &[Turn],
) -> usize {
    let Some(last) = messages.last_mut() else {
        return 0;
    };
    let stable = last.content.len();
    let mut line = String::new();
    crate::advice::write_advice(&mut line, turns);
    if !line.is_empty() {
        line.push_str("\n\n");
    }
    write_turns_left(&mut line, opts.max_turns, turns.len());
    if stable > 0 {
        last.content.push_str("\n\n");
    }
    last.content.push_str(&line);
    stable
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    // The sizes of a call's three forms are those of the lines written.
    #[test]
    fn tool_call_sizes_are_those_of_the_written_lines() {
        let call = |result: ToolOutcome| ToolCallRecord {
            name: "search".into(),
            args: vec![Value::string("é".repeat(70)), Value::Int(3)],
            result,
            duration_us: 1,
        };
        let record = |i: i64| {
            Value::map([
                (Value::keyword("id"), Value::Int(i)),
                (Value::keyword("note"), Value::string("ü".repeat(90))),
            ])
        };
        let results = [
            ToolOutcome::Ok(Value::Nil),
            ToolOutcome::Ok(Value::string("queued")),
            ToolOutcome::Ok(Value::vector((0..6).map(record))),
            ToolOutcome::Ok(Value::string("x".repeat(SHORT_RESULT))),
            ToolOutcome::Ok(Value::string("x".repeat(SHORT_RESULT + 1))),
            ToolOutcome::Error("timed out\nafter 30 s ".repeat(20)),
        ];
        let limits = RenderLimits::default();
        for (result, failed_turn) in results.into_iter().zip([None, Some(7)].into_iter().cycle()) {
            let call = call(result);
            let written =
                [ResultShown::Label, ResultShown::Sample, ResultShown::Short].map(|result| {
                    let mut line = String::new();
                    let listed = ListedCall {
                        call: &call,
                        result,
                        failed_turn,
                    };
                    write_tool_call(&mut line, listed, Detail::Full, &limits);
                    line.chars().count()
                });
            let mut line = String::new();
            assert_eq!(
                tool_call_sizes(&call, failed_turn, &limits, &mut line),
                written
            );
        }
    }

    #[test]
    fn comments_start_at_column_thirty_or_after_one_space() {
        let mut out = String::from("short");
        open_comment(&mut out, 0);
        assert_eq!(out, format!("short{}; ", " ".repeat(25)));
        let long = "x".repeat(30);
        let mut out = long.clone();
        open_comment(&mut out, 0);
        assert_eq!(out, format!("{long} ; "));
        // Width counts characters, not bytes.
        let mut out = String::from("ä");
        open_comment(&mut out, 0);
        assert_eq!(out.chars().count(), 32);
    }

    #[test]
    fn line_breaks_in_one_line_entries_become_spaces() {
        let mut out = String::new();
        push_one_line(&mut out, "a\r\nb\n\nc");
        assert_eq!(out, "a b c");
    }

    // MSG-005
    #[test]
    fn the_last_turn_gets_the_final_warning() {
        let line = |max, done| {
            let mut out = String::new();
            write_turns_left(&mut out, max, done);
            out
        };
        assert_eq!(line(5, 0), "Turns left: 5");
        assert_eq!(line(5, 3), "Turns left: 2");
        assert_eq!(line(5, 4), FINAL_TURN);
        assert_eq!(line(5, 9), FINAL_TURN);
        assert_eq!(line(1, 0), FINAL_TURN);
    }

    #[test]
    fn an_error_shows_the_line_it_points_at_with_a_caret() {
        let place = |program: &str, line, col| {
            let mut out = String::new();
            let error = ptc_turn::TurnError::new("k", "m").at(line, col);
            write_error_place(&mut out, program, &error);
            out
        };
        assert_eq!(place("(inc\n  (:a))", 2, 4), "\n      (:a))\n       ^");
        let long = format!("({} x)", "y".repeat(200));
        assert_eq!(
            place(&long, 1, 150),
            format!("\n    ...{}...\n    {}^", "y".repeat(90), " ".repeat(53))
        );
        assert_eq!(place("(inc 1)", 3, 1), "");
        assert_eq!(place("(inc 1)\n\n", 2, 1), "");
    }

    #[test]
    fn empty_parts_leave_no_blank_lines() {
        let mut out = String::new();
        let mut parts = Parts::new(&mut out);
        parts.part(|_| {});
        parts.part(|o| o.push('a'));
        parts.part(|_| {});
        parts.part(|o| o.push('b'));
        assert_eq!(out, "a\n\nb");
    }
}
