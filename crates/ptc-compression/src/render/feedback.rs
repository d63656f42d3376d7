//! The feedback on a turn shown as it happened (its error, tool calls, output and value), and
//! the turn count that ends a request.

use super::calls::{ListedCall, ResultShown, write_tool_calls};
use super::definitions::{ReturnShapes, write_user};
use super::folded::{FAILED_CALLS_HEADER, FAILED_OUTPUT_HEADER};
use super::parts::{
    DefinitionStyle, Detail, Parts, RESULT_PREFIX, Rules, SHORT_RESULT, TOOL_CALLS_HEADER,
    USER_TURN_HEADER, push_usize, write_turns_left,
};
use super::sample::push_sample;
use crate::output::OUTPUT_HEADER;
use crate::output::write_turn_output;
use crate::render_options::{RenderLimits, RenderOptions};
use ptc_lisp::{Definition, ToolCallRecord, ToolOutcome};
use ptc_turn::{Message, Turn};

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
pub(super) fn write_error_place(out: &mut String, program: &str, error: &ptc_turn::TurnError) {
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
