//! [`LlmSummarizer`]: history summaries written by a model.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use ptc_compression::history::{
    Summarizer, SummarizerError, SummaryFuture, SummaryPromptBuilder, SummaryRequest,
};
use ptc_turn::{Message, Usage};
use tracing::Instrument;

use crate::llm::{Llm, LlmRequest};
use ptc_run::micros;

/// A [`Summarizer`] that asks a model, with the prompt of [`SummaryPromptBuilder`]. It keeps
/// count of what its calls cost, which the agent adds to the turn that needed the summary.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use ptc_agent::{LlmSummarizer, ScriptedLlm};
/// use ptc_compression::history::{Summarizer, SummaryRequest, SummaryStrategy};
/// use ptc_turn::Message;
///
/// let llm = ScriptedLlm::new(["## Goal\nCount users"]);
/// let summarizer = LlmSummarizer::new(std::sync::Arc::new(llm.clone()));
/// let summary = summarizer
///     .summarize(SummaryRequest {
///         strategy: SummaryStrategy::WholeHistory,
///         task: Some("Count the users".into()),
///         previous_summary: None,
///         messages: vec![Message::assistant("(count data/users)")],
///     })
///     .await
///     .unwrap();
/// assert_eq!(summary, "## Goal\nCount users");
/// assert!(llm.requests()[0].system.contains("## Facts learned"));
/// # });
/// ```
#[derive(Clone)]
pub struct LlmSummarizer {
    llm: Arc<dyn Llm>,
    prompt: SummaryPromptBuilder,
    max_tokens: Option<u32>,
    usage: Arc<Mutex<Usage>>,
}

impl std::fmt::Debug for LlmSummarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSummarizer")
            .field("llm", &self.llm.describe())
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl LlmSummarizer {
    /// Summaries by `llm`, with the default prompt.
    pub fn new(llm: Arc<dyn Llm>) -> LlmSummarizer {
        LlmSummarizer {
            llm,
            prompt: SummaryPromptBuilder::new(),
            max_tokens: None,
            usage: Arc::new(Mutex::new(Usage::default())),
        }
    }

    /// Builds prompts with `prompt` (e.g. another message length limit).
    pub fn with_prompt(mut self, prompt: SummaryPromptBuilder) -> LlmSummarizer {
        self.prompt = prompt;
        self
    }

    /// Limits each summary to `max_tokens`.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> LlmSummarizer {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// What the calls made since the last `take_usage` cost, resetting the count.
    pub fn take_usage(&self) -> Usage {
        std::mem::take(&mut *self.usage.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Summarizer for LlmSummarizer {
    fn summarize(&self, request: SummaryRequest) -> SummaryFuture<'_> {
        Box::pin(self.ask(request))
    }
}

impl LlmSummarizer {
    /// Asks the model for the summary of `request`, counting what the call cost.
    async fn ask(&self, request: SummaryRequest) -> Result<String, SummarizerError> {
        let prompt = self.prompt.build(&request);
        let mut llm_request = LlmRequest::new(prompt.system, vec![Message::user(prompt.user)]);
        if let Some(max_tokens) = self.max_tokens {
            llm_request = llm_request.with_max_tokens(max_tokens);
        }
        let span = tracing::info_span!("llm_summary", llm = %self.llm.describe(), messages = request.messages.len());
        let started = Instant::now();
        let result = self.llm.complete(&llm_request).instrument(span).await;
        {
            let mut usage = self.usage.lock().unwrap_or_else(PoisonError::into_inner);
            let requests = match &result {
                Ok(response) => response.attempts.max(1),
                Err(error) => error.attempts(),
            };
            usage.llm_requests = usage.llm_requests.saturating_add(requests);
            usage.llm_duration_us = usage
                .llm_duration_us
                .saturating_add(micros(started.elapsed()));
            if let Ok(response) = &result {
                usage.tokens += response.usage;
            }
        }
        let response =
            result.map_err(|e| SummarizerError::new(format!("the summary request failed: {e}")))?;
        let text = response.content.trim();
        if text.is_empty() {
            return Err(SummarizerError::new(
                "the model answered the summary request with nothing",
            ));
        }
        Ok(text.to_string())
    }
}
