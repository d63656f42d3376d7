//! The `Compression` trait, its result, and the built-in strategies.

use crate::options::RenderOptions;
use crate::render::{
    self, Counts, Detail, Feedback, Newest, Parts, successful_prints, successful_tool_calls,
};
use crate::tokenizer::HeuristicTokenizer;
use ptc_lisp::Definition;
use ptc_lisp::Value;
use ptc_turn::{CompressionStats, Message, Role, Turn};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A way of rendering a turn history as the messages the model sees next.
///
/// Rendering is a pure function of its inputs: the same turns, namespace and options
/// always give the same bytes, and nothing is changed or remembered between calls. Turn counts
/// come from the number of turns, never from the number of messages.
pub trait Compression: Send + Sync {
    /// The strategy's name, as written in a compression spec (`single-user-coalesced`).
    fn name(&self) -> &str;

    /// Render `turns` (oldest first) and `memory` (the user namespace after the last turn, in
    /// definition order) as messages, starting with the system message.
    fn to_messages(
        &self,
        turns: &[Turn],
        memory: &[Definition],
        opts: &RenderOptions<'_>,
    ) -> Rendered;
}

/// The messages a strategy produced and what it did to get them.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The messages to send, system message first.
    pub messages: Vec<Message>,
    /// What the strategy showed and left out, and the sizes.
    pub stats: CompressionStats,
}

impl Rendered {
    /// Measure `messages` rendered by a strategy named `strategy` from `turns`: sizes, and the
    /// size of the uncompressed rendering of the same turns. Counts of what was shown are left
    /// at zero for the caller to fill in (for strategies written outside this crate).
    pub fn measure(
        strategy: &str,
        messages: Vec<Message>,
        turns: &[Turn],
        opts: &RenderOptions<'_>,
    ) -> Rendered {
        finish(
            strategy,
            true,
            messages,
            Counts::default(),
            turns,
            opts,
            None,
        )
    }
}

fn char_count(text: &str) -> usize {
    // Prompts are mostly ASCII, and checking that is much cheaper than decoding.
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    }
}

/// Characters and estimated tokens of some messages.
#[derive(Debug, Clone, Copy, Default)]
struct Size {
    chars: usize,
    tokens: usize,
}

impl Size {
    fn add(&mut self, text: &str) {
        let chars = char_count(text);
        self.chars += chars;
        self.tokens += HeuristicTokenizer::tokens_for_chars(chars);
    }
}

fn size_of(messages: &[Message]) -> Size {
    let mut size = Size::default();
    for message in messages {
        size.add(&message.content);
    }
    size
}

fn finish(
    strategy: &str,
    compressed: bool,
    messages: Vec<Message>,
    counts: Counts,
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    baseline: Option<Size>,
) -> Rendered {
    let size = size_of(&messages);
    let baseline = baseline.unwrap_or_else(|| {
        let mut size = Size::default();
        walk_uncompressed(turns, opts, &mut Counts::default(), &mut |_, text| {
            size.add(text)
        });
        size
    });
    let stats = CompressionStats {
        strategy: strategy.to_string(),
        compressed,
        turns: turns.len(),
        turns_compressed: counts.turns_compressed,
        tool_calls_total: counts.tool_calls_total,
        tool_calls_shown: counts.tool_calls_shown,
        tool_calls_dropped: counts
            .tool_calls_total
            .saturating_sub(counts.tool_calls_shown),
        prints_total: counts.prints_total,
        prints_shown: counts.prints_shown,
        prints_dropped: counts.prints_total.saturating_sub(counts.prints_shown),
        failed_turns_shown: counts.failed_shown,
        failed_turns_collapsed: counts.failed_total.saturating_sub(counts.failed_shown),
        messages: messages.len(),
        chars: size.chars,
        estimated_tokens: size.tokens,
        uncompressed_chars: baseline.chars,
        uncompressed_estimated_tokens: baseline.tokens,
    };
    Rendered { messages, stats }
}

