//! Rendering values as text.
//!
//! - [`pr_str`]: exactly what Clojure's `pr-str` prints (readable; maps with `, `).
//! - [`Compact`]: the form of prompts and messages: the same reader syntax without the commas
//!   between map entries, collections and strings cut to a number of items and characters,
//!   firewalled entries optionally hidden; the outermost cut collection is reported as data
//!   ([`CollectionCut`]) for the caller to word.
//! - [`print_str`]: what `println` shows (strings and characters unquoted at every depth).
//! - [`str_of`]: what `str` makes of one value (`nil` is empty, a string is itself).

use crate::firewall::{HIDDEN, is_firewalled_key};
use crate::value::{Date, DateKind, Value};
use std::fmt::Write;

/// Clojure's `pr-str` of one value.
pub fn pr_str(value: &Value) -> String {
    let mut p = Printer::new(Style::Readable);
    p.value(value);
    p.out
}

/// How much of a value the compact form shows: the form of prompts and messages, reader syntax
/// without commas between map entries (commas are whitespace to the reader, so it reads back to
/// the same value), with every collection cut to its first `items` items and every string to its
/// first `chars` characters, each cut marked by `...`. With `hide_firewalled`, a map entry whose
/// key is firewalled ([`is_firewalled_name`](crate::is_firewalled_name)) shows
/// [`crate::HIDDEN`] instead of its value, unless the value is `nil`.
///
/// ```
/// use ptc_lisp::{CollectionCut, Compact, Value, read_value};
/// let v = read_value(r#"[[1 2 3 4] "hello world" {:id 7 :_token "s3cret"}]"#).unwrap();
/// let shown = Compact::new(2, 5).render(&v);
/// assert_eq!(shown.text, r#"[[1 2 ...] "hello..." ...]"#);
/// assert_eq!(shown.cut, Some(CollectionCut { total: 3, shown: 2 }));
/// assert!(shown.truncated);
/// let hidden = Compact::default().with_firewall_hidden().render(&v);
/// assert_eq!(hidden.text, r#"[[1 2 3 4] "hello world" {:id 7 :_token "[hidden]"}]"#);
/// assert_eq!((hidden.cut, hidden.truncated), (None, false));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Compact {
    /// Items shown of each collection, entries of each map (`None`: all of them).
    pub items: Option<usize>,
    /// Characters shown of each string (`None`: all of them).
    pub chars: Option<usize>,
    /// Whether firewalled map entries show [`crate::HIDDEN`] instead of their value.
    pub hide_firewalled: bool,
}

impl Compact {
    /// At most `items` items of each collection and `chars` characters of each string, with
    /// firewalled entries shown.
    pub fn new(items: usize, chars: usize) -> Compact {
        Compact {
            items: Some(items),
            chars: Some(chars),
            hide_firewalled: false,
        }
    }

    /// The same form with firewalled map entries hidden.
    pub fn with_firewall_hidden(self) -> Compact {
        Compact {
            hide_firewalled: true,
            ..self
        }
    }

    /// `value` in this form, and what the limits left out. The walk goes no further than the
    /// text shows.
    pub fn render(&self, value: &Value) -> CompactText {
        let mut p = self.printer();
        p.value(value);
        CompactText {
            text: p.out,
            cut: p.cut,
            truncated: p.truncated,
        }
    }

    /// Appends `value` in this form to `out` (the text [`render`](Compact::render) makes), and
    /// returns the outermost collection, if a limit cut it short.
    ///
    /// ```
    /// use ptc_lisp::{CollectionCut, Compact, Value};
    /// let mut out = String::from("items: ");
    /// let cut = Compact::new(2, 80).write(&Value::vector((1..=3).map(Value::Int)), &mut out);
    /// assert_eq!(out, "items: [1 2 ...]");
    /// assert_eq!(cut, Some(CollectionCut { total: 3, shown: 2 }));
    /// ```
    pub fn write(&self, value: &Value, out: &mut String) -> Option<CollectionCut> {
        let mut p = self.printer();
        p.start = out.len();
        p.out = std::mem::take(out);
        p.value(value);
        *out = p.out;
        p.cut
    }

    fn printer(&self) -> Printer {
        let mut p = Printer::new(Style::Compact);
        p.limit = self.items;
        p.printable_limit = self.chars;
        p.hide_firewalled = self.hide_firewalled;
        p
    }
}

/// The outermost collection of a compact rendering that a limit cut short: how many items it
/// holds and how many of them, from the first, were printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectionCut {
    /// How many items the collection holds (entries, for a map).
    pub total: usize,
    /// How many of its first items were printed; less than `total`.
    pub shown: usize,
}

/// A value in the compact form ([`Compact::render`]), and what the limits left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactText {
    /// The value's text: a cut collection ends in `...` before its closing bracket, and a cut
    /// string in `...` before its closing quote.
    pub text: String,
    /// The outermost collection, when a limit cut it short; `None` when it was printed whole
    /// (collections inside it may still have been cut: see `truncated`).
    pub cut: Option<CollectionCut>,
    /// Whether anything was left out: a collection at any depth, or a string.
    pub truncated: bool,
}

