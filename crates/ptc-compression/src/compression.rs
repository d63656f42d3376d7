//! The `Compression` trait and what every strategy's rendering shares: how a request ends
//! with the turn count and is measured against the full history, the cache points of what the
//! next request repeats, and the full history itself (the baseline of every strategy's stats,
//! and what single-shot runs and strategies below their threshold send).

use crate::cost::CachePoint;
use crate::render::feedback::{Feedback, ValueShown, end_with_turns_left};
use crate::render::parts::{Counts, Detail, Parts, verbatim_text};
use crate::render::prefix::write_prefix;
use crate::render_options::RenderOptions;
use crate::stats::CompressionStats;
use crate::tokenizer::HeuristicTokenizer;
use ptc_lisp::Definition;
use ptc_turn::{Message, Role, Turn};

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
    /// Where the parts of `messages` end that the next request will repeat byte for byte if
    /// the run goes on (indices count the system message): the stable `tool/` and `data/`
    /// prefix, and for a history that only grows, everything before the turn count. Providers
    /// with explicit prompt caching mark these points.
    pub cache_points: Vec<CachePoint>,
}

impl Rendered {
    /// Measure `messages` rendered by a strategy named `strategy` from `turns`: sizes, and the
    /// size of the uncompressed rendering of the same turns. Counts of what was shown are left
    /// at zero for the caller to fill in (for strategies written outside this crate); the
    /// stable `tool/` and `data/` prefix is the only cache point.
    pub fn measure(
        strategy: &str,
        messages: Vec<Message>,
        turns: &[Turn],
        opts: &RenderOptions<'_>,
    ) -> Rendered {
        let cache_points = prefix_point(&messages, opts).into_iter().collect();
        let produced = Produced {
            strategy,
            compressed: true,
            messages,
            counts: Counts::default(),
            cache_points,
        };
        finish(produced, turns, opts, None)
    }
}

/// The cache point at the end of the stable prefix (mission, `tool/` and `data/`, see
/// [`cacheable_prefix_len`]) of the first message after the system messages, when that message
/// is the user's and starts with the prefix: what stays cacheable of a history that was
/// trimmed or summarized.
///
/// ```
/// use ptc_compression::{CachePoint, Compression, RenderOptions, SingleUserCoalesced, prefix_point};
/// let opts = RenderOptions::new("Count the users", "Write PTC-Lisp.", 5);
/// let rendered = SingleUserCoalesced::default().to_messages(&[], &[], &opts);
/// assert_eq!(
///     prefix_point(&rendered.messages, &opts),
///     Some(CachePoint::new(1, "Count the users".len()))
/// );
/// assert_eq!(prefix_point(&rendered.messages[..1], &opts), None);
/// ```
pub fn prefix_point(messages: &[Message], opts: &RenderOptions<'_>) -> Option<CachePoint> {
    let index = messages.iter().position(|m| m.role != Role::System)?;
    let first = &messages[index];
    if first.role != Role::User {
        return None;
    }
    cacheable_prefix_len(&first.content, opts)
        .filter(|&len| len > 0)
        .map(|len| CachePoint::new(index, len))
}

/// The cache points of a rendering that only grows from request to request: the stable prefix,
/// and the last message up to its turn count (`stable` bytes).
pub(crate) fn growing_points(
    messages: &[Message],
    opts: &RenderOptions<'_>,
    stable: usize,
) -> Vec<CachePoint> {
    let mut points: Vec<CachePoint> = prefix_point(messages, opts).into_iter().collect();
    if let Some(last) = messages.len().checked_sub(1)
        && stable > 0
        && points.last() != Some(&CachePoint::new(last, stable))
    {
        points.push(CachePoint::new(last, stable));
    }
    points
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
pub(crate) struct Size {
    pub chars: usize,
    pub tokens: usize,
}

impl Size {
    pub(crate) fn add(&mut self, text: &str) {
        let chars = char_count(text);
        self.chars += chars;
        self.tokens += HeuristicTokenizer::tokens_for_chars(chars);
    }
}

pub(crate) fn size_of(messages: &[Message]) -> Size {
    let mut size = Size::default();
    for message in messages {
        size.add(&message.content);
    }
    size
}

/// A strategy's messages and what it did to make them, before they are measured.
pub(crate) struct Produced<'s> {
    pub strategy: &'s str,
    pub compressed: bool,
    pub messages: Vec<Message>,
    pub counts: Counts,
    pub cache_points: Vec<CachePoint>,
}

/// Measures what a strategy produced from `turns` against the uncompressed rendering of the same
/// turns (`baseline`, when the caller has its size already).
pub(crate) fn finish(
    produced: Produced<'_>,
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    baseline: Option<Size>,
) -> Rendered {
    let Produced {
        strategy,
        compressed,
        messages,
        counts,
        cache_points,
    } = produced;
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
    Rendered {
        messages,
        stats,
        cache_points,
    }
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
            write_prefix(&mut Parts::new(&mut prefix), opts, detail);
            let rest = message.strip_prefix(prefix.as_str())?;
            // The prefix must end where a part ends, not inside a longer line.
            (rest.is_empty() || rest.starts_with("\n\n")).then_some(prefix.len())
        })
}

/// The index after the last successful turn: the turns from there on failed and were not
/// recovered from.
pub(crate) fn unrecovered_from(turns: &[Turn]) -> usize {
    turns
        .iter()
        .rposition(Turn::is_success)
        .map_or(0, |i| i + 1)
}

