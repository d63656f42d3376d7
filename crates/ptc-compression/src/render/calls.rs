//! Tool-call lines: a call with its arguments and its result as a sample, a type label or a
//! short value, their sizes, and the newest calls of several turns.

use super::parts::{Detail, SHORT_RESULT, push_usize};
use super::sample::{push_sample, push_value};
use crate::output::push_one_line;
use crate::render_options::RenderLimits;
use crate::vocabulary::TypeVocabulary;
use ptc_lisp::{ToolCallRecord, ToolOutcome, ValueShape};

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