/// A value in an error message: the compact form with `items` and `chars`, cut off after about
/// `max_bytes` bytes (ending in `...` when cut), so that a message stays short whatever the
/// value.
pub(crate) fn message_text(value: &Value, items: usize, chars: usize, max_bytes: usize) -> String {
    let mut p = Compact::new(items, chars).printer();
    p.max_len = max_bytes;
    p.value(value);
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
    /// What `str` makes of a value.
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
    // Java writes the smallest float (Double/MIN_VALUE) with two digits, not the one digit
    // that reads back as it.
    if f.abs() == f64::from_bits(1) {
        return if f < 0.0 { "-4.9E-324" } else { "4.9E-324" }.into();
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
    /// Where the value's text starts in `out`: what comes before is the caller's.
    start: usize,
    /// Stop once the value's text is longer than this.
    max_len: usize,
    /// Set when printing stopped early: the text is too long, or the walking budget (see
    /// `value::meter`) ran out.
    stopped: bool,
    /// Whether firewalled map entries print [`HIDDEN`] instead of their value.
    hide_firewalled: bool,
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
            start: 0,
            max_len: usize::MAX,
            stopped: false,
            hide_firewalled: false,
        }
    }

    /// Whether to go on printing.
    fn more(&mut self) -> bool {
        let len = self.out.len() - self.start;
        if len > self.max_len || !crate::value::meter::text_fits(len) {
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
            .saturating_sub(self.out.len() - self.start)
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
            if self.hide_firewalled && !matches!(v, Value::Nil) && is_firewalled_key(k) {
                self.string(HIDDEN);
            } else {
                self.value(v);
            }
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

    fn compact(value: &Value, items: Option<usize>, chars: Option<usize>) -> CompactText {
        Compact {
            items,
            chars,
            hide_firewalled: false,
        }
        .render(value)
    }

    fn text(text: &str, cut: Option<(usize, usize)>, truncated: bool) -> CompactText {
        CompactText {
            text: text.to_string(),
            cut: cut.map(|(total, shown)| CollectionCut { total, shown }),
            truncated,
        }
    }

    // TRN-001..TRN-005, SAM-003
    #[test]
    fn the_compact_form_cuts_collections_and_strings() {
        let v = Value::vector((1..=10).map(Value::Int));
        assert_eq!(
            compact(&v, Some(3), Some(80)),
            text("[1 2 3 ...]", Some((10, 3)), true)
        );
        let m = Value::map([(kw("name"), Value::string("Alice")), (kw("age"), 30.into())]);
        assert_eq!(
            compact(&m, Some(3), Some(80)),
            text(r#"{:name "Alice" :age 30}"#, None, false)
        );
        // Without limits: pr-str without the commas.
        let nested = Value::vector([m.clone(), Value::set([Value::Char('a')]), Value::Nil]);
        assert_eq!(
            compact(&nested, None, None),
            text(r#"[{:name "Alice" :age 30} #{\a} nil]"#, None, false)
        );
        assert_eq!(pr_str(&nested), r#"[{:name "Alice", :age 30} #{\a} nil]"#);
        let long = Value::string("x".repeat(100));
        assert_eq!(
            compact(&long, Some(3), Some(80)),
            text(&format!("\"{}...\"", "x".repeat(80)), None, true)
        );
        assert_eq!(
            compact(&Value::vector([]), Some(0), None),
            text("[]", None, false)
        );
        assert_eq!(
            compact(&Value::vector([1.into()]), Some(0), None),
            text("[...]", Some((1, 0)), true)
        );
        // Only the outermost cut is reported; an inner one just ends in `...`.
        let nested = Value::vector([Value::vector((1..=5).map(Value::Int)), Value::Nil]);
        assert_eq!(
            compact(&nested, Some(3), None),
            text("[[1 2 3 ...] nil]", None, true)
        );
    }

    #[test]
    fn hidden_firewalled_entries_are_cut_like_any_string() {
        let v = crate::reader::read_value(
            r#"{:id 1 :_token "s3cret" :_none nil :user/_key 2 :_ns/open 3 "_raw" [1 2]}"#,
        )
        .unwrap();
        let hiding = Compact::default().with_firewall_hidden();
        assert_eq!(
            hiding.render(&v).text,
            r#"{:id 1 :_token "[hidden]" :_none nil :user/_key "[hidden]" :_ns/open 3 "_raw" "[hidden]"}"#
        );
        assert_eq!(
            Compact::new(2, 3).with_firewall_hidden().render(&v),
            text(r#"{:id 1 :_token "[hi..." ...}"#, Some((6, 2)), true)
        );
    }

    #[test]
    fn messages_stop_near_their_bound() {
        let v = Value::vector((0..100).map(|i| Value::string(format!("item {i}"))));
        assert_eq!(
            message_text(&v, 3, 40, 1_000),
            r#"["item 0" "item 1" "item 2" ...]"#
        );
        assert_eq!(message_text(&v, 50, 40, 20), r#"["item 0" "item 1" "..."#);
    }
}
