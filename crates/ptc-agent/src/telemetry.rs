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
use tracing::Level;
use tracing::field::Empty;

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

/// The span of one call of the tool `name` with `args` arguments, under `parent`; its
/// outcome is recorded by [`record_tool_call`].
pub(crate) fn tool_call_span(parent: &tracing::Span, name: &str, args: usize) -> tracing::Span {
    tracing::info_span!(
        parent: parent,
        "tool_call",
        otel.name = %format!("execute_tool {name}"),
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

/// Logs that the run's deadline of `limit` passed during turn `turn`, which is cut off.
pub fn log_deadline_passed(turn: u32, limit: Duration) {
    tracing::warn!(
        turn,
        deadline_ms = limit.as_millis(),
        "the run's deadline of {} passed during turn {turn}",
        HumanDuration(limit)
    );
}

/// Logs that the run was stopped during turn `turn`, which is cut off.
pub fn log_stopped(turn: u32) {
    tracing::info!(turn, "the run was stopped during turn {turn}");
}

/// The span of an agent's turn `number`; its fields are recorded once the turn is.
pub fn turn_span(number: u32, max_turns: u32) -> tracing::Span {
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
pub fn record_turn(span: &tracing::Span, turn: &Turn, max_turns: u32) {
    let usage = turn.usage();
    if !turn.program().is_empty() {
        span.record("program_chars", turn.program().chars().count());
        span.record("prints", turn.prints().len());
        span.record("tool_calls", turn.tool_calls().len());
    }
    span.record("duration_ms", usage.duration_us / 1000);
    record_tokens(span, &usage.tokens);
    span.in_scope(|| {
        log_turn(turn, usage, max_turns);
        content_events(turn);
    });
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

/// The turn's program and its output (what it printed, then its value or error) as events of
/// its span, each cut to `CONTENT_LIMIT` characters: what an OpenTelemetry backend shows of it.
fn content_events(turn: &Turn) {
    if !tracing::enabled!(target: CONTENT_TARGET, Level::TRACE) {
        return;
    }
    let program = bounded(turn.program());
    tracing::event!(target: CONTENT_TARGET, Level::TRACE, ptc.program = %program, "program");
    // Prints keep their own line ends; the value or error follows on a line of its own.
    let mut output = turn.prints().concat();
    let last = match (turn.error(), turn.value()) {
        (Some(error), _) => Some(format!("error[{}]: {}", error.kind, error.message)),
        (None, Some(value)) => Some(value.to_string()),
        (None, None) => None,
    };
    if let Some(last) = last {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&last);
    }
    let output = bounded(&output);
    tracing::event!(target: CONTENT_TARGET, Level::TRACE, ptc.output = %output, "output");
}

#[cfg(test)]
mod tests {
    use super::*;

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
