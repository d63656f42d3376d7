//! The summary step of a history policy: older messages replaced by a summary, incrementally
//! across turns ([`SummaryState`], [`summarize_history`]).

use std::hash::Hasher;
use std::ops::Range;

use ptc_turn::{Message, Role};
use rustc_hash::FxHasher;
use serde::{Deserialize, Serialize};

use super::pairs::unsafe_cuts;
use super::{
    HistoryError, MIN_MESSAGES_FOR_SUMMARY, Summarizer, SummarizerError, SummaryRequest,
    SummaryStrategy,
};
use crate::tokenizer::message_hash;

/// First line of every summary message, so that readers (and models) can tell a summary from
/// a message somebody actually wrote.
pub const SUMMARY_HEADER: &str = "[Summary of earlier messages in this conversation]";

/// The user message that carries a summary into the history.
///
/// A user message rather than an assistant one: it can follow any kept message, a history
/// that ends with it still ends on the user's side, and it never makes the conversation open
/// with an assistant turn.
pub fn summary_message(summary: &str) -> Message {
    Message::user(format!("{SUMMARY_HEADER}\n{summary}"))
}

/// What has been summarized so far: a watermark into the original history and the summary
/// text covering everything before it.
///
/// Keep one `SummaryState` per conversation and pass it to every call. Each call then only
/// sends the summarizer the messages added since the watermark, together with the previous
/// summary, so the summarizer's total input over a conversation grows linearly with its length
/// instead of quadratically. The state remembers a fingerprint of the covered messages; if the
/// history no longer starts with them (it was edited, or belongs to another conversation), or
/// the strategy now keeps some of them verbatim, the state starts over on its own.
///
/// The state is plain data (serde), so it can be stored with the conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryState {
    covered: usize,
    fingerprint: u64,
    sectioned: bool,
    summaries: Vec<SectionSummary>,
}

/// The summary of one section of the history: the whole history for most strategies, one
/// system-message section for
/// [`WholeHistoryMultipleSystemMessages`](SummaryStrategy::WholeHistoryMultipleSystemMessages).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionSummary {
    /// Index in the original history where the section starts.
    pub section_start: usize,
    /// The summary text, as the summarizer returned it.
    pub text: String,
}

impl SummaryState {
    /// A state with no summary yet.
    pub fn new() -> SummaryState {
        SummaryState::default()
    }

    /// How many messages of the original history the summaries cover (the watermark).
    pub fn covered(&self) -> usize {
        self.covered
    }

    /// The summaries, one per section, in history order.
    pub fn summaries(&self) -> &[SectionSummary] {
        &self.summaries
    }

    /// The latest summary text (of the last section), if any.
    pub fn summary(&self) -> Option<&str> {
        self.summaries.last().map(|s| s.text.as_str())
    }

    /// Forgets everything; the next call summarizes from scratch.
    pub fn reset(&mut self) {
        *self = SummaryState::default();
    }

    fn fresh(sectioned: bool) -> SummaryState {
        SummaryState {
            sectioned,
            fingerprint: prefix_fingerprint(&[]),
            ..SummaryState::default()
        }
    }

    fn summary_for(&self, section_start: usize) -> Option<&str> {
        self.summaries
            .iter()
            .find(|s| s.section_start == section_start)
            .map(|s| s.text.as_str())
    }

    /// Whether this state describes a prefix of `history` under a strategy of this kind, and
    /// its watermark does not fall between a tool call and a result that arrived since.
    fn applies_to(&self, history: &[Message], sectioned: bool, unsafe_cut: &[bool]) -> bool {
        self.sectioned == sectioned
            && self.covered <= history.len()
            && !unsafe_cut[self.covered]
            && self.fingerprint == prefix_fingerprint(&history[..self.covered])
    }
}

fn prefix_fingerprint(messages: &[Message]) -> u64 {
    let mut h = FxHasher::default();
    h.write_usize(messages.len());
    for message in messages {
        h.write_u64(message_hash(message));
    }
    h.finish()
}

