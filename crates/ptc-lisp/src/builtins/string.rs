//! Strings: `str`, `subs`, `format`, the `pr-str` family and `clojure.string` (also reachable as
//! `str/` and `string/`).
//!
//! Positions and lengths count Unicode characters, as `count` and `subs` do (Java counts UTF-16
//! units, which differs only for characters outside the Basic Multilingual Plane, such as emoji).
//! Whitespace is what Java's `Character.isWhitespace` calls whitespace: no-break spaces are not.

use super::args::{Arg, Call, Truncated, string_arg};
use super::regex::{java_captures, java_matches, match_value, whole_match_engine};
use super::{Builtin, builtin, got};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{Ctx, EvalResult, Items};
use crate::format::{Rendering, pr_str, print_str, render_within, str_of};
use crate::value::Value;
use std::borrow::Cow;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("str", str, "(str & xs)", "Concatenates the values as text: strings as they are, nil as nothing, others as printed.", "(str \"a\" 1 nil :b)" => "\"a1:b\""),
    builtin!("subs", subs, "(subs s start) (subs s start end)", "The characters of s from start up to, not including, end.", "(subs \"hello\" 1 3)" => "\"el\""),
    builtin!("format", super::printf::format, "(format fmt & args)", "Java-style formatting: %s %d %f %.2f %x %e %c %b %% %n, with width, - (left), 0 (zero pad), + and , (grouping) flags.", "(format \"%s scored %.1f%% (%03d)\" \"Ann\" 92.45 7)" => "\"Ann scored 92.5% (007)\""),
    builtin!("pr-str", pr_str_fn, "(pr-str & xs)", "The values printed readably (strings quoted), separated by spaces.", "(pr-str [1 \"a\"] nil)" => "\"[1 \\\"a\\\"] nil\""),
    builtin!("prn-str", prn_str, "(prn-str & xs)", "Like pr-str, followed by a newline.", "(prn-str :a \"b\")" => "\":a \\\"b\\\"\\n\""),
    builtin!("print-str", print_str_fn, "(print-str & xs)", "The values as println shows them (strings unquoted), separated by spaces.", "(print-str \"a\" [\"b\"] nil)" => "\"a [b] nil\""),
    builtin!("println-str", println_str, "(println-str & xs)", "Like print-str, followed by a newline.", "(println-str \"total:\" 3)" => "\"total: 3\\n\""),
    builtin!("clojure.string/join", join, "(str/join coll) (str/join separator coll)", "The items of coll as text (like str), with separator between them.", "(str/join \", \" [1 \"b\" :c])" => "\"1, b, :c\""),
    builtin!("clojure.string/split", split, "(str/split s re) (str/split s re limit)", "Splits s at each match of the regex re; trailing empty strings are dropped (unless limit is given).", "(str/split \"a,b,,c,,\" #\",\")" => "[\"a\" \"b\" \"\" \"c\"]"),
    builtin!("clojure.string/split-lines", split_lines, "(str/split-lines s)", "Splits s into lines at \\n or \\r\\n.", "(str/split-lines \"one\\ntwo\\r\\nthree\\n\")" => "[\"one\" \"two\" \"three\"]"),
    builtin!("clojure.string/replace", replace, "(str/replace s match replacement)", "Replaces every match: a string by a string, a char by a char, or a regex by a string (with $1 for groups) or by a function of the match.", "[(str/replace \"a-b-c\" \"-\" \"+\") (str/replace \"John Smith\" #\"(\\w+) (\\w+)\" \"$2, $1\")]" => "[\"a+b+c\" \"Smith, John\"]"),
    builtin!("clojure.string/replace-first", replace_first, "(str/replace-first s match replacement)", "Like str/replace, for the first match only.", "(str/replace-first \"x1y2\" #\"\\d\" \"_\")" => "\"x_y2\""),
    builtin!("clojure.string/upper-case", upper_case, "(str/upper-case s)", "s in upper case.", "(str/upper-case \"straße\")" => "\"STRASSE\""),
    builtin!("clojure.string/lower-case", lower_case, "(str/lower-case s)", "s in lower case.", "(str/lower-case \"HeLLo\")" => "\"hello\""),
    builtin!("clojure.string/capitalize", capitalize, "(str/capitalize s)", "s with its first character in upper case and the rest in lower case.", "(str/capitalize \"hELLO wORLD\")" => "\"Hello world\""),
    builtin!("clojure.string/trim", trim, "(str/trim s)", "s without leading and trailing whitespace.", "(str/trim \"  hi there \\n\")" => "\"hi there\""),
    builtin!("clojure.string/triml", triml, "(str/triml s)", "s without leading whitespace.", "(str/triml \"  x  \")" => "\"x  \""),
    builtin!("clojure.string/trimr", trimr, "(str/trimr s)", "s without trailing whitespace.", "(str/trimr \"  x  \")" => "\"  x\""),
    builtin!("clojure.string/trim-newline", trim_newline, "(str/trim-newline s)", "s without trailing newline and carriage-return characters.", "(str/trim-newline \"line\\r\\n\")" => "\"line\""),
    builtin!("clojure.string/blank?", is_blank, "(str/blank? s)", "True if s is nil, empty or only whitespace.", "[(str/blank? nil) (str/blank? \" \\t\") (str/blank? \" a \")]" => "[true true false]"),
    builtin!("clojure.string/includes?", includes, "(str/includes? s substring)", "True if s contains substring.", "(str/includes? \"hello world\" \"o w\")" => "true"),
    builtin!("clojure.string/starts-with?", starts_with, "(str/starts-with? s prefix)", "True if s begins with prefix.", "(str/starts-with? \"hello\" \"he\")" => "true"),
    builtin!("clojure.string/ends-with?", ends_with, "(str/ends-with? s suffix)", "True if s ends with suffix.", "(str/ends-with? \"hello\" \"lo\")" => "true"),
    builtin!("clojure.string/index-of", index_of, "(str/index-of s value) (str/index-of s value from)", "Position of the first occurrence of value (a string or char) in s, searching from from; nil if absent.", "[(str/index-of \"hello\" \"l\") (str/index-of \"hello\" \\z)]" => "[2 nil]"),
    builtin!("clojure.string/last-index-of", last_index_of, "(str/last-index-of s value) (str/last-index-of s value from)", "Position of the last occurrence of value in s, searching backward from from; nil if absent.", "(str/last-index-of \"hello\" \"l\")" => "3"),
    builtin!("clojure.string/reverse", reverse, "(str/reverse s)", "The characters of s in reverse order.", "(str/reverse \"añb\")" => "\"bña\""),
    builtin!("clojure.string/escape", escape, "(str/escape s cmap)", "s with each character c replaced by (cmap c) where that is not nil.", "(str/escape \"a<b\" {\\< \"&lt;\"})" => "\"a&lt;b\""),
    builtin!("clojure.string/re-quote-replacement", re_quote_replacement, "(str/re-quote-replacement s)", "s with $ and \\ escaped, so that str/replace with a regex inserts it literally.", "(str/replace \"a1\" #\"\\d\" (str/re-quote-replacement \"$1\"))" => "\"a$1\""),
];

