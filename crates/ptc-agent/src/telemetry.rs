//! What the agent's spans and events are made of: field names from the OpenTelemetry GenAI
//! semantic conventions, and the spans and lines the drivers of the run core write from its
//! actions (the core itself writes none).
//!
//! Spans and events use `gen_ai.*` names where the conventions have one (`gen_ai.request.model`,
//! `gen_ai.usage.input_tokens`, ...), so an embedder can export them with any
//! OpenTelemetry bridge for `tracing` and have them read as GenAI spans. As the conventions ask,
//! `gen_ai.usage.input_tokens` counts every prompt token, those read from or written to the
//! prompt cache included; the cache's share is in `gen_ai.usage.cache_read.input_tokens` and
//! `gen_ai.usage.cache_creation.input_tokens`.

use std::time::Duration;

use ptc_lisp::{ToolError, Value};
use ptc_run::{HumanDuration, micros, tokens_text};
use ptc_turn::{TokenUsage, Turn, Usage};
use tracing::field::Empty;

/// Records a call's or a run's token counts on `span` under their GenAI names (the span must
/// declare the four `gen_ai.usage.*` fields).
pub(crate) fn record_tokens(span: &tracing::Span, tokens: &TokenUsage) {
    span.record("gen_ai.usage.input_tokens", tokens.prompt_tokens());
    span.record("gen_ai.usage.output_tokens", tokens.output_tokens);
    span.record(
        "gen_ai.usage.cache_read.input_tokens",
        tokens.cache_read_tokens,
    );
    span.record(
        "gen_ai.usage.cache_creation.input_tokens",
        tokens.cache_write_tokens,
    );
}

/// The span of one call of the tool `name` with `args` arguments, under `parent`; its
/// outcome is recorded by [`record_tool_call`].
pub(crate) fn tool_call_span(parent: &tracing::Span, name: &str, args: usize) -> tracing::Span {
    tracing::info_span!(
        parent: parent,
        "tool_call",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        tool = name,
        args,
        duration_us = Empty,
        outcome = Empty,
        error = Empty,
    )
}

/// Records on a tool call's `span` how long it took and how it ended.
pub(crate) fn record_tool_call(
    span: &tracing::Span,
    took: Duration,
    result: &Result<Value, ToolError>,
) {
    span.record("duration_us", micros(took));
    match result {
        Ok(_) => span.record("outcome", "ok"),
        Err(e) => {
            span.record("outcome", "error");
            span.record("error", e.message.as_str())
        }
    };
}

/// The span of an agent's turn `number`; its fields are recorded once the turn is.
pub(crate) fn turn_span(number: u32, max_turns: u32) -> tracing::Span {
    tracing::info_span!(
        "agent_turn",
        turn = number,
        max_turns,
        outcome = Empty,
        error_kind = Empty,
        program_chars = Empty,
        prints = Empty,
        tool_calls = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        duration_ms = Empty,
    )
}

/// Records `turn`, just recorded by the run core, on its `span`, and logs its line there.
pub(crate) fn record_turn(span: &tracing::Span, turn: &Turn, max_turns: u32) {
    let usage = turn.usage();
    if !turn.program().is_empty() {
        span.record("program_chars", turn.program().chars().count());
        span.record("prints", turn.prints().len());
        span.record("tool_calls", turn.tool_calls().len());
    }
    span.record("duration_ms", usage.duration_us / 1000);
    record_tokens(span, &usage.tokens);
    span.in_scope(|| log_turn(turn, usage, max_turns));
    match turn.error() {
        None => span.record("outcome", "ok"),
        Some(error) => {
            span.record("outcome", "error");
            span.record("error_kind", error.kind.as_str())
        }
    };
}

/// The line each turn logs: its outcome, tokens and time.
fn log_turn(turn: &Turn, usage: &Usage, max_turns: u32) {
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
