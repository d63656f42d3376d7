//! What the next request tells the model about its last turn, beside the turn count: that it
//! sent a program it had already sent, that it repeated a tool call with the same arguments,
//! or that a program which ran did not return. Small models at temperature 0 otherwise send
//! the same program turn after turn, or compute the answer and never return it.
//!
//! The advice is part of the request's changing tail (like the turn count), so no later
//! request repeats it and prompt caching is unaffected.

use ptc_lisp::Value;
use ptc_turn::Turn;
use std::fmt::Write as _;

/// Appends the advice on the last of `turns` to `out`, one sentence a line; nothing when there
/// is nothing to say.
pub(crate) fn write_advice(out: &mut String, turns: &[Turn]) {
    let Some((last, earlier)) = turns.split_last() else {
        return;
    };
    let mut lines: Vec<String> = Vec::new();
    // A program sent again is a repeat only if it did the same thing: after a failure, a
    // retry may succeed (the tool's error may have asked for one), and a program that reads
    // the run's state (the next ticket of a queue) does something new each time.
    let repeated = earlier
        .iter()
        .find(|turn| same_program(turn.program(), last.program()) && same_effect(turn, last));
    match (repeated, last.is_success()) {
        (Some(first), false) => lines.push(format!(
            "Your program is the same as the one of turn {}, and it failed the same way. Do not \
             send it again: change the code the error points at, or solve the task another way.",
            first.number()
        )),
        (Some(first), true) => lines.push(format!(
            "Your program is the same as the one of turn {}, so it did the same thing again. Do \
             not send it again: if its result answers the task, return it with `(return ...)`; \
             otherwise write a different program.",
            first.number()
        )),
        (None, true) if computed_silently(last) => lines.push(
            "The program did not call `return`, so the run goes on. If its result answers the \
             task, send `(return ...)` around the expression that computes it."
                .to_string(),
        ),
        (None, _) => {}
    }
    for (name, turn) in repeated_calls(earlier, last) {
        lines.push(match turn {
            Some(number) => format!(
                "`tool/{name}` was called again with the same arguments as in turn {number}, \
                 where it succeeded: a tool with side effects (sends, books, writes) acts again \
                 on each call; keep a result you need in a def rather than calling again."
            ),
            None => format!(
                "`tool/{name}` was called twice with the same arguments in this program: a tool \
                 with side effects (sends, books, writes) acts again on each call; call it once."
            ),
        });
    }
    for (k, line) in lines.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let _ = write!(out, "{line}");
    }
}

/// A turn that ended on a computed value without printing: the answer, perhaps, left
/// unreturned. A turn that defines or prints is looking around, and is left alone.
fn computed_silently(turn: &Turn) -> bool {
    turn.prints().is_empty() && !matches!(turn.value(), None | Some(Value::Nil | Value::Var(_)))
}

/// Two turns that ended the same way (the same value or the same error), printed the same and
/// made the same tool calls.
fn same_effect(a: &Turn, b: &Turn) -> bool {
    let calls = |t: &Turn| {
        t.tool_calls()
            .iter()
            .map(|c| (c.name.clone(), c.args.clone()))
            .collect::<Vec<_>>()
    };
    let error = |t: &Turn| t.error().map(|e| (e.kind.clone(), e.message.clone()));
    a.value() == b.value()
        && error(a) == error(b)
        && a.prints() == b.prints()
        && calls(a) == calls(b)
}

/// Two programs that differ at most in whitespace.
fn same_program(a: &str, b: &str) -> bool {
    !a.trim().is_empty() && a.split_whitespace().eq(b.split_whitespace())
}