/// Replaces older messages of `history` with a summary, as `strategy` says (see
/// [`SummaryStrategy`] for what each keeps), continuing from `state`.
///
/// Fails with [`HistoryError::InsufficientHistory`] for a history of fewer than
/// [`MIN_MESSAGES_FOR_SUMMARY`] messages or a `Chunked(0)` strategy, and with
/// [`HistoryError::CompressionFailed`] if the summarizer fails or returns an empty summary; in
/// every error case `state` is left as it was.
///
/// ```
/// use ptc_compression::history::{
///     SUMMARY_HEADER, SummarizerError, SummaryRequest, SummaryState, SummaryStrategy,
///     summarize_history,
/// };
/// use ptc_turn::Message;
///
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop {
/// #         if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
/// #     }
/// # }
/// let mut history = vec![Message::system("Be helpful."), Message::user("Plan a trip.")];
/// for day in 1..=5 {
///     history.push(Message::assistant(format!("Idea {day}")));
///     history.push(Message::user(format!("More for day {day}?")));
/// }
/// let summarizer = |req: SummaryRequest| -> Result<String, SummarizerError> {
///     Ok(format!("{} ideas discussed", req.messages.len() / 2))
/// };
/// let mut state = SummaryState::new();
/// let strategy = SummaryStrategy::FromLastNMessages(2);
/// let out = block_on(summarize_history(strategy, &history, &mut state, &summarizer)).unwrap();
/// assert_eq!(out.len(), 5); // system, first user, summary, last two messages
/// assert_eq!(out[2].content, format!("{SUMMARY_HEADER}\n4 ideas discussed"));
/// assert_eq!(state.covered(), 10);
/// ```
pub async fn summarize_history(
    strategy: SummaryStrategy,
    history: &[Message],
    state: &mut SummaryState,
    summarizer: &dyn Summarizer,
) -> Result<Vec<Message>, HistoryError> {
    if history.len() < MIN_MESSAGES_FOR_SUMMARY {
        return Err(HistoryError::InsufficientHistory {
            message_count: history.len(),
            minimum: MIN_MESSAGES_FOR_SUMMARY,
        });
    }
    check_strategy(strategy)?;
    summarize_checked(strategy, history, state, summarizer).await
}

pub(crate) fn check_strategy(strategy: SummaryStrategy) -> Result<(), HistoryError> {
    if strategy == SummaryStrategy::Chunked(0) {
        return Err(HistoryError::InsufficientHistory {
            message_count: 0,
            minimum: 1,
        });
    }
    Ok(())
}

/// Where the summarized part ends, and for `Chunked` where each chunk ends.
struct Plan {
    /// Messages before this index are summarized (unless kept); the rest stay verbatim.
    cut: usize,
    /// Boundaries of the summarizer calls between the watermark and `cut`, both included.
    batch_bounds: Vec<usize>,
}

fn plan(
    strategy: SummaryStrategy,
    history: &[Message],
    kept: &[bool],
    unsafe_cut: &[bool],
    from: usize,
) -> Plan {
    let n = history.len();
    // Moving a cut earlier keeps more verbatim; position 0 is always safe.
    let safe_at_or_before = |mut c: usize| {
        while c > 0 && unsafe_cut[c] {
            c -= 1;
        }
        c
    };
    let cut = match strategy {
        SummaryStrategy::WholeHistory | SummaryStrategy::WholeHistoryMultipleSystemMessages => n,
        SummaryStrategy::FromLastNMessages(keep) => safe_at_or_before(n.saturating_sub(keep)),
        SummaryStrategy::FromTimestamp(instant) => safe_at_or_before(
            history
                .iter()
                .position(|m| m.timestamp_ms.is_some_and(|t| t >= instant))
                .unwrap_or(n),
        ),
        SummaryStrategy::Chunked(size) => {
            let size = size.max(1);
            let mut bounds = vec![from];
            let mut start = from;
            loop {
                let mut end = start;
                let mut taken = 0;
                while end < n && taken < size {
                    if !kept[end] {
                        taken += 1;
                    }
                    end += 1;
                }
                if taken < size {
                    break;
                }
                // Take the rest of a call's results into the chunk; position n is always safe.
                while end < n && unsafe_cut[end] {
                    end += 1;
                }
                bounds.push(end);
                start = end;
            }
            return Plan {
                cut: start,
                batch_bounds: bounds,
            };
        }
    };
    Plan {
        cut,
        batch_bounds: vec![from.min(cut), cut],
    }
}

/// The sections summarized separately: one for the whole history, or one per system message.
fn sections(history: &[Message], sectioned: bool) -> Vec<Range<usize>> {
    let n = history.len();
    if !sectioned {
        // One section holding the whole history (a one-element vector, not a range of indices).
        return std::iter::once(0..n).collect();
    }
    let mut starts: Vec<usize> = history
        .iter()
        .enumerate()
        .filter(|(i, m)| m.role == Role::System && *i > 0)
        .map(|(i, _)| i)
        .collect();
    starts.insert(0, 0);
    let mut out = Vec::with_capacity(starts.len());
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(n);
        out.push(start..end);
    }
    out
}

