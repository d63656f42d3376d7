//! The strategies of the seed design: the full history, one coalesced summary and its
//! relatives, a rolling window, and a summary per turn.

use crate::compression::{
    Compression, Rendered, Repeats, count_shown_turn, finish_request, render_in_full, size_of,
    uncompressed_messages, unrecovered_from, write_verbatim_feedback,
};
use crate::printed::same_value;
use crate::render::feedback::{Feedback, ValueShown};
use crate::render::folded::{CallListing, FailedSplit, Folded, write_history};
use crate::render::parts::{Counts, Detail, Parts, program_text, verbatim_text};
use crate::render::prefix::write_prefix;
use crate::render_options::RenderOptions;
use ptc_lisp::Definition;
use ptc_turn::{Message, Turn};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Which failed turns a compressing strategy keeps as full program-and-error pairs.
///
/// A failed turn that a later successful turn recovered from is never kept as a pair by the
/// strategies that fold successful turns into one summary (`single-user-coalesced`,
/// `aggressive`, and the summary part of `rolling-window`): a request must not end with an
/// error the model has already fixed. Its tool calls and prints are listed in the summary,
/// marked as coming from a failed turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailedTurns {
    /// Every failed turn: unrecovered ones as pairs, recovered ones named in the summary
    /// with their error.
    #[default]
    All,
    /// Failed turns after the last successful one (errors the model has not recovered from)
    /// as pairs; recovered ones only through their tool calls and prints.
    Unrecovered,
    /// Only the newest unrecovered failed turn as a pair.
    Last,
    /// Every failed turn as a pair after the summary, recovered ones too: the seed design's
    /// rule (failed turns are never compressed: CMP-002, CMP-003, ERR-001, ERR-002), at the
    /// price of a request that may end with an error the model has already fixed.
    Kept,
}

impl FailedTurns {
    /// The name used in compression specs.
    pub fn as_str(self) -> &'static str {
        match self {
            FailedTurns::All => "all",
            FailedTurns::Unrecovered => "unrecovered",
            FailedTurns::Last => "last",
            FailedTurns::Kept => "kept",
        }
    }

    /// Indices of the failed turns of `turns` to show as pairs in a chronological rendering
    /// (`per-turn-summary`), oldest first.
    fn select(self, turns: &[Turn]) -> Vec<usize> {
        let mut failed = turns
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.is_success())
            .map(|(i, _)| i);
        match self {
            FailedTurns::All | FailedTurns::Kept => failed.collect(),
            FailedTurns::Unrecovered => {
                let after = unrecovered_from(turns);
                (after..turns.len()).collect()
            }
            FailedTurns::Last => failed.next_back().into_iter().collect(),
        }
    }

    /// The failed turns of `turns` a summary of them shows as pairs after it, and those it
    /// names as fixed.
    pub(crate) fn split(self, turns: &[Turn]) -> FailedSplit {
        let after = unrecovered_from(turns);
        let unrecovered: Vec<usize> = (after..turns.len()).collect();
        let recovered = || {
            (0..after)
                .filter(|&i| !turns[i].is_success())
                .collect::<Vec<_>>()
        };
        match self {
            FailedTurns::All => FailedSplit {
                pairs: unrecovered,
                fixed: recovered(),
            },
            FailedTurns::Unrecovered => FailedSplit {
                pairs: unrecovered,
                fixed: Vec::new(),
            },
            FailedTurns::Last => FailedSplit {
                pairs: unrecovered.last().copied().into_iter().collect(),
                fixed: Vec::new(),
            },
            FailedTurns::Kept => FailedSplit {
                pairs: recovered().into_iter().chain(unrecovered).collect(),
                fixed: Vec::new(),
            },
        }
    }
}