/// The length in bytes of the stable, cacheable start of a first user message rendered by any
/// built-in strategy: the mission, the `tool/` section and the `data/` section. These
/// never change between turns of a run, so a provider's prompt cache can serve everything up
/// to there. `None` when `message` does not start with them (e.g. it was not rendered from
/// `opts`).
///
/// ```
/// use ptc_compression::{Compression, RenderOptions, SingleUserCoalesced, cacheable_prefix_len};
/// let opts = RenderOptions::new("Count the users", "Write PTC-Lisp.", 5);
/// let rendered = SingleUserCoalesced::default().to_messages(&[], &[], &opts);
/// let first_user = &rendered.messages[1].content;
/// assert_eq!(cacheable_prefix_len(first_user, &opts), Some("Count the users".len()));
/// ```
pub fn cacheable_prefix_len(message: &str, opts: &RenderOptions<'_>) -> Option<usize> {
    [Detail::Full, Detail::Minimal]
        .into_iter()
        .find_map(|detail| {
            let mut prefix = String::new();
            let mut parts = Parts::new(&mut prefix);
            parts.part(|out| out.push_str(opts.mission));
            parts.part(|out| render::write_tools(out, opts, detail));
            parts.part(|out| render::write_data(out, opts, detail));
            let rest = message.strip_prefix(prefix.as_str())?;
            // The prefix must end where a part ends, not inside a longer line.
            (rest.is_empty() || rest.starts_with("\n\n")).then_some(prefix.len())
        })
}

/// Which failed turns a compressing strategy keeps as full program-and-error pairs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailedTurns {
    /// Every failed turn.
    #[default]
    All,
    /// Failed turns after the last successful one: errors the model has not recovered from.
    Unrecovered,
    /// Only the newest failed turn.
    Last,
}

impl FailedTurns {
    /// The name used in compression specs.
    pub fn as_str(self) -> &'static str {
        match self {
            FailedTurns::All => "all",
            FailedTurns::Unrecovered => "unrecovered",
            FailedTurns::Last => "last",
        }
    }

    /// Indices of the failed turns of `turns` to keep, oldest first.
    fn select(self, turns: &[Turn]) -> Vec<usize> {
        let mut failed = turns
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.is_success())
            .map(|(i, _)| i);
        match self {
            FailedTurns::All => failed.collect(),
            FailedTurns::Unrecovered => {
                let after = turns
                    .iter()
                    .rposition(Turn::is_success)
                    .map_or(0, |i| i + 1);
                (after..turns.len()).collect()
            }
            FailedTurns::Last => failed.next_back().into_iter().collect(),
        }
    }
}

/// The summary user message of `turns` followed by the kept failed turns as program/error
/// pairs. `next` is the number of turns taken once these are done:
/// each turn count is the one the model had when writing the message that follows it.
#[allow(clippy::too_many_arguments)]
fn push_summary_and_failures(
    messages: &mut Vec<Message>,
    turns: &[Turn],
    memory: &[Definition],
    opts: &RenderOptions<'_>,
    detail: Detail,
    failed_turns: FailedTurns,
    next: usize,
    counts: &mut Counts,
) {
    let failed = failed_turns.select(turns);
    let mut user = String::new();
    let mut parts = Parts::new(&mut user);
    render::write_summary(&mut parts, opts, turns, memory, detail, counts);
    let done = failed.first().copied().unwrap_or(next);
    parts.part(|out| render::write_turns_left(out, opts.max_turns, done));
    messages.push(Message::user(user));
    for (k, &i) in failed.iter().enumerate() {
        messages.push(Message::assistant(render::program_text(&turns[i])));
        let feedback = Feedback {
            opts,
            defined: None,
            calls: &[],
            prints: &[],
            with_value: false,
            done: failed.get(k + 1).copied().unwrap_or(next),
        };
        messages.push(feedback.message(&turns[i]));
    }
    counts.failed_shown += failed.len();
    counts.failed_total += turns.iter().filter(|t| !t.is_success()).count();
}

