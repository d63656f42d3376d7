//! The [`Summarizer`] that writes summaries and what it is asked.

use std::future::Future;
use std::pin::Pin;

use ptc_turn::Message;

use super::SummaryStrategy;

/// What a [`Summarizer`] is asked to do: fold `messages` into `previous_summary` (or summarize
/// them from scratch when there is none).
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequest {
    /// The strategy that asked for the summary.
    pub strategy: SummaryStrategy,
    /// The first user message of the part being summarized. It stays in the history
    /// verbatim, so the summary need not repeat it, but it says what the conversation is for.
    pub task: Option<String>,
    /// The summary so far, covering every earlier message; `None` on the first summary.
    pub previous_summary: Option<String>,
    /// The messages to add to the summary, oldest first. Never empty.
    pub messages: Vec<Message>,
}

/// Why a summarizer could not produce a summary (the provider failed, the reply was empty…).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SummarizerError {
    message: String,
}

impl SummarizerError {
    /// An error saying `message`.
    pub fn new(message: impl Into<String>) -> SummarizerError {
        SummarizerError {
            message: message.into(),
        }
    }

    /// What went wrong, as given to [`SummarizerError::new`].
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// The summary a [`Summarizer`] is writing: a boxed future, so that summarizers of any type can
/// be used behind `&dyn Summarizer`. An implementation returns `Box::pin(async move { ... })`.
pub type SummaryFuture<'a> =
    Pin<Box<dyn Future<Output = Result<String, SummarizerError>> + Send + 'a>>;

/// Writes the summaries that replace older messages.
///
/// The summary returned replaces `previous_summary` entirely, so it must carry forward what
/// the previous one said. An LLM-backed implementation builds its prompt with
/// [`SummaryPromptBuilder`](super::SummaryPromptBuilder); any
/// `Fn(SummaryRequest) -> Result<String, SummarizerError>` is a summarizer too, which suits
/// deterministic summaries and tests.
///
/// The method returns a [`SummaryFuture`] rather than being an `async fn`, which keeps the
/// trait usable as `dyn Summarizer` without a macro crate: the body of an implementation is an
/// `async move` block, boxed and pinned.
///
/// ```
/// use ptc_compression::history::{Summarizer, SummaryFuture, SummaryRequest};
///
/// /// Counts what it is asked to fold in, continuing the previous count.
/// struct Counting;
///
/// impl Summarizer for Counting {
///     fn summarize(&self, request: SummaryRequest) -> SummaryFuture<'_> {
///         Box::pin(async move {
///             let before: usize = match &request.previous_summary {
///                 Some(previous) => previous.split(' ').next().unwrap_or("0").parse().unwrap_or(0),
///                 None => 0,
///             };
///             Ok(format!("{} messages so far", before + request.messages.len()))
///         })
///     }
/// }
///
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop {
/// #         if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
/// #     }
/// # }
/// use ptc_compression::history::SummaryStrategy;
/// use ptc_turn::Message;
///
/// let summarizer: &dyn Summarizer = &Counting;
/// let request = SummaryRequest {
///     strategy: SummaryStrategy::WholeHistory,
///     task: None,
///     previous_summary: Some("3 messages so far".into()),
///     messages: vec![Message::assistant("Done."), Message::user("Thanks.")],
/// };
/// assert_eq!(block_on(summarizer.summarize(request)).unwrap(), "5 messages so far");
/// ```
pub trait Summarizer: Send + Sync {
    /// The summary for `request`: a complete replacement of `request.previous_summary`.
    fn summarize(&self, request: SummaryRequest) -> SummaryFuture<'_>;
}

impl<F> Summarizer for F
where
    F: Fn(SummaryRequest) -> Result<String, SummarizerError> + Send + Sync,
{
    fn summarize(&self, request: SummaryRequest) -> SummaryFuture<'_> {
        Box::pin(async move { self(request) })
    }
}
