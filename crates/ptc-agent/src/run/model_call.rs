//! Sending a turn's request to the model, with its retries (the loop of `llm::retry`).

use std::time::Instant;

use ptc_turn::Usage;
use tracing::Instrument;
use tracing::field::Empty;

use crate::llm::retry::{Attempt, Callee, Failure, with_retries};
use crate::llm::{Llm, LlmError, LlmRequest, LlmResponse, RetryPolicy};
use crate::telemetry::record_tokens;
use ptc_run::micros;

/// Sends `request` for turn `turn`, retrying transient failures as `policy` says, and adds
/// the requests and their time to `usage`.
pub(crate) async fn call_llm(
    llm: &dyn Llm,
    policy: &RetryPolicy,
    turn: u32,
    request: &LlmRequest,
    usage: &mut Usage,
) -> Result<LlmResponse, LlmError> {
    let prompt_chars: usize = request.system.chars().count()
        + request
            .messages
            .iter()
            .map(|m| m.content.chars().count())
            .sum::<usize>();
    let provider = llm.provider_name();
    let model = llm.model_name();
    let callee = Callee {
        provider: &provider,
        model: &model,
        log_last_failure: false,
    };
    let mut ask = Ask {
        llm,
        turn,
        request,
        prompt_chars,
        usage,
    };
    let (response, _) = with_retries(policy, &callee, &mut ask).await?;
    Ok(response)
}

/// One request of a turn to the model, in a span of its own, counted in `usage`.
struct Ask<'a> {
    llm: &'a dyn Llm,
    turn: u32,
    request: &'a LlmRequest,
    prompt_chars: usize,
    usage: &'a mut Usage,
}

impl Attempt for Ask<'_> {
    type Output = LlmResponse;

    async fn make(&mut self, attempt: u32) -> Result<LlmResponse, Failure> {
        let Ask {
            llm,
            turn,
            request,
            prompt_chars,
            ..
        } = *self;
        let span = tracing::info_span!(
            "llm_request",
            otel.name = %format!("chat {}", llm.model_name()),
            otel.kind = "client",
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = %llm.provider_name(),
            gen_ai.request.model = %llm.model_name(),
            gen_ai.request.max_tokens = request.max_tokens,
            gen_ai.request.temperature = request.temperature,
            gen_ai.response.model = Empty,
            gen_ai.response.finish_reasons = Empty,
            turn,
            attempt,
            llm = %llm.describe(),
            messages = request.messages.len() + 1,
            prompt_chars,
            cacheable_prefix = request.cache_breakpoints.first().map_or(0, |b| b.byte_offset),
            outcome = Empty,
            error = Empty,
            error.type = Empty,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            gen_ai.usage.cache_read.input_tokens = Empty,
            gen_ai.usage.cache_creation.input_tokens = Empty,
            duration_ms = Empty,
        );
        let started = Instant::now();
        let result = llm.complete(request).instrument(span.clone()).await;
        let elapsed = started.elapsed();
        // Every request the provider sent, its own retries included.
        let requests = match &result {
            Ok(response) => response.attempts.max(1),
            Err(error) => error.attempts(),
        };
        self.usage.llm_requests = self.usage.llm_requests.saturating_add(requests);
        self.usage.llm_duration_us = self.usage.llm_duration_us.saturating_add(micros(elapsed));
        span.record("duration_ms", micros(elapsed) / 1000);
        match result {
            Ok(response) => {
                span.record("outcome", "ok");
                if let Some(model) = &response.model {
                    span.record("gen_ai.response.model", model.as_str());
                }
                if let Some(reason) = &response.stop_reason {
                    span.record("gen_ai.response.finish_reasons", reason.as_str());
                }
                record_tokens(&span, &response.usage);
                Ok(response)
            }
            Err(error) => {
                span.record("outcome", "error");
                span.record("error", error.to_string().as_str());
                span.record("error.type", error.root().kind());
                Err(Failure::from(error))
            }
        }
    }
}
