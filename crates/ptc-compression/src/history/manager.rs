//! [`HistoryManager`]: a [`HistoryPolicy`] applied with one tokenizer across a conversation.

use std::fmt;
use std::sync::Arc;

use ptc_turn::Message;

use super::summary_step::{check_strategy, summarize_checked};
use super::trim::{check_token_limit, trim_to_messages, trim_to_tokens};
use super::{HistoryError, HistoryPolicy, MIN_MESSAGES_FOR_SUMMARY, Summarizer, SummaryState};
use crate::tokenizer::{CachingTokenizer, HeuristicTokenizer, Tokenizer};

/// Applies a [`HistoryPolicy`] to the history of one conversation, turn after turn.
///
/// The manager owns the tokenizer (wrapped in a [`CachingTokenizer`] when the policy's
/// `token_caching` is on, so counts survive from one turn to the next); the caller owns the
/// history and the [`SummaryState`]. The history is only read: each call returns the messages
/// to send this time, and the full history stays the record to append to.
///
/// ```
/// use ptc_compression::history::{HistoryManager, HistoryPolicy};
/// use ptc_turn::Message;
///
/// let manager = HistoryManager::new(HistoryPolicy::default().with_max_messages(3));
/// let history = vec![
///     Message::system("Be brief."),
///     Message::user("Hi"),
///     Message::assistant("Hello!"),
///     Message::user("Weather?"),
/// ];
/// let to_send = manager.apply_limits(&history).unwrap();
/// assert_eq!(to_send, vec![history[0].clone(), history[3].clone()]);
/// ```
#[derive(Clone)]
pub struct HistoryManager {
    policy: HistoryPolicy,
    tokenizer: Arc<dyn Tokenizer>,
}

impl fmt::Debug for HistoryManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HistoryManager")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl HistoryManager {
    /// A manager estimating tokens with [`HeuristicTokenizer`].
    pub fn new(policy: HistoryPolicy) -> HistoryManager {
        HistoryManager::with_tokenizer(policy, HeuristicTokenizer)
    }

    /// A manager estimating tokens with `tokenizer` (cached if the policy says so).
    pub fn with_tokenizer<T: Tokenizer + 'static>(
        policy: HistoryPolicy,
        tokenizer: T,
    ) -> HistoryManager {
        let tokenizer: Arc<dyn Tokenizer> = if policy.token_caching {
            Arc::new(CachingTokenizer::new(tokenizer))
        } else {
            Arc::new(tokenizer)
        };
        HistoryManager { policy, tokenizer }
    }

    /// A manager for `policy` that shares this one's tokenizer (and so its cached counts):
    /// for a caller whose budget changes from call to call, e.g. to reserve room for a message
    /// it always sends. The tokenizer stays as it is, whatever `policy.token_caching` says.
    pub fn with_policy(&self, policy: HistoryPolicy) -> HistoryManager {
        HistoryManager {
            policy,
            tokenizer: Arc::clone(&self.tokenizer),
        }
    }

    /// The policy this manager applies.
    pub fn policy(&self) -> &HistoryPolicy {
        &self.policy
    }

    /// The tokenizer used for budgets, to measure what [`apply`](Self::apply) returns.
    pub fn tokenizer(&self) -> &dyn Tokenizer {
        self.tokenizer.as_ref()
    }

    /// Checks the policy against `history` without changing anything: `max_messages` and a
    /// `Chunked` size must be at least 1 ([`HistoryError::InsufficientHistory`]), and
    /// `max_tokens` must hold the system messages ([`HistoryError::InvalidTokenLimit`]).
    pub fn validate(&self, history: &[Message]) -> Result<(), HistoryError> {
        if self.policy.max_messages == Some(0) {
            return Err(HistoryError::InsufficientHistory {
                message_count: 0,
                minimum: 1,
            });
        }
        if let Some(strategy) = self.policy.summarize {
            check_strategy(strategy)?;
        }
        if let Some(max_tokens) = self.policy.max_tokens {
            check_token_limit(history, max_tokens, self.tokenizer())?;
        }
        Ok(())
    }

    /// The messages to send for `history`: summarized, then trimmed to `max_tokens`, then to
    /// `max_messages`, as far as the policy asks.
    ///
    /// The summary step runs once the history has [`MIN_MESSAGES_FOR_SUMMARY`] messages and
    /// is skipped before that, so the same policy serves a conversation from its first turn;
    /// call [`summarize_history`](super::summarize_history) directly to treat a short history
    /// as an error instead. `state` carries the summary from call to call (see
    /// [`SummaryState`]); it is only updated when the whole call succeeds.
    ///
    /// Errors: those of [`validate`](Self::validate), checked before any summarizer call, and
    /// [`HistoryError::CompressionFailed`] when the summarizer fails.
    pub async fn apply(
        &self,
        history: &[Message],
        state: &mut SummaryState,
        summarizer: &dyn Summarizer,
    ) -> Result<Vec<Message>, HistoryError> {
        self.validate(history)?;
        match self.policy.summarize {
            Some(strategy) if history.len() >= MIN_MESSAGES_FOR_SUMMARY => {
                let summarized = summarize_checked(strategy, history, state, summarizer).await?;
                self.limit(&summarized)
            }
            _ => self.limit(history),
        }
    }

    /// Like [`apply`](Self::apply) without the summary step: only `max_tokens` and
    /// `max_messages`, synchronously.
    pub fn apply_limits(&self, history: &[Message]) -> Result<Vec<Message>, HistoryError> {
        self.validate(history)?;
        self.limit(history)
    }

    fn limit(&self, history: &[Message]) -> Result<Vec<Message>, HistoryError> {
        let mut messages = match self.policy.max_tokens {
            Some(max_tokens) => trim_to_tokens(history, max_tokens, self.tokenizer())?,
            None => history.to_vec(),
        };
        if let Some(max_messages) = self.policy.max_messages {
            messages = trim_to_messages(&messages, max_messages)?;
        }
        Ok(messages)
    }
}