/// The summary user message of the folded turns followed by the unrecovered failed turns the
/// option keeps as program/error pairs.
fn push_summary_and_failures(
    messages: &mut Vec<Message>,
    folded: Folded<'_>,
    failed_turns: FailedTurns,
    counts: &mut Counts,
) {
    let Folded {
        opts,
        turns,
        detail,
        ..
    } = folded;
    let split = failed_turns.split(turns);
    let mut user = String::new();
    let mut parts = Parts::new(&mut user);
    write_prefix(&mut parts, opts, detail);
    write_history(&mut parts, folded, &split, counts);
    messages.push(Message::user(user));
    for &i in &split.pairs {
        push_failed_pair(messages, &turns[i], opts, counts);
    }
    counts.failed_total += turns.iter().filter(|t| !t.is_success()).count();
}

/// A failed turn as its program and the feedback on it: the error, and the tool calls and
/// prints that happened before it.
fn push_failed_pair(
    messages: &mut Vec<Message>,
    turn: &Turn,
    opts: &RenderOptions<'_>,
    counts: &mut Counts,
) {
    messages.push(Message::assistant(program_text(turn)));
    let feedback = Feedback {
        opts,
        defined: None,
        calls: turn.tool_calls(),
        prints: turn.prints(),
        value: ValueShown::Never,
    };
    messages.push(feedback.message(turn));
    count_shown_turn(counts, turn, turn.prints().len());
}

/// No compression: the whole conversation, each turn as the model's response and a feedback
/// message (see docs/compression.md). What runs use when compression is off, and the baseline
/// the stats of every strategy compare against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Uncompressed;

impl Compression for Uncompressed {
    fn name(&self) -> &str {
        "uncompressed"
    }

    fn to_messages(&self, turns: &[Turn], _: &[Definition], opts: &RenderOptions<'_>) -> Rendered {
        render_in_full(self.name(), turns, opts, None)
    }
}

/// The strategy of the seed design: the system prompt, then one user message holding
/// the mission, the namespaces and what all successful turns did, then the unrecovered failed
/// turns as program/error pairs. It rewrites the summary every turn, so only the `tool/` and
/// `data/` prefix stays in a provider's prompt cache, and it keeps only the newest tool calls
/// and prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SingleUserCoalesced {
    /// Which failed turns to keep as program/error pairs.
    pub failed_turns: FailedTurns,
}

impl Compression for SingleUserCoalesced {
    fn name(&self) -> &str {
        "single-user-coalesced"
    }

    fn to_messages(
        &self,
        turns: &[Turn],
        memory: &[Definition],
        opts: &RenderOptions<'_>,
    ) -> Rendered {
        coalesced(
            self.name(),
            Detail::Full,
            self.failed_turns,
            turns,
            memory,
            opts,
        )
    }
}

/// Like [`SingleUserCoalesced`] with names and type labels only: no tool descriptions, no
/// docstrings, no samples, tool-call arguments as type labels. The output section stays (it is
/// what the model asked to see). Keeps only the newest failed turn unless told otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aggressive {
    /// Which failed turns to keep as program/error pairs.
    pub failed_turns: FailedTurns,
}

impl Default for Aggressive {
    fn default() -> Aggressive {
        Aggressive {
            failed_turns: FailedTurns::Last,
        }
    }
}

impl Compression for Aggressive {
    fn name(&self) -> &str {
        "aggressive"
    }

    fn to_messages(
        &self,
        turns: &[Turn],
        memory: &[Definition],
        opts: &RenderOptions<'_>,
    ) -> Rendered {
        coalesced(
            self.name(),
            Detail::Minimal,
            self.failed_turns,
            turns,
            memory,
            opts,
        )
    }
}

fn coalesced(
    name: &str,
    detail: Detail,
    failed_turns: FailedTurns,
    turns: &[Turn],
    memory: &[Definition],
    opts: &RenderOptions<'_>,
) -> Rendered {
    if opts.is_single_shot() {
        return render_in_full(name, turns, opts, None);
    }
    let mut messages = vec![Message::system(opts.system_prompt)];
    let mut counts = Counts::default();
    let folded = Folded {
        opts,
        turns,
        memory,
        detail,
        listing: CallListing::Newest,
        turns_after: false,
    };
    push_summary_and_failures(&mut messages, folded, failed_turns, &mut counts);
    finish_request(name, messages, counts, turns, opts, Repeats::Prefix)
}