/// The full history: the first user message (mission, `tool/`, `data/`), then for every turn the
/// model's response as written and the feedback on it (all of the turn's tool calls and output,
/// and its value). Also the baseline of every strategy's stats, measured message by message
/// without keeping the messages.
fn walk_uncompressed(
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    counts: &mut Counts,
    emit: &mut dyn FnMut(Role, &str),
) {
    emit(Role::System, opts.system_prompt);
    let mut buffer = String::new();
    let mut parts = Parts::new(&mut buffer);
    render::write_summary(
        &mut parts,
        opts,
        &[],
        &[],
        Detail::Full,
        &mut Counts::default(),
    );
    parts.part(|out| render::write_turns_left(out, opts.max_turns, 0));
    emit(Role::User, &buffer);
    for (i, turn) in turns.iter().enumerate() {
        walk_verbatim_turn(turn, opts, i + 1, counts, &mut buffer, emit);
    }
}

/// A turn as it happened: the response as written, then the feedback on it.
fn walk_verbatim_turn(
    turn: &Turn,
    opts: &RenderOptions<'_>,
    done: usize,
    counts: &mut Counts,
    buffer: &mut String,
    emit: &mut dyn FnMut(Role, &str),
) {
    emit(Role::Assistant, &render::verbatim_text(turn));
    let feedback = Feedback {
        opts,
        defined: None,
        calls: successful_tool_calls(turn),
        prints: successful_prints(turn),
        with_value: true,
        done,
    };
    buffer.clear();
    feedback.write(buffer, turn);
    emit(Role::User, buffer);
    counts.tool_calls_total += feedback.calls.len();
    counts.tool_calls_shown += feedback.calls.len();
    counts.prints_total += feedback.prints.len();
    counts.prints_shown += feedback.prints.len();
    if !turn.is_success() {
        counts.failed_total += 1;
        counts.failed_shown += 1;
    }
}

fn collect_into(messages: &mut Vec<Message>) -> impl FnMut(Role, &str) + '_ {
    |role, text| messages.push(Message::new(role, text))
}

fn uncompressed_messages(turns: &[Turn], opts: &RenderOptions<'_>) -> (Vec<Message>, Counts) {
    let mut messages = Vec::with_capacity(2 + 2 * turns.len());
    let mut counts = Counts::default();
    walk_uncompressed(turns, opts, &mut counts, &mut collect_into(&mut messages));
    (messages, counts)
}

/// Render the full history under another strategy's name: single-shot runs and
/// strategies below their activation threshold.
fn render_in_full(
    strategy: &str,
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    full: Option<(Vec<Message>, Counts)>,
) -> Rendered {
    let (messages, counts) = full.unwrap_or_else(|| uncompressed_messages(turns, opts));
    let size = size_of(&messages);
    finish(strategy, false, messages, counts, turns, opts, Some(size))
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

/// The default strategy: the system prompt, then one user message holding the mission,
/// the namespaces and what all successful turns did, then the kept failed turns as
/// program/error pairs.
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
    push_summary_and_failures(
        &mut messages,
        turns,
        memory,
        opts,
        detail,
        failed_turns,
        turns.len(),
        &mut counts,
    );
    finish(name, true, messages, counts, turns, opts, None)
}

/// The newest `window` turns verbatim (response and feedback, as uncompressed), older turns as
/// the coalesced summary (with the namespace as it was after them) and their kept failures.
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
        if opts.is_single_shot() {
            return render_in_full(self.name(), turns, opts, None);
        }
        let split = turns.len().saturating_sub(self.window);
        let (older, recent) = turns.split_at(split);
        let memory = older.last().map_or(&[][..], Turn::memory);
        let mut messages = vec![Message::system(opts.system_prompt)];
        let mut counts = Counts::default();
        push_summary_and_failures(
            &mut messages,
            older,
            memory,
            opts,
            Detail::Full,
            self.failed_turns,
            split,
            &mut counts,
        );
        let mut buffer = String::new();
        {
            let mut emit = collect_into(&mut messages);
            for (offset, turn) in recent.iter().enumerate() {
                let done = split + offset + 1;
                walk_verbatim_turn(turn, opts, done, &mut counts, &mut buffer, &mut emit);
            }
        }
        finish(self.name(), true, messages, counts, turns, opts, None)
    }
}

