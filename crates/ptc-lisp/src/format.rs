//! Rendering values as text.
//!
//! - [`pr_str`]: exactly what Clojure's `pr-str` prints (readable; maps with `, `).
//! - [`to_clojure`]: without limits, exactly [`pr_str`]; with limits, the compact form used in
//!   prompts: the same reader syntax without the commas between map entries (commas
//!   are whitespace to the reader, so it reads back to the same value), truncated:
//!   collections over `limit` items end with `...` and strings over `printable_limit`
//!   characters end with `...`; the outermost cut collection is followed by a note saying how
//!   much it held ([`CollectionCut`]).
//! - [`to_compact`]: the same compact form, with the outermost cut reported as data instead of
//!   a note, for renderers that word it themselves or leave it out.
//! - [`print_str`]: what `println` shows (strings and characters unquoted at every depth).
//! - [`str_of`]: what `str` makes of one value (`nil` is empty, a string is itself).

use crate::value::{Date, DateKind, Value};
use std::fmt::{self, Write};

/// Clojure's `pr-str` of one value.
pub fn pr_str(value: &Value) -> String {
    let mut p = Printer::new(Style::Readable);
    p.value(value);
    p.out
}

/// A value in Clojure syntax, and whether anything was truncated. Without limits it is exactly
/// what Clojure's `pr-str` prints ([`pr_str`]); with either limit it is the compact rendering of
/// prompts, whose maps have no commas, and a cut outermost collection is followed by its
/// [`CollectionCut`] note.
///
/// ```
/// use ptc_lisp::{Value, to_clojure};
/// let v = Value::vector((1..=5).map(Value::Int));
/// assert_eq!(to_clojure(&v, Some(3), None), ("[1 2 3 ...] (5 items, showing first 3)".to_string(), true));
/// let m = Value::map([(Value::keyword("a"), Value::string("hello world")), (Value::keyword("b"), Value::Int(2))]);
/// assert_eq!(to_clojure(&m, None, Some(5)), (r#"{:a "hello..." :b 2}"#.to_string(), true));
/// assert_eq!(to_clojure(&m, None, None), (r#"{:a "hello world", :b 2}"#.to_string(), false));
/// ```
pub fn to_clojure(
    value: &Value,
    limit: Option<usize>,
    printable_limit: Option<usize>,
) -> (String, bool) {
    if limit.is_none() && printable_limit.is_none() {
        return (pr_str(value), false);
    }
    let CompactText {
        mut text,
        cut,
        truncated,
    } = to_compact(value, limit, printable_limit);
    if let Some(cut) = cut {
        let _ = write!(text, " {cut}");
    }
    (text, truncated)
}

/// The outermost collection of a compact rendering that a limit cut short: how many items it
/// holds and how many of them, from the first, were printed. Its [`Display`](fmt::Display) is
/// the note [`to_clojure`] writes after the collection, `(5 items, showing first 3)`.
///
/// ```
/// use ptc_lisp::CollectionCut;
/// assert_eq!(CollectionCut { total: 5, shown: 3 }.to_string(), "(5 items, showing first 3)");
/// assert_eq!(CollectionCut { total: 1, shown: 0 }.to_string(), "(1 item, showing first 0)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectionCut {
    /// How many items the collection holds (entries, for a map).
    pub total: usize,
    /// How many of its first items were printed; less than `total`.
    pub shown: usize,
}

impl fmt::Display for CollectionCut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items = if self.total == 1 { "item" } else { "items" };
        write!(f, "({} {items}, showing first {})", self.total, self.shown)
    }
}

/// A value in the compact form of prompts ([`to_compact`]), and what the limits left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactText {
    /// The value's text, with no note after a cut collection: a cut collection ends in `...`
    /// before its closing bracket, and a cut string in `...` before its closing quote.
    pub text: String,
    /// The outermost collection, when a limit cut it short; `None` when it was printed whole
    /// (collections inside it may still have been cut: see `truncated`).
    pub cut: Option<CollectionCut>,
    /// Whether anything was left out: a collection at any depth, or a string.
    pub truncated: bool,
}

