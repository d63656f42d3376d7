//! What a summary that forgets nothing silently shows of the output of the turns it folds
//! (the default strategy's compactions, and the older part of `rolling-window`).
//!
//! Keeping only the newest entries, as the seed format does, drops whatever was printed early:
//! often a document, a schema or instructions that the last turns need again. So every
//! printed entry ends up in one of four forms:
//!
//! - the newest `println_limit` entries are shown as printed;
//! - an older entry that shows the value a definition (or a `data/` input) still holds, and is
//!   longer than [`POINTER_MIN_CHARS`], becomes a *pointer* to that name with the value's size:
//!   the model can print it again at any time, so the summary need not repeat it. When several
//!   entries show the same held value, only the newest is shown or pointed to;
//! - of the older ones, an entry of a kind printed only once (a kind is the entry's first word,
//!   digits aside: `order:`, `T-01`) is shown as printed when it is one short line, and as a
//!   *digest* (its size and how it began) when it is long; the newest `println_limit` of
//!   these, at most;
//! - every other entry (a log line repeated turn after turn, and duplicates of a pointer) is
//!   *left out*, counted and named by kind in one line.
//!
//! So the output part of a summary never grows beyond the newest entries, one line per
//! definition, `println_limit` short lines and one line of counts, however long the run.

use crate::output::{
    LeftOutKind, OUTPUT_HEADER, OutputSection, write_digest, write_left_out, write_pointer,
};
use crate::render_options::{RenderLimits, RenderOptions};
use ptc_lisp::{Definition, Rendering, Value, is_firewalled_name, render_within};
use ptc_turn::Turn;
use rustc_hash::FxHashMap;

mod sizes;

pub(crate) use sizes::OutputSizes;

/// Entries at most this long are never replaced by a pointer: the pointer line would be about
/// as long, and the model sees the text without spending a turn.
pub(crate) const POINTER_MIN_CHARS: usize = 160;

/// The longest text before a value in an entry that still counts as showing it: a label, as in
/// `(println "policy:" policy)`.
const LABEL_MAX_CHARS: usize = 60;

/// The longest kind, in characters: the first word of an entry, cut.
const KIND_MAX_CHARS: usize = 24;

/// Kinds of left-out entries named in the summary; the others are only counted.
const KINDS_NAMED: usize = 6;

/// The printed entries of some turns, with what the rule needs of each, found once.
pub(crate) struct Printed<'t> {
    entries: Vec<Entry<'t>>,
    /// The example of each kind: the first word of its first entry.
    kinds: Vec<&'t str>,
}

struct Entry<'t> {
    text: &'t str,
    /// The number of the turn that printed it.
    turn: u32,
    /// Its kind, an index into [`Printed::kinds`].
    kind: usize,
    /// The name whose value it shows, as that name held it when the entry was printed.
    holder: Option<Holder<'t>>,
}

/// A name whose value an entry shows.
#[derive(Clone, Copy)]
enum Holder<'t> {
    Definition(&'t Definition),
    /// A `data/` input: inputs never change during a run.
    Data(&'t str, &'t Value),
}

/// How the output part shows one entry.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    AsPrinted,
    Pointer,
    /// An older entry of a kind printed once: as printed when short, else a digest.
    OneOff,
    LeftOut,
    /// Left out: a newer entry shows the same held value, and has the pointer.
    Repeated,
}

impl Shown {
    fn is_left_out(self) -> bool {
        matches!(self, Shown::LeftOut | Shown::Repeated)
    }
}

