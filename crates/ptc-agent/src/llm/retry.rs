//! When and how long to wait before sending a failed request again.

use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, SystemTime};

/// How an HTTP provider retries transient failures: exponential backoff, optionally with
/// jitter, with a provider's `Retry-After` taking precedence.
///
/// ```
/// use std::time::Duration;
/// use ptc_agent::llm::RetryPolicy;
///
/// let policy = RetryPolicy { jitter: false, ..RetryPolicy::default() };
/// assert_eq!(policy.backoff(1), Duration::from_millis(500));
/// assert_eq!(policy.backoff(2), Duration::from_secs(1));
/// assert_eq!(policy.backoff(20), Duration::from_secs(30));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 sends each request once. A request that timed out
    /// is retried once at most, whatever this says.
    pub max_retries: u32,
    /// The wait before the first retry.
    pub initial_backoff: Duration,
    /// The longest wait, also capping a provider's `Retry-After`.
    pub max_backoff: Duration,
    /// Each retry waits this many times longer than the one before.
    pub multiplier: f64,
    /// Wait a random time between half the backoff and the full backoff, so clients that failed
    /// together do not retry together.
    pub jitter: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            multiplier: 2.0,
            jitter: true,
        }
    }
}

impl RetryPolicy {
    /// Never retry.
    pub fn none() -> RetryPolicy {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `retry` (1 for the first retry), without a `Retry-After`.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exponent = i32::try_from(retry.saturating_sub(1)).unwrap_or(i32::MAX);
        // A multiplier below 1 (or NaN) would shrink the wait; treat it as constant backoff.
        let multiplier = if self.multiplier >= 1.0 {
            self.multiplier
        } else {
            1.0
        };
        let secs = self.initial_backoff.as_secs_f64() * multiplier.powi(exponent);
        let base = Duration::try_from_secs_f64(secs)
            .unwrap_or(self.max_backoff)
            .min(self.max_backoff);
        if self.jitter {
            base.mul_f64(0.5 + 0.5 * random_unit())
        } else {
            base
        }
    }

    /// The wait before retry number `retry`: the provider's `Retry-After` when it sent one
    /// (capped by `max_backoff`), the backoff otherwise.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(wait) => wait.min(self.max_backoff),
            None => self.backoff(retry),
        }
    }
}

/// A uniformly distributed number in `[0, 1)`. Every `RandomState` gets fresh keys, which is
/// randomness enough to spread retries apart without a random-number crate.
fn random_unit() -> f64 {
    let bits = RandomState::new().hash_one(0u8);
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// Reads a `Retry-After` header value: delay seconds (`"120"`, fractions accepted) or an HTTP
/// date, which is turned into the time left from `now` (zero if it has passed). `None` for
/// anything else.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use ptc_agent::llm::parse_retry_after;
///
/// assert_eq!(parse_retry_after("2", SystemTime::now()), Some(Duration::from_secs(2)));
/// let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_767);
/// assert_eq!(
///     parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
///     Some(Duration::from_secs(10))
/// );
/// ```
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            jitter: false,
            ..RetryPolicy::default()
        }
    }

    #[test]
    fn backoff_grows_exponentially_up_to_the_cap() {
        let waits: Vec<Duration> = (1..=8).map(|retry| policy().backoff(retry)).collect();
        assert_eq!(
            waits,
            vec![
                Duration::from_millis(500),
                Duration::from_secs(1),
                Duration::from_secs(2),
                Duration::from_secs(4),
                Duration::from_secs(8),
                Duration::from_secs(16),
                Duration::from_secs(30),
                Duration::from_secs(30),
            ]
        );
        assert_eq!(policy().backoff(u32::MAX), Duration::from_secs(30));
    }

    #[test]
    fn jitter_stays_between_half_and_full_backoff() {
        let jittered = RetryPolicy::default();
        for retry in 1..=6 {
            let full = policy().backoff(retry);
            for _ in 0..50 {
                let wait = jittered.backoff(retry);
                assert!(
                    wait >= full / 2 && wait <= full,
                    "{wait:?} outside [{:?}, {full:?}]",
                    full / 2
                );
            }
        }
    }

    #[test]
    fn odd_multipliers_do_not_panic_or_shrink() {
        for multiplier in [f64::NAN, f64::INFINITY, -3.0, 0.5, 1e308] {
            let p = RetryPolicy {
                multiplier,
                ..policy()
            };
            let wait = p.backoff(40);
            assert!(wait >= Duration::from_millis(500) && wait <= Duration::from_secs(30));
        }
    }

    #[test]
    fn retry_after_wins_over_backoff_but_is_capped() {
        assert_eq!(
            policy().delay(1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(
            policy().delay(1, Some(Duration::from_secs(3600))),
            Duration::from_secs(30)
        );
        assert_eq!(policy().delay(2, None), Duration::from_secs(1));
    }

    #[test]
    fn retry_after_values() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(parse_retry_after(" 3 ", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("0.25", now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        // A date in the past means "now".
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("", now), None);
    }
}