/// The newest `window` turns verbatim (response and feedback, as uncompressed), older turns as
/// a summary (with the namespace as it was after them, and every tool call they made) and their
/// unrecovered failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollingWindow {
    /// Turns kept verbatim.
    pub window: usize,
    /// Which failed turns before the window are kept (those in the window always are).
    pub failed_turns: FailedTurns,
}

impl RollingWindow {
    /// Turns kept verbatim unless configured.
    pub const DEFAULT_WINDOW: usize = 2;
}

impl Default for RollingWindow {
    fn default() -> RollingWindow {
        RollingWindow {
            window: RollingWindow::DEFAULT_WINDOW,
            failed_turns: FailedTurns::All,
        }
    }
}

impl Compression for RollingWindow {
    fn name(&self) -> &str {
        "rolling-window"
    }

    fn to_messages(&self, turns: &[Turn], _: &[Definition], opts: &RenderOptions<'_>) -> Rendered {
        if opts.is_single_shot() || self.window >= turns.len() {
            let mut rendered = render_in_full(self.name(), turns, opts, None);
            rendered.stats.compressed = !opts.is_single_shot();
            return rendered;
        }
        let split = turns.len() - self.window;
        let (older, recent) = turns.split_at(split);
        let mut messages = vec![Message::system(opts.system_prompt)];
        let mut counts = Counts::default();
        push_summary_and_failures(
            &mut messages,
            Folded::every_call(opts, older),
            self.failed_turns,
            &mut counts,
        );
        let mut buffer = String::new();
        for turn in recent {
            messages.push(Message::assistant(verbatim_text(turn)));
            buffer.clear();
            write_verbatim_feedback(turn, opts, &mut counts, &mut buffer);
            messages.push(Message::user(buffer.as_str()));
        }
        finish_request(self.name(), messages, counts, turns, opts, Repeats::Prefix)
    }
}

/// One pair per turn, in order: the program (without the prose around it) and a summary of what
/// the turn did: definitions it added or changed, its tool calls with their results, and its
/// output (the newest `println_limit` entries of the turn). Keeps the chronology the coalesced
/// strategies fold away, at the price of showing programs; the history only grows, so earlier
/// turns stay in a provider's prompt cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerTurnSummary {
    /// Which failed turns to show as program/error pairs. A failed turn that made tool calls or
    /// printed is always shown: what it did happened.
    pub failed_turns: FailedTurns,
}

impl Compression for PerTurnSummary {
    fn name(&self) -> &str {
        "per-turn-summary"
    }

    fn to_messages(&self, turns: &[Turn], _: &[Definition], opts: &RenderOptions<'_>) -> Rendered {
        if opts.is_single_shot() {
            return render_in_full(self.name(), turns, opts, None);
        }
        let failed = self.failed_turns.select(turns);
        let shown: Vec<usize> = (0..turns.len())
            .filter(|&i| {
                let turn = &turns[i];
                turn.is_success()
                    || failed.binary_search(&i).is_ok()
                    || !turn.tool_calls().is_empty()
                    || !turn.prints().is_empty()
            })
            .collect();
        let mut messages = Vec::with_capacity(2 + 2 * shown.len());
        messages.push(Message::system(opts.system_prompt));
        let mut counts = Counts::default();
        let mut first = String::new();
        write_prefix(&mut Parts::new(&mut first), opts, Detail::Full);
        messages.push(Message::user(first));

        let limits = &opts.limits;
        // The namespace after the previous successful turn (every successful turn is shown, so
        // each one's changes are shown exactly once).
        let mut previous: &[Definition] = &[];
        for &i in &shown {
            let turn = &turns[i];
            messages.push(Message::assistant(program_text(turn)));
            let prints = turn.prints();
            let prints = &prints[prints.len().saturating_sub(limits.println_limit)..];
            let defined = if turn.is_success() {
                let defined = changed_definitions(previous, turn.memory());
                previous = turn.memory();
                Some(defined)
            } else {
                None
            };
            let message = Feedback {
                opts,
                defined: defined.as_deref(),
                calls: turn.tool_calls(),
                prints,
                value: ValueShown::Never,
            }
            .message(turn);
            messages.push(message);
            // A turn left out has neither tool calls nor prints, so the totals of the shown
            // turns are those of all turns.
            count_shown_turn(&mut counts, turn, prints.len());
        }
        counts.turns_compressed = turns.iter().filter(|t| t.is_success()).count();
        counts.failed_total = turns.iter().filter(|t| !t.is_success()).count();
        finish_request(
            self.name(),
            messages,
            counts,
            turns,
            opts,
            Repeats::AllButTurnCount,
        )
    }
}