/// Java's `Character.isWhitespace`: Unicode spaces except the no-break ones, plus the ASCII
/// control separators.
pub(crate) fn is_java_whitespace(c: char) -> bool {
    match c {
        '\u{1C}'..='\u{1F}' => true,
        '\u{85}' | '\u{A0}' | '\u{2007}' | '\u{202F}' => false,
        c => c.is_whitespace(),
    }
}

/// A string argument where Clojure accepts any object through its `toString` (keywords keep
/// their colon: `(str/upper-case :a)` is ":A"); only nil is refused.
pub(crate) struct Text<'a>(Cow<'a, str>);

impl<'a> Arg<'a> for Text<'a> {
    fn from_arg(call: Call, value: &'a Value) -> Result<Self> {
        match value {
            Value::Str(s) => Ok(Text(Cow::Borrowed(s))),
            Value::Nil => Err(call.expected("a string", value)),
            other => Ok(Text(Cow::Owned(str_of(other)))),
        }
    }
}

impl std::ops::Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

/// The text a search looks for: a string or a char.
pub(crate) struct Fragment(String);

impl Arg<'_> for Fragment {
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        match value {
            Value::Str(s) => Ok(Fragment(s.to_string())),
            Value::Char(c) => Ok(Fragment(c.to_string())),
            other => Err(call.expected("a string or char to look for", other)),
        }
    }
}

