//! The text of every part of a rendering. Strategies choose which parts to show and where;
//! the wording lives only here (see docs/compression.md for the layout).

use crate::options::{RenderLimits, RenderOptions};
use crate::vocabulary::TypeVocabulary;
use ptc_lisp::to_clojure;
use ptc_lisp::{Definition, ToolCallRecord, ToolOutcome, Value, ValueShape};
use ptc_turn::{Message, Turn};
use std::borrow::Cow;

/// Width the left part of a namespace line is padded to before its `; ` comment.
const NAME_WIDTH: usize = 30;

pub(crate) const TOOL_HEADER: &str = ";; === tool/ ===";
pub(crate) const DATA_HEADER: &str = ";; === data/ ===";
pub(crate) const USER_HEADER: &str = ";; === user/ (your prelude) ===";
pub(crate) const USER_TURN_HEADER: &str = ";; === user/ (defined this turn) ===";
pub(crate) const TOOL_CALLS_HEADER: &str = ";; Tool calls made:";
pub(crate) const NO_TOOL_CALLS: &str = ";; No tool calls made";
pub(crate) const OUTPUT_HEADER: &str = ";; Output:";
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
fn shows_text(doc: &str) -> bool {
    doc.chars().any(|c| c != ';' && !c.is_whitespace())
}

/// A docstring as a summary line shows it: on one line, trimmed, and without `;`, which would
/// start a comment inside the comment the line is.
fn push_doc(out: &mut String, doc: &str) {
    let trimmed = doc.trim();
    // Most docstrings are one plain line: one scan, and no copy.
    if !trimmed.bytes().any(|b| matches!(b, b';' | b'\n' | b'\r')) {
        out.push_str(trimmed);
    } else if doc.contains(';') {
        push_one_line(out, doc.replace(';', "").trim());
    } else {
        push_one_line(out, trimmed);
    }
}

/// Append `text` on the current line: line breaks become single spaces so one entry stays one
/// line.
fn push_one_line(out: &mut String, text: &str) {
    if !text.contains(['\n', '\r']) {
        out.push_str(text);
        return;
    }
    let mut in_break = false;
    for c in text.chars() {
        if c == '\n' || c == '\r' {
            if !in_break {
                out.push(' ');
            }
            in_break = true;
        } else {
            out.push(c);
            in_break = false;
        }
    }
}

fn push_sample(out: &mut String, value: &Value, limits: &RenderLimits) {
    let (text, _) = to_clojure(
        value,
        Some(limits.sample_limit),
        Some(limits.sample_printable_limit),
    );
    out.push_str(&text);
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

/// `;; === data/ ===` and one line per input. Data samples are shown
/// whether or not the program printed, so this section never changes between turns.
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
        TypeVocabulary::write_label(out, ValueShape::of(value));
        if detail == Detail::Full && sample_adds_information(value) {
            out.push_str(", sample: ");
            push_sample(out, value, &opts.limits);
        }
    }
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
    show_samples: bool,
    detail: Detail,
    limits: &RenderLimits,
) {
    let line = out.len();
    let doc = match detail {
        Detail::Full => def.doc.as_deref().filter(|d| shows_text(d)),
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
            push_doc(out, doc);
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
            push_doc(out, doc);
            out.push_str("\" ");
        }
        out.push_str("= ");
        TypeVocabulary::write_label(out, ValueShape::of(&def.value));
        if show_samples && detail == Detail::Full && sample_adds_information(&def.value) {
            out.push_str(", sample: ");
            push_sample(out, &def.value, limits);
        }
    }
}

/// A `user/` section under `header` with `defs` in the given order.
pub(crate) fn write_user<'d>(
    out: &mut String,
    header: &str,
    defs: impl IntoIterator<Item = &'d Definition>,
    returns: &ReturnShapes<'_>,
    show_samples: bool,
    detail: Detail,
    limits: &RenderLimits,
) {
    let mut defs = defs.into_iter().peekable();
    if defs.peek().is_none() {
        return;
    }
    out.push_str(header);
    for def in defs {
        out.push('\n');
        write_definition(out, def, returns, show_samples, detail, limits);
    }
}