/// The definitions of `current` that are new or differ from those in `previous`.
///
/// Namespaces list names in the order they were first defined, so normally `previous` is a
/// prefix of `current` by name: one pass compares the definitions position by position, each
/// with the cheapest tests first (a definition that did not change shares its value with the
/// earlier snapshot, so comparing values is a pointer comparison), and everything after
/// `previous` is new. Only when the names do not line up is a name lookup built.
fn changed_definitions<'m>(
    previous: &'m [Definition],
    current: &'m [Definition],
) -> Vec<&'m Definition> {
    if previous.len() <= current.len() {
        let mut changed = Vec::new();
        let aligned = previous.iter().zip(current).all(|(old, new)| {
            if old.name != new.name {
                return false;
            }
            if !same(old, new) {
                changed.push(new);
            }
            true
        });
        if aligned {
            changed.extend(&current[previous.len()..]);
            return changed;
        }
    }
    let by_name: HashMap<&str, &Definition> =
        previous.iter().map(|d| (d.name.as_str(), d)).collect();
    current
        .iter()
        .filter(|def| {
            by_name
                .get(def.name.as_str())
                .is_none_or(|old| !same(old, def))
        })
        .collect()
}

/// Whether two snapshots of a definition are the same definition. Calling a function changes
/// the return type it remembers, not the function, so that is not compared. Functions read back
/// from JSON are distinct opaque values even when unchanged, so those compare by their printed
/// form.
#[inline]
fn same(a: &Definition, b: &Definition) -> bool {
    same_value(&a.value, &b.value) && a.doc == b.doc && a.params == b.params
}

/// Any strategy, applied only under pressure: below both thresholds the history is rendered in
/// full (stats say `compressed: false`); once the turns taken reach `after_turns`, or the full
/// rendering's estimated tokens exceed `above_tokens`, `inner` renders it. A threshold left
/// `None` never triggers; with both `None` the strategy always applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Activated<C> {
    /// The strategy applied once a threshold is crossed.
    pub inner: C,
    /// Apply once this many turns have been taken.
    pub after_turns: Option<usize>,
    /// Apply once the full rendering is estimated above this many tokens.
    pub above_tokens: Option<usize>,
}

