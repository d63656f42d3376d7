//! Why history management refused or failed.

use ptc_turn::Message;

use super::SummarizerError;

/// An error from history management. None of them loses anything: the input history is only
/// borrowed, and a failed summary hands an untouched copy back in the error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HistoryError {
    /// The token budget cannot even hold the system messages.
    #[error(
        "max_tokens is {max_tokens}, but the system messages alone take about \
         {system_prompt_tokens} tokens; raise max_tokens to at least {system_prompt_tokens} \
         or shorten the system messages"
    )]
    InvalidTokenLimit {
        /// The estimated tokens of the system messages.
        system_prompt_tokens: usize,
        /// The policy's token budget.
        max_tokens: usize,
    },
    /// Too few messages for the request: a summary of fewer than
    /// [`MIN_MESSAGES_FOR_SUMMARY`](super::MIN_MESSAGES_FOR_SUMMARY) messages, or a message
    /// limit / chunk size of 0 (reported as `message_count: 0, minimum: 1`).
    #[error(
        "history management needs at least {minimum} messages here but got {message_count}; \
         summaries need a history of at least 10 messages (wait for more turns or unset \
         `summarize`), and `max_messages` and `Chunked` sizes must be at least 1"
    )]
    InsufficientHistory {
        /// The messages (or the size) given.
        message_count: usize,
        /// The fewest that would do.
        minimum: usize,
    },
    /// The summarizer failed. `history` is the input history, unchanged, and the summary state
    /// was not modified, so the call can simply be retried.
    #[error(
        "summarizing the history with {strategy} failed: {cause}; the history was left \
         unchanged (retry, or send it without a summary)"
    )]
    CompressionFailed {
        /// The summary strategy that was running.
        strategy: String,
        /// What the summarizer reported.
        cause: SummarizerError,
        /// The history that was to be summarized, unchanged.
        history: Vec<Message>,
    },
}
