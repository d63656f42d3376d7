//! Sending a failed model request again: when, how long to wait, and the one loop that does
//! it and words its notices, for the HTTP exchange and for a run's model calls alike.

use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, Instant, SystemTime};

use ptc_run::HumanDuration;

use super::LlmError;

/// How a model call is retried after a transient failure, by an HTTP provider or by an
/// agent's run ([`AgentBuilder::retry_policy`](crate::AgentBuilder::retry_policy)), with the
/// same rules: exponential backoff, optionally with jitter, with a provider's `Retry-After`
/// taking precedence.
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

/// A failed attempt, and how long the provider asked to wait before the next one.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) error: LlmError,
    /// The provider's `Retry-After`, when it sent one with a status worth retrying.
    pub(crate) retry_after: Option<Duration>,
}

impl From<LlmError> for Failure {
    /// A model's error, with the wait a rate limit asked for.
    fn from(error: LlmError) -> Failure {
        let retry_after = match error.root() {
            LlmError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        };
        Failure { error, retry_after }
    }
}

/// Whom a call's attempts go to, as their notices name it.
pub(crate) struct Callee<'a> {
    /// The provider kind, e.g. `openai-compatible`.
    pub(crate) provider: &'a str,
    pub(crate) model: &'a str,
    /// Whether the failure that ends the call is logged too. The HTTP exchange logs it, as
    /// the last of its attempts; a run's model call does not: the error it returns ends the
    /// turn, which says so.
    pub(crate) log_last_failure: bool,
}

/// One attempt of a call: what [`with_retries`] makes again after a transient failure.
pub(crate) trait Attempt {
    /// What a successful attempt gives.
    type Output;

    /// Makes attempt number `number` (from 1).
    fn make(&mut self, number: u32) -> impl Future<Output = Result<Self::Output, Failure>> + Send;
}

/// Makes `attempt` until it succeeds, fails in a way that trying again does not help, or
/// `policy` allows no more attempts, waiting as [`RetryPolicy::delay`] says between attempts
/// and logging a warning for each retry. The success comes with the failures before it; a
/// failure after more than one attempt is a [`LlmError::RetriesExhausted`] holding every
/// attempt's error.
pub(crate) async fn with_retries<A: Attempt + Send>(
    policy: &RetryPolicy,
    callee: &Callee<'_>,
    attempt: &mut A,
) -> Result<(A::Output, Vec<LlmError>), LlmError> {
    let mut number: u32 = 0;
    let mut failed: Vec<LlmError> = Vec::new();
    loop {
        number = number.saturating_add(1);
        let started = Instant::now();
        let failure = match attempt.make(number).await {
            Ok(value) => return Ok((value, failed)),
            Err(failure) => failure,
        };
        let duration_ms = millis(started.elapsed());
        let status = failure.error.status();
        let attempts = planned_attempts(policy, number, &failure.error, &failed);
        if !failure.error.is_transient() || number >= attempts {
            if callee.log_last_failure {
                tracing::warn!(
                    gen_ai.provider.name = callee.provider,
                    gen_ai.request.model = callee.model,
                    attempt = number,
                    status,
                    duration_ms,
                    error = %failure.error,
                    "model call attempt {number} of {attempts} failed: {}",
                    failure.error
                );
            }
            failed.push(failure.error);
            return Err(LlmError::after_attempts(failed));
        }
        let delay = policy.delay(number, failure.retry_after);
        tracing::warn!(
            gen_ai.provider.name = callee.provider,
            gen_ai.request.model = callee.model,
            attempt = number,
            status,
            duration_ms,
            retry_in_ms = millis(delay),
            error = %failure.error,
            "model call attempt {number} of {attempts} failed: {}; retrying in {}",
            failure.error,
            HumanDuration(delay)
        );
        failed.push(failure.error);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    }
}

/// How many attempts a call that failed with `error` on attempt `attempt`, after the
/// failures `earlier`, makes at most: the policy's, except that a request that timed out is
/// retried once at most. A server does not stop writing a reply when the client gives up
/// waiting for it, so after a second timeout more retries would only queue behind the
/// abandoned replies: a call that times out lasts at most the timeout, one retry, and the
/// wait between, so a silent provider gets 2 attempts whatever the retries.
fn planned_attempts(
    policy: &RetryPolicy,
    attempt: u32,
    error: &LlmError,
    earlier: &[LlmError],
) -> u32 {
    let most = policy.max_retries.saturating_add(1);
    if !matches!(error, LlmError::Timeout { .. }) {
        return most;
    }
    if earlier
        .iter()
        .any(|e| matches!(e, LlmError::Timeout { .. }))
    {
        attempt
    } else {
        most.min(attempt.saturating_add(1))
    }
}

/// A duration in whole milliseconds, as the notices' fields give it.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
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
    fn attempts_are_counted_against_what_the_call_will_make() {
        let retry = RetryPolicy::default();
        let timeout = || LlmError::Timeout {
            provider: "p".into(),
            timeout: Duration::from_secs(1),
        };
        let refused = || LlmError::Transport {
            provider: "p".into(),
            message: "refused".into(),
        };
        // A first timeout leaves one more attempt, a second ends the call.
        assert_eq!(planned_attempts(&retry, 1, &timeout(), &[]), 2);
        assert_eq!(planned_attempts(&retry, 2, &timeout(), &[timeout()]), 2);
        // A later first timeout still gets its one retry, within the policy's attempts.
        assert_eq!(planned_attempts(&retry, 2, &timeout(), &[refused()]), 3);
        assert_eq!(
            planned_attempts(&retry, 4, &timeout(), &[refused(), refused(), refused()]),
            4
        );
        // Other failures are retried as the policy says.
        assert_eq!(planned_attempts(&retry, 1, &refused(), &[]), 4);
        assert_eq!(
            planned_attempts(&RetryPolicy::none(), 1, &timeout(), &[]),
            1
        );
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