impl<'t> Printed<'t> {
    /// The entries of the turns that `listed` accepts (by index), oldest first.
    pub(crate) fn new(
        turns: &'t [Turn],
        listed: impl Fn(usize) -> bool,
        opts: &RenderOptions<'t>,
    ) -> Printed<'t> {
        let mut entries = Vec::new();
        let mut kinds: Vec<&'t str> = Vec::new();
        let mut kind_index: FxHashMap<String, usize> = FxHashMap::default();
        let mut key = String::new();
        // The namespace a program could see: a failed turn's definitions are discarded.
        let mut namespace: &'t [Definition] = &[];
        for (i, turn) in turns.iter().enumerate() {
            if turn.is_success() {
                namespace = turn.memory();
            }
            if !listed(i) {
                continue;
            }
            for text in turn.prints() {
                let word = first_word(text);
                kind_key(word, &mut key);
                let kind = match kind_index.get(key.as_str()) {
                    Some(&kind) => kind,
                    None => {
                        kind_index.insert(key.clone(), kinds.len());
                        kinds.push(word);
                        kinds.len() - 1
                    }
                };
                let holder =
                    if text.len() > POINTER_MIN_CHARS && text.chars().count() > POINTER_MIN_CHARS {
                        find_holder(text, turn.program(), namespace, opts.data)
                    } else {
                        None
                    };
                entries.push(Entry {
                    text,
                    turn: turn.number(),
                    kind,
                    holder,
                });
            }
        }
        Printed { entries, kinds }
    }

    /// How many entries there are.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The output part of a summary of the first `count` entries, whose namespace is `memory`
    /// (nothing when there are none). Returns how many entries it shows as printed.
    pub(crate) fn write(
        &self,
        out: &mut String,
        count: usize,
        memory: &[Definition],
        limits: &RenderLimits,
    ) -> usize {
        let entries = &self.entries[..count.min(self.entries.len())];
        if entries.is_empty() {
            return 0;
        }
        let shown = self.decide(entries, memory, limits);
        let mut section = OutputSection::new(out, OUTPUT_HEADER, limits);
        let left_out = self.left_out(entries, &shown);
        if !left_out.is_empty() {
            let (first, last) = entries
                .iter()
                .zip(&shown)
                .filter(|(_, s)| s.is_left_out())
                .fold((u32::MAX, 0), |(first, last), (e, _)| {
                    (first.min(e.turn), last.max(e.turn))
                });
            section.note(|out| write_left_out(out, (first, last), &left_out, KINDS_NAMED));
        }
        for (entry, shown) in entries.iter().zip(&shown) {
            match shown {
                Shown::AsPrinted => section.entry(entry.text),
                Shown::Pointer => {
                    if let Some(holder) = entry.holder {
                        let (name, value) = holder.name_and_value();
                        section.note(|out| write_pointer(out, entry.turn, &name, value));
                    }
                }
                Shown::OneOff if is_short(entry.text, limits) => section.entry(entry.text),
                Shown::OneOff => section.note(|out| {
                    write_digest(out, entry.turn, entry.text, limits.sample_printable_limit)
                }),
                Shown::LeftOut | Shown::Repeated => {}
            }
        }
        section.finish()
    }

    /// How each of `entries` is shown in a summary whose namespace is `memory`.
    fn decide(
        &self,
        entries: &[Entry<'t>],
        memory: &[Definition],
        limits: &RenderLimits,
    ) -> Vec<Shown> {
        let count = entries.len();
        let newest = count.saturating_sub(limits.println_limit);
        let mut shown: Vec<Shown> = (0..count)
            .map(|i| {
                if i >= newest {
                    Shown::AsPrinted
                } else {
                    Shown::LeftOut
                }
            })
            .collect();
        let older = entries[..newest].iter().enumerate().rev();
        mark_held(&entries[newest..], older, memory, |i, form| shown[i] = form);
        // Older entries of a kind printed once, newest first, up to the limit.
        let mut older_of_kind = vec![0usize; self.kinds.len()];
        for (entry, _) in entries[..newest]
            .iter()
            .zip(&shown)
            .filter(|(_, s)| **s == Shown::LeftOut)
        {
            older_of_kind[entry.kind] += 1;
        }
        let mut one_offs = 0;
        for i in (0..newest).rev() {
            if one_offs == limits.println_limit {
                break;
            }
            if shown[i] == Shown::LeftOut && older_of_kind[entries[i].kind] == 1 {
                shown[i] = Shown::OneOff;
                one_offs += 1;
            }
        }
        shown
    }

    /// The left-out entries by kind, kinds in the order of their first left-out entry.
    fn left_out(&self, entries: &[Entry<'t>], shown: &[Shown]) -> Vec<LeftOutKind<'t>> {
        let mut kinds: Vec<(usize, LeftOutKind<'t>)> = Vec::new();
        for (entry, _) in entries.iter().zip(shown).filter(|(_, s)| s.is_left_out()) {
            match kinds.iter_mut().find(|(kind, _)| *kind == entry.kind) {
                Some((_, left)) => left.count += 1,
                None => kinds.push((
                    entry.kind,
                    LeftOutKind {
                        count: 1,
                        example: self.kinds[entry.kind],
                    },
                )),
            }
        }
        kinds.into_iter().map(|(_, left)| left).collect()
    }
}

/// Marks each of the `older` entries (by index, newest first), beside the `newest` shown as
/// printed: an entry showing a value its name still holds in `memory` becomes a pointer to
/// that name, unless a newer entry already shows or points to the same value (then it is a
/// repeat); any other is left out, for the one-off rule to decide.
fn mark_held<'a, 't: 'a>(
    newest: impl IntoIterator<Item = &'a Entry<'t>>,
    older: impl IntoIterator<Item = (usize, &'a Entry<'t>)>,
    memory: &[Definition],
    mut mark: impl FnMut(usize, Shown),
) {
    let mut pointed: Vec<(bool, &str)> = newest
        .into_iter()
        .filter_map(|entry| entry.holder.filter(|h| h.holds(memory)))
        .map(|holder| holder.key())
        .collect();
    for (i, entry) in older {
        let Some(holder) = entry.holder.filter(|h| h.holds(memory)) else {
            mark(i, Shown::LeftOut);
            continue;
        };
        let key = holder.key();
        if pointed.contains(&key) {
            mark(i, Shown::Repeated);
        } else {
            pointed.push(key);
            mark(i, Shown::Pointer);
        }
    }
}

impl<'t> Holder<'t> {
    /// The name as a program writes it.
    fn name_and_value(&self) -> (std::borrow::Cow<'t, str>, &'t Value) {
        match *self {
            Holder::Definition(def) => (def.name.as_str().into(), &def.value),
            Holder::Data(name, value) => (format!("data/{name}").into(), value),
        }
    }

    /// A key telling holders apart: whether it is an input (definitions and inputs live in
    /// different namespaces), and its name.
    fn key(&self) -> (bool, &'t str) {
        match *self {
            Holder::Definition(def) => (false, &def.name),
            Holder::Data(name, _) => (true, name),
        }
    }

    /// Whether the name still holds the value the entry showed, in `memory`.
    fn holds(&self, memory: &[Definition]) -> bool {
        match *self {
            Holder::Data(..) => true,
            Holder::Definition(old) => memory
                .iter()
                .rev()
                .find(|def| def.name == old.name)
                .is_some_and(|def| !def.is_function() && same_value(&def.value, &old.value)),
        }
    }
}

/// Whether two values are the same for a summary: functions read back from JSON are distinct
/// opaque values even when unchanged, so those compare by their printed form; a shared
/// allocation is equal without looking inside.
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Fn(x), Value::Fn(y)) => {
            x.ptr_eq(y)
                || matches!((x.read_back_text(), y.read_back_text()), (Some(p), Some(q)) if p == q)
        }
        (Value::List(x), Value::List(y)) | (Value::Vector(x), Value::Vector(y)) if x.ptr_eq(y) => {
            true
        }
        (Value::Map(x), Value::Map(y)) if x.ptr_eq(y) => true,
        (x, y) => x == y,
    }
}