/// `;   name(arg arg) -> result`: arguments space separated, each truncated with the argument
/// limits, parentheses always shown; the result, truncated like a
/// sample, only when asked for.
fn write_tool_call(
    out: &mut String,
    call: &ToolCallRecord,
    with_result: bool,
    detail: Detail,
    limits: &RenderLimits,
) {
    out.push_str(";   ");
    out.push_str(&call.name);
    out.push('(');
    for (i, arg) in call.args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match detail {
            Detail::Full => {
                let (text, _) = to_clojure(
                    arg,
                    Some(limits.arg_limit),
                    Some(limits.arg_printable_limit),
                );
                out.push_str(&text);
            }
            Detail::Minimal => TypeVocabulary::write_label(out, ValueShape::of(arg)),
        }
    }
    out.push(')');
    if with_result && detail == Detail::Full {
        out.push_str(" -> ");
        match &call.result {
            ToolOutcome::Ok(value) => push_sample(out, value, limits),
            ToolOutcome::Error(message) => {
                out.push_str("error: ");
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
    }
}

/// `;; Tool calls made:` and the given calls; nothing when there are none.
pub(crate) fn write_tool_calls<'c>(
    out: &mut String,
    calls: impl IntoIterator<Item = &'c ToolCallRecord>,
    with_results: bool,
    detail: Detail,
    limits: &RenderLimits,
) -> usize {
    let mut shown = 0;
    for call in calls {
        if shown == 0 {
            out.push_str(TOOL_CALLS_HEADER);
        }
        out.push('\n');
        write_tool_call(out, call, with_results, detail, limits);
        shown += 1;
    }
    shown
}

/// `;; Output:` and the given `println` entries, each exactly as printed; nothing when there
/// are none.
pub(crate) fn write_output<'p>(
    out: &mut String,
    prints: impl IntoIterator<Item = &'p String>,
) -> usize {
    let mut shown = 0;
    for print in prints {
        if shown == 0 {
            out.push_str(OUTPUT_HEADER);
        }
        out.push('\n');
        out.push_str(print);
        shown += 1;
    }
    shown
}

/// The newest `limit` items of the successful turns' lists (tool calls or prints), found
/// without touching older items: one backward pass over the turns reads only list lengths,
/// then iteration starts at the first kept item (the oldest are dropped).
pub(crate) struct Newest<'t, T: 't> {
    turns: &'t [Turn],
    list: fn(&Turn) -> &[T],
    pub total: usize,
    pub shown: usize,
    /// The first kept item: turn index and offset in that turn's list.
    start: (usize, usize),
}

impl<'t, T: 't> Newest<'t, T> {
    pub(crate) fn new(turns: &'t [Turn], list: fn(&Turn) -> &[T], limit: usize) -> Self {
        let mut total = 0;
        let mut start = (turns.len(), 0);
        for (i, turn) in turns.iter().enumerate().rev() {
            let len = list(turn).len();
            if total < limit && len > 0 {
                let wanted = limit - total;
                start = (i, len.saturating_sub(wanted));
            }
            total += len;
        }
        Newest {
            turns,
            list,
            total,
            shown: total.min(limit),
            start,
        }
    }

    /// How many items of turn `index` are dropped.
    pub(crate) fn dropped_in(&self, index: usize) -> usize {
        let len = self.turns.get(index).map_or(0, |t| (self.list)(t).len());
        match index.cmp(&self.start.0) {
            std::cmp::Ordering::Less => len,
            std::cmp::Ordering::Equal => self.start.1,
            std::cmp::Ordering::Greater => 0,
        }
    }

    /// The kept items of turn `index`.
    pub(crate) fn kept_in(&self, index: usize) -> &'t [T] {
        match self.turns.get(index) {
            Some(turn) => {
                let list = (self.list)(turn);
                &list[self.dropped_in(index).min(list.len())..]
            }
            None => &[],
        }
    }

    /// All kept items, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &'t T> + '_ {
        (self.start.0..self.turns.len()).flat_map(move |i| self.kept_in(i).iter())
    }
}

pub(crate) fn successful_tool_calls(turn: &Turn) -> &[ToolCallRecord] {
    if turn.is_success() {
        turn.tool_calls()
    } else {
        &[]
    }
}

