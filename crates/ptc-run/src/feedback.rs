//! What the run words itself for the model: the turn errors of a reply that held no program
//! to run, and what a resumed run is told about the tool calls its unfinished turn made.

use ptc_lisp::{ToolError, ToolOutcome, Value, pr_str};
use ptc_turn::{ErrorKind, TurnError};

use crate::intent_log::RecordedCall;

/// What the model is told when its reply holds no program.
pub const NO_PROGRAM: &str = "Your reply has no program, so nothing ran. Reply with PTC-Lisp \
                              code in a ```clojure block, for example:\n```clojure\n(return \
                              {:answer 42})\n```";

/// The error of a turn whose reply was cut off by the reply token limit before it held a
/// complete program (`detail` says what was wrong with what it held, if anything).
pub(crate) fn cut_off_error(max_tokens: u32, detail: Option<&str>) -> TurnError {
    let what = match detail {
        Some(detail) => format!(" (the program was incomplete: {detail})"),
        None => String::new(),
    };
    TurnError::new(
        ErrorKind::REPLY_CUT_OFF,
        format!(
            "Your reply was cut off at the limit of {max_tokens} tokens before its program was \
             complete{what}, so nothing ran. Write a shorter program, with little or no text \
             around it."
        ),
    )
}

/// What a run resumed at turn `turn` is told about the tool calls its unfinished turn (or a
/// later one) had made before the run stopped, from `recorded`, the calls of its intent log;
/// `None` when it had made none. Each call is printed as the form the program wrote.
pub(crate) fn resumed_calls_notice(turn: u32, recorded: &[RecordedCall]) -> Option<String> {
    let lines: Vec<String> = recorded
        .iter()
        .filter(|r| r.key.turn() >= turn)
        .map(|r| {
            let call = shortened(&pr_str(&call_form(&r.tool, &r.args)));
            match &r.outcome {
                Some(ToolOutcome::Ok(value)) => {
                    format!(
                        "- {call} completed, returning {}",
                        shortened(&pr_str(value))
                    )
                }
                Some(ToolOutcome::Error(message)) => {
                    format!("- {call} completed, failing: {}", shortened(message))
                }
                None => format!("- {call} may or may not have happened"),
            }
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(format!(
        "Note: this run stopped during turn {turn}, before the turn was saved, after its \
         program had made these tool calls:\n{}\nA call made again with the same arguments \
         in the same order is not repeated: a completed one returns its recorded result, and \
         one that may have happened is retried under the same idempotency key.",
        lines.join("\n")
    ))
}

/// The answer of a tool call that was not made because the driver could not record it in the
/// run's intent log first (`error` says why).
pub fn call_not_recorded(error: &dyn std::fmt::Display) -> ToolError {
    ToolError::new(format!(
        "the call was not made: it could not be recorded first ({error})"
    ))
}

/// The call of tool `tool` with `args` as the program wrote it: `(tool/NAME ARG ...)`.
fn call_form(tool: &str, args: &[Value]) -> Value {
    Value::list(std::iter::once(Value::symbol(&format!("tool/{tool}"))).chain(args.iter().cloned()))
}

/// `text`, cut to 200 characters.
fn shortened(text: &str) -> String {
    const LIMIT: usize = 200;
    match text.char_indices().nth(LIMIT) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}