/// Whether an older entry of its own kind is shown as printed: one line, no longer than a
/// sample's strings.
fn is_short(text: &str, limits: &RenderLimits) -> bool {
    let limit = limits.sample_printable_limit;
    // A text of at most `limit` bytes has at most `limit` characters: only a longer one needs
    // counting.
    !text.contains('\n') && (text.len() <= limit || text.chars().count() <= limit)
}

/// The first word of an entry (cut to [`KIND_MAX_CHARS`] characters), which names its kind.
fn first_word(text: &str) -> &str {
    let text = text.trim_start();
    let word = &text[..text.find(char::is_whitespace).unwrap_or(text.len())];
    if word.len() <= KIND_MAX_CHARS {
        return word;
    }
    match word.char_indices().nth(KIND_MAX_CHARS) {
        Some((cut, _)) => &word[..cut],
        None => word,
    }
}

/// Sets `key` to the key of `word`'s kind, in a buffer so that finding a kind allocates
/// nothing: entries are of one kind when their first words differ only in their numbers
/// (`T-01` and `T-02`, `order:` and `order:`), so each run of digits counts as one `#`.
fn kind_key(word: &str, key: &mut String) {
    key.clear();
    let mut rest = word;
    // Digits are single bytes, so the byte where one starts is where a character starts.
    while let Some(start) = rest.bytes().position(|b| b.is_ascii_digit()) {
        key.push_str(&rest[..start]);
        key.push('#');
        rest = rest[start..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    key.push_str(rest);
}

/// The definition or input whose value `text` shows, among those the program names.
fn find_holder<'t>(
    text: &str,
    program: &str,
    namespace: &'t [Definition],
    data: &'t std::collections::BTreeMap<String, Value>,
) -> Option<Holder<'t>> {
    let definition = namespace.iter().rev().find(|def| {
        !def.is_function()
            && !is_firewalled_name(&def.name)
            && names(program, &def.name)
            && shows(text, &def.value)
    });
    if let Some(def) = definition {
        return Some(Holder::Definition(def));
    }
    data.iter()
        .find(|(name, value)| {
            !is_firewalled_name(name)
                && names(program, &format!("data/{name}"))
                && shows(text, value)
        })
        .map(|(name, value)| Holder::Data(name, value))
}