pub(crate) fn successful_prints(turn: &Turn) -> &[String] {
    if turn.is_success() {
        turn.prints()
    } else {
        &[]
    }
}

/// The parts of a coalesced summary user message before the turn count: mission, `tool/`,
/// `data/`, `user/`, tool calls and output.
pub(crate) fn write_summary(
    parts: &mut Parts<'_>,
    opts: &RenderOptions<'_>,
    turns: &[Turn],
    memory: &[Definition],
    detail: Detail,
    counts: &mut Counts,
) {
    let limits = &opts.limits;
    parts.part(|out| out.push_str(opts.mission));
    parts.part(|out| write_tools(out, opts, detail));
    parts.part(|out| write_data(out, opts, detail));
    // SAM-001, SAM-002: samples when no turn printed, the output otherwise.
    let printed = turns.iter().any(|t| !successful_prints(t).is_empty());
    let returns = ReturnShapes::find(memory, turns);
    parts.part(|out| write_user(out, USER_HEADER, memory, &returns, !printed, detail, limits));
    let calls = Newest::new(turns, successful_tool_calls, limits.tool_call_limit);
    parts.part(|out| {
        if calls.total == 0 {
            // FMT-013: said only when it is true of every turn shown, failed ones included.
            if !turns.is_empty() && turns.iter().all(|t| t.tool_calls().is_empty()) {
                out.push_str(NO_TOOL_CALLS);
            }
        } else {
            write_tool_calls(out, calls.iter(), !printed, detail, limits);
        }
    });
    let prints = Newest::new(turns, successful_prints, limits.println_limit);
    parts.part(|out| {
        write_output(out, prints.iter());
    });
    counts.turns_compressed += turns.iter().filter(|t| t.is_success()).count();
    counts.tool_calls_total += calls.total;
    counts.tool_calls_shown += calls.shown;
    counts.prints_total += prints.total;
    counts.prints_shown += prints.shown;
}

/// The assistant message of a failed turn under compression: its full program, or the
/// raw response when no program could be taken from it.
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
pub(crate) fn verbatim_text(turn: &Turn) -> Cow<'_, str> {
    if !turn.raw_response().is_empty() {
        Cow::Borrowed(turn.raw_response())
    } else if !turn.program().trim().is_empty() {
        program_text(turn)
    } else {
        Cow::Borrowed("(empty response)")
    }
}

/// The user message answering a turn: `Error: MESSAGE` for a failed turn; for a
/// successful one the definitions it made (when `defined` is given), its tool calls (with
/// results when the turn printed nothing), its output and (when `with_value`) its value. Then
/// the turn count for the turn after it.
pub(crate) struct Feedback<'a, 't> {
    pub opts: &'a RenderOptions<'a>,
    /// Definitions new or changed in this turn, when the strategy shows them.
    pub defined: Option<&'a [&'t Definition]>,
    /// Tool calls and prints of this turn to show (the newest, under FIFO limits).
    pub calls: &'t [ToolCallRecord],
    pub prints: &'t [String],
    /// Whether to show the value of the program's last form.
    pub with_value: bool,
    /// Turns taken before the next turn.
    pub done: usize,
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
        match turn.result() {
            ptc_turn::TurnResult::Error(error) => {
                parts.part(|out| {
                    out.push_str("Error: ");
                    out.push_str(&error.to_string());
                });
            }
            ptc_turn::TurnResult::Value(value) => {
                let printed = !turn.prints().is_empty();
                if let Some(defined) = self.defined {
                    parts.part(|out| {
                        write_user(
                            out,
                            USER_TURN_HEADER,
                            defined.iter().copied(),
                            &ReturnShapes::none(),
                            !printed,
                            Detail::Full,
                            limits,
                        )
                    });
                }
                parts.part(|out| {
                    write_tool_calls(out, self.calls, !printed, Detail::Full, limits);
                });
                parts.part(|out| {
                    write_output(out, self.prints);
                });
                if self.with_value {
                    parts.part(|out| {
                        out.push_str(RESULT_PREFIX);
                        push_sample(out, value, limits);
                    });
                }
            }
        }
        parts.part(|out| write_turns_left(out, self.opts.max_turns, self.done));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

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
