//! What the agent's spans and events are made of: field names from the OpenTelemetry GenAI
//! semantic conventions, and durations written for people.
//!
//! Spans and events use `gen_ai.*` names where the conventions have one (`gen_ai.request.model`,
//! `gen_ai.usage.input_tokens`, ...), so an embedder can export them with any
//! OpenTelemetry bridge for `tracing` and have them read as GenAI spans. As the conventions ask,
//! `gen_ai.usage.input_tokens` counts every prompt token, those read from or written to the
//! prompt cache included; the cache's share is in `gen_ai.usage.cache_read.input_tokens` and
//! `gen_ai.usage.cache_creation.input_tokens`.

use std::fmt;
use std::time::Duration;

use ptc_turn::TokenUsage;

/// The `tracing` target of the events that carry a turn's program and output. They are at
/// `TRACE` level, so logs show them only when asked for everything.
pub const CONTENT_TARGET: &str = "ptc_agent::content";

/// The most characters of a program or an output a content event carries; what is cut is
/// said at the end.
pub const CONTENT_LIMIT: usize = 4096;

/// `text` cut to [`CONTENT_LIMIT`] characters, saying how many were left out.
pub(crate) fn bounded(text: &str) -> String {
    match text.char_indices().nth(CONTENT_LIMIT) {
        None => text.to_string(),
        Some((end, _)) => {
            let left_out = text[end..].chars().count();
            format!("{}… ({left_out} more characters)", &text[..end])
        }
    }
}

/// Records a call's or a run's token counts on `span` under their GenAI names (the span must
/// declare the four `gen_ai.usage.*` fields). They are recorded as signed integers, which
/// OpenTelemetry bridges export as integer attributes (an unsigned one becomes text).
pub(crate) fn record_tokens(span: &tracing::Span, tokens: &TokenUsage) {
    let int = |count: u64| i64::try_from(count).unwrap_or(i64::MAX);
    span.record("gen_ai.usage.input_tokens", int(tokens.prompt_tokens()));
    span.record("gen_ai.usage.output_tokens", int(tokens.output_tokens));
    span.record(
        "gen_ai.usage.cache_read.input_tokens",
        int(tokens.cache_read_tokens),
    );
    span.record(
        "gen_ai.usage.cache_creation.input_tokens",
        int(tokens.cache_write_tokens),
    );
}

/// Token counts in words: `950 tokens in, 25 out`, with the prompt cache's share when there
/// is one (`950 tokens in (+700 read from the prompt cache), 25 out`).
pub fn tokens_text(tokens: &TokenUsage) -> String {
    let mut cache = Vec::new();
    if tokens.cache_read_tokens > 0 {
        cache.push(format!("{} read from", tokens.cache_read_tokens));
    }
    if tokens.cache_write_tokens > 0 {
        cache.push(format!("{} written to", tokens.cache_write_tokens));
    }
    let cache = if cache.is_empty() {
        String::new()
    } else {
        format!(" (+{} the prompt cache)", cache.join(" and "))
    };
    format!(
        "{} tokens in{cache}, {} out",
        tokens.input_tokens, tokens.output_tokens
    )
}

/// A duration in whole microseconds (saturating).
pub(crate) fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// A duration as a person reads it: `850 µs`, `42 ms`, `1.5 s`, `2 min 5 s`, `1 h 3 min`.
///
/// ```
/// use std::time::Duration;
/// use ptc_agent::HumanDuration;
///
/// assert_eq!(HumanDuration(Duration::from_micros(850)).to_string(), "850 µs");
/// assert_eq!(HumanDuration(Duration::from_millis(42)).to_string(), "42 ms");
/// assert_eq!(HumanDuration(Duration::from_millis(1530)).to_string(), "1.5 s");
/// assert_eq!(HumanDuration(Duration::from_secs(125)).to_string(), "2 min 5 s");
/// assert_eq!(HumanDuration(Duration::from_secs(3780)).to_string(), "1 h 3 min");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        let secs = d.as_secs();
        if d < Duration::from_millis(1) {
            write!(f, "{} µs", d.as_micros())
        } else if d < Duration::from_secs(1) {
            write!(f, "{} ms", d.as_millis())
        } else if secs < 60 {
            // Tenths, rounded down, so 59.96 s does not print as "60.0 s".
            let tenths = d.as_millis() / 100;
            write!(f, "{}.{} s", tenths / 10, tenths % 10)
        } else if secs < 3600 {
            write!(f, "{} min {} s", secs / 60, secs % 60)
        } else {
            write!(f, "{} h {} min", secs / 3600, secs % 3600 / 60)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn durations_read_in_the_largest_sensible_unit() {
        let cases = [
            (Duration::ZERO, "0 µs"),
            (Duration::from_micros(999), "999 µs"),
            (Duration::from_millis(1), "1 ms"),
            (Duration::from_micros(999_999), "999 ms"),
            (Duration::from_secs(1), "1.0 s"),
            (Duration::from_millis(59_960), "59.9 s"),
            (Duration::from_secs(60), "1 min 0 s"),
            (Duration::from_secs(3599), "59 min 59 s"),
            (Duration::from_secs(3600), "1 h 0 min"),
        ];
        for (duration, text) in cases {
            assert_eq!(HumanDuration(duration).to_string(), text);
        }
    }

    #[test]
    fn content_is_cut_at_the_limit_in_characters_saying_how_many_were_left_out() {
        assert_eq!(bounded("(return 1)"), "(return 1)");
        let exact = "é".repeat(CONTENT_LIMIT);
        assert_eq!(bounded(&exact), exact);
        let long = format!("{}λλλ", "x".repeat(CONTENT_LIMIT - 1));
        assert_eq!(
            bounded(&long),
            format!("{}λ… (2 more characters)", "x".repeat(CONTENT_LIMIT - 1))
        );
    }
}