/// Whether `program` mentions the symbol `name` (not as part of a longer symbol).
fn names(program: &str, name: &str) -> bool {
    let is_symbol_char = |c: char| c.is_alphanumeric() || "*+!-_'?<>=/.:&%$".contains(c);
    program.match_indices(name).any(|(at, _)| {
        let before = program[..at].chars().next_back();
        let after = program[at + name.len()..].chars().next();
        !before.is_some_and(is_symbol_char) && !after.is_some_and(is_symbol_char)
    })
}

/// Whether the printed `text` is `value` as `println` shows it, alone or after a short label
/// on the same line.
fn shows(text: &str, value: &Value) -> bool {
    let printed = match value {
        Value::Str(_) => value.as_str().map(std::borrow::Cow::Borrowed),
        // Printing stops as soon as it is longer than the entry.
        _ => render_within(value, Rendering::Human, text.len())
            .ok()
            .map(std::borrow::Cow::Owned),
    };
    let Some(printed) = printed.filter(|p| !p.is_empty()) else {
        return false;
    };
    let Some(label) = text.strip_suffix(printed.as_ref()) else {
        return false;
    };
    label.is_empty()
        || (label.ends_with(' ')
            && !label.contains('\n')
            && label.chars().count() <= LABEL_MAX_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn kinds_are_first_words_with_their_numbers_as_one() {
        assert_eq!(first_word("  audited c-01 - 2 orders"), "audited");
        assert_eq!(first_word(""), "");
        assert_eq!(first_word(&"x".repeat(40)), "x".repeat(24));
        assert_eq!(first_word(&"é".repeat(30)), "é".repeat(24));
        assert_eq!(first_word("\u{3000}wide\u{3000}space"), "wide");
        let key = |word: &str| {
            let mut key = String::from("stale");
            kind_key(word, &mut key);
            key
        };
        assert_eq!(key("T-01"), "T-#");
        assert_eq!(key("T-2"), "T-#");
        assert_eq!(key("(9.5"), "(#.#");
        assert_eq!(key("(19.25"), "(#.#");
        assert_eq!(key("order:"), "order:");
        assert_eq!(key("42"), "#");
        assert_eq!(key("é1é22"), "é#é#");
    }

    #[test]
    fn a_program_names_a_symbol_only_as_a_whole() {
        assert!(names("(println policy)", "policy"));
        assert!(names("(println \"p:\" policy)\n", "policy"));
        assert!(!names("(println policy-2)", "policy"));
        assert!(!names("(println my-policy)", "policy"));
        assert!(!names("(println :policy)", "policy"));
        assert!(names("(println data/policy)", "data/policy"));
        assert!(!names("(println data/policy)", "policy"));
    }

    #[test]
    fn an_entry_shows_a_value_alone_or_after_a_short_label() {
        let text = Value::string("the whole policy");
        assert!(shows("the whole policy", &text));
        assert!(shows("policy: the whole policy", &text));
        assert!(!shows("policy:\nthe whole policy", &text));
        assert!(!shows("policy:the whole policy", &text));
        assert!(!shows(
            &format!("{} the whole policy", "x".repeat(70)),
            &text
        ));
        assert!(!shows("the whole policy, and more", &text));
        assert!(!shows("anything", &Value::string("")));
        let record = Value::map([
            (Value::keyword("id"), Value::string("A-1")),
            (
                Value::keyword("tags"),
                Value::vector([Value::string("late")]),
            ),
        ]);
        // As `println` shows it: strings without quotes at every depth.
        assert!(shows("order: {:id A-1, :tags [late]}", &record));
        assert!(!shows("order: {:id \"A-1\" :tags [\"late\"]}", &record));
        // A value that prints longer than the entry is not printed whole to find out.
        assert!(!shows("{:id A-1}", &record));
    }
}
