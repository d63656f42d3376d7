//! Durations and token counts written for people, in logs, reports and the run's wording.

use std::fmt;
use std::time::Duration;

use ptc_turn::TokenUsage;

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
pub fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// A duration as a person reads it: `850 µs`, `42 ms`, `1.5 s`, `2 min 5 s`, `1 h 3 min`.
///
/// ```
/// use std::time::Duration;
/// use ptc_run::HumanDuration;
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
}
