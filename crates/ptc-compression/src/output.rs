//! The output section of a request: what programs printed, exactly as printed, within the
//! output limit, and the lines a summary writes in place of entries it does not repeat.

use crate::render_options::RenderLimits;
use crate::vocabulary::TypeVocabulary;
use ptc_lisp::Value;
use std::fmt::Write as _;

pub(crate) const OUTPUT_HEADER: &str = ";; Output:";

/// `header` and the given `println` entries, each exactly as printed; nothing when there are none.
pub(crate) fn write_output<'p>(
    out: &mut String,
    header: &str,
    prints: impl IntoIterator<Item = &'p String>,
    limits: &RenderLimits,
) -> usize {
    let mut section = OutputSection::new(out, header, limits);
    for print in prints {
        section.entry(print);
    }
    section.finish()
}

/// What one turn printed, as the feedback on it shows it: `header` and the entries exactly as
/// printed when they fit in `output_char_limit` characters; otherwise the first and the last
/// half of the limit, with a line in between saying how much was left out (cutting inside an
/// entry if need be). The beginning of long output is often its headings, the end its totals,
/// so both stay. Nothing when there are no entries; returns how many entries it shows, whole
/// or in part.
pub(crate) fn write_turn_output(
    out: &mut String,
    header: &str,
    prints: &[String],
    limits: &RenderLimits,
) -> usize {
    if prints.is_empty() {
        return 0;
    }
    out.push_str(header);
    let room = limits.output_char_limit;
    let length: usize = prints.iter().map(|p| p.chars().count()).sum::<usize>() + prints.len() - 1;
    if length <= room {
        for print in prints {
            out.push('\n');
            out.push_str(print);
        }
        return prints.len();
    }
    let text = prints.join("\n");
    let keep = room / 2;
    let byte_at = |chars: usize| {
        text.char_indices()
            .nth(chars)
            .map_or(text.len(), |(b, _)| b)
    };
    let front_end = byte_at(keep);
    let back_start = byte_at(length - (room - keep)).max(front_end);
    // Entries shown: those that start before the front's end, and those that end after the
    // back's start.
    let mut shown = 0;
    let mut at = 0;
    for print in prints {
        let end = at + print.len();
        if at < front_end || end > back_start {
            shown += 1;
        }
        at = end + 1;
    }
    out.push('\n');
    out.push_str(&text[..front_end]);
    out.push('\n');
    let _ = write!(
        out,
        ";; ... {} characters of output left out here (at most {room} are shown: the first and \
         the last {keep}); print less: counts, a few items, the fields you need",
        TypeVocabulary::grouped(text[front_end..back_start].chars().count() as u64),
    );
    out.push('\n');
    out.push_str(&text[back_start..]);
    shown
}

/// An output section being written: `header`, then printed entries exactly as printed, no more
/// than `output_char_limit` characters of them in all (the entry that reaches the limit is cut
/// there, and a last line says how much was left out), and notes on lines of their own.
pub(crate) struct OutputSection<'o> {
    out: &'o mut String,
    header: &'o str,
    started: bool,
    /// Characters of entries that may still be shown.
    room: usize,
    limit: usize,
    /// Characters of entries cut off.
    cut_off: usize,
    /// Entries shown, whole or cut.
    shown: usize,
}

impl<'o> OutputSection<'o> {
    pub(crate) fn new(out: &'o mut String, header: &'o str, limits: &RenderLimits) -> Self {
        OutputSection {
            out,
            header,
            started: false,
            room: limits.output_char_limit,
            limit: limits.output_char_limit,
            cut_off: 0,
            shown: 0,
        }
    }

    fn start(&mut self) {
        if !self.started {
            self.out.push_str(self.header);
            self.started = true;
        }
    }