impl<C: Compression> Compression for Activated<C> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn to_messages(
        &self,
        turns: &[Turn],
        memory: &[Definition],
        opts: &RenderOptions<'_>,
    ) -> Rendered {
        if self.after_turns.is_none() && self.above_tokens.is_none() {
            return self.inner.to_messages(turns, memory, opts);
        }
        if self.after_turns.is_some_and(|n| turns.len() >= n) {
            return self.inner.to_messages(turns, memory, opts);
        }
        let full = uncompressed_messages(turns, opts);
        if self
            .above_tokens
            .is_some_and(|limit| size_of(&full.0).tokens > limit)
        {
            return self.inner.to_messages(turns, memory, opts);
        }
        render_in_full(self.name(), turns, opts, Some(full))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::cacheable_prefix_len;
    use pretty_assertions::assert_eq;
    use ptc_lisp::Value;

    #[test]
    fn changed_definitions_by_position_and_by_name() {
        let def = |name: &str, value: i64| Definition {
            name: name.into(),
            doc: None,
            value: Value::Int(value),
            params: Vec::new(),
            last_return: None,
        };
        let names = |defs: Vec<&Definition>| -> Vec<String> {
            defs.iter()
                .map(|d| format!("{}={:?}", d.name, d.value))
                .collect()
        };
        let previous = vec![def("a", 1), def("b", 2)];
        let aligned = vec![def("a", 1), def("b", 3), def("c", 4)];
        assert_eq!(
            names(changed_definitions(&previous, &aligned)),
            ["b=3", "c=4"]
        );
        let reordered = vec![def("b", 2), def("c", 4), def("a", 5)];
        assert_eq!(
            names(changed_definitions(&previous, &reordered)),
            ["c=4", "a=5"]
        );
        assert_eq!(names(changed_definitions(&[], &previous)), ["a=1", "b=2"]);
        assert_eq!(
            names(changed_definitions(&previous, &previous)),
            Vec::<String>::new()
        );
    }

    // NS-012: the mission, tool/ and data/ sections open the first user message of every
    // strategy and are found again however much history follows them.
    #[test]
    fn the_cacheable_prefix_ends_after_the_data_section() {
        use ptc_lisp::ToolSpec;
        use std::collections::BTreeMap;
        let tools = vec![ToolSpec::new("search", "Find things").with_params(["q"])];
        let data = BTreeMap::from([("xs".to_string(), Value::vector([Value::Int(1)]))]);
        let opts = RenderOptions::new("Find it", "sys", 5)
            .with_tools(&tools)
            .with_data(&data);
        let turns = vec![Turn::success(1, "(def a 1)", Value::Nil)];
        for strategy in [
            &SingleUserCoalesced::default() as &dyn Compression,
            &Aggressive::default(),
            &Uncompressed,
        ] {
            let rendered = strategy.to_messages(&turns, &[], &opts);
            let first_user = &rendered.messages[1].content;
            let len = cacheable_prefix_len(first_user, &opts)
                .unwrap_or_else(|| panic!("no prefix for {}", strategy.name()));
            assert!(
                first_user[..len].ends_with("data/xs                       ; list[1], whole: [1]")
                    || first_user[..len].ends_with("data/xs                       ; list[1]"),
                "{}: {first_user}",
                strategy.name()
            );
            // The full history's first message is the prefix alone once a turn has been taken.
            let rest = &first_user[len..];
            assert!(rest.is_empty() || rest.starts_with("\n\n"), "{rest}");
        }
        assert_eq!(cacheable_prefix_len("Something else", &opts), None);
        assert_eq!(
            cacheable_prefix_len("Find itx", &RenderOptions::new("Find it", "", 1)),
            None
        );
    }

    #[test]
    fn failed_turn_selection() {
        use ptc_turn::TurnError;
        let ok = |n| Turn::success(n, "ok", Value::Nil);
        let bad = |n| Turn::failure(n, "bad", TurnError::new("k", "m"));
        let turns = vec![bad(1), ok(2), bad(3), bad(4), ok(5), bad(6), bad(7)];
        assert_eq!(FailedTurns::All.select(&turns), vec![0, 2, 3, 5, 6]);
        assert_eq!(FailedTurns::Unrecovered.select(&turns), vec![5, 6]);
        assert_eq!(FailedTurns::Last.select(&turns), vec![6]);
        let recovered = &turns[..5];
        assert_eq!(
            FailedTurns::Unrecovered.select(recovered),
            Vec::<usize>::new()
        );
        assert_eq!(FailedTurns::Last.select(recovered), vec![3]);
    }
}