/// A value in the compact form of prompts: reader syntax without commas between map entries,
/// every collection cut to its first `limit` items and every string to its first
/// `printable_limit` characters (`None`: no limit). Unlike [`to_clojure`], the text carries no
/// note on how much of the outermost collection was shown; `cut` says it, for the caller to
/// word as it needs.
///
/// ```
/// use ptc_lisp::{CollectionCut, Value, to_compact};
/// let v = Value::vector([Value::vector((1..=4).map(Value::Int)), Value::Nil, Value::Nil]);
/// let shown = to_compact(&v, Some(2), None);
/// assert_eq!(shown.text, "[[1 2 ...] nil ...]");
/// assert_eq!(shown.cut, Some(CollectionCut { total: 3, shown: 2 }));
/// assert!(shown.truncated);
/// let whole = to_compact(&Value::vector([Value::Int(1)]), Some(2), None);
/// assert_eq!((whole.text.as_str(), whole.cut, whole.truncated), ("[1]", None, false));
/// ```
pub fn to_compact(
    value: &Value,
    limit: Option<usize>,
    printable_limit: Option<usize>,
) -> CompactText {
    let mut p = Printer::new(Style::Compact);
    p.limit = limit;
    p.printable_limit = printable_limit;
    p.value(value);
    CompactText {
        text: p.out,
        cut: p.cut,
        truncated: p.truncated,
    }
}

/// [`to_clojure`] cut off after about `max_bytes` bytes (ending in `...` when cut): for values
/// shown in messages, which must stay short whatever the value.
pub fn to_clojure_within(
    value: &Value,
    limit: Option<usize>,
    printable_limit: Option<usize>,
    max_bytes: usize,
) -> String {
    let mut p = Printer::new(Style::Compact);
    p.limit = limit;
    p.printable_limit = printable_limit;
    p.max_len = max_bytes;
    p.value(value);
    if let Some(cut) = p.cut {
        let _ = write!(p.out, " {cut}");
    }
    if p.stopped {
        let mut end = max_bytes.min(p.out.len());
        while !p.out.is_char_boundary(end) {
            end -= 1;
        }
        p.out.truncate(end);
        p.out.push_str("...");
    }
    p.out
}

/// What `print`/`println` show for one value.
pub fn print_str(value: &Value) -> String {
    let mut p = Printer::new(Style::Human);
    p.value(value);
    p.out
}

/// A rendering for [`render_within`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendering {
    /// [`pr_str`].
    Readable,
    /// [`print_str`].
    Human,
    /// [`str_of`].
    Str,
}

/// Render `value` without producing much more than `max_bytes` bytes: `Ok` with the whole text
/// when it fits, `Err` with a prefix of at least `max_bytes` bytes when it does not. A value
/// whose shared parts repeat can print as gigabytes; this costs at most about `max_bytes` of
/// work and memory however large the value would print.
pub fn render_within(
    value: &Value,
    rendering: Rendering,
    max_bytes: usize,
) -> Result<String, String> {
    let style = match rendering {
        Rendering::Readable => Style::Readable,
        Rendering::Human => Style::Human,
        // Only collections can be long without being long already in memory.
        Rendering::Str => match value {
            Value::List(_) | Value::Vector(_) | Value::Map(_) | Value::Set(_) => Style::Readable,
            _ => {
                let text = str_of(value);
                return if text.len() > max_bytes {
                    Err(text)
                } else {
                    Ok(text)
                };
            }
        },
    };
    let mut p = Printer::new(style);
    p.max_len = max_bytes;
    p.value(value);
    if p.stopped || p.out.len() > max_bytes {
        Err(p.out)
    } else {
        Ok(p.out)
    }
}

