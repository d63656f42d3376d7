//! Why a model call failed.

use std::time::Duration;

/// Why a model call failed. [`LlmError::is_transient`] tells whether trying again may help.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// No connection could be made.
    #[error(
        "could not connect to {provider} at {url}: {message}; check that the server is running \
         and that the URL is right"
    )]
    Connect {
        /// The model spec of the provider that failed, e.g. `anthropic:claude-sonnet-4-5`.
        provider: String,
        /// The endpoint the request was for, e.g. `https://api.openai.com/v1/chat/completions`.
        url: String,
        /// What the HTTP client said went wrong (refused, DNS, TLS, ...).
        message: String,
    },
    /// The connection failed during the exchange.
    #[error("network error talking to {provider}: {message}")]
    Transport {
        /// The model spec of the provider that failed, e.g. `anthropic:claude-sonnet-4-5`.
        provider: String,
        /// What the HTTP client said went wrong.
        message: String,
    },
    /// No complete answer within the request timeout.
    #[error(
        "{provider} did not answer within {} s; raise the request timeout if the model is slow",
        .timeout.as_secs_f64()
    )]
    Timeout {
        /// The model spec of the provider that failed, e.g. `anthropic:claude-sonnet-4-5`.
        provider: String,
        /// The request timeout that ran out.
        timeout: Duration,
    },
    /// The provider answered with an HTTP error status.
    #[error("{provider} answered HTTP {status}: {message}{}", status_hint(*.status))]
    Http {
        /// The model spec of the provider that failed, e.g. `anthropic:claude-sonnet-4-5`.
        provider: String,
        /// The HTTP status code, e.g. 401 or 500.
        status: u16,
        /// The provider's own error message (`error.message` of a JSON body), or the body.
        message: String,
    },
    /// HTTP 429: too many requests or tokens for the account's limits.
    #[error(
        "{provider} is rate limiting requests (HTTP 429): {message}; wait, or lower the request \
         rate"
    )]
    RateLimited {
        /// The model spec of the provider that failed, e.g. `anthropic:claude-sonnet-4-5`.
        provider: String,
        /// The provider's own error message, or the body.
        message: String,
        /// How long the provider asked to wait (`Retry-After`).
        retry_after: Option<Duration>,
    },
    /// A success status with a body that is not the expected JSON.
    #[error("{provider} sent a response that could not be read: {message}")]
    InvalidResponse {
        /// The model spec of the provider that failed, e.g. `anthropic:claude-sonnet-4-5`.
        provider: String,
        /// What was wrong with the body: the JSON error or the field that was missing.
        message: String,
    },
    /// The provider is not set up right, e.g. the API key is missing.
    #[error("{0}")]
    Configuration(String),
    /// The request cannot be sent as it is.
    #[error("invalid model request: {0}")]
    InvalidRequest(String),
    /// A scripted or replayed model has no reply left.
    #[error(
        "{script} has no reply left after serving {served}; add more replies, or make the run \
         need fewer model calls"
    )]
    RepliesExhausted {
        /// The script, as errors name it: `the scripted model` or `the replay transcript
        /// PATH`.
        script: String,
        /// How many replies it had, all served.
        served: usize,
    },
    /// A replay transcript could not be read.
    #[error("replay transcript {path}{}: {message}", line_suffix(*.line))]
    Transcript {
        /// The transcript's path, as it was given.
        path: String,
        /// The 1-based line at fault, when the problem is one line.
        line: Option<usize>,
        /// What is wrong: the file cannot be read, or the line is not a reply.
        message: String,
    },
    /// A failure after more than one attempt: a transient failure went on through every
    /// retry, or a retry met a permanent failure. `errors` holds every attempt's failure in
    /// order (never fewer than two); the last says which ([`LlmError::is_transient`] looks
    /// through to it), and the message names the first and the last, as a reply cut short by a
    /// dropped connection often turns into "connection refused" on the retries.
    #[error("{}", retries_text(.errors))]
    RetriesExhausted {
        /// Every attempt's failure, the first first.
        errors: Vec<LlmError>,
    },
}

fn retries_text(errors: &[LlmError]) -> String {
    let (Some(first), Some(last)) = (errors.first(), errors.last()) else {
        return "gave up without sending a request".to_string();
    };
    let (first, last) = (first.to_string(), last.to_string());
    if first == last {
        format!(
            "gave up after {} attempts, the first and the last failing alike: {last}",
            errors.len()
        )
    } else {
        format!(
            "gave up after {} attempts; the first failed with: {first}; the last with: {last}",
            errors.len()
        )
    }
}

