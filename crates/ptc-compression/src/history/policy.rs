//! What a [`HistoryPolicy`] asks for.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The fewest messages a history must hold before a summary of it is made.
///
/// Below this, a summary saves little and loses detail: [`summarize_history`] refuses with
/// [`HistoryError::InsufficientHistory`], and [`HistoryManager::apply`] skips the summary step.
///
/// [`summarize_history`]: super::summarize_history
/// [`HistoryError::InsufficientHistory`]: super::HistoryError::InsufficientHistory
/// [`HistoryManager::apply`]: super::HistoryManager::apply
pub const MIN_MESSAGES_FOR_SUMMARY: usize = 10;

/// How a chat history is kept within bounds before it is sent to a model.
///
/// The steps run in a fixed order: `summarize`, then `max_tokens`, then `max_messages`. A
/// summary keeps the most information, so it runs first; the token budget is what the provider
/// enforces, so it runs next; the message count is a coarse fallback. Every step keeps all
/// system messages and never separates a tool call from its results.
///
/// ```
/// use ptc_compression::history::{HistoryPolicy, SummaryStrategy};
///
/// let policy = HistoryPolicy::default()
///     .with_summary(SummaryStrategy::FromLastNMessages(8))
///     .with_max_tokens(32_000);
/// assert!(policy.token_caching);
/// assert_eq!(policy.max_messages, None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct HistoryPolicy {
    /// Replace older messages with a summary (see [`SummaryStrategy`]).
    pub summarize: Option<SummaryStrategy>,
    /// Drop the oldest non-system messages until the estimated prompt size fits.
    pub max_tokens: Option<usize>,
    /// Keep at most this many messages (more only if the system messages alone are more).
    pub max_messages: Option<usize>,
    /// Cache per-message token counts instead of recounting them on every call.
    pub token_caching: bool,
}

impl Default for HistoryPolicy {
    fn default() -> HistoryPolicy {
        HistoryPolicy {
            summarize: None,
            max_tokens: None,
            max_messages: None,
            token_caching: true,
        }
    }
}

impl HistoryPolicy {
    /// The policy with `strategy` as its summary step.
    pub fn with_summary(mut self, strategy: SummaryStrategy) -> HistoryPolicy {
        self.summarize = Some(strategy);
        self
    }

    /// The policy with a token budget of `max_tokens`.
    pub fn with_max_tokens(mut self, max_tokens: usize) -> HistoryPolicy {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The policy keeping at most `max_messages` messages.
    pub fn with_max_messages(mut self, max_messages: usize) -> HistoryPolicy {
        self.max_messages = Some(max_messages);
        self
    }

    /// The policy with per-message token counts cached (`true`, the default) or recounted.
    pub fn with_token_caching(mut self, token_caching: bool) -> HistoryPolicy {
        self.token_caching = token_caching;
        self
    }
}

/// Which part of a history a summary replaces.
///
/// All strategies keep every system message and the first user message verbatim (the
/// sectioned strategy keeps the first user message of each section), and never split a tool
/// call from its results. The summary arrives as one user message starting with
/// [`SUMMARY_HEADER`](super::SUMMARY_HEADER), placed after the kept messages it follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SummaryStrategy {
    /// Summarize every message except the kept ones:
    /// `[system…, first user, summary]`.
    WholeHistory,
    /// Keep the newest `n` messages verbatim and summarize everything before them. The kept
    /// tail grows backwards (never shrinks) when its first message would be a tool result
    /// whose call lies before it.
    FromLastNMessages(usize),
    /// Summarize in whole chunks of this many summarizable messages, one summarizer call per
    /// chunk, each folding the chunk into the running summary. Messages that do not fill a
    /// complete chunk stay verbatim until enough new ones arrive, so the summarizer runs once
    /// per chunk rather than once per turn. A chunk that would end between a tool call and its
    /// results is extended to include them. A size of 0 is rejected.
    Chunked(usize),
    /// Summarize the messages before the first message stamped at or after this instant
    /// (milliseconds since the Unix epoch) and keep the rest verbatim. Messages without a
    /// timestamp belong with their neighbours: only the first stamped message at or after
    /// the instant decides the boundary. If no message is that recent, everything is
    /// summarized, as with `WholeHistory`.
    FromTimestamp(i64),
    /// Treat each system message as the start of a section (messages before the first system
    /// message form a section of their own) and summarize each section separately:
    /// `[system₁, first user of section 1, summary₁, system₂, first user of section 2, summary₂, …]`.
    /// For conversations whose instructions change midway, so that what happened under
    /// each set of instructions stays attributable to it.
    WholeHistoryMultipleSystemMessages,
}

impl SummaryStrategy {
    /// Whether the strategy summarizes each system-message section on its own.
    pub fn is_sectioned(self) -> bool {
        matches!(self, SummaryStrategy::WholeHistoryMultipleSystemMessages)
    }
}

impl fmt::Display for SummaryStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SummaryStrategy::WholeHistory => f.write_str("WholeHistory"),
            SummaryStrategy::FromLastNMessages(n) => write!(f, "FromLastNMessages({n})"),
            SummaryStrategy::Chunked(size) => write!(f, "Chunked({size})"),
            SummaryStrategy::FromTimestamp(t) => write!(f, "FromTimestamp({t})"),
            SummaryStrategy::WholeHistoryMultipleSystemMessages => {
                f.write_str("WholeHistoryMultipleSystemMessages")
            }
        }
    }
}
