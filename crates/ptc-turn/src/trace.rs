//! A human-readable view of a run for debugging: every turn in full, as it happened.

use crate::preview::preview;
use crate::step::{Step, StepOutcome};
use crate::turn::{Turn, TurnResult};
use crate::usage::Usage;
use ptc_lisp::Compact;
use ptc_lisp::ToolOutcome;
use std::fmt::Write;

/// Items and characters of a value shown in a trace.
const ITEMS: usize = 5;
const CHARS: usize = 120;

fn value_text(value: &ptc_lisp::Value) -> String {
    preview(value, Compact::new(ITEMS, CHARS))
}

fn millis(us: u64) -> String {
    format!("{:.1} ms", us as f64 / 1000.0)
}

fn indented(out: &mut String, text: &str) {
    for line in text.lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
}

fn usage_line(usage: &Usage) -> String {
    let t = &usage.tokens;
    let mut line = format!(
        "{} model request{}, tokens {} in / {} out",
        usage.llm_requests,
        if usage.llm_requests == 1 { "" } else { "s" },
        t.input_tokens,
        t.output_tokens
    );
    if t.cache_read_tokens > 0 || t.cache_write_tokens > 0 {
        let _ = write!(
            line,
            " (cache: {} read, {} written)",
            t.cache_read_tokens, t.cache_write_tokens
        );
    }
    let _ = write!(
        line,
        ", {} (model {}, programs {})",
        millis(usage.duration_us),
        millis(usage.llm_duration_us),
        millis(usage.eval_duration_us)
    );
    line
}

impl Turn {
    /// This turn in full: program, tool calls, output, value or error, the names defined after
    /// it, and its cost.
    ///
    /// ```
    /// use ptc_lisp::Value;
    /// use ptc_turn::Turn;
    /// let turn = Turn::success(1, "(println 42)", Value::Nil).with_prints(vec!["42".into()]);
    /// assert_eq!(
    ///     turn.trace_view(),
    ///     "--- turn 1: ok ---\nprogram:\n  (println 42)\noutput:\n  42\nvalue: nil\n"
    /// );
    /// ```
    pub fn trace_view(&self) -> String {
        let mut out = String::new();
        let status = match self.result() {
            TurnResult::Value(_) => "ok".to_string(),
            TurnResult::Error(e) => format!("error[{}]", e.kind),
        };
        let _ = writeln!(out, "--- turn {}: {status} ---", self.number());
        if self.program().trim().is_empty() {
            out.push_str("reply (no program):\n");
            indented(&mut out, self.raw_response());
        } else {
            out.push_str("program:\n");
            indented(&mut out, self.program());
        }
        if self.reply_cut_off() {
            let _ = writeln!(
                out,
                "reply cut off at the token limit (stop reason: {})",
                self.stop_reason().unwrap_or_default()
            );
        }
        if !self.tool_calls().is_empty() {
            out.push_str("tool calls:\n");
            for call in self.tool_calls() {
                let args: Vec<String> = call.args.iter().map(value_text).collect();
                let result = match &call.result {
                    ToolOutcome::Ok(value) => value_text(value),
                    ToolOutcome::Error(message) => format!("error: {message}"),
                };
                let _ = writeln!(
                    out,
                    "  {}({}) -> {result} [{}]",
                    call.name,
                    args.join(" "),
                    millis(call.duration_us)
                );
            }
        }
        if !self.prints().is_empty() {
            out.push_str("output:\n");
            for print in self.prints() {
                indented(&mut out, print);
            }
        }
        match self.result() {
            TurnResult::Value(value) => {
                let _ = writeln!(out, "value: {}", value_text(value));
            }
            TurnResult::Error(error) => {
                out.push_str("error:\n");
                indented(&mut out, &error.to_string());
            }
        }
        if !self.memory().is_empty() {
            let names: Vec<&str> = self.memory().iter().map(|d| d.name.as_str()).collect();
            let _ = writeln!(out, "defined: {}", names.join(", "));
        }
        if !self.usage().is_zero() {
            let _ = writeln!(out, "cost: {}", usage_line(self.usage()));
        }
        if !self.messages().is_empty() {
            let chars: usize = self
                .messages()
                .iter()
                .map(|m| m.content.chars().count())
                .sum();
            let _ = writeln!(
                out,
                "sent: {} messages, {chars} characters",
                self.messages().len()
            );
        }
        out
    }
}

