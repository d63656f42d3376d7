//! How `ptc run` and `ptc demo` print turns, messages and the end of a run.

use ptc_agent::{HumanDuration, tokens_text};
use ptc_compression::cost::token_count_text;
use ptc_compression::{
    BillComparison, Compression, HeuristicTokenizer, PricingKind, PricingProfile, RenderOptions,
    RequestCost, ScheduleComparison, compare_schedules, compare_with_full_history,
};
use ptc_lisp::{Compact, pr_str};
use ptc_lisp::{ToolOutcome, Value};
use ptc_turn::{Message, Role, Step, StepOutcome, Turn, TurnResult, Usage};
use std::fmt::Write;
use std::time::Duration;

use crate::diagnostic;

/// Items and characters of a value shown in a turn report.
const ITEMS: usize = 4;
const CHARS: usize = 80;

pub fn short(value: &Value) -> String {
    ptc_turn::preview(value, Compact::new(ITEMS, CHARS))
}

/// A time in microseconds as a person reads it (`850 µs`, `42 ms`, `1.5 s`).
pub fn millis(us: u64) -> String {
    HumanDuration(Duration::from_micros(us)).to_string()
}

/// `text` with every line prefixed by `prefix`.
pub fn quoted(text: &str, prefix: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(prefix);
        out.push_str(line);
        out.push('\n');
    }
    if text.is_empty() {
        out.push_str(prefix.trim_end());
        out.push('\n');
    }
    out
}

/// What a turn's program did: program, tool calls, output and its value or error.
pub fn turn_report(turn: &Turn, with_program: bool) -> String {
    let mut out = String::new();
    if turn.program().trim().is_empty() {
        out.push_str("no program in the reply:\n");
        out.push_str(&quoted(turn.raw_response(), "  | "));
    } else if with_program {
        out.push_str("program:\n");
        out.push_str(&quoted(turn.program(), "  "));
    }
    if turn.reply_cut_off() {
        let _ = writeln!(
            out,
            "reply cut off at the token limit (stop reason: {})",
            turn.stop_reason().unwrap_or_default()
        );
    }
    if !turn.tool_calls().is_empty() {
        out.push_str("tool calls:\n");
        for call in turn.tool_calls() {
            let args: Vec<String> = call.args.iter().map(short).collect();
            let result = match &call.result {
                ToolOutcome::Ok(value) => short(value),
                ToolOutcome::Error(message) => format!("error: {message}"),
            };
            let _ = writeln!(
                out,
                "  {}({}) -> {result}  ({})",
                call.name,
                args.join(" "),
                millis(call.duration_us)
            );
        }
    }
    if !turn.prints().is_empty() {
        out.push_str("output:\n");
        for print in turn.prints() {
            out.push_str(&quoted(print, "  "));
        }
    }
    match turn.result() {
        TurnResult::Value(value) => {
            let _ = writeln!(out, "value: {}", short(value));
        }
        TurnResult::Error(error) => {
            let origin = format!("turn {}", turn.number());
            out.push_str(&quoted(
                &diagnostic::turn_error(turn.program(), &origin, error),
                "",
            ));
        }
    }
    out
}

/// A turn's tokens and time on one line.
pub fn turn_usage(turn: &Turn) -> String {
    let usage = turn.usage();
    let micros = |us: u64| HumanDuration(Duration::from_micros(us));
    format!(
        "turn {}: {}; {} (model {}, program {})",
        turn.number(),
        tokens_text(&usage.tokens),
        micros(usage.duration_us),
        micros(usage.llm_duration_us),
        micros(usage.eval_duration_us)
    )
}

/// Messages sent to the model after the system prompt, each under its role.
pub fn messages_text(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages.iter().filter(|m| m.role != Role::System) {
        let _ = writeln!(out, "[{}]", message.role.as_str());
        out.push_str(&quoted(&message.content, "  | "));
    }
    out
}

/// What a run's steps are called where its outcome is shown.
#[derive(Clone, Copy)]
pub enum Unit {
    /// A turn of an agent's loop (`ptc run`).
    Turn,
    /// A stage of a compiled agent's program (`ptc exec`).
    Stage,
}

/// How the run ended, after how many of its turns or stages, and its value or failure reason.
pub fn outcome_line(step: &Step, unit: Unit) -> String {
    let unit = match unit {
        Unit::Turn => "turn",
        Unit::Stage => "stage",
    };
    let turns = format!(
        "{} of {} {unit}{}",
        step.turns.len(),
        step.task.max_turns,
        if step.task.max_turns == 1 { "" } else { "s" }
    );
    match &step.outcome {
        StepOutcome::Returned { value } => {
            format!(
                "returned after {turns}:\n{}",
                quoted(&short_full(value), "  ")
            )
        }
        StepOutcome::Failed { kind, reason, .. } => format!(
            "failed ({}) after {turns}:\n{}",
            kind.as_str(),
            quoted(reason, "  ")
        ),
    }
}