impl std::ops::Deref for Fragment {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

string_arg!(
    /// A string a test looks for (`str/includes?`, `str/starts-with?`).
    Needle,
    "a string to look for"
);

fn new_string(ctx: &mut Ctx, s: String) -> EvalResult {
    ctx.charge(s.len() + 16)?;
    Ok(Value::from(s))
}

fn str(ctx: &mut Ctx, _: Call, xs: &[Value]) -> EvalResult {
    // Refuse before building: the text may not be larger than what the memory budget has left.
    let room = ctx.memory_left();
    let mut out = String::new();
    for a in xs {
        match a {
            Value::Str(s) if out.len().saturating_add(s.len()) <= room => out.push_str(s),
            Value::Str(_) => return Err(ctx.memory_limit_error().into()),
            other => match render_within(other, Rendering::Str, room - out.len()) {
                Ok(text) if out.len() + text.len() <= room => out.push_str(&text),
                _ => return Err(ctx.memory_limit_error().into()),
            },
        }
    }
    new_string(ctx, out)
}

fn subs(
    ctx: &mut Ctx,
    call: Call,
    (s, Truncated(start), end): (&str, Truncated, Option<Truncated>),
) -> EvalResult {
    subs_of(ctx, call, s, start, end.map(|Truncated(e)| e))
}

/// `(subs s start end?)`.
pub(crate) fn subs_of(
    ctx: &mut Ctx,
    call: Call,
    s: &str,
    start: i64,
    end: Option<i64>,
) -> EvalResult {
    let len = s.chars().count();
    let end = end.unwrap_or(len as i64);
    if start < 0 || end < start || end as usize > len {
        return Err(call
            .error(
                ErrorKind::Index,
                format_args!(
                    "range {start}..{end} is out of bounds for a string of {len} characters"
                ),
            )
            .into());
    }
    let out: String = s
        .chars()
        .skip(start as usize)
        .take((end - start) as usize)
        .collect();
    new_string(ctx, out)
}

fn joined(values: &[Value], render: fn(&Value) -> String) -> String {
    values.iter().map(render).collect::<Vec<_>>().join(" ")
}

fn pr_str_fn(ctx: &mut Ctx, _: Call, xs: &[Value]) -> EvalResult {
    new_string(ctx, joined(xs, pr_str))
}

fn prn_str(ctx: &mut Ctx, _: Call, xs: &[Value]) -> EvalResult {
    new_string(ctx, joined(xs, pr_str) + "\n")
}

fn print_str_fn(ctx: &mut Ctx, _: Call, xs: &[Value]) -> EvalResult {
    new_string(ctx, joined(xs, print_str))
}

fn println_str(ctx: &mut Ctx, _: Call, xs: &[Value]) -> EvalResult {
    new_string(ctx, joined(xs, print_str) + "\n")
}

/// `(str/join coll)` or `(str/join separator coll)`.
fn join(ctx: &mut Ctx, call: Call, (first, second): (&Value, Option<&Value>)) -> EvalResult {
    let (separator, coll) = match (first, second) {
        (coll, None) => (String::new(), coll),
        (sep, Some(coll)) => (str_of(sep), coll),
    };
    let mut items =
        Items::new(coll).map_err(|_| call.expected("a collection of items to join", coll))?;
    if items.is_unbounded() {
        return Err(call.unbounded(coll).into());
    }
    let mut out = String::new();
    let mut first = true;
    while let Some(item) = items.next(ctx)? {
        if !first {
            out.push_str(&separator);
        }
        first = false;
        match &*item {
            Value::Str(s) => out.push_str(s),
            other => out.push_str(&str_of(other)),
        }
        if out.len() > 4096 {
            ctx.tick()?;
            super::check_text(out.len())?;
        }
    }
    new_string(ctx, out)
}

/// Java's `Pattern.split`: no empty leading piece from a zero-width match at the start; with
/// `limit` > 0 at most `limit` pieces; with `limit` 0 trailing empty pieces dropped.
pub(crate) fn split_by(
    ctx: &mut Ctx,
    s: &str,
    re: &regex::Regex,
    limit: i64,
) -> Result<Vec<Value>> {
    let mut pieces: Vec<&str> = Vec::new();
    let mut index = 0;
    let mut matched = false;
    for m in java_matches(re, s) {
        ctx.tick()?;
        if limit > 0 && pieces.len() as i64 >= limit - 1 {
            break;
        }
        if m.start() == 0 && m.end() == 0 {
            continue;
        }
        matched = true;
        pieces.push(&s[index..m.start()]);
        index = m.end();
    }
    if !matched {
        ctx.charge(s.len() + 16)?;
        return Ok(vec![Value::string(s)]);
    }
    pieces.push(&s[index..]);
    if limit == 0 {
        while pieces.last() == Some(&"") {
            pieces.pop();
        }
    }
    ctx.charge_items(pieces.len())?;
    ctx.charge(s.len())?;
    Ok(pieces.into_iter().map(Value::string).collect())
}

/// The separator is checked before the limit, so the limit is read in the body.
fn split(
    ctx: &mut Ctx,
    call: Call,
    (s, separator, limit): (&str, &Value, Option<&Value>),
) -> EvalResult {
    let re = match separator {
        Value::Str(sep) => {
            return Err(Error::type_error(format!(
                "{call} expects a regex separator, got the string {}; write #\"{}\" \
                 (a regex literal)",
                pr_str(separator),
                regex::escape(sep).replace('"', "\\\"")
            ))
            .into());
        }
        other => call.arg::<&crate::value::Regex>(other)?,
    };
    let limit = match limit {
        Some(l) => call.arg::<i64>(l)?,
        None => 0,
    };
    Ok(Value::vector(split_by(ctx, s, re.engine(), limit)?))
}

fn split_lines(ctx: &mut Ctx, _: Call, s: &str) -> EvalResult {
    let mut lines: Vec<&str> = s
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    // As Java's String.split: an empty text is one empty line, and otherwise every trailing
    // empty line goes (so "\n" has none).
    while !s.is_empty() && lines.last() == Some(&"") {
        lines.pop();
    }
    ctx.charge_items(lines.len())?;
    ctx.charge(s.len())?;
    Ok(Value::vector(lines.into_iter().map(Value::string)))
}

/// Expand a Java replacement string (`$1`, `${name}`, `\$`) for one match.
fn expand_replacement(
    out: &mut String,
    replacement: &str,
    caps: &regex::Captures<'_>,
    re: &regex::Regex,
) -> Result<()> {
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped) => out.push(escaped),
                None => {
                    return Err(Error::argument(
                        "replacement string ends with a lone backslash; write \\\\ for a \
                         backslash",
                    ));
                }
            },
            '$' => match chars.peek() {
                Some('{') => {
                    chars.next();
                    let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                    if re.capture_names().flatten().all(|n| n != name) {
                        return Err(Error::argument(format!(
                            "replacement refers to group ${{{name}}}, but the regex has no group \
                             named {name}"
                        )));
                    }
                    out.push_str(caps.name(&name).map_or("", |m| m.as_str()));
                }
                Some(d) if d.is_ascii_digit() => {
                    let mut group = d.to_digit(10).unwrap_or(0) as usize;
                    chars.next();
                    if group >= caps.len() {
                        return Err(Error::index(format!(
                            "replacement refers to group ${group}, but the regex has {} group{}; \
                             write \\$ for a literal dollar sign",
                            caps.len() - 1,
                            if caps.len() == 2 { "" } else { "s" }
                        )));
                    }
                    // Java takes further digits while they still name an existing group.
                    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                        let longer = group * 10 + d as usize;
                        if longer >= caps.len() {
                            break;
                        }
                        group = longer;
                        chars.next();
                    }
                    out.push_str(caps.get(group).map_or("", |m| m.as_str()));
                }
                _ => {
                    return Err(Error::argument(
                        "replacement has a $ not followed by a group number; write \\$ for a \
                         literal dollar sign",
                    ));
                }
            },
            c => out.push(c),
        }
    }
    Ok(())
}