/// What `str` makes of one value.
pub fn str_of(value: &Value) -> String {
    match value {
        Value::Nil => String::new(),
        Value::Str(s) => s.to_string(),
        Value::Char(c) => c.to_string(),
        Value::Date(d) => d.to_text(),
        Value::Big(b) => b.to_text(),
        Value::Regex(r) => r.as_str().to_string(),
        Value::Uuid(u) => u.to_text(),
        Value::Float(f) if !f.is_finite() => {
            if f.is_nan() {
                "NaN".into()
            } else if *f > 0.0 {
                "Infinity".into()
            } else {
                "-Infinity".into()
            }
        }
        other => pr_str(other),
    }
}

/// Java's `Double.toString` with shortest round-trip digits: `2.5`, `3.0`, `1.0E10`, `1.0E-4`.
pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        return "##NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "##Inf".into()
        } else {
            "##-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let abs = f.abs();
    if (1e-3..1e7).contains(&abs) {
        let s = format!("{f}");
        if s.contains('.') { s } else { s + ".0" }
    } else {
        // `{:e}` gives the shortest digits, e.g. `1.2345e-5` or `1e10`.
        let s = format!("{f:e}");
        let (mantissa, exp) = s.split_once('e').expect("`{:e}` always has an exponent");
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exp}")
    }
}

/// `pr-str`: a value debugs as the program would print it.
impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&pr_str(self))
    }
}

impl std::fmt::Display for Value {
    /// The `str` rendering: strings without quotes, `nil` as the empty string.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&str_of(self))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `pr-str`: quoted strings, `, ` between map entries.
    Readable,
    /// Prompt form: quoted strings, no commas.
    Compact,
    /// `print`: unquoted strings and characters, `, ` between map entries.
    Human,
}

struct Printer {
    style: Style,
    limit: Option<usize>,
    printable_limit: Option<usize>,
    truncated: bool,
    /// The outermost collection, when a limit cut it short.
    cut: Option<CollectionCut>,
    /// How many collections enclose the value being printed.
    depth: usize,
    out: String,
    /// Stop once the text is longer than this.
    max_len: usize,
    /// Set when printing stopped early: the text is too long, or the walking budget (see
    /// `value::meter`) ran out.
    stopped: bool,
}

impl Printer {
    fn new(style: Style) -> Printer {
        Printer {
            style,
            limit: None,
            printable_limit: None,
            truncated: false,
            cut: None,
            depth: 0,
            out: String::new(),
            max_len: usize::MAX,
            stopped: false,
        }
    }

    /// Whether to go on printing.
    fn more(&mut self) -> bool {
        if self.out.len() > self.max_len || !crate::value::meter::text_fits(self.out.len()) {
            self.stopped = true;
        }
        !self.stopped
    }

    /// Whether `n` more elements may be walked (and the text may grow).
    fn walk(&mut self, n: usize) -> bool {
        if !crate::value::meter::spend(n) {
            self.stopped = true;
        }
        self.more()
    }

    fn value(&mut self, value: &Value) {
        crate::value::nested(value.depth(), || self.value_here(value))
    }

    fn value_here(&mut self, value: &Value) {
        if !self.more() {
            return;
        }
        match value {
            Value::Nil => self.out.push_str("nil"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(self.out, "{i}");
            }
            Value::Float(f) => self.out.push_str(&format_float(*f)),
            Value::Big(b) => self.out.push_str(&b.to_literal()),
            Value::Str(s) => self.string(s),
            Value::Char(c) => self.char(*c),
            Value::Keyword(k) => {
                self.out.push(':');
                self.out.push_str(k.as_str());
            }
            Value::Symbol(s) => self.out.push_str(s.as_str()),
            Value::List(items) => self.items("(", ")", items.len(), items.iter()),
            Value::Vector(items) => self.items("[", "]", items.len(), items.iter()),
            Value::Set(items) => self.items("#{", "}", items.len(), items.iter()),
            Value::Map(m) => self.map(m),
            Value::Fn(f) => {
                let _ = match f.read_back_text() {
                    Some(text) => write!(self.out, "{text}"),
                    None => write!(self.out, "#fn[{}]", f.name()),
                };
            }
            Value::Regex(r) => {
                self.out.push_str("#\"");
                self.out.push_str(r.as_str());
                self.out.push('"');
            }
            Value::Var(s) => {
                self.out.push_str("#'");
                if s.namespace().is_none() {
                    self.out.push_str("user/");
                }
                self.out.push_str(s.as_str());
            }
            Value::Lazy(l) => {
                let _ = write!(self.out, "#lazy-seq[{}]", l.describe());
            }
            Value::Date(d) => self.date(*d),
            Value::Uuid(u) => {
                self.out.push_str("#uuid \"");
                self.out.push_str(&u.to_text());
                self.out.push('"');
            }
            Value::Tagged(t) => {
                self.out.push('#');
                self.out.push_str(t.tag().as_str());
                self.out.push(' ');
                self.value(t.form());
            }
        }
    }

