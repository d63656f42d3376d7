//! History management for any chat history: keeping the messages sent to a model within
//! bounds, turn after turn.
//!
//! A [`HistoryPolicy`] combines three steps, always applied in this order:
//!
//! 1. **summarize** ([`SummaryStrategy`]): older messages are replaced by one summary message
//!    written by a [`Summarizer`]; a [`SummaryState`] carries the summary across turns so each
//!    turn only summarizes what was added since the last one;
//! 2. **max_tokens**: the oldest non-system messages are dropped until the estimate of a
//!    [`Tokenizer`](crate::tokenizer::Tokenizer) fits;
//! 3. **max_messages**: only the newest messages are kept.
//!
//! Every step keeps all system messages, never separates a tool call from its results, and
//! never leaves an assistant message first after the system messages. [`HistoryManager`]
//! applies a policy; the steps are also available as functions ([`summarize_history`],
//! [`trim_to_tokens`], [`trim_to_messages`]).
//!
//! The files: `policy.rs` (the policy and the summary strategies), `summary_step.rs` (the
//! summary step and the state it keeps), `summarizer.rs` (the [`Summarizer`] trait and what it
//! is asked), `summary_prompt.rs` (the prompt an LLM-backed summarizer sends), `trim.rs` (the
//! two limits), `pairs.rs` (where a history can be cut without separating a tool call from its
//! results), `manager.rs` and `error.rs`.

mod error;
mod manager;
mod pairs;
mod policy;
mod summarizer;
mod summary_prompt;
mod summary_step;
mod trim;

pub use error::HistoryError;
pub use manager::HistoryManager;
pub use policy::{HistoryPolicy, MIN_MESSAGES_FOR_SUMMARY, SummaryStrategy};
pub use summarizer::{Summarizer, SummarizerError, SummaryFuture, SummaryRequest};
pub use summary_prompt::{
    DEFAULT_MAX_MESSAGE_CHARS, SUMMARY_SECTIONS, SummaryPrompt, SummaryPromptBuilder,
    missing_sections,
};
pub use summary_step::{
    SUMMARY_HEADER, SectionSummary, SummaryState, summarize_history, summary_message,
};
pub use trim::{
    TRIM_NOTICE, check_token_limit, system_tokens, trim_notice, trim_to_messages, trim_to_tokens,
};
