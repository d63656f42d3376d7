//! What one rendering of a turn history did, against the uncompressed rendering of the same
//! turns.

use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// What a history-compression strategy did in one rendering of the turn history, measured
/// against the uncompressed rendering of the same turns.
///
/// Counts of tool calls and prints cover successful turns (failed turns are shown as their full
/// program and error, never as lists of calls or prints). Character counts are Unicode scalar
/// values of the message contents; token counts are estimates (about four characters a token)
/// meant for comparing strategies, not for billing.
///
/// Stats are computed when a history is rendered ([`Compression::to_messages`](crate::Compression::to_messages)),
/// never stored with the turns: render a recorded run again to see them (`ptc render --stats`).
/// Added together (`+=`), every count is a total over the renders and `strategy` is the
/// strategy of the most recent one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompressionStats {
    /// The strategy that produced the messages.
    pub strategy: String,
    /// Whether the messages are a compressed view. `false` when the history was rendered in full:
    /// compression off, single-shot runs, or a strategy below its activation threshold.
    pub compressed: bool,
    /// Turns in the rendered history.
    pub turns: usize,
    /// Successful turns folded into a summary instead of being shown as their own messages.
    pub turns_compressed: usize,
    /// Tool calls of successful turns.
    pub tool_calls_total: usize,
    /// Tool calls listed.
    pub tool_calls_shown: usize,
    /// Tool calls left out by the FIFO limit (the oldest).
    pub tool_calls_dropped: usize,
    /// `println` entries of successful turns.
    pub prints_total: usize,
    /// `println` entries shown.
    pub prints_shown: usize,
    /// `println` entries left out by the FIFO limit (the oldest).
    pub prints_dropped: usize,
    /// Failed turns shown as their full program and error.
    pub failed_turns_shown: usize,
    /// Failed turns left out (see the `failed_turns` option).
    pub failed_turns_collapsed: usize,
    /// Messages rendered, including the system message.
    pub messages: usize,
    /// Characters of all rendered message contents.
    pub chars: usize,
    /// Estimated tokens of the rendered messages.
    pub estimated_tokens: usize,
    /// Characters of the uncompressed rendering of the same turns.
    pub uncompressed_chars: usize,
    /// Estimated tokens of the uncompressed rendering of the same turns.
    pub uncompressed_estimated_tokens: usize,
}

impl CompressionStats {
    /// Estimated tokens saved compared with the uncompressed rendering (zero when the compressed
    /// rendering is not smaller).
    pub fn saved_tokens(&self) -> usize {
        self.uncompressed_estimated_tokens
            .saturating_sub(self.estimated_tokens)
    }
}

impl AddAssign for CompressionStats {
    fn add_assign(&mut self, other: CompressionStats) {
        self.strategy = other.strategy;
        self.compressed |= other.compressed;
        self.turns += other.turns;
        self.turns_compressed += other.turns_compressed;
        self.tool_calls_total += other.tool_calls_total;
        self.tool_calls_shown += other.tool_calls_shown;
        self.tool_calls_dropped += other.tool_calls_dropped;
        self.prints_total += other.prints_total;
        self.prints_shown += other.prints_shown;
        self.prints_dropped += other.prints_dropped;
        self.failed_turns_shown += other.failed_turns_shown;
        self.failed_turns_collapsed += other.failed_turns_collapsed;
        self.messages += other.messages;
        self.chars += other.chars;
        self.estimated_tokens += other.estimated_tokens;
        self.uncompressed_chars += other.uncompressed_chars;
        self.uncompressed_estimated_tokens += other.uncompressed_estimated_tokens;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn stats_add_up_and_keep_the_latest_strategy() {
        let render = |strategy: &str| CompressionStats {
            strategy: strategy.into(),
            compressed: strategy == "b",
            turns: 2,
            chars: 400,
            estimated_tokens: 100,
            uncompressed_chars: 800,
            uncompressed_estimated_tokens: 200,
            ..CompressionStats::default()
        };
        let mut total = render("a");
        total += render("b");
        assert_eq!(
            total,
            CompressionStats {
                strategy: "b".into(),
                compressed: true,
                turns: 4,
                chars: 800,
                estimated_tokens: 200,
                uncompressed_chars: 1600,
                uncompressed_estimated_tokens: 400,
                ..CompressionStats::default()
            }
        );
        assert_eq!(total.saved_tokens(), 200);
    }
}
