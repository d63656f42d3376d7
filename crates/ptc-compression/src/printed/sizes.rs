//! The size of the output part of summaries of ever more entries, counted without writing it:
//! the default strategy weighs a compaction at every turn, and writing the part for each
//! candidate would take time quadratic in the prints of a run.
//!
//! Only the entries with a holder change form with the namespace. The others are counted by
//! kind in a sweep that moves forward with the candidates, so sizing one costs about the newest
//! `println_limit` entries and the entries with a holder, however many were printed before.

use super::{Entry, KINDS_NAMED, Printed, Shown, is_short, mark_held};
use crate::output::{
    OUTPUT_HEADER, left_out_chars, push_one_line, write_cut_note, write_digest, write_pointer,
};
use crate::render_options::RenderLimits;
use ptc_lisp::Definition;
use std::ops::Range;

/// The output parts of summaries of the first entries of a [`Printed`], sized as
/// [`Printed::write`] writes them.
pub(crate) struct OutputSizes<'t> {
    printed: Printed<'t>,
    limits: RenderLimits,
    /// Per entry, the characters of each form it may take.
    measures: Vec<Measure>,
    /// The entries with no holder, by index.
    plain: Vec<usize>,
    /// The entries with a holder, by index.
    held: Vec<usize>,
    /// Per kind, its first entry with no holder (`usize::MAX` when it has none).
    first_plain: Vec<usize>,
    /// Per kind, the characters of its example as the left-out line writes it.
    example_chars: Vec<usize>,
    /// The kinds of the entries with no holder, in the order of their first such entry.
    plain_kinds: Vec<usize>,
    /// Whether turn numbers never go back from one entry to the next: then the first and last
    /// turns of some entries are those of the first and last of them.
    ascending: bool,
    sweep: Sweep,
}

/// The characters of each form an entry may take, measured once.
struct Measure {
    /// As printed.
    chars: usize,
    /// Whether, as the one older entry of its kind, it is shown as printed rather than digested.
    short: bool,
    /// Its digest line, when it is not short.
    digest: usize,
    /// Its pointer line, when it has a holder.
    pointer: usize,
}

/// The entries with no holder before `boundary`, counted by kind.
#[derive(Default)]
struct Sweep {
    boundary: usize,
    /// How many of [`OutputSizes::plain`] are before the boundary.
    plain: usize,
    /// How many of [`OutputSizes::plain_kinds`] have their first entry before the boundary.
    kinds: usize,
    /// Per kind, its entries before the boundary.
    count: Vec<usize>,
    /// The entries alone of their kind before the boundary, oldest first.
    alone: Vec<usize>,
}

/// How the older entries with a holder are shown under one namespace, by index.
#[derive(Default)]
struct HeldForms {
    pointers: Vec<usize>,
    repeats: Vec<usize>,
    /// Those whose name no longer holds what they showed, newest first: entries like any other.
    unheld: Vec<usize>,
}