/// One pair per turn, in order: the program (without the prose around it) and a summary of what
/// the turn did: definitions it added or changed, its tool calls, its output and its value.
/// Tool calls and output are FIFO-limited across all turns, so old turns' output disappears
/// first. Keeps the chronology the coalesced strategies fold away, at the price of showing
/// programs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerTurnSummary {
    /// Which failed turns to show as program/error pairs.
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
            .filter(|&i| turns[i].is_success() || failed.binary_search(&i).is_ok())
            .collect();
        let calls = Newest::new(turns, successful_tool_calls, opts.limits.tool_call_limit);
        let prints = Newest::new(turns, successful_prints, opts.limits.println_limit);

        let mut messages = Vec::with_capacity(2 + 2 * shown.len());
        messages.push(Message::system(opts.system_prompt));
        let mut counts = Counts::default();
        let mut first = String::new();
        let mut parts = Parts::new(&mut first);
        render::write_summary(&mut parts, opts, &[], &[], Detail::Full, &mut counts);
        let done = shown.first().copied().unwrap_or(turns.len());
        parts.part(|out| render::write_turns_left(out, opts.max_turns, done));
        messages.push(Message::user(first));

        // The namespace after the previous successful turn (every successful turn is shown, so
        // each one's changes are shown exactly once).
        let mut previous: &[Definition] = &[];
        for (k, &i) in shown.iter().enumerate() {
            let turn = &turns[i];
            messages.push(Message::assistant(render::program_text(turn)));
            let done = shown.get(k + 1).copied().unwrap_or(turns.len());
            let message = if turn.is_success() {
                let defined = changed_definitions(previous, turn.memory());
                previous = turn.memory();
                Feedback {
                    opts,
                    defined: Some(&defined),
                    calls: calls.kept_in(i),
                    prints: prints.kept_in(i),
                    with_value: false,
                    done,
                }
                .message(turn)
            } else {
                Feedback {
                    opts,
                    defined: None,
                    calls: &[],
                    prints: &[],
                    with_value: false,
                    done,
                }
                .message(turn)
            };
            messages.push(message);
        }
        counts.turns_compressed = turns.iter().filter(|t| t.is_success()).count();
        counts.tool_calls_total = calls.total;
        counts.tool_calls_shown = calls.shown;
        counts.prints_total = prints.total;
        counts.prints_shown = prints.shown;
        counts.failed_shown = failed.len();
        counts.failed_total = turns.iter().filter(|t| !t.is_success()).count();
        finish(self.name(), true, messages, counts, turns, opts, None)
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

/// Whether two snapshots of a definition are the same definition. Functions read back from JSON
/// are distinct opaque values even when unchanged, so those compare by their printed form.
fn same(a: &Definition, b: &Definition) -> bool {
    a.last_return == b.last_return
        && same_value(&a.value, &b.value)
        && a.doc == b.doc
        && a.params == b.params
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Fn(x), Value::Fn(y)) => {
            x.ptr_eq(y)
                || matches!((x.read_back_text(), y.read_back_text()), (Some(p), Some(q)) if p == q)
        }
        // The same allocation: equal without looking inside.
        (Value::List(x), Value::List(y)) | (Value::Vector(x), Value::Vector(y)) if x.ptr_eq(y) => {
            true
        }
        (Value::Map(x), Value::Map(y)) if x.ptr_eq(y) => true,
        (x, y) => x == y,
    }
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

impl Compression for Box<dyn Compression> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn to_messages(
        &self,
        turns: &[Turn],
        memory: &[Definition],
        opts: &RenderOptions<'_>,
    ) -> Rendered {
        (**self).to_messages(turns, memory, opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn token_estimates_round_up_by_characters() {
        let estimate = |t: &str| HeuristicTokenizer::tokens_for_chars(char_count(t));
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("abcd"), 1);
        assert_eq!(estimate("abcde"), 2);
        assert_eq!(estimate("ääää"), 1);
    }

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
                first_user[..len].ends_with("data/xs                       ; list[1], sample: [1]")
                    || first_user[..len].ends_with("data/xs                       ; list[1]"),
                "{}: {first_user}",
                strategy.name()
            );
            assert!(first_user[len..].starts_with("\n\n"));
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