/// The full history: the first user message (mission, `tool/`, `data/`), then for every turn the
/// model's response as written and the feedback on it (all of the turn's tool calls with their
/// results, its output, and its value or error), and the turn count at the very end. Also the
/// baseline of every strategy's stats, measured message by message without keeping the
/// messages. Returns the length of the last message before its turn count.
fn walk_uncompressed(
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    counts: &mut Counts,
    emit: &mut dyn FnMut(Role, &str),
) -> usize {
    emit(Role::System, opts.system_prompt);
    let mut buffer = String::new();
    write_prefix(&mut Parts::new(&mut buffer), opts, Detail::Full);
    let mut stable = buffer.len();
    if turns.is_empty() {
        push_turns_left(&mut buffer, opts, turns);
    }
    emit(Role::User, &buffer);
    for (i, turn) in turns.iter().enumerate() {
        emit(Role::Assistant, &verbatim_text(turn));
        buffer.clear();
        write_verbatim_feedback(turn, opts, counts, &mut buffer);
        stable = buffer.len();
        if i + 1 == turns.len() {
            push_turns_left(&mut buffer, opts, turns);
        }
        emit(Role::User, &buffer);
    }
    stable
}

fn push_turns_left(out: &mut String, opts: &RenderOptions<'_>, turns: &[Turn]) {
    let mut message = [Message::user(std::mem::take(out))];
    end_with_turns_left(&mut message, opts, turns);
    let [message] = message;
    *out = message.content;
}

/// The feedback on a turn as the full history shows it.
pub(crate) fn write_verbatim_feedback(
    turn: &Turn,
    opts: &RenderOptions<'_>,
    counts: &mut Counts,
    out: &mut String,
) {
    let feedback = Feedback {
        opts,
        defined: None,
        calls: turn.tool_calls(),
        prints: turn.prints(),
        value: ValueShown::Always,
    };
    feedback.write(out, turn);
    count_shown_turn(counts, turn, feedback.prints.len());
    if !turn.is_success() {
        counts.failed_total += 1;
    }
}

/// The full history as messages, with its counts and its cache points.
pub(crate) fn uncompressed_messages(
    turns: &[Turn],
    opts: &RenderOptions<'_>,
) -> (Vec<Message>, Counts, Vec<CachePoint>) {
    let mut messages = Vec::with_capacity(2 + 2 * turns.len());
    let mut counts = Counts::default();
    let stable = walk_uncompressed(turns, opts, &mut counts, &mut |role, text| {
        messages.push(Message::new(role, text))
    });
    let points = growing_points(&messages, opts, stable);
    (messages, counts, points)
}

/// Render the full history under another strategy's name: single-shot runs and
/// strategies below their activation threshold.
pub(crate) fn render_in_full(
    strategy: &str,
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    full: Option<(Vec<Message>, Counts, Vec<CachePoint>)>,
) -> Rendered {
    let (messages, counts, points) = full.unwrap_or_else(|| uncompressed_messages(turns, opts));
    let size = size_of(&messages);
    let produced = Produced {
        strategy,
        compressed: false,
        messages,
        counts,
        cache_points: points,
    };
    finish(produced, turns, opts, Some(size))
}

/// Render the full history for a single-shot run, which is never compressed.
pub(crate) fn render_single_shot(
    strategy: &str,
    turns: &[Turn],
    opts: &RenderOptions<'_>,
) -> Rendered {
    render_in_full(strategy, turns, opts, None)
}

/// What of a rendering the next request repeats byte for byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Repeats {
    /// Only the `tool/` and `data/` prefix: the rest is rewritten.
    Prefix,
    /// Everything but the turn count: the history only grows.
    AllButTurnCount,
}

/// Ends `messages` with the turn count and measures them, with the cache points of what the
/// next request repeats.
pub(crate) fn finish_request(
    strategy: &str,
    mut messages: Vec<Message>,
    counts: Counts,
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    repeats: Repeats,
) -> Rendered {
    let stable = end_with_turns_left(&mut messages, opts, turns);
    let points = match repeats {
        Repeats::Prefix => prefix_point(&messages, opts).into_iter().collect(),
        Repeats::AllButTurnCount => growing_points(&messages, opts, stable),
    };
    let produced = Produced {
        strategy,
        compressed: true,
        messages,
        counts,
        cache_points: points,
    };
    finish(produced, turns, opts, None)
}

/// Counts turns that a request shows as they happened, each as its program and the feedback on
/// it with all of its prints (see [`count_shown_turn`]).
pub(crate) fn count_shown_turns(counts: &mut Counts, turns: &[Turn]) {
    for turn in turns {
        count_shown_turn(counts, turn, turn.prints().len());
    }
}

/// Counts a turn that a request shows as its program and the feedback on it: every one of its
/// tool calls, `prints_shown` of its prints, and the turn itself if it failed.
pub(crate) fn count_shown_turn(counts: &mut Counts, turn: &Turn, prints_shown: usize) {
    counts.tool_calls_total += turn.tool_calls().len();
    counts.tool_calls_shown += turn.tool_calls().len();
    counts.prints_total += turn.prints().len();
    counts.prints_shown += prints_shown;
    if !turn.is_success() {
        counts.failed_shown += 1;
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
}