impl Step {
    /// The whole run for a human: how it ended, what it cost, then every turn in full (see
    /// [`Turn::trace_view`]).
    pub fn trace_view(&self) -> String {
        let mut out = String::new();
        let turns = self.turns.len();
        let of = format!(
            "{turns} of {} turn{}",
            self.task.max_turns,
            if self.task.max_turns == 1 { "" } else { "s" }
        );
        match &self.outcome {
            StepOutcome::Returned { value } => {
                let _ = writeln!(out, "=== returned after {of} ===");
                let _ = writeln!(out, "value: {}", value_text(value));
            }
            StepOutcome::Failed {
                kind,
                reason,
                llm_errors,
                ..
            } => {
                let _ = writeln!(out, "=== failed ({}) after {of} ===", kind.as_str());
                out.push_str("reason:\n");
                indented(&mut out, reason);
                if llm_errors.len() > 1 {
                    out.push_str("every attempt:\n");
                    for (n, error) in llm_errors.iter().enumerate() {
                        indented(&mut out, &format!("{}. {error}", n + 1));
                    }
                }
            }
        }
        out.push_str("mission:\n");
        indented(&mut out, &self.task.mission);
        let _ = writeln!(out, "cost: {}", usage_line(&self.usage));
        for turn in &self.turns {
            out.push('\n');
            out.push_str(&turn.trace_view());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::step::{FailureKind, Step, StepOutcome, Task};
    use crate::turn::{Turn, TurnError, Turns};
    use crate::usage::{TokenUsage, Usage};
    use crate::{Message, ToolCallRecord, ToolOutcome};
    use pretty_assertions::assert_eq;
    use ptc_lisp::{Definition, Value};

    // DBG-005: the whole run, turn by turn, for a human.
    #[test]
    fn a_failed_run_shows_every_turn_in_full() {
        let usage = Usage {
            tokens: TokenUsage {
                input_tokens: 120,
                output_tokens: 30,
                cache_read_tokens: 800,
                cache_write_tokens: 0,
            },
            llm_requests: 1,
            llm_duration_us: 2_500,
            eval_duration_us: 300,
            duration_us: 3_000,
        };
        let mut turns = Turns::new();
        turns
            .push(
                Turn::success(1, "(def n (tool/count-users))\n(println n)", Value::Nil)
                    .with_prints(vec!["42".into()])
                    .with_tool_calls(vec![ToolCallRecord {
                        name: "count-users".into(),
                        args: vec![Value::keyword("active")],
                        result: ToolOutcome::Ok(Value::Int(42)),
                        duration_us: 1_200,
                    }])
                    .with_memory(vec![Definition {
                        name: "n".into(),
                        doc: None,
                        value: Value::Int(42),
                        params: Vec::new(),
                        last_return: None,
                    }])
                    .with_messages(vec![Message::system("sys"), Message::user("Count")])
                    .with_usage(usage.clone()),
            )
            .expect("turn 1");
        turns
            .push(
                Turn::failure(2, "", TurnError::new("no_program", "no program"))
                    .with_raw_response("I think 42."),
            )
            .expect("turn 2");
        let step = Step {
            outcome: StepOutcome::Failed {
                kind: FailureKind::MaxTurnsExceeded,
                reason: "no (return ...) or (fail ...) after 2 turns".into(),
                value: None,
                llm_errors: Vec::new(),
            },
            task: Task {
                max_turns: 2,
                ..Task::new("Count the users")
            },
            turns,
            usage,
        };
        assert_eq!(
            step.trace_view(),
            "=== failed (max_turns_exceeded) after 2 of 2 turns ===\n\
             reason:\n  no (return ...) or (fail ...) after 2 turns\n\
             mission:\n  Count the users\n\
             cost: 1 model request, tokens 120 in / 30 out (cache: 800 read, 0 written), 3.0 ms \
             (model 2.5 ms, programs 0.3 ms)\n\
             \n\
             --- turn 1: ok ---\n\
             program:\n  (def n (tool/count-users))\n  (println n)\n\
             tool calls:\n  count-users(:active) -> 42 [1.2 ms]\n\
             output:\n  42\n\
             value: nil\n\
             defined: n\n\
             cost: 1 model request, tokens 120 in / 30 out (cache: 800 read, 0 written), 3.0 ms \
             (model 2.5 ms, programs 0.3 ms)\n\
             sent: 2 messages, 8 characters\n\
             \n\
             --- turn 2: error[no_program] ---\n\
             reply (no program):\n  I think 42.\n\
             error:\n  no program\n"
        );
    }
}