    /// One printed entry, as printed while there is room.
    pub(crate) fn entry(&mut self, print: &str) {
        self.start();
        if self.room == 0 {
            self.cut_off += print.chars().count();
            return;
        }
        // A text of at most `room` bytes has at most `room` characters: only a longer one
        // needs walking to find where to cut.
        let cut = if print.len() <= self.room {
            None
        } else {
            print.char_indices().nth(self.room)
        };
        self.out.push('\n');
        match cut {
            Some((cut, _)) => {
                self.out.push_str(&print[..cut]);
                self.cut_off += print[cut..].chars().count();
                self.room = 0;
            }
            None => {
                self.out.push_str(print);
                self.room -= print.chars().count();
            }
        }
        self.shown += 1;
    }

    /// A line of the section that is not printed output (it does not count against the room).
    pub(crate) fn note(&mut self, write: impl FnOnce(&mut String)) {
        self.start();
        self.out.push('\n');
        write(self.out);
    }

    /// Ends the section; returns how many entries it shows.
    pub(crate) fn finish(self) -> usize {
        if self.cut_off > 0 {
            self.out.push('\n');
            write_cut_note(self.out, self.cut_off, self.limit);
        }
        self.shown
    }
}

/// `;; ... 120 more characters of output left out (at most 8000 are shown); ...`: the last line
/// of a section whose entries went past the output limit.
pub(crate) fn write_cut_note(out: &mut String, cut_off: usize, limit: usize) {
    let _ = write!(
        out,
        ";; ... {cut_off} more characters of output left out (at most {limit} are shown); \
         print less: counts, a few items, the fields you need"
    );
}

/// `;; turn 2 printed policy in full (a string of 3,803 characters); (println policy) shows it
/// again`: a printed entry a summary replaces by the name that still holds its value.
pub(crate) fn write_pointer(out: &mut String, turn: u32, name: &str, value: &Value) {
    let _ = write!(out, ";; turn {turn} printed {name} in full (");
    TypeVocabulary::write_size(out, value);
    let _ = write!(out, "); (println {name}) shows it again");
}

/// `;; turn 3 printed 1,204 characters, not kept, beginning: TEXT...`: a long printed entry of
/// its own kind that nothing holds, shown by its size and its first `chars` characters (of its
/// first line).
pub(crate) fn write_digest(out: &mut String, turn: u32, print: &str, chars: usize) {
    let _ = write!(
        out,
        ";; turn {turn} printed {} characters, not kept, beginning: ",
        TypeVocabulary::grouped(print.chars().count() as u64)
    );
    let first_line = print.trim_start().lines().next().unwrap_or("");
    match first_line.char_indices().nth(chars) {
        Some((cut, _)) => out.push_str(&first_line[..cut]),
        None => out.push_str(first_line),
    }
    out.push_str("...");
}

/// A kind of printed entries left out of a summary: how many, and how one of them began.
pub(crate) struct LeftOutKind<'t> {
    pub count: usize,
    pub example: &'t str,
}

/// `;; 33 earlier printed entries left out (turns 1 to 17): 17 like "order: ...", 16 like
/// "handled: ..."`: the printed entries a summary neither shows nor points to, counted and
/// named by kind (at most `named` kinds, then how many more entries).
pub(crate) fn write_left_out(
    out: &mut String,
    turns: (u32, u32),
    kinds: &[LeftOutKind<'_>],
    named: usize,
) {
    let count: usize = kinds.iter().map(|k| k.count).sum();
    let _ = write!(
        out,
        ";; {count} earlier printed {} left out",
        if count == 1 { "entry" } else { "entries" }
    );
    match turns {
        (first, last) if first == last => {
            let _ = write!(out, " (turn {first})");
        }
        (first, last) => {
            let _ = write!(out, " (turns {first} to {last})");
        }
    }
    out.push(':');
    for (i, kind) in kinds.iter().take(named).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, " {} like \"", kind.count);
        push_one_line(out, kind.example);
        out.push_str(" ...\"");
    }
    let more: usize = kinds.iter().skip(named).map(|k| k.count).sum();
    if more > 0 {
        let _ = write!(out, ", and {more} more");
    }
}

