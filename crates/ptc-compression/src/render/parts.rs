//! The pieces every rendering is made of: the headers that open its parts, how much a part
//! shows, the counts of what a request showed, and the text of a turn's program.

use crate::output::push_one_line;
use ptc_turn::Turn;
use std::borrow::Cow;

/// Width the left part of a namespace line is padded to before its `; ` comment.
const NAME_WIDTH: usize = 30;

pub(crate) const TOOL_HEADER: &str = ";; === tool/ ===";
pub(crate) const DATA_HEADER: &str = ";; === data/ ===";
pub(crate) const USER_HEADER: &str = ";; === user/ (your prelude) ===";

/// The header of the prelude of `folded` turns: when turns shown as they happened follow, it
/// says that their definitions are in their programs, so that none looks lost.
pub(crate) fn prelude_header(folded: &[Turn], turns_after: bool) -> Cow<'static, str> {
    match folded.last() {
        Some(last) if turns_after => Cow::Owned(format!(
            ";; === user/ (your prelude: definitions up to turn {}; the turns below define more \
             in their programs) ===",
            last.number()
        )),
        _ => Cow::Borrowed(USER_HEADER),
    }
}
pub(crate) const USER_TURN_HEADER: &str = ";; === user/ (defined this turn) ===";
pub(crate) const TOOL_CALLS_HEADER: &str = ";; Tool calls made:";
pub(crate) const NO_TOOL_CALLS: &str = ";; No tool calls made";
pub(crate) const RESULT_PREFIX: &str = ";; Result: ";
pub(crate) const FINAL_TURN: &str =
    "FINAL TURN - you must call (return result) or (fail reason) now.";
/// The code-fence language of programs shown back to the model.
const FENCE: &str = "```clojure\n";

/// How much a summary shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detail {
    /// Descriptions, docstrings, samples and arguments.
    Full,
    /// Names and type labels only (the `aggressive` strategy).
    Minimal,
}

/// Which rules a summary follows where the seed design and the default strategy differ: the
/// seed removes every `;` from a docstring (DEF-007) and shows a definition's sample only when
/// nothing was printed (SAM-002); the default shows docstrings verbatim and a small value
/// whatever was printed (`rate ; = float 0.2`), since a model read the cleaned docstrings as
/// lost definitions and printed small values again to see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rules {
    Seed,
    Default,
}

/// How a `user/` section shows definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DefinitionStyle {
    /// Samples of values (when nothing was printed: SAM-001).
    pub samples: bool,
    pub detail: Detail,
    pub rules: Rules,
}

/// What a strategy showed and left out, for its stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub turns_compressed: usize,
    pub tool_calls_total: usize,
    pub tool_calls_shown: usize,
    pub prints_total: usize,
    pub prints_shown: usize,
    pub failed_shown: usize,
    pub failed_total: usize,
}

/// Writes parts separated by one blank line, leaving out parts that came out empty.
pub(crate) struct Parts<'o> {
    out: &'o mut String,
    base: usize,
}

impl<'o> Parts<'o> {
    pub(crate) fn new(out: &'o mut String) -> Parts<'o> {
        let base = out.len();
        Parts { out, base }
    }

    pub(crate) fn part(&mut self, write: impl FnOnce(&mut String)) {
        let mark = self.out.len();
        if mark > self.base {
            self.out.push_str("\n\n");
        }
        let start = self.out.len();
        write(self.out);
        if self.out.len() == start {
            self.out.truncate(mark);
        }
    }
}

/// The `Turns left: N` line, or the final-turn warning when the coming turn is the last.
/// `done` is the number of turns taken before the turn the line is read for.
pub(crate) fn write_turns_left(out: &mut String, max_turns: u32, done: usize) {
    let left = (max_turns as usize).saturating_sub(done);
    if left <= 1 {
        out.push_str(FINAL_TURN);
    } else {
        out.push_str("Turns left: ");
        push_usize(out, left);
    }
}

pub(super) fn push_usize(out: &mut String, n: usize) {
    use std::fmt::Write;
    let _ = write!(out, "{n}");
}

/// Pad the current line (which started at byte `line_start`) and open its comment.
pub(super) fn open_comment(out: &mut String, line_start: usize) {
    let width = out[line_start..].chars().count();
    let pad = if width < NAME_WIDTH {
        NAME_WIDTH - width
    } else {
        1
    };
    out.extend(std::iter::repeat_n(' ', pad));
    out.push_str("; ");
}

/// Whether a docstring shows anything on a summary line (see [`push_doc`]).
pub(super) fn shows_text(doc: &str, rules: Rules) -> bool {
    doc.chars()
        .any(|c| !c.is_whitespace() && (c != ';' || rules == Rules::Default))
}

/// A docstring as a summary line shows it: on one line, trimmed; under the seed's rules
/// without `;` (DEF-007).
pub(super) fn push_doc(out: &mut String, doc: &str, rules: Rules) {
    match rules {
        Rules::Default => push_one_line(out, doc.trim()),
        Rules::Seed => push_one_line(out, doc.replace(';', "").trim()),
    }
}

/// The assistant message of a turn under compression: its full program, or the raw
/// response when no program could be taken from it.
pub(crate) fn program_text(turn: &Turn) -> Cow<'_, str> {
    let program = turn.program().trim_end_matches(['\n', '\r']);
    if program.trim().is_empty() {
        return verbatim_text(turn);
    }
    let mut out = String::with_capacity(program.len() + FENCE.len() + 4);
    out.push_str(FENCE);
    out.push_str(program);
    out.push_str("\n```");
    Cow::Owned(out)
}

/// The assistant message as the model wrote it.
/// The assistant message of a turn the default strategy shows as it happened: its program, or
/// the reply as written when that is no longer (a reply that is only the program, fenced its
/// own way), so that carrying a turn never costs more than the full history does. The text
/// around the program is the model's own thinking aloud: carried on every later request it
/// cost a fifth of the bill of a 24-turn run whose replies explain each step, and the system
/// prompt says it may be left out.
pub(crate) fn shorter_text(turn: &Turn) -> Cow<'_, str> {
    let program = program_text(turn);
    let verbatim = verbatim_text(turn);
    if verbatim.len() <= program.len() {
        verbatim
    } else {
        program
    }
}

/// The assistant message as the model wrote it.
pub(crate) fn verbatim_text(turn: &Turn) -> Cow<'_, str> {
    if !turn.raw_response().is_empty() {
        Cow::Borrowed(turn.raw_response())
    } else if !turn.program().trim().is_empty() {
        program_text(turn)
    } else {
        Cow::Borrowed("(empty response)")
    }
}

/// The longest sample of a result shown whole when the turn printed (see
/// [`ResultShown::Short`](super::calls::ResultShown::Short)).
pub(crate) const SHORT_RESULT: usize = 40;
