//! The summary of folded turns: the `user/` prelude, every tool call made, the output, and the
//! failed turns, fixed since or shown after it as pairs.

use super::calls::{ListedCall, Newest, ResultShown, write_tool_calls};
use super::definitions::{ReturnShapes, write_user};
use super::parts::{
    Counts, DefinitionStyle, Detail, NO_TOOL_CALLS, Parts, Rules, TOOL_CALLS_HEADER,
    prelude_header, push_usize,
};
use crate::output::OUTPUT_HEADER;
use crate::output::{push_one_line, write_output};
use crate::printed::Printed;
use crate::render_options::RenderOptions;
use ptc_lisp::Definition;
use ptc_turn::Turn;

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

/// The parts of a summary user message after the stable prefix ([`write_prefix`](super::prefix::write_prefix)) and before the
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