fn status_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (check the API key and its permissions)",
        404 => " (check the base URL and the model name)",
        _ => "",
    }
}

fn line_suffix(line: Option<usize>) -> String {
    line.map(|line| format!(", line {line}"))
        .unwrap_or_default()
}

/// HTTP statuses worth retrying: 408 (request timeout), 429 (rate limited) and every server
/// error (5xx: overload, gateway trouble, Anthropic's 529 "overloaded", a proxy's own codes)
/// except those that name a permanent property of the server or the network, which the same
/// request meets again: 501 (not implemented), 505 (HTTP version not supported), 506 (variant
/// also negotiates), 508 (loop detected), 510 (not extended) and 511 (network authentication
/// required).
pub fn is_transient_status(status: u16) -> bool {
    match status {
        408 | 429 => true,
        501 | 505 | 506 | 508 | 510 | 511 => false,
        500..=599 => true,
        _ => false,
    }
}

impl LlmError {
    /// Whether the same request may succeed if sent again later: connection trouble, timeouts,
    /// rate limits and server overload are; bad requests, bad keys and unreadable responses are
    /// not.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Connect { .. }
            | LlmError::Transport { .. }
            | LlmError::Timeout { .. }
            | LlmError::RateLimited { .. } => true,
            LlmError::Http { status, .. } => is_transient_status(*status),
            LlmError::RetriesExhausted { errors } => errors.last().is_some_and(Self::is_transient),
            LlmError::InvalidResponse { .. }
            | LlmError::Configuration(_)
            | LlmError::InvalidRequest(_)
            | LlmError::RepliesExhausted { .. }
            | LlmError::Transcript { .. } => false,
        }
    }

    /// The HTTP status the provider answered with, if the failure was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            LlmError::Http { status, .. } => Some(*status),
            LlmError::RateLimited { .. } => Some(429),
            LlmError::RetriesExhausted { errors } => errors.last().and_then(Self::status),
            _ => None,
        }
    }

    /// The requests sent before this failure: one per error of a
    /// [`LlmError::RetriesExhausted`], else 1.
    pub fn attempts(&self) -> u32 {
        u32::try_from(self.each_attempt().len()).unwrap_or(u32::MAX)
    }

    /// The failure of every attempt, in order: those of a [`LlmError::RetriesExhausted`], or
    /// this one alone.
    pub fn each_attempt(&self) -> &[LlmError] {
        match self {
            LlmError::RetriesExhausted { errors } if !errors.is_empty() => errors,
            other => std::slice::from_ref(other),
        }
    }

    /// A stable snake_case name of the failure (`timeout`, `http`, `rate_limited`, ...), as
    /// logs record it in `error.type`.
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::Connect { .. } => "connect",
            LlmError::Transport { .. } => "transport",
            LlmError::Timeout { .. } => "timeout",
            LlmError::Http { .. } => "http",
            LlmError::RateLimited { .. } => "rate_limited",
            LlmError::InvalidResponse { .. } => "invalid_response",
            LlmError::Configuration(_) => "configuration",
            LlmError::InvalidRequest(_) => "invalid_request",
            LlmError::RepliesExhausted { .. } => "replies_exhausted",
            LlmError::Transcript { .. } => "transcript",
            LlmError::RetriesExhausted { .. } => "retries_exhausted",
        }
    }

    /// The failure itself, looking through [`LlmError::RetriesExhausted`] to the last attempt.
    pub fn root(&self) -> &LlmError {
        match self {
            LlmError::RetriesExhausted { errors } => errors.last().map_or(self, Self::root),
            other => other,
        }
    }

    /// The failure after `errors`, one per attempt in order: the error itself when there was
    /// one attempt, else a [`LlmError::RetriesExhausted`] holding them all (the attempts of
    /// a nested one included, so retries around a provider's own retries keep every error).
    ///
    /// ```
    /// use ptc_run::model::LlmError;
    ///
    /// let refused = LlmError::Transport { provider: "p".into(), message: "closed".into() };
    /// let error = LlmError::after_attempts(vec![refused.clone(), refused.clone()]);
    /// assert_eq!(error.attempts(), 2);
    /// assert_eq!(LlmError::after_attempts(vec![refused.clone()]), refused);
    /// ```
    pub fn after_attempts(errors: Vec<LlmError>) -> LlmError {
        let mut flat = Vec::with_capacity(errors.len());
        for error in errors {
            match error {
                LlmError::RetriesExhausted { errors } => flat.extend(errors),
                other => flat.push(other),
            }
        }
        if flat.len() == 1 {
            flat.remove(0)
        } else {
            LlmError::RetriesExhausted { errors: flat }
        }
    }
}
