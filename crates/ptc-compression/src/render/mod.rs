//! The text of every part of a rendering. Strategies choose which parts to show and where;
//! the wording lives only here (see docs/compression.md for the layout). The parts, in layer
//! order: each file uses only the files above it.

// Each module has a comment line of its own, so that formatting keeps the order.

// Headers, parts, counts, a turn's program.
pub(crate) mod parts;
// Values as samples.
pub(crate) mod sample;
// The mission, `tool/` and `data/`.
pub(crate) mod prefix;
// The `user/` namespace.
pub(crate) mod definitions;
// Tool-call lines.
pub(crate) mod calls;
// The summary of folded turns.
pub(crate) mod folded;
// The feedback on a turn, and the turn count.
pub(crate) mod feedback;

#[cfg(test)]
mod tests {
    use super::calls::{ListedCall, ResultShown, tool_call_sizes, write_tool_call};
    use super::feedback::write_error_place;
    use super::parts::{Detail, FINAL_TURN, Parts, SHORT_RESULT, open_comment, write_turns_left};
    use crate::output::push_one_line;
    use crate::render_options::RenderLimits;
    use pretty_assertions::assert_eq;
    use ptc_lisp::{ToolCallRecord, ToolOutcome, Value};

    // The sizes of a call's three forms are those of the lines written.
    #[test]
    fn tool_call_sizes_are_those_of_the_written_lines() {
        let call = |result: ToolOutcome| ToolCallRecord {
            name: "search".into(),
            args: vec![Value::string("é".repeat(70)), Value::Int(3)],
            result,
            duration_us: 1,
        };
        let record = |i: i64| {
            Value::map([
                (Value::keyword("id"), Value::Int(i)),
                (Value::keyword("note"), Value::string("ü".repeat(90))),
            ])
        };
        let results = [
            ToolOutcome::Ok(Value::Nil),
            ToolOutcome::Ok(Value::string("queued")),
            ToolOutcome::Ok(Value::vector((0..6).map(record))),
            ToolOutcome::Ok(Value::string("x".repeat(SHORT_RESULT))),
            ToolOutcome::Ok(Value::string("x".repeat(SHORT_RESULT + 1))),
            ToolOutcome::Error("timed out\nafter 30 s ".repeat(20)),
        ];
        let limits = RenderLimits::default();
        for (result, failed_turn) in results.into_iter().zip([None, Some(7)].into_iter().cycle()) {
            let call = call(result);
            let written =
                [ResultShown::Label, ResultShown::Sample, ResultShown::Short].map(|result| {
                    let mut line = String::new();
                    let listed = ListedCall {
                        call: &call,
                        result,
                        failed_turn,
                    };
                    write_tool_call(&mut line, listed, Detail::Full, &limits);
                    line.chars().count()
                });
            let mut line = String::new();
            assert_eq!(
                tool_call_sizes(&call, failed_turn, &limits, &mut line),
                written
            );
        }
    }

    #[test]
    fn comments_start_at_column_thirty_or_after_one_space() {
        let mut out = String::from("short");
        open_comment(&mut out, 0);
        assert_eq!(out, format!("short{}; ", " ".repeat(25)));
        let long = "x".repeat(30);
        let mut out = long.clone();
        open_comment(&mut out, 0);
        assert_eq!(out, format!("{long} ; "));
        // Width counts characters, not bytes.
        let mut out = String::from("ä");
        open_comment(&mut out, 0);
        assert_eq!(out.chars().count(), 32);
    }

    #[test]
    fn line_breaks_in_one_line_entries_become_spaces() {
        let mut out = String::new();
        push_one_line(&mut out, "a\r\nb\n\nc");
        assert_eq!(out, "a b c");
    }

    // MSG-005
    #[test]
    fn the_last_turn_gets_the_final_warning() {
        let line = |max, done| {
            let mut out = String::new();
            write_turns_left(&mut out, max, done);
            out
        };
        assert_eq!(line(5, 0), "Turns left: 5");
        assert_eq!(line(5, 3), "Turns left: 2");
        assert_eq!(line(5, 4), FINAL_TURN);
        assert_eq!(line(5, 9), FINAL_TURN);
        assert_eq!(line(1, 0), FINAL_TURN);
    }

    #[test]
    fn an_error_shows_the_line_it_points_at_with_a_caret() {
        let place = |program: &str, line, col| {
            let mut out = String::new();
            let error = ptc_turn::TurnError::new("k", "m").at(line, col);
            write_error_place(&mut out, program, &error);
            out
        };
        assert_eq!(place("(inc\n  (:a))", 2, 4), "\n      (:a))\n       ^");
        let long = format!("({} x)", "y".repeat(200));
        assert_eq!(
            place(&long, 1, 150),
            format!("\n    ...{}...\n    {}^", "y".repeat(90), " ".repeat(53))
        );
        assert_eq!(place("(inc 1)", 3, 1), "");
        assert_eq!(place("(inc 1)\n\n", 2, 1), "");
    }

    #[test]
    fn empty_parts_leave_no_blank_lines() {
        let mut out = String::new();
        let mut parts = Parts::new(&mut out);
        parts.part(|_| {});
        parts.part(|o| o.push('a'));
        parts.part(|_| {});
        parts.part(|o| o.push('b'));
        assert_eq!(out, "a\n\nb");
    }
}