/// The characters [`write_left_out`] writes for `count` entries of the turns `turns`, of which
/// the kinds `named` are named: each as its count and the characters of its example (on one
/// line). The default strategy sizes a summary for every compaction it weighs, so this counts
/// rather than writes.
pub(crate) fn left_out_chars(
    count: usize,
    turns: (u32, u32),
    named: impl IntoIterator<Item = (usize, usize)>,
) -> usize {
    let noun = if count == 1 { "entry" } else { "entries" };
    let mut chars = ";;  earlier printed  left out:".len() + digits(count as u64) + noun.len();
    chars += match turns {
        (first, last) if first == last => " (turn )".len() + digits(first.into()),
        (first, last) => " (turns  to )".len() + digits(first.into()) + digits(last.into()),
    };
    let mut more = count;
    for (i, (kind_count, example)) in named.into_iter().enumerate() {
        chars += usize::from(i > 0) + "  like \" ...\"".len() + digits(kind_count as u64) + example;
        more -= kind_count;
    }
    if more > 0 {
        chars += ", and  more".len() + digits(more as u64);
    }
    chars
}

/// How many digits `n` has in decimal.
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// Append `text` on the current line: line breaks become single spaces so one entry stays one
/// line.
pub(crate) fn push_one_line(out: &mut String, text: &str) {
    if !text.contains(['\n', '\r']) {
        out.push_str(text);
        return;
    }
    let mut in_break = false;
    for c in text.chars() {
        if c == '\n' || c == '\r' {
            if !in_break {
                out.push(' ');
            }
            in_break = true;
        } else {
            out.push(c);
            in_break = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The count of a left-out line is that of the line written, in every shape it takes.
    #[test]
    fn left_out_lines_are_counted_as_written() {
        let kinds = |counts: &[usize]| -> Vec<LeftOutKind<'static>> {
            let examples = [
                "order:", "é-1", "T-#", "x", "audited", "(9.5", "beta", "gamma",
            ];
            (counts.iter().zip(examples.iter().cycle()))
                .map(|(&count, &example)| LeftOutKind { count, example })
                .collect()
        };
        for (counts, turns) in [
            (vec![1], (3, 3)),
            (vec![2], (9, 10)),
            (vec![10, 1, 3], (1, 100)),
            (vec![1; 6], (7, 7)),
            (vec![4, 1, 1, 12, 1, 1, 1, 9], (2, 1_234)),
        ] {
            let kinds = kinds(&counts);
            let mut line = String::new();
            write_left_out(&mut line, turns, &kinds, 6);
            let named = (kinds.iter().take(6)).map(|k| (k.count, k.example.chars().count()));
            let count = counts.iter().sum();
            assert_eq!(
                left_out_chars(count, turns, named),
                line.chars().count(),
                "{line}"
            );
        }
    }

    // A turn's long output keeps its beginning and its end, and says what it left out.
    #[test]
    fn a_long_output_keeps_its_first_and_last_lines() {
        let limits = RenderLimits {
            output_char_limit: 40,
            ..RenderLimits::default()
        };
        let prints: Vec<String> = (1..=12).map(|i| format!("line {i:02}")).collect();
        let mut out = String::new();
        let shown = write_turn_output(&mut out, OUTPUT_HEADER, &prints, &limits);
        assert_eq!(
            out,
            ";; Output:\nline 01\nline 02\nline\n;; ... 55 characters of output left out here (at \
             most 40 are shown: the first and the last 20); print less: counts, a few items, the \
             fields you need\ne 10\nline 11\nline 12"
        );
        assert_eq!(shown, 6);
        let mut whole = String::new();
        let all = write_turn_output(&mut whole, OUTPUT_HEADER, &prints[..4], &limits);
        assert_eq!(
            (whole.as_str(), all),
            (";; Output:\nline 01\nline 02\nline 03\nline 04", 4)
        );
    }
}
