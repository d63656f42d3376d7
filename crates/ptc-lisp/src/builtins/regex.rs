//! Regular expressions: `re-pattern`, `re-find`, `re-matches`, `re-seq`.
//!
//! Patterns are written in Java's syntax (that is what Clojure programs use) and run on the
//! `regex` crate, whose matching time is linear in the input: no pattern can make a program hang
//! on backtracking. Java's meaning is kept where the two differ in ways data programs notice:
//! `\w`, `\d` and `\s` (and their negations) match ASCII characters only, as in Java, while `\b`
//! stays Unicode-aware, as in Java 17. `\Q...\E` quoting is supported. Matches are found in
//! Java's order (an empty match right after a non-empty one counts). Small differences remain:
//! `.` and `$` treat only `\n` as a line end (Java also `\r` and a few Unicode separators), `\Z`
//! is read as `\z`, and `(?i)` folds case for all of Unicode (Java only for ASCII by default).
//!
//! Not supported, because they need backtracking: backreferences (`\1`), look-ahead and
//! look-behind (`(?=`, `(?!`, `(?<=`, `(?<!`), atomic groups (`(?>`) and possessive quantifiers
//! (`a*+`). Such a pattern is an `unsupported` error that says so and what to do instead.

use super::args::{Arg, Call, string_arg};
use super::{Builtin, builtin};
use crate::error::{Error, Result};
use crate::eval::{Ctx, EvalResult};
pub(crate) use crate::reader::regex::{compile, whole_match_engine};
use crate::value::{Regex, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("re-pattern", re_pattern, "(re-pattern s)", "Compiles the string s into a regex (Java syntax; no backreferences or look-around).", "(re-find (re-pattern \"a+b\") \"xxaaab\")" => "\"aaab\""),
    builtin!("re-find", re_find, "(re-find re s)", "The first match of re in s: the matched string, or a vector [match group1 ...] when re has groups; nil if none.", "(re-find #\"(\\w+)@(\\w+)\" \"mail ada@example now\")" => "[\"ada@example\" \"ada\" \"example\"]"),
    builtin!("re-matches", re_matches, "(re-matches re s)", "Like re-find, but re must match the whole of s.", "[(re-matches #\"\\d+\" \"123\") (re-matches #\"\\d+\" \"123a\")]" => "[\"123\" nil]"),
    builtin!("re-seq", re_seq, "(re-seq re s)", "Every match of re in s, in order (strings, or vectors when re has groups); nil if none.", "(re-seq #\"\\d+\" \"a1b22c333\")" => "(\"1\" \"22\" \"333\")"),
];

/// The position after the character at `at` (one past the end at the end).
fn after_char(text: &str, at: usize) -> usize {
    text[at..]
        .chars()
        .next()
        .map_or(at + 1, |c| at + c.len_utf8())
}

/// Every match of `re` in `text` in the order Java's `Matcher.find` finds them: after an empty
/// match the search moves on one character, but right after a non-empty match an empty one still
/// counts (`(re-seq #"a*" "baaa")` is `("" "aaa" "")`; the engine's own iterator skips the last).
pub(crate) fn java_captures<'t>(
    re: &regex::Regex,
    text: &'t str,
) -> impl Iterator<Item = regex::Captures<'t>> {
    let mut next = Some(0);
    std::iter::from_fn(move || {
        let start = next.filter(|&s| s <= text.len())?;
        let Some(caps) = re.captures_at(text, start) else {
            next = None;
            return None;
        };
        // Group 0, the whole match, is always there.
        let m = caps.get(0)?;
        next = Some(if m.is_empty() {
            after_char(text, m.end())
        } else {
            m.end()
        });
        Some(caps)
    })
}

/// [`java_captures`] for the whole matches only.
pub(crate) fn java_matches<'t>(
    re: &regex::Regex,
    text: &'t str,
) -> impl Iterator<Item = regex::Match<'t>> {
    let mut next = Some(0);
    std::iter::from_fn(move || {
        let start = next.filter(|&s| s <= text.len())?;
        let Some(m) = re.find_at(text, start) else {
            next = None;
            return None;
        };
        next = Some(if m.is_empty() {
            after_char(text, m.end())
        } else {
            m.end()
        });
        Some(m)
    })
}

impl<'a> Arg<'a> for &'a Regex {
    fn from_arg(call: Call, value: &'a Value) -> Result<Self> {
        match value {
            Value::Regex(r) => Ok(r),
            Value::Str(s) => Err(Error::type_error(format!(
                "{call} expects a regex, got the string {}; write a regex literal such as \
                 #\"{s}\" or use (re-pattern s)",
                crate::format::pr_str(value)
            ))),
            other => Err(call.expected("a regex such as #\"\\d+\"", other)),
        }
    }
}

string_arg!(
    /// The string a regex searches.
    Searched,
    "a string to search"
);

/// What a match gives a program: the matched text, or `[match group1 ...]` (nil for a group
/// that did not take part) when the pattern has groups.
pub(crate) fn match_value(ctx: &mut Ctx, caps: &regex::Captures<'_>) -> Result<Value> {
    let whole = caps.get(0).map_or("", |m| m.as_str());
    if caps.len() == 1 {
        ctx.charge(whole.len() + 16)?;
        return Ok(Value::string(whole));
    }
    ctx.charge_items(caps.len())?;
    Ok(Value::vector(caps.iter().map(|g| match g {
        Some(m) => Value::string(m.as_str()),
        None => Value::Nil,
    })))
}

fn re_pattern(_: &mut Ctx, call: Call, pattern: &Value) -> EvalResult {
    match pattern {
        Value::Regex(_) => Ok(pattern.clone()),
        Value::Str(s) => Ok(Value::Regex(compile(s)?)),
        other => Err(call.expected("a string", other).into()),
    }
}

fn re_find(ctx: &mut Ctx, _: Call, (re, Searched(text)): (&Regex, Searched)) -> EvalResult {
    ctx.tick_n(text.len() / 64)?;
    match re.engine().captures(text) {
        Some(caps) => Ok(match_value(ctx, &caps)?),
        None => Ok(Value::Nil),
    }
}

fn re_matches(ctx: &mut Ctx, _: Call, (re, Searched(text)): (&Regex, Searched)) -> EvalResult {
    ctx.tick_n(text.len() / 64)?;
    match whole_match_engine(re)?.captures(text) {
        Some(caps) => Ok(match_value(ctx, &caps)?),
        None => Ok(Value::Nil),
    }
}

fn re_seq(ctx: &mut Ctx, _: Call, (re, Searched(text)): (&Regex, Searched)) -> EvalResult {
    ctx.tick_n(text.len() / 64)?;
    let mut found = Vec::new();
    for caps in java_captures(re.engine(), text) {
        ctx.tick()?;
        ctx.charge_items(1)?;
        found.push(match_value(ctx, &caps)?);
    }
    if found.is_empty() {
        return Ok(Value::Nil);
    }
    Ok(Value::list(found))
}