impl<'t> OutputSizes<'t> {
    pub(crate) fn new(printed: Printed<'t>, limits: &RenderLimits) -> OutputSizes<'t> {
        let mut line = String::new();
        let measures = printed
            .entries
            .iter()
            .map(|entry| Measure::of(entry, limits, &mut line))
            .collect();
        let (held, plain): (Vec<usize>, Vec<usize>) =
            (0..printed.entries.len()).partition(|&i| printed.entries[i].holder.is_some());
        let mut first_plain = vec![usize::MAX; printed.kinds.len()];
        let mut plain_kinds = Vec::new();
        for &i in &plain {
            let kind = printed.entries[i].kind;
            if first_plain[kind] == usize::MAX {
                first_plain[kind] = i;
                plain_kinds.push(kind);
            }
        }
        let example_chars = printed
            .kinds
            .iter()
            .map(|example| {
                line.clear();
                push_one_line(&mut line, example);
                char_count(&line)
            })
            .collect();
        let ascending = printed.entries.windows(2).all(|w| w[0].turn <= w[1].turn);
        let sweep = Sweep::at_start(printed.kinds.len());
        OutputSizes {
            printed,
            limits: *limits,
            measures,
            plain,
            held,
            first_plain,
            example_chars,
            plain_kinds,
            ascending,
            sweep,
        }
    }

    /// The characters [`Printed::write`] writes for the first `count` entries, whose namespace
    /// is `memory`. Fastest when each call has at least as many entries as the one before.
    pub(crate) fn chars(&mut self, count: usize, memory: &[Definition]) -> usize {
        let count = count.min(self.measures.len());
        if count == 0 {
            return 0;
        }
        if !self.ascending {
            return self.written_chars(count, memory);
        }
        let newest = count - count.min(self.limits.println_limit);
        self.advance(newest);
        let held = self.held_forms(newest, count, memory);
        let one_offs = self.one_offs(&held);
        char_count(OUTPUT_HEADER)
            + self.left_out(&held, &one_offs)
            + self.notes(&held, &one_offs)
            + self.shown(&one_offs, newest..count)
    }

    /// The part written and counted: when turn numbers go back, the turns the left-out line
    /// names are not found from the entries' order.
    fn written_chars(&self, count: usize, memory: &[Definition]) -> usize {
        let mut out = String::new();
        self.printed.write(&mut out, count, memory, &self.limits);
        char_count(&out)
    }

    /// Moves the sweep to `boundary`, from the start again when it is past it.
    fn advance(&mut self, boundary: usize) {
        if boundary < self.sweep.boundary {
            self.sweep = Sweep::at_start(self.first_plain.len());
        }
        let sweep = &mut self.sweep;
        while let Some(&i) = self.plain.get(sweep.plain).filter(|&&i| i < boundary) {
            let kind = self.printed.entries[i].kind;
            sweep.count[kind] += 1;
            match sweep.count[kind] {
                1 => sweep.alone.push(i),
                2 => {
                    if let Ok(at) = sweep.alone.binary_search(&self.first_plain[kind]) {
                        sweep.alone.remove(at);
                    }
                }
                _ => {}
            }
            sweep.plain += 1;
        }
        while let Some(&kind) = self.plain_kinds.get(sweep.kinds) {
            if self.first_plain[kind] >= boundary {
                break;
            }
            sweep.kinds += 1;
        }
        sweep.boundary = boundary;
    }

    /// The forms of the entries with a holder before `newest`, under `memory`, beside the
    /// newest entries up to `count`.
    fn held_forms(&self, newest: usize, count: usize, memory: &[Definition]) -> HeldForms {
        let entries = &self.printed.entries;
        let older = self.held.partition_point(|&i| i < newest);
        let end = self.held.partition_point(|&i| i < count);
        let mut forms = HeldForms::default();
        mark_held(
            self.held[older..end].iter().map(|&i| &entries[i]),
            self.held[..older].iter().rev().map(|&i| (i, &entries[i])),
            memory,
            |i, form| match form {
                Shown::Pointer => forms.pointers.push(i),
                Shown::Repeated => forms.repeats.push(i),
                _ => forms.unheld.push(i),
            },
        );
        forms
    }

    /// The older entries the one-off rule shows, newest first: those alone of their kind among
    /// the entries neither pointed to nor repeated, at most `println_limit`.
    fn one_offs(&self, held: &HeldForms) -> Vec<usize> {
        let limit = self.limits.println_limit;
        let kind = |i: usize| self.printed.entries[i].kind;
        let unheld_of = |k: usize| held.unheld.iter().filter(|&&i| kind(i) == k).count();
        let plain = (self.sweep.alone.iter().rev().copied())
            .filter(|&i| unheld_of(kind(i)) == 0)
            .take(limit);
        let unheld = (held.unheld.iter().copied())
            .filter(|&i| self.sweep.count[kind(i)] == 0 && unheld_of(kind(i)) == 1);
        let mut one_offs: Vec<usize> = plain.chain(unheld).collect();
        one_offs.sort_unstable_by(|a, b| b.cmp(a));
        one_offs.truncate(limit);
        one_offs
    }

    /// The line counting the left-out entries, with its line break; nothing when there are
    /// none.
    fn left_out(&self, held: &HeldForms, one_offs: &[usize]) -> usize {
        let entries = &self.printed.entries;
        let not_one_off = |i: &usize| !one_offs.contains(i);
        let plain = &self.plain[..self.sweep.plain];
        let mut held_left: Vec<usize> = (held.repeats.iter().chain(&held.unheld).copied())
            .filter(not_one_off)
            .collect();
        held_left.sort_unstable();
        let plain_one_offs = (one_offs.iter())
            .filter(|&&i| entries[i].holder.is_none())
            .count();
        let count = plain.len() - plain_one_offs + held_left.len();
        let first = (plain.iter().copied().find(not_one_off).into_iter())
            .chain(held_left.first().copied())
            .min();
        let last = (plain.iter().rev().copied().find(not_one_off).into_iter())
            .chain(held_left.last().copied())
            .max();
        let (Some(first), Some(last)) = (first, last) else {
            return 0;
        };
        let turns = (entries[first].turn, entries[last].turn);
        let (kinds, named) = self.named_kinds(&held_left, one_offs);
        let held_of = |k: usize| held_left.iter().filter(|&&i| entries[i].kind == k).count();
        let named = (kinds[..named].iter()).map(|&k| {
            (
                self.plain_left(k, one_offs) + held_of(k),
                self.example_chars[k],
            )
        });
        1 + left_out_chars(count, turns, named)
    }

    /// The kinds the left-out line names (and how many), in the order of their first left-out
    /// entry; `held_left` are the left-out entries with a holder, oldest first.
    fn named_kinds(
        &self,
        held_left: &[usize],
        one_offs: &[usize],
    ) -> ([usize; KINDS_NAMED], usize) {
        let entries = &self.printed.entries;
        // The kinds with a left-out entry with no holder come in the order of the first such
        // entry, those of held entries in the order of the entries: merged, they come in the
        // order of each kind's first left-out entry.
        let mut plain = (self.plain_kinds[..self.sweep.kinds].iter().copied())
            .filter(|&k| self.plain_left(k, one_offs) > 0)
            .map(|k| (self.first_plain[k], k))
            .peekable();
        let mut held = held_left.iter().map(|&i| (i, entries[i].kind)).peekable();
        let mut kinds = [0; KINDS_NAMED];
        let mut named = 0;
        while named < KINDS_NAMED {
            let next = match (plain.peek(), held.peek()) {
                (Some(p), Some(h)) if h < p => held.next(),
                (Some(_), _) => plain.next(),
                (None, _) => held.next(),
            };
            let Some((_, kind)) = next else {
                break;
            };
            if !kinds[..named].contains(&kind) {
                kinds[named] = kind;
                named += 1;
            }
        }
        (kinds, named)
    }

    /// How many of `kind`'s entries with no holder are left out: all of them, unless it has
    /// one and it is a one-off.
    fn plain_left(&self, kind: usize, one_offs: &[usize]) -> usize {
        let count = self.sweep.count[kind];
        count - usize::from(count == 1 && one_offs.contains(&self.first_plain[kind]))
    }

    /// The lines standing for entries, with their line breaks: pointers, and digests of the
    /// long one-offs.
    fn notes(&self, held: &HeldForms, one_offs: &[usize]) -> usize {
        let pointers = held.pointers.iter().map(|&i| 1 + self.measures[i].pointer);
        let digests = (one_offs.iter())
            .filter(|&&i| !self.measures[i].short)
            .map(|&i| 1 + self.measures[i].digest);
        pointers.chain(digests).sum()
    }

    /// The entries shown as printed (the short one-offs, then the `newest`) with their line
    /// breaks, within the output limit, and the line saying how much the limit cut off.
    fn shown(&self, one_offs: &[usize], newest: Range<usize>) -> usize {
        let limit = self.limits.output_char_limit;
        let short_one_offs = (one_offs.iter().rev().copied()).filter(|&i| self.measures[i].short);
        let (mut lines, mut printed) = (0, 0);
        for i in short_one_offs.chain(newest) {
            // Once the limit is reached, entries are only counted as cut off.
            lines += usize::from(printed < limit);
            printed += self.measures[i].chars;
        }
        let cut_off = printed.saturating_sub(limit);
        let cut_note = if cut_off > 0 {
            let mut line = String::new();
            write_cut_note(&mut line, cut_off, limit);
            1 + char_count(&line)
        } else {
            0
        };
        lines + printed.min(limit) + cut_note
    }
}

impl Measure {
    fn of(entry: &Entry<'_>, limits: &RenderLimits, line: &mut String) -> Measure {
        let short = is_short(entry.text, limits);
        let digest = if short {
            0
        } else {
            line.clear();
            write_digest(line, entry.turn, entry.text, limits.sample_printable_limit);
            char_count(line)
        };
        let pointer = entry.holder.map_or(0, |holder| {
            line.clear();
            let (name, value) = holder.name_and_value();
            write_pointer(line, entry.turn, &name, value);
            char_count(line)
        });
        Measure {
            chars: char_count(entry.text),
            short,
            digest,
            pointer,
        }
    }
}

impl Sweep {
    fn at_start(kinds: usize) -> Sweep {
        Sweep {
            count: vec![0; kinds],
            ..Sweep::default()
        }
    }
}

fn char_count(text: &str) -> usize {
    text.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render_options::RenderOptions;
    use proptest::prelude::*;
    use ptc_lisp::Value;
    use ptc_turn::{Turn, TurnError};
    use std::collections::BTreeMap;

    /// First words of printed entries: more kinds than the left-out line names, one that only
    /// digits tell apart, one not ASCII.
    const WORDS: [&str; 9] = [
        "order:", "T-01", "T-02", "audited", "(9.5", "élan", "beta", "gamma", "delta",
    ];

    #[derive(Debug, Clone)]
    enum Print {
        /// A short line of a kind, with a number.
        Log(usize, u32),
        /// A long entry of a kind, on one line or on several.
        Long(usize, bool),
        /// The value of definition `doc-N`, alone or after a label.
        Held(usize, bool),
        /// The `data/policy` input, after a label.
        Input,
        Empty,
    }

    #[derive(Debug, Clone)]
    struct TurnPlan {
        failed: bool,
        prints: Vec<Print>,
        /// A definition given a new value before the turn prints.
        redefine: Option<usize>,
        /// How far the turn number moves from the previous turn's.
        step: u32,
    }

    fn print() -> impl Strategy<Value = Print> {
        prop_oneof![
            6 => (0..WORDS.len(), 0u32..30).prop_map(|(k, n)| Print::Log(k, n)),
            2 => (0..WORDS.len(), any::<bool>()).prop_map(|(k, lines)| Print::Long(k, lines)),
            3 => (0usize..3, any::<bool>()).prop_map(|(d, label)| Print::Held(d, label)),
            1 => Just(Print::Input),
            1 => Just(Print::Empty),
        ]
    }

    fn plan() -> impl Strategy<Value = TurnPlan> {
        (
            prop::bool::weighted(0.15),
            prop::collection::vec(print(), 0..5),
            prop::option::weighted(0.2, 0usize..3),
            prop_oneof![4 => Just(1u32), 1 => Just(0u32), 1 => Just(3u32)],
        )
            .prop_map(|(failed, prints, redefine, step)| TurnPlan {
                failed,
                prints,
                redefine,
                step,
            })
    }

    fn long_text(name: &str, version: usize) -> String {
        format!(
            "{name} version {version}: {}",
            "the terms at length ".repeat(9)
        )
    }

    /// The turns a plan makes; with `backwards`, turn numbers count down.
    fn turns(plans: &[TurnPlan], backwards: bool) -> Vec<Turn> {
        let mut versions = [0usize; 3];
        let mut number = if backwards { 1000 } else { 1 };
        let mut out = Vec::new();
        for plan in plans {
            if let Some(d) = plan.redefine {
                versions[d] += 1;
            }
            let memory: Vec<Definition> = (0..3)
                .map(|d| Definition {
                    name: format!("doc-{d}"),
                    doc: None,
                    value: Value::string(long_text(&format!("doc-{d}"), versions[d])),
                    params: Vec::new(),
                    last_return: None,
                })
                .collect();
            let mut program = String::new();
            let prints: Vec<String> = (plan.prints.iter())
                .map(|p| match *p {
                    Print::Log(k, n) => format!("{} {n}", WORDS[k]),
                    Print::Long(k, false) => format!("{} {}", WORDS[k], "é".repeat(90)),
                    Print::Long(k, true) => format!("{}\nsecond line\n{}", WORDS[k], "z".repeat(9)),
                    Print::Held(d, label) => {
                        program.push_str(&format!("(println doc-{d})\n"));
                        let value = long_text(&format!("doc-{d}"), versions[d]);
                        if label {
                            format!("doc: {value}")
                        } else {
                            value
                        }
                    }
                    Print::Input => {
                        program.push_str("(println \"policy:\" data/policy)\n");
                        format!("policy: {}", long_text("policy", 0))
                    }
                    Print::Empty => String::new(),
                })
                .collect();
            let turn = if plan.failed {
                Turn::failure(number, program, TurnError::new("k", "boom"))
            } else {
                Turn::success(number, program, Value::Nil).with_memory(memory)
            };
            out.push(turn.with_prints(prints));
            number = if backwards {
                number - plan.step
            } else {
                number + plan.step
            };
        }
        out
    }

    fn limits() -> impl Strategy<Value = RenderLimits> {
        (
            prop::sample::select(vec![0usize, 1, 2, 3, 15]),
            prop::sample::select(vec![0usize, 1, 40, 300, 8_000]),
            prop::sample::select(vec![10usize, 80]),
        )
            .prop_map(
                |(println_limit, output_char_limit, sample_printable_limit)| RenderLimits {
                    println_limit,
                    output_char_limit,
                    sample_printable_limit,
                    ..RenderLimits::default()
                },
            )
    }

    fn written(
        printed: &Printed<'_>,
        count: usize,
        memory: &[Definition],
        limits: &RenderLimits,
    ) -> usize {
        let mut out = String::new();
        printed.write(&mut out, count, memory, limits);
        out.chars().count()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        // Every size is that of the part written, for every number of entries and namespace,
        // whether the sizes are asked for in order or not.
        #[test]
        fn sizes_are_those_of_the_written_parts(
            plans in prop::collection::vec(plan(), 0..14),
            limits in limits(),
            backwards in prop::bool::weighted(0.1),
        ) {
            let data = BTreeMap::from([(
                "policy".to_string(),
                Value::string(long_text("policy", 0)),
            )]);
            let opts = RenderOptions::new("m", "s", 40).with_limits(limits).with_data(&data);
            let turns = turns(&plans, backwards);
            let printed = Printed::new(&turns, |_| true, &opts);
            let mut sizes = OutputSizes::new(Printed::new(&turns, |_| true, &opts), &limits);
            let memories = std::iter::once(&[][..]).chain(turns.iter().map(Turn::memory));
            for memory in memories {
                for count in (0..=printed.len() + 1).chain((0..printed.len()).rev()) {
                    prop_assert_eq!(
                        sizes.chars(count, memory),
                        written(&printed, count, memory, &limits),
                        "{} entries", count
                    );
                }
            }
        }
    }
}