    fn string(&mut self, s: &str) {
        let (mut text, cut) = match self.printable_limit {
            Some(n) => match s.char_indices().nth(n) {
                Some((byte, _)) => (&s[..byte], true),
                None => (s, false),
            },
            None => (s, false),
        };
        // Never copy more of a long string than the output may still take.
        let room = self
            .max_len
            .saturating_sub(self.out.len())
            .saturating_add(1);
        if text.len() > room {
            let mut end = room;
            while !text.is_char_boundary(end) {
                end += 1;
            }
            text = &text[..end];
            self.stopped = true;
        }
        if self.style == Style::Human {
            self.out.push_str(text);
        } else {
            self.out.push('"');
            for c in text.chars() {
                match c {
                    '"' => self.out.push_str("\\\""),
                    '\\' => self.out.push_str("\\\\"),
                    '\n' => self.out.push_str("\\n"),
                    '\t' => self.out.push_str("\\t"),
                    '\r' => self.out.push_str("\\r"),
                    '\u{8}' => self.out.push_str("\\b"),
                    '\u{c}' => self.out.push_str("\\f"),
                    c => self.out.push(c),
                }
            }
        }
        if cut {
            self.out.push_str("...");
            self.truncated = true;
        }
        if self.style != Style::Human {
            self.out.push('"');
        }
    }

    /// A `LocalDate` prints as Clojure prints it, less the identity hash (so it is the same on
    /// every run): `#object[java.time.LocalDate "2024-03-15"]`. An instant prints as `#inst`.
    fn date(&mut self, d: Date) {
        match d.kind() {
            DateKind::Day(_) => {
                self.out.push_str("#object[java.time.LocalDate ");
                self.string(&d.iso_day());
                self.out.push(']');
            }
            DateKind::Instant(_) => {
                self.out.push_str("#inst \"");
                self.out.push_str(&d.inst_text());
                self.out.push('"');
            }
        }
    }

    fn char(&mut self, c: char) {
        if self.style == Style::Human {
            self.out.push(c);
            return;
        }
        self.out.push('\\');
        match c {
            '\n' => self.out.push_str("newline"),
            ' ' => self.out.push_str("space"),
            '\t' => self.out.push_str("tab"),
            '\r' => self.out.push_str("return"),
            '\u{8}' => self.out.push_str("backspace"),
            '\u{c}' => self.out.push_str("formfeed"),
            c if c.is_control() => {
                let _ = write!(self.out, "u{:04X}", c as u32);
            }
            c => self.out.push(c),
        }
    }

    fn shown(&self, len: usize) -> usize {
        self.limit.map_or(len, |limit| limit.min(len))
    }