/// How a regex match is replaced.
enum With<'a> {
    Template(&'a str),
    Function(&'a Value),
}

fn replace_regex(
    ctx: &mut Ctx,
    call: Call,
    s: &str,
    re: &regex::Regex,
    with: With<'_>,
    first_only: bool,
) -> EvalResult {
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for caps in java_captures(re, s) {
        ctx.tick()?;
        // Group 0, the whole match, is always there.
        let Some(m) = caps.get(0) else { break };
        out.push_str(&s[last..m.start()]);
        match &with {
            With::Template(t) => expand_replacement(&mut out, t, &caps, re)?,
            With::Function(f) => {
                let arg = match_value(ctx, &caps)?;
                match ctx.apply(f, &[arg])? {
                    Value::Str(r) => out.push_str(&r),
                    other => {
                        return Err(call
                            .error(
                                ErrorKind::Type,
                                format_args!(
                                    "the replacement function must return a string, got {}",
                                    got(&other)
                                ),
                            )
                            .into());
                    }
                }
            }
        }
        last = m.end();
        ctx.charge(out.len() / 8)?;
        if first_only {
            break;
        }
    }
    out.push_str(&s[last..]);
    new_string(ctx, out)
}

/// `str/replace` (or `replace-first`): `matcher` in `s` replaced by `replacement`.
pub(crate) fn replace_in(
    ctx: &mut Ctx,
    call: Call,
    s: &str,
    (matcher, replacement): (&Value, &Value),
    first_only: bool,
) -> EvalResult {
    match (matcher, replacement) {
        (Value::Str(from), Value::Str(to)) => {
            // Each match may grow the text by the whole replacement: refuse before building
            // when the result cannot fit.
            let matches = if from.is_empty() {
                s.chars().count() + 1
            } else {
                s.matches(from.as_str()).count()
            };
            let matches = if first_only { matches.min(1) } else { matches };
            if s.len().saturating_add(matches.saturating_mul(to.len())) > ctx.memory_left() {
                return Err(ctx.memory_limit_error().into());
            }
            let out = if first_only {
                s.replacen(from.as_str(), to, 1)
            } else if from.is_empty() {
                // Java inserts the replacement between every character and at both ends.
                let mut out = String::from(to.as_str());
                for c in s.chars() {
                    out.push(c);
                    out.push_str(to);
                }
                out
            } else {
                s.replace(from.as_str(), to)
            };
            new_string(ctx, out)
        }
        (Value::Char(from), Value::Char(to)) => {
            let out = if first_only {
                s.replacen(*from, &to.to_string(), 1)
            } else {
                s.replace(*from, &to.to_string())
            };
            new_string(ctx, out)
        }
        (Value::Regex(re), Value::Str(to)) => {
            replace_regex(ctx, call, s, re.engine(), With::Template(to), first_only)
        }
        (
            Value::Regex(re),
            f @ (Value::Fn(_) | Value::Keyword(_) | Value::Map(_) | Value::Var(_)),
        ) => replace_regex(ctx, call, s, re.engine(), With::Function(f), first_only),
        (matcher, replacement) => Err(Error::type_error(format!(
            "{call} replaces a string with a string, a char with a char, or a regex with a \
             string or function; got {} and {}",
            got(matcher),
            got(replacement)
        ))
        .into()),
    }
}

fn replace(ctx: &mut Ctx, call: Call, (s, matcher, to): (Text, &Value, &Value)) -> EvalResult {
    replace_in(ctx, call, &s, (matcher, to), false)
}

fn replace_first(
    ctx: &mut Ctx,
    call: Call,
    (s, matcher, to): (Text, &Value, &Value),
) -> EvalResult {
    replace_in(ctx, call, &s, (matcher, to), true)
}

fn upper_case(ctx: &mut Ctx, _: Call, s: Text) -> EvalResult {
    new_string(ctx, s.to_uppercase())
}

fn lower_case(ctx: &mut Ctx, _: Call, s: Text) -> EvalResult {
    new_string(ctx, s.to_lowercase())
}

fn capitalize(ctx: &mut Ctx, _: Call, s: Text) -> EvalResult {
    let mut chars = s.chars();
    let out = match chars.next() {
        Some(first) => first
            .to_uppercase()
            .chain(chars.as_str().to_lowercase().chars())
            .collect(),
        None => String::new(),
    };
    new_string(ctx, out)
}

fn trim(ctx: &mut Ctx, _: Call, s: &str) -> EvalResult {
    new_string(ctx, s.trim_matches(is_java_whitespace).to_string())
}

fn triml(ctx: &mut Ctx, _: Call, s: &str) -> EvalResult {
    new_string(ctx, s.trim_start_matches(is_java_whitespace).to_string())
}

fn trimr(ctx: &mut Ctx, _: Call, s: &str) -> EvalResult {
    new_string(ctx, s.trim_end_matches(is_java_whitespace).to_string())
}

fn trim_newline(ctx: &mut Ctx, _: Call, s: &str) -> EvalResult {
    new_string(ctx, s.trim_end_matches(['\n', '\r']).to_string())
}

fn is_blank(_: &mut Ctx, call: Call, s: &Value) -> EvalResult {
    match s {
        Value::Nil => Ok(Value::Bool(true)),
        other => Ok(Value::Bool(
            call.arg::<&str>(other)?.chars().all(is_java_whitespace),
        )),
    }
}

fn includes(_: &mut Ctx, _: Call, (s, Needle(part)): (Text, Needle)) -> EvalResult {
    Ok(Value::Bool(s.contains(part)))
}

fn starts_with(_: &mut Ctx, _: Call, (s, Needle(prefix)): (Text, Needle)) -> EvalResult {
    Ok(Value::Bool(s.starts_with(prefix)))
}

fn ends_with(_: &mut Ctx, _: Call, (s, Needle(suffix)): (Text, Needle)) -> EvalResult {
    Ok(Value::Bool(s.ends_with(suffix)))
}

/// Character position of a byte offset.
fn char_pos(s: &str, byte: usize) -> i64 {
    s[..byte].chars().count() as i64
}

/// Byte offset of a character position (clamped to the string).
fn byte_pos(s: &str, chars: i64) -> usize {
    if chars <= 0 {
        return 0;
    }
    s.char_indices()
        .nth(chars as usize)
        .map_or(s.len(), |(b, _)| b)
}

fn index_of(_: &mut Ctx, _: Call, (s, value, from): (Text, Fragment, Option<i64>)) -> EvalResult {
    let from = from.unwrap_or(0);
    if from > s.chars().count() as i64 {
        return Ok(Value::Nil);
    }
    let start = byte_pos(&s, from);
    Ok(s[start..]
        .find(&*value)
        .map(|i| Value::Int(char_pos(&s, start + i)))
        .unwrap_or_default())
}

fn last_index_of(
    _: &mut Ctx,
    _: Call,
    (s, value, from): (Text, Fragment, Option<i64>),
) -> EvalResult {
    let end = match from {
        Some(from) => {
            if from < 0 {
                return Ok(Value::Nil);
            }
            // A match may start at `from` at the latest.
            (byte_pos(&s, from) + value.len()).min(s.len())
        }
        None => s.len(),
    };
    let mut end = end;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Ok(s[..end]
        .rfind(&*value)
        .map(|i| Value::Int(char_pos(&s, i)))
        .unwrap_or_default())
}

fn reverse(ctx: &mut Ctx, _: Call, s: &str) -> EvalResult {
    new_string(ctx, s.chars().rev().collect())
}

fn escape(ctx: &mut Ctx, _: Call, (s, cmap): (&str, &Value)) -> EvalResult {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        ctx.tick()?;
        match ctx.apply(cmap, &[Value::Char(c)])? {
            Value::Nil => out.push(c),
            other => out.push_str(&str_of(&other)),
        }
        super::check_text(out.len())?;
    }
    new_string(ctx, out)
}

/// Whether the whole of `s` matches `re` (for `.matches`).
pub(crate) fn matches_whole(re: &crate::value::Regex, s: &str) -> Result<bool> {
    Ok(whole_match_engine(re)?.is_match(s))
}

fn re_quote_replacement(ctx: &mut Ctx, _: Call, s: Text<'_>) -> EvalResult {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '$') {
            out.push('\\');
        }
        out.push(c);
    }
    ctx.charge(out.len())?;
    Ok(Value::string(out))
}