/// Messages kept verbatim: every system message and the first user message of each section.
fn kept_messages(history: &[Message], sections: &[Range<usize>]) -> Vec<bool> {
    let mut kept: Vec<bool> = history.iter().map(|m| m.role == Role::System).collect();
    for section in sections {
        if let Some(i) = section.clone().find(|&i| history[i].role == Role::User) {
            kept[i] = true;
        }
    }
    kept
}

pub(crate) async fn summarize_checked(
    strategy: SummaryStrategy,
    history: &[Message],
    state: &mut SummaryState,
    summarizer: &dyn Summarizer,
) -> Result<Vec<Message>, HistoryError> {
    let sectioned = strategy.is_sectioned();
    let sections = sections(history, sectioned);
    let kept = kept_messages(history, &sections);
    let unsafe_cut = unsafe_cuts(history);

    let mut base = if state.applies_to(history, sectioned, &unsafe_cut) {
        state.clone()
    } else {
        SummaryState::fresh(sectioned)
    };
    let mut plan = plan(strategy, history, &kept, &unsafe_cut, base.covered);
    if plan.cut < base.covered {
        // The strategy now keeps verbatim some messages the old summary covers.
        base = SummaryState::fresh(sectioned);
        plan = plan_from_scratch(strategy, history, &kept, &unsafe_cut);
    }

    let fail = |cause: SummarizerError| HistoryError::CompressionFailed {
        strategy: strategy.to_string(),
        cause,
        history: history.to_vec(),
    };

    let mut summaries = Vec::new();
    for section in &sections {
        let task = section
            .clone()
            .find(|&i| history[i].role == Role::User)
            .map(|i| history[i].content.clone());
        let mut text = base.summary_for(section.start).map(str::to_owned);
        for batch in plan.batch_bounds.windows(2) {
            let lo = batch[0].max(section.start);
            let hi = batch[1].min(section.end);
            let messages: Vec<Message> = (lo..hi)
                .filter(|&i| !kept[i])
                .map(|i| history[i].clone())
                .collect();
            if messages.is_empty() {
                continue;
            }
            let request = SummaryRequest {
                strategy,
                task: task.clone(),
                previous_summary: text.take(),
                messages,
            };
            let summary = summarizer.summarize(request).await.map_err(fail)?;
            if summary.trim().is_empty() {
                return Err(fail(SummarizerError::new(
                    "the summarizer returned an empty summary",
                )));
            }
            text = Some(summary);
        }
        if let Some(text) = text {
            summaries.push(SectionSummary {
                section_start: section.start,
                text,
            });
        }
    }

    let cut = plan.cut;
    let mut out = Vec::new();
    for section in &sections {
        for i in section.start..section.end.min(cut) {
            if kept[i] {
                out.push(history[i].clone());
            }
        }
        if let Some(summary) = summaries.iter().find(|s| s.section_start == section.start) {
            out.push(summary_message(&summary.text));
        }
    }
    out.extend_from_slice(&history[cut..]);

    *state = SummaryState {
        covered: cut,
        fingerprint: prefix_fingerprint(&history[..cut]),
        sectioned,
        summaries,
    };
    Ok(out)
}

fn plan_from_scratch(
    strategy: SummaryStrategy,
    history: &[Message],
    kept: &[bool],
    unsafe_cut: &[bool],
) -> Plan {
    plan(strategy, history, kept, unsafe_cut, 0)
}