/// The tools the last turn called with arguments it or an earlier turn had already used in a
/// call that succeeded, each once, with the earlier turn's number (`None`: repeated within the
/// last turn). Calling again after a failure is a retry, which the error may have asked for.
fn repeated_calls<'t>(earlier: &'t [Turn], last: &'t Turn) -> Vec<(&'t str, Option<u32>)> {
    let mut found: Vec<(&str, Option<u32>)> = Vec::new();
    let calls = last.tool_calls();
    for (i, call) in calls.iter().enumerate() {
        if found.iter().any(|(name, _)| *name == call.name) {
            continue;
        }
        let same = |other: &ptc_lisp::ToolCallRecord| {
            other.name == call.name
                && other.args == call.args
                && matches!(other.result, ptc_lisp::ToolOutcome::Ok(_))
        };
        if let Some(turn) = earlier
            .iter()
            .find(|turn| turn.tool_calls().iter().any(same))
        {
            found.push((&call.name, Some(turn.number())));
        } else if calls[..i].iter().any(same) {
            found.push((&call.name, None));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ptc_lisp::{Symbol, ToolCallRecord, ToolOutcome};
    use ptc_turn::TurnError;

    fn call(name: &str, arg: &str) -> ToolCallRecord {
        ToolCallRecord {
            name: name.to_string(),
            args: vec![Value::from(arg)],
            result: ToolOutcome::Ok(Value::Nil),
            duration_us: 0,
        }
    }

    fn turn(number: u32, program: &str, ok: bool, calls: Vec<ToolCallRecord>) -> Turn {
        let turn = if ok {
            Turn::success(number, program, Value::Int(1))
        } else {
            Turn::failure(number, program, TurnError::new("type", "boom"))
        };
        turn.with_tool_calls(calls)
    }

    fn advice(turns: &[Turn]) -> String {
        let mut out = String::new();
        write_advice(&mut out, turns);
        out
    }

    #[test]
    fn a_failed_program_sent_again_is_named_with_its_first_turn() {
        let turns = [
            turn(1, "(+ 1 {})", false, vec![]),
            turn(2, "(inc 1)", true, vec![]),
            turn(3, "(+ 1\n   {})", false, vec![]),
        ];
        assert_eq!(
            advice(&turns),
            "Your program is the same as the one of turn 1, and it failed the same way. Do not \
             send it again: change the code the error points at, or solve the task another way."
        );
    }

    #[test]
    fn a_program_that_ran_without_returning_is_told_to_return() {
        let turns = [turn(1, "(inc 1)", true, vec![])];
        assert_eq!(
            advice(&turns),
            "The program did not call `return`, so the run goes on. If its result answers the \
             task, send `(return ...)` around the expression that computes it."
        );
        let again = [
            turn(1, "(inc 1)", true, vec![]),
            turn(2, "(inc  1)", true, vec![]),
        ];
        assert_eq!(
            advice(&again),
            "Your program is the same as the one of turn 1, so it did the same thing again. Do \
             not send it again: if its result answers the task, return it with `(return ...)`; \
             otherwise write a different program."
        );
    }

    #[test]
    fn a_new_failing_program_and_one_that_defines_or_prints_get_no_advice() {
        assert_eq!(advice(&[turn(1, "(+ 1 {})", false, vec![])]), "");
        assert_eq!(advice(&[]), "");
        let defined = Turn::success(1, "(def a 1)", Value::Var(Symbol::new("user/a")));
        assert_eq!(advice(&[defined]), "");
        let printed =
            Turn::success(1, "(println 1) 2", Value::Int(2)).with_prints(vec!["1".into()]);
        assert_eq!(advice(&[printed]), "");
        assert_eq!(
            advice(&[Turn::success(1, "(tool/log \"x\")", Value::Nil)]),
            ""
        );
    }

    #[test]
    fn tool_calls_repeated_with_the_same_arguments_are_named_once() {
        let turns = [
            turn(1, "(tool/notify \"a\")", true, vec![call("notify", "a")]),
            turn(
                2,
                "(do (tool/notify \"a\") (tool/notify \"a\") (tool/send \"x\") (tool/send \"x\") (tool/get \"b\"))",
                false,
                vec![
                    call("notify", "a"),
                    call("notify", "a"),
                    call("send", "x"),
                    call("send", "x"),
                    call("get", "b"),
                ],
            ),
        ];
        assert_eq!(
            advice(&turns),
            "`tool/notify` was called again with the same arguments as in turn 1, where it \
             succeeded: a tool with side effects (sends, books, writes) acts again on each call; \
             keep a result you need in a def rather than calling again.\n\
             `tool/send` was called twice with the same arguments in this program: a tool with \
             side effects (sends, books, writes) acts again on each call; call it once."
        );
    }

    #[test]
    fn the_same_program_doing_something_new_is_not_a_repeat() {
        let program = "(tool/handle (nth data/queue (count handled)))";
        let turns = [
            turn(1, program, true, vec![call("handle", "T-01")]),
            turn(2, program, true, vec![call("handle", "T-02")]),
        ];
        assert_eq!(
            advice(&turns),
            "The program did not call `return`, so the run goes on. If its result answers the \
             task, send `(return ...)` around the expression that computes it."
        );
    }

    #[test]
    fn calling_again_after_a_failure_is_a_retry_not_a_repeat() {
        let failed = ToolCallRecord {
            result: ToolOutcome::Error("503: try again".into()),
            ..call("rate", "usd")
        };
        let turns = [
            turn(1, "(tool/rate \"usd\")", false, vec![failed.clone()]),
            turn(
                2,
                "(tool/rate \"usd\")",
                true,
                vec![failed, call("rate", "usd")],
            ),
        ];
        assert_eq!(
            advice(&turns),
            "The program did not call `return`, so the run goes on. If its result answers the \
             task, send `(return ...)` around the expression that computes it."
        );
    }
}
