//! What a turn or a run cost: tokens, model requests and time.

use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// Tokens one model call used (or several, summed), counted the same way for every provider:
/// the four counts do not overlap, so the prompt was `input_tokens + cache_read_tokens +
/// cache_write_tokens` tokens long (see [`prompt_tokens`](Self::prompt_tokens)).
///
/// Anthropic reports the counts this way. OpenAI's `prompt_tokens` includes the cached ones, so
/// `input_tokens` is `prompt_tokens - cached_tokens` there. Sums saturate instead of overflowing.
///
/// ```
/// use ptc_turn::TokenUsage;
/// let mut usage = TokenUsage { input_tokens: 90, output_tokens: 12, ..TokenUsage::default() };
/// usage += TokenUsage { cache_read_tokens: 1000, ..TokenUsage::default() };
/// assert_eq!((usage.prompt_tokens(), usage.total()), (1090, 1102));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TokenUsage {
    /// Prompt tokens processed at the normal rate (neither read from nor written to the cache).
    pub input_tokens: u64,
    /// Tokens of the reply.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's prompt cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's prompt cache.
    pub cache_write_tokens: u64,
}

impl TokenUsage {
    /// The length of the prompt: cached and uncached input tokens together.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }

    /// Every token of the call, prompt and reply.
    pub fn total(&self) -> u64 {
        self.prompt_tokens().saturating_add(self.output_tokens)
    }

    /// Whether no tokens were counted.
    pub fn is_zero(&self) -> bool {
        *self == TokenUsage::default()
    }
}

impl AddAssign for TokenUsage {
    fn add_assign(&mut self, other: TokenUsage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
    }
}

/// The cost of one turn (on [`crate::Turn`]) or of a whole run (on [`crate::Step`], the sum over
/// its turns plus any model requests that produced no turn, such as those of a model call that
/// failed for good and ended the run).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "TokenUsage::is_zero")]
    /// Tokens reported by the provider.
    pub tokens: TokenUsage,
    /// Requests sent to the model: every attempt, whether the agent's retry policy or an HTTP
    /// provider's own retries made it (so more than one per turn after a transient failure),
    /// and the calls that wrote history summaries.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub llm_requests: u32,
    /// Time spent waiting for the model, in microseconds.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub llm_duration_us: u64,
    /// Time spent running programs, in microseconds.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub eval_duration_us: u64,
    /// Wall-clock time of the turn or run, in microseconds.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub duration_us: u64,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Whether nothing was counted.
    pub fn is_zero(&self) -> bool {
        *self == Usage::default()
    }

    /// The total of several usages (a run's usage from its turns' usages).
    pub fn sum<'a>(usages: impl IntoIterator<Item = &'a Usage>) -> Usage {
        let mut total = Usage::default();
        for usage in usages {
            total += usage.clone();
        }
        total
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.tokens += other.tokens;
        self.llm_requests = self.llm_requests.saturating_add(other.llm_requests);
        self.llm_duration_us = self.llm_duration_us.saturating_add(other.llm_duration_us);
        self.eval_duration_us = self.eval_duration_us.saturating_add(other.eval_duration_us);
        self.duration_us = self.duration_us.saturating_add(other.duration_us);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn usages_add_up() {
        let turn = |input| Usage {
            tokens: TokenUsage {
                input_tokens: input,
                output_tokens: 10,
                cache_read_tokens: 5,
                cache_write_tokens: 0,
            },
            llm_requests: 1,
            llm_duration_us: 100,
            eval_duration_us: 20,
            duration_us: 130,
        };
        let total = Usage::sum(&[turn(50), Usage::default(), turn(70)]);
        assert_eq!(total.tokens.input_tokens, 120);
        assert_eq!(total.tokens.total(), 120 + 20 + 10);
        assert_eq!(total.llm_requests, 2);
        assert_eq!(total.duration_us, 260);
        assert_eq!(total.eval_duration_us, 40);
    }

    #[test]
    fn compression_stats_in_older_records_are_ignored() {
        // Records written when a turn's usage also held its compression stats still load.
        let back: Usage = serde_json::from_str(
            r#"{"llm_requests": 2, "compression": {"strategy": "append-compact", "turns": 3}}"#,
        )
        .unwrap();
        assert_eq!(
            back,
            Usage {
                llm_requests: 2,
                ..Usage::default()
            }
        );
    }

    #[test]
    fn empty_usage_serializes_as_an_empty_object() {
        assert_eq!(serde_json::to_string(&Usage::default()).unwrap(), "{}");
        let back: Usage = serde_json::from_str("{}").unwrap();
        assert!(back.is_zero());
    }
}
