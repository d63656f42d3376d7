//! One request to the model: how it is built from the rendered messages, how it is sent
//! (with its retries), and what a turn logs about it.

use std::time::{Duration, Instant};

use ptc_compression::{CachePoint, PromptRequest, RenderOptions, cacheable_prefix_len};
use ptc_turn::{Message, Role, TokenUsage, Turn, Usage};
use tracing::Instrument;
use tracing::field::Empty;

use crate::agent::Settings;
use crate::llm::{Llm, LlmError, LlmRequest, LlmResponse, RetryPolicy};
use crate::telemetry::{HumanDuration, record_tokens};

use super::micros;

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
    let mut attempt: u32 = 0;
    let mut failed: Vec<LlmError> = Vec::new();
    loop {
        attempt = attempt.saturating_add(1);
        let span = tracing::info_span!(
            "llm_request",
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
        usage.llm_requests = usage.llm_requests.saturating_add(requests);
        usage.llm_duration_us = usage.llm_duration_us.saturating_add(micros(elapsed));
        span.record("duration_ms", micros(elapsed) / 1000);
        let error = match result {
            Ok(response) => {
                span.record("outcome", "ok");
                if let Some(model) = &response.model {
                    span.record("gen_ai.response.model", model.as_str());
                }
                if let Some(reason) = &response.stop_reason {
                    span.record("gen_ai.response.finish_reasons", reason.as_str());
                }
                record_tokens(&span, &response.usage);
                return Ok(response);
            }
            Err(error) => error,
        };
        span.record("outcome", "error");
        span.record("error", error.to_string().as_str());
        span.record("error.type", error.root().kind());
        let retries_done = attempt - 1;
        if !error.is_transient() || retries_done >= policy.max_retries {
            failed.push(error);
            return Err(LlmError::after_attempts(failed));
        }
        let retry_after = match error.root() {
            LlmError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        };
        let wait = policy.delay(attempt, retry_after);
        tracing::warn!(
            turn,
            attempt,
            wait_ms = micros(wait) / 1000,
            %error,
            "turn {turn}: model call {attempt} of {} failed: {error}; retrying in {}",
            policy.max_retries.saturating_add(1),
            HumanDuration(wait)
        );
        failed.push(error);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
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

/// The line each turn logs: its outcome, tokens and time.
pub(super) fn log_turn(turn: &Turn, usage: &Usage, max_turns: u32) {
    let number = turn.number();
    let outcome = match turn.error() {
        None => "ok".to_string(),
        Some(error) => format!("error[{}]", error.kind),
    };
    tracing::info!(
        turn = number,
        max_turns,
        outcome = %outcome,
        gen_ai.usage.input_tokens = usage.tokens.prompt_tokens(),
        gen_ai.usage.output_tokens = usage.tokens.output_tokens,
        llm_requests = usage.llm_requests,
        duration_ms = usage.duration_us / 1000,
        "turn {number} of {max_turns}: {outcome}; {}; {} (model {}, program {})",
        tokens_text(&usage.tokens),
        HumanDuration(Duration::from_micros(usage.duration_us)),
        HumanDuration(Duration::from_micros(usage.llm_duration_us)),
        HumanDuration(Duration::from_micros(usage.eval_duration_us)),
    );
}

/// The model request for rendered `messages` (system message first) and their cache `points`:
/// leading system messages become the system prompt, and the points mark the stable parts for
/// providers with explicit prompt caching. The request says its turn and the tools' names.
pub(crate) fn request_for(
    messages: &[Message],
    points: &[CachePoint],
    settings: &Settings,
    turn: u32,
    tools: &[ptc_lisp::ToolSpec],
) -> LlmRequest {
    let mut request = LlmRequest::from_prompt(PromptRequest::from_rendered(messages, points))
        .with_max_tokens(settings.max_tokens);
    if let Some(temperature) = settings.temperature {
        request = request.with_temperature(temperature);
    }
    let tool_names = tools.iter().map(|t| t.name.clone()).collect();
    request
        .with_sampling(settings.sampling.clone())
        .with_turn(turn, tool_names)
}

/// The end of the stable `tool/` and `data/` prefix of the first user message of `messages`.
pub(super) fn prefix_point(messages: &[Message], opts: &RenderOptions<'_>) -> Option<CachePoint> {
    let index = messages.iter().position(|m| m.role != Role::System)?;
    let first = messages.get(index).filter(|m| m.role == Role::User)?;
    cacheable_prefix_len(&first.content, opts)
        .filter(|&len| len > 0)
        .map(|len| CachePoint::new(index, len))
}