/// A returned value in full (it is the answer).
fn short_full(value: &Value) -> String {
    pr_str(value)
}

/// Requests, tokens and time of a run; `replayed` when the replies came from a transcript,
/// so that nothing was billed.
pub fn usage_lines(usage: &Usage, replayed: bool) -> String {
    let t = &usage.tokens;
    let mut out = if !replayed {
        format!(
            "model requests: {}\ntokens: {} in, {} out",
            usage.llm_requests, t.input_tokens, t.output_tokens
        )
    } else if t.is_zero() {
        format!(
            "model requests: {} (replayed from a transcript: no model was asked, nothing was \
             billed)\ntokens: none recorded in the transcript",
            usage.llm_requests
        )
    } else {
        format!(
            "model requests: {} (replayed from a transcript: no model was asked, nothing was \
             billed)\ntokens as recorded: {} in, {} out",
            usage.llm_requests, t.input_tokens, t.output_tokens
        )
    };
    if t.cache_read_tokens > 0 || t.cache_write_tokens > 0 {
        let _ = write!(
            out,
            " (prompt cache: {} read, {} written)",
            t.cache_read_tokens, t.cache_write_tokens
        );
    }
    let _ = write!(
        out,
        "\ntime: {} (model {}, programs {})\n",
        millis(usage.duration_us),
        millis(usage.llm_duration_us),
        millis(usage.eval_duration_us)
    );
    out
}

/// The run's requests priced under every named profile, beside the full history's.
pub fn bills(
    strategy: &dyn Compression,
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    and_next: bool,
    profiles: &[PricingProfile],
) -> Vec<BillComparison> {
    profiles
        .iter()
        .map(|profile| {
            compare_with_full_history(
                strategy,
                turns,
                opts,
                and_next,
                profile,
                &HeuristicTokenizer,
            )
        })
        .collect()
}

/// Under every named profile, the default strategy's bill for the run beside the best
/// compaction schedule's in hindsight and the full history's.
pub fn schedules(
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    and_next: bool,
    profiles: &[PricingProfile],
) -> Vec<ScheduleComparison> {
    profiles
        .iter()
        .map(|profile| compare_schedules(turns, opts, and_next, profile, &HeuristicTokenizer))
        .collect()
}

/// One line per profile: what the default (`on`, deciding with that profile's caching rules)
/// bills for the requests, what the best compaction schedule in hindsight bills, and the full
/// history.
pub fn schedule_lines(comparisons: &[ScheduleComparison]) -> String {
    let mut out = String::from(
        "the default (on) against the best compaction schedule in hindsight \
         (billed-equivalent input tokens):\n",
    );
    for comparison in comparisons {
        let _ = writeln!(
            out,
            "  {:<11} on {}, best {}: {}; full history {}",
            format!("{}:", comparison.default.profile),
            token_count_text(comparison.default.billed()),
            token_count_text(comparison.best.billed()),
            comparison
                .default_over_best()
                .map_or("n/a".to_string(), |r| format!("{r:.2}x")),
            token_count_text(comparison.full_history.billed()),
        );
    }
    out
}

/// The profiles a report prices under when none is chosen.
pub fn default_profiles() -> Vec<PricingProfile> {
    PricingKind::ALL
        .into_iter()
        .map(PricingKind::profile)
        .collect()
}

/// One line per profile: the billed-equivalent input tokens of the requests, how they split,
/// and the full history's for the same turns.
pub fn bill_lines(comparisons: &[BillComparison]) -> String {
    let requests = comparisons.first().map_or(0, |c| c.strategy.requests.len());
    let mut out = format!(
        "modelled bill of {requests} request{} (billed-equivalent input tokens; token counts \
         estimated at about 4 characters a token):\n",
        if requests == 1 { "" } else { "s" }
    );
    for comparison in comparisons {
        let total = &comparison.strategy.total;
        let _ = writeln!(
            out,
            "  {:<11} {} ({} input, {} cache read, {} cache write); full history {}: {}",
            format!("{}:", comparison.strategy.profile),
            token_count_text(total.billed),
            token_count_text(total.input_tokens as f64),
            token_count_text(total.cache_read_tokens as f64),
            token_count_text(total.cache_write_tokens as f64),
            token_count_text(comparison.full_history.billed()),
            comparison
                .ratio()
                .map_or("n/a".to_string(), |r| format!("{r:.2}x")),
        );
    }
    out
}

/// What the provider reported about its prompt cache, priced under `profile`, for reading
/// beside the modelled bill.
pub fn reported_line(reported: &RequestCost, profile: &PricingProfile) -> String {
    format!(
        "reported by the provider: {} input, {} cache read, {} cache write: {} billed-equivalent \
         under {} prices\n",
        token_count_text(reported.input_tokens as f64),
        token_count_text(reported.cache_read_tokens as f64),
        token_count_text(reported.cache_write_tokens as f64),
        token_count_text(reported.billed),
        profile,
    )
}