    fn items<'a>(
        &mut self,
        open: &str,
        close: &str,
        len: usize,
        items: impl Iterator<Item = &'a Value>,
    ) {
        let shown = self.shown(len);
        self.out.push_str(open);
        self.depth += 1;
        for (i, item) in items.take(shown).enumerate() {
            if !self.walk(1) {
                return;
            }
            if i > 0 {
                self.out.push(' ');
            }
            self.value(item);
        }
        self.depth -= 1;
        self.close(close, len, shown);
    }

    fn map(&mut self, m: &crate::value::Map) {
        let len = m.len();
        let shown = self.shown(len);
        let separator = if self.style == Style::Compact {
            " "
        } else {
            ", "
        };
        self.out.push('{');
        self.depth += 1;
        for (i, (k, v)) in m.iter().take(shown).enumerate() {
            if !self.walk(1) {
                return;
            }
            if i > 0 {
                self.out.push_str(separator);
            }
            self.value(k);
            self.out.push(' ');
            self.value(v);
        }
        self.depth -= 1;
        self.close("}", len, shown);
    }

    fn close(&mut self, close: &str, len: usize, shown: usize) {
        if shown < len {
            self.truncated = true;
            if shown > 0 {
                self.out.push(' ');
            }
            self.out.push_str("...");
            self.out.push_str(close);
            // Only the outermost collection's cut is reported; inner ones just end with `...`.
            if self.depth == 0 {
                self.cut = Some(CollectionCut { total: len, shown });
            }
        } else {
            self.out.push_str(close);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn kw(s: &str) -> Value {
        Value::keyword(s)
    }

    #[test]
    fn render_within_stops_near_its_bound() {
        let v = Value::vector((1..=5).map(Value::Int));
        assert_eq!(
            render_within(&v, Rendering::Readable, 100),
            Ok("[1 2 3 4 5]".to_string())
        );
        assert_eq!(
            render_within(&v, Rendering::Readable, 4),
            Err("[1 2 ".to_string())
        );
    }

    #[test]
    fn pr_str_matches_clojure() {
        let cases: Vec<(Value, &str)> = vec![
            (Value::Nil, "nil"),
            (Value::Float(2.5), "2.5"),
            (Value::Float(3.0), "3.0"),
            (Value::Float(-0.0), "-0.0"),
            (Value::Float(1e10), "1.0E10"),
            (Value::Float(1.5e-7), "1.5E-7"),
            (Value::Float(1234567.0), "1234567.0"),
            (Value::Float(0.001), "0.001"),
            (Value::Float(f64::NAN), "##NaN"),
            (Value::Float(f64::NEG_INFINITY), "##-Inf"),
            (Value::string("a\"b\n\\"), r#""a\"b\n\\""#),
            (Value::Char('a'), "\\a"),
            (Value::Char('\n'), "\\newline"),
            (Value::Char(' '), "\\space"),
            (kw("user/id"), ":user/id"),
            (Value::empty_list(), "()"),
            (
                Value::list([1.into(), Value::vector([2.into()])]),
                "(1 [2])",
            ),
            (
                Value::map([(kw("a"), 1.into()), (kw("b"), Value::string("x"))]),
                r#"{:a 1, :b "x"}"#,
            ),
            (Value::set([1.into()]), "#{1}"),
        ];
        for (value, expected) in cases {
            assert_eq!(pr_str(&value), expected);
        }
    }

    #[test]
    fn print_and_str_leave_strings_unquoted() {
        let v = Value::vector([Value::string("a"), Value::Char('b'), Value::Nil]);
        assert_eq!(print_str(&v), "[a b nil]");
        assert_eq!(str_of(&v), r#"["a" \b nil]"#);
        assert_eq!(str_of(&Value::Nil), "");
        assert_eq!(str_of(&Value::Float(f64::INFINITY)), "Infinity");
    }

    #[test]
    fn dates_print_as_clojure_does_and_read_back() {
        let day = Value::Date(crate::value::Date::from_ymd(2024, 3, 15).unwrap());
        let instant = Value::Date(crate::value::Date::instant(1_500).unwrap());
        assert_eq!(pr_str(&day), r#"#object[java.time.LocalDate "2024-03-15"]"#);
        assert_eq!(print_str(&day), "#object[java.time.LocalDate 2024-03-15]");
        assert_eq!(str_of(&day), "2024-03-15");
        assert_eq!(pr_str(&instant), r#"#inst "1970-01-01T00:00:01.500-00:00""#);
        assert_eq!(str_of(&instant), "Thu Jan 01 00:00:01 UTC 1970");
        for v in [day, instant] {
            assert_eq!(crate::reader::read_value(&pr_str(&v)).unwrap(), v);
        }
    }

    #[test]
    fn lazy_sequences_and_functions_read_back_as_what_they_printed() {
        use crate::reader::read_value;
        for program in [
            "(range)",
            "(map inc (iterate inc 0))",
            "(range 100000000000)",
        ] {
            let lazy = crate::eval_str(program).unwrap();
            let text = pr_str(&lazy);
            let back = read_value(&text).unwrap();
            assert_eq!(pr_str(&back), text);
            // The read-back value stands for the printed one: equal, and hashed alike.
            assert_eq!(back, lazy);
            assert_eq!(lazy, back);
            assert_eq!(
                crate::value::hash_value(&back),
                crate::value::hash_value(&lazy)
            );
            let Value::Lazy(l) = &back else {
                panic!("{text} reads back as a lazy sequence")
            };
            assert!(l.is_unrealized());
        }
        assert_eq!(
            pr_str(&read_value("#lazy-seq[range]").unwrap()),
            "#lazy-seq[range]"
        );
        // Two sequences computed by a program stay distinct values.
        assert_ne!(
            crate::eval_str("(range)").unwrap(),
            crate::eval_str("(range)").unwrap()
        );
        assert_ne!(
            read_value("#lazy-seq[range]").unwrap(),
            read_value("#lazy-seq[map]").unwrap()
        );
        let err = read_value("#lazy-seq[1 2]").unwrap_err();
        assert_eq!(
            err.message,
            "#lazy-seq needs a vector holding one name, e.g. #lazy-seq[range]"
        );
        let f = crate::eval_str("(defn adults [xs] xs) adults").unwrap();
        let back = read_value(&pr_str(&f)).unwrap();
        assert_eq!(pr_str(&back), "#fn[adults]");
        assert_eq!(back, f);
        assert_ne!(back, crate::eval_str("inc").unwrap());
    }

    // TRN-001..TRN-005, SAM-003
    #[test]
    fn to_clojure_truncates_collections_and_strings() {
        let v = Value::vector((1..=10).map(Value::Int));
        assert_eq!(
            to_clojure(&v, Some(3), Some(80)),
            ("[1 2 3 ...] (10 items, showing first 3)".to_string(), true)
        );
        let m = Value::map([(kw("name"), Value::string("Alice")), (kw("age"), 30.into())]);
        assert_eq!(
            to_clojure(&m, Some(3), Some(80)),
            (r#"{:name "Alice" :age 30}"#.into(), false)
        );
        // Without limits: exactly pr-str, commas included.
        assert_eq!(
            to_clojure(&m, None, None),
            (r#"{:name "Alice", :age 30}"#.into(), false)
        );
        let nested = Value::vector([m.clone(), Value::set([Value::Char('a')]), Value::Nil]);
        assert_eq!(to_clojure(&nested, None, None), (pr_str(&nested), false));
        assert_eq!(pr_str(&nested), r#"[{:name "Alice", :age 30} #{\a} nil]"#);
        let long = Value::string("x".repeat(100));
        let (text, truncated) = to_clojure(&long, Some(3), Some(80));
        assert_eq!(text, format!("\"{}...\"", "x".repeat(80)));
        assert!(truncated);
        assert_eq!(
            to_clojure(&Value::vector([]), Some(0), None),
            ("[]".to_string(), false)
        );
        assert_eq!(
            to_clojure(&Value::vector([1.into()]), Some(0), None),
            ("[...] (1 item, showing first 0)".to_string(), true)
        );
        let nested = Value::vector([Value::vector((1..=5).map(Value::Int)), Value::Nil]);
        assert_eq!(
            to_clojure(&nested, Some(3), None),
            ("[[1 2 3 ...] nil]".to_string(), true)
        );
    }
}
