//! The Java methods programs call on strings and other values: `(.toUpperCase s)`,
//! `(.indexOf s "x")`, `(Character/isDigit c)`, `(String/join "," xs)`, `(.getMessage e)`.
//!
//! A method call `(.name target args...)` is a call of the builtin named `.name`, so methods are
//! values like any function (`(map #(.trim %) xs)`). Each follows Java's result, including its
//! conventions that differ from `clojure.string`: `.indexOf` gives -1 when absent, `.trim`
//! removes every character up to the space, `.split` and `.replaceAll` take the regex as a
//! string. Positions count characters, as everywhere in PTC-Lisp. Methods not listed here are
//! not available; the error lists the ones that are.

use super::args::{Arg, Call, string_arg};
use super::string::{Fragment, is_java_whitespace, matches_whole, split_by};
use super::{Builtin, builtin, got};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{Ctx, EXCEPTION_MARKER, EvalResult, Items};
use crate::format::{pr_str, str_of};
use crate::value::Value;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!(".toUpperCase", to_upper_case, "(.toUpperCase s)", "Java String.toUpperCase: s in upper case.", "(.toUpperCase \"abc\")" => "\"ABC\""),
    builtin!(".toLowerCase", to_lower_case, "(.toLowerCase s)", "Java String.toLowerCase: s in lower case.", "(.toLowerCase \"ÀB\")" => "\"àb\""),
    builtin!(".length", length, "(.length s)", "Java String.length: the number of characters of s.", "(.length \"héllo\")" => "5"),
    builtin!(".trim", trim, "(.trim s)", "Java String.trim: s without leading and trailing spaces and control characters.", "(.trim \"  x \\t\")" => "\"x\""),
    builtin!(".strip", strip, "(.strip s)", "Java String.strip: s without leading and trailing whitespace.", "(.strip \" x \")" => "\"x\""),
    builtin!(".isEmpty", is_empty, "(.isEmpty s)", "Java isEmpty: true for an empty string or collection.", "[(.isEmpty \"\") (.isEmpty [1])]" => "[true false]"),
    builtin!(".isBlank", is_blank, "(.isBlank s)", "Java String.isBlank: true if s is empty or only whitespace.", "(.isBlank \"  \")" => "true"),
    builtin!(".startsWith", starts_with, "(.startsWith s prefix)", "Java String.startsWith.", "(.startsWith \"hello\" \"he\")" => "true"),
    builtin!(".endsWith", ends_with, "(.endsWith s suffix)", "Java String.endsWith.", "(.endsWith \"hello\" \"lo\")" => "true"),
    builtin!(".contains", contains, "(.contains s part)", "Java contains: a substring of a string, or an element of a list, vector or set.", "[(.contains \"hello\" \"ell\") (.contains [1 2] 3)]" => "[true false]"),
    builtin!(".indexOf", index_of, "(.indexOf s part) (.indexOf s part from)", "Java indexOf: position of the first occurrence of a string or char in s (or of an item in a list), -1 if absent.", "[(.indexOf \"hello\" \"l\") (.indexOf \"hello\" \"z\")]" => "[2 -1]"),
    builtin!(".lastIndexOf", last_index_of, "(.lastIndexOf s part)", "Java lastIndexOf: position of the last occurrence, -1 if absent.", "(.lastIndexOf \"abca\" \"a\")" => "3"),
    builtin!(".substring", substring, "(.substring s start) (.substring s start end)", "Java String.substring: like subs.", "(.substring \"hello\" 1 3)" => "\"el\""),
    builtin!(".charAt", char_at, "(.charAt s i)", "Java String.charAt: the character at position i.", "(.charAt \"abc\" 1)" => "\\b"),
    builtin!(".split", split, "(.split s regex-string) (.split s regex-string limit)", "Java String.split: the pieces of s around matches of the regex given as a string, as a vector.", "(vec (.split \"a,b,,c,,\" \",\"))" => "[\"a\" \"b\" \"\" \"c\"]"),
    builtin!(".replace", replace, "(.replace s target replacement)", "Java String.replace: every occurrence of a string (or char) replaced literally.", "(.replace \"a.b.c\" \".\" \"-\")" => "\"a-b-c\""),
    builtin!(".replaceAll", replace_all, "(.replaceAll s regex-string replacement)", "Java String.replaceAll: every match of the regex (a string) replaced, with $1 for groups.", "(.replaceAll \"a1b22\" \"\\\\d+\" \"<$0>\")" => "\"a<1>b<22>\""),
    builtin!(".replaceFirst", replace_first, "(.replaceFirst s regex-string replacement)", "Java String.replaceFirst: the first match of the regex (a string) replaced.", "(.replaceFirst \"a1b2\" \"\\\\d\" \"#\")" => "\"a#b2\""),
    builtin!(".matches", matches, "(.matches s regex-string)", "Java String.matches: true if the regex (a string) matches the whole of s.", "(.matches \"123\" \"\\\\d+\")" => "true"),
    builtin!(".concat", concat, "(.concat s other)", "Java String.concat.", "(.concat \"a\" \"b\")" => "\"ab\""),
    builtin!(".repeat", repeat, "(.repeat s n)", "Java String.repeat: s n times over.", "(.repeat \"ab\" 3)" => "\"ababab\""),
    builtin!(".equalsIgnoreCase", equals_ignore_case, "(.equalsIgnoreCase s other)", "Java String.equalsIgnoreCase.", "(.equalsIgnoreCase \"AbC\" \"abc\")" => "true"),
    builtin!(".equals", equals, "(.equals x y)", "Java equals: like =.", "(.equals \"a\" \"a\")" => "true"),
    builtin!(".compareTo", compare_to, "(.compareTo x y)", "Java compareTo: like compare.", "(.compareTo \"a\" \"c\")" => "-2"),
    builtin!(".toString", to_string, "(.toString x)", "Java toString: like str, but nil is an error.", "(.toString :a)" => "\":a\""),
    builtin!(".getMessage", get_message, "(.getMessage e)", "The message of a caught exception (like ex-message).", "(try (throw (ex-info \"boom\" {})) (catch Exception e (.getMessage e)))" => "\"boom\""),
    builtin!("String/valueOf", string_value_of, "(String/valueOf x)", "Java String.valueOf: like str, but nil is an error.", "(String/valueOf 5)" => "\"5\""),
    builtin!("String/join", string_join, "(String/join separator strings)", "Java String.join: the strings with separator between them.", "(String/join \",\" [\"a\" \"b\"])" => "\"a,b\""),
    builtin!("Character/isDigit", is_digit, "(Character/isDigit c)", "True if the char c is a digit.", "[(Character/isDigit \\5) (Character/isDigit \\a)]" => "[true false]"),
    builtin!("Character/isLetter", is_letter, "(Character/isLetter c)", "True if the char c is a letter.", "(Character/isLetter \\é)" => "true"),
    builtin!("Character/isLetterOrDigit", is_letter_or_digit, "(Character/isLetterOrDigit c)", "True if the char c is a letter or a digit.", "(Character/isLetterOrDigit \\_)" => "false"),
    builtin!("Character/isAlphabetic", is_letter, "(Character/isAlphabetic c)", "True if the char (or code point) c is alphabetic.", "(Character/isAlphabetic (int \\a))" => "true"),
    builtin!("Character/isUpperCase", is_upper_case, "(Character/isUpperCase c)", "True if the char c is an upper-case letter.", "(Character/isUpperCase \\A)" => "true"),
    builtin!("Character/isLowerCase", is_lower_case, "(Character/isLowerCase c)", "True if the char c is a lower-case letter.", "(Character/isLowerCase \\A)" => "false"),
    builtin!("Character/isWhitespace", is_whitespace, "(Character/isWhitespace c)", "True if the char c is whitespace (not counting no-break spaces).", "(Character/isWhitespace \\space)" => "true"),
    builtin!("Character/toUpperCase", char_to_upper_case, "(Character/toUpperCase c)", "The upper-case form of the char c.", "(Character/toUpperCase \\a)" => "\\A"),
    builtin!("Character/toLowerCase", char_to_lower_case, "(Character/toLowerCase c)", "The lower-case form of the char c.", "(Character/toLowerCase \\A)" => "\\a"),
    builtin!("Character/getNumericValue", get_numeric_value, "(Character/getNumericValue c)", "The digit value of the char c (letters count as 10 to 35), -1 if it has none.", "[(Character/getNumericValue \\7) (Character/getNumericValue \\z)]" => "[7 35]"),
];

/// The receiver of a string method.
struct Receiver<'a>(&'a str);

impl<'a> Arg<'a> for Receiver<'a> {
    fn from_arg(call: Call, value: &'a Value) -> Result<Self> {
        match value {
            Value::Str(s) => Ok(Receiver(s)),
            Value::Nil => Err(called_on_nil(call)),
            other => Err(Error::type_error(format!(
                "{call} is a String method, called on {}",
                got(other)
            ))),
        }
    }
}

string_arg!(
    /// A string argument of a method.
    StringArg,
    "a string argument"
);

/// A regex written as a string (`(.split s ",")`), compiled.
struct RegexString(crate::value::Regex);

impl Arg<'_> for RegexString {
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        match value {
            Value::Str(pattern) => super::regex::compile(pattern).map(RegexString),
            Value::Regex(re) => Ok(RegexString(re.clone())),
            other => Err(call.expected("a regex written as a string", other)),
        }
    }
}

/// The error for calling a method on nil, as Java's `NullPointerException`.
#[cold]
fn called_on_nil(call: Call) -> Error {
    Error::type_error(format!("cannot call {call} on nil (NullPointerException)"))
}

fn new_string(ctx: &mut Ctx, s: String) -> EvalResult {
    ctx.charge(s.len() + 16)?;
    Ok(Value::from(s))
}

fn to_upper_case(ctx: &mut Ctx, _: Call, Receiver(s): Receiver) -> EvalResult {
    new_string(ctx, s.to_uppercase())
}

fn to_lower_case(ctx: &mut Ctx, _: Call, Receiver(s): Receiver) -> EvalResult {
    new_string(ctx, s.to_lowercase())
}

fn length(_: &mut Ctx, _: Call, Receiver(s): Receiver) -> EvalResult {
    Ok(Value::from(s.chars().count()))
}

fn trim(ctx: &mut Ctx, _: Call, Receiver(s): Receiver) -> EvalResult {
    new_string(ctx, s.trim_matches(|c: char| c <= ' ').to_string())
}

fn strip(ctx: &mut Ctx, _: Call, Receiver(s): Receiver) -> EvalResult {
    new_string(ctx, s.trim_matches(is_java_whitespace).to_string())
}

fn is_empty(_: &mut Ctx, call: Call, target: &Value) -> EvalResult {
    match target {
        Value::Str(s) => Ok(Value::Bool(s.is_empty())),
        v @ (Value::List(_) | Value::Vector(_) | Value::Map(_) | Value::Set(_)) => {
            Ok(Value::Bool(v.count() == Some(0)))
        }
        other => Err(Error::type_error(format!(
            "{call} is a String and collection method, called on {}",
            got(other)
        ))
        .into()),
    }
}

fn is_blank(_: &mut Ctx, _: Call, Receiver(s): Receiver) -> EvalResult {
    Ok(Value::Bool(s.chars().all(is_java_whitespace)))
}

fn starts_with(
    _: &mut Ctx,
    _: Call,
    (Receiver(s), StringArg(prefix)): (Receiver, StringArg),
) -> EvalResult {
    Ok(Value::Bool(s.starts_with(prefix)))
}

fn ends_with(
    _: &mut Ctx,
    _: Call,
    (Receiver(s), StringArg(suffix)): (Receiver, StringArg),
) -> EvalResult {
    Ok(Value::Bool(s.ends_with(suffix)))
}

fn contains(_: &mut Ctx, call: Call, (target, part): (&Value, &Value)) -> EvalResult {
    match target {
        Value::Str(s) => {
            let StringArg(part) = call.arg(part)?;
            Ok(Value::Bool(s.contains(part)))
        }
        Value::List(items) | Value::Vector(items) => {
            Ok(Value::Bool(items.iter().any(|x| x == part)))
        }
        Value::Set(items) => Ok(Value::Bool(items.contains(part))),
        other => Err(Error::type_error(format!(
            "{call} is a String and collection method, called on {}; for a map key use \
             contains?",
            got(other)
        ))
        .into()),
    }
}

fn char_index(s: &str, byte: usize) -> i64 {
    s[..byte].chars().count() as i64
}

/// On a list or vector the start position is ignored, so the arguments are read in the body.
fn index_of(
    _: &mut Ctx,
    call: Call,
    (target, part, from): (&Value, &Value, Option<&Value>),
) -> EvalResult {
    if let Value::List(items) | Value::Vector(items) = target {
        return Ok(Value::Int(
            items
                .iter()
                .position(|x| x == part)
                .map_or(-1, |i| i as i64),
        ));
    }
    let Receiver(s) = call.arg(target)?;
    let wanted = call.arg::<Fragment>(part)?;
    let from = match from {
        Some(f) => call.arg::<i64>(f)?.max(0),
        None => 0,
    };
    let Some(start) = s
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(s.len()))
        .nth(usize::try_from(from).unwrap_or(usize::MAX))
    else {
        return Ok(Value::Int(-1));
    };
    Ok(Value::Int(
        s[start..]
            .find(&*wanted)
            .map_or(-1, |i| char_index(s, start + i)),
    ))
}

fn last_index_of(_: &mut Ctx, call: Call, (target, part): (&Value, &Value)) -> EvalResult {
    if let Value::List(items) | Value::Vector(items) = target {
        return Ok(Value::Int(
            items
                .iter()
                .rposition(|x| x == part)
                .map_or(-1, |i| i as i64),
        ));
    }
    let Receiver(s) = call.arg(target)?;
    let wanted = call.arg::<Fragment>(part)?;
    Ok(Value::Int(
        s.rfind(&*wanted).map_or(-1, |i| char_index(s, i)),
    ))
}

fn substring(
    ctx: &mut Ctx,
    call: Call,
    (Receiver(s), start, end): (Receiver, i64, Option<i64>),
) -> EvalResult {
    super::string::subs_of(ctx, call, s, start, end)
}

fn char_at(_: &mut Ctx, call: Call, (Receiver(s), i): (Receiver, i64)) -> EvalResult {
    usize::try_from(i)
        .ok()
        .and_then(|i| s.chars().nth(i))
        .map(Value::Char)
        .ok_or_else(|| {
            call.error(
                ErrorKind::Index,
                format_args!(
                    "index {i} is out of range for a string of {} characters",
                    s.chars().count()
                ),
            )
            .into()
        })
}

fn split(
    ctx: &mut Ctx,
    _: Call,
    (Receiver(s), RegexString(re), limit): (Receiver, RegexString, Option<i64>),
) -> EvalResult {
    // Java's String.split gives [""] for "" (unlike splitting a non-empty string into nothing).
    Ok(Value::vector(split_by(
        ctx,
        s,
        re.engine(),
        limit.unwrap_or(0),
    )?))
}

fn replace(
    ctx: &mut Ctx,
    call: Call,
    (Receiver(s), from, to): (Receiver, &Value, &Value),
) -> EvalResult {
    match (from, to) {
        (Value::Char(from), Value::Char(to)) => new_string(ctx, s.replace(*from, &to.to_string())),
        (from @ (Value::Str(_) | Value::Char(_)), to @ (Value::Str(_) | Value::Char(_))) => {
            let (from, to) = (str_of(from), str_of(to));
            let out = if from.is_empty() {
                let mut out = to.clone();
                for c in s.chars() {
                    out.push(c);
                    out.push_str(&to);
                }
                out
            } else {
                s.replace(&from, &to)
            };
            new_string(ctx, out)
        }
        (from, to) => Err(Error::type_error(format!(
            "{call} replaces strings or chars literally, got {} and {}; for a regex use \
             .replaceAll or clojure.string/replace",
            got(from),
            got(to)
        ))
        .into()),
    }
}

fn replace_regex(
    ctx: &mut Ctx,
    call: Call,
    (Receiver(s), RegexString(re), StringArg(replacement)): (Receiver, RegexString, StringArg),
    first_only: bool,
) -> EvalResult {
    let (matcher, replacement) = (Value::Regex(re), Value::string(replacement));
    super::string::replace_in(ctx, call, s, (&matcher, &replacement), first_only)
}

fn replace_all(ctx: &mut Ctx, call: Call, args: (Receiver, RegexString, StringArg)) -> EvalResult {
    replace_regex(ctx, call, args, false)
}

fn replace_first(
    ctx: &mut Ctx,
    call: Call,
    args: (Receiver, RegexString, StringArg),
) -> EvalResult {
    replace_regex(ctx, call, args, true)
}

fn matches(
    _: &mut Ctx,
    _: Call,
    (Receiver(s), RegexString(re)): (Receiver, RegexString),
) -> EvalResult {
    Ok(Value::Bool(matches_whole(&re, s)?))
}

fn concat(
    ctx: &mut Ctx,
    _: Call,
    (Receiver(s), StringArg(other)): (Receiver, StringArg),
) -> EvalResult {
    new_string(ctx, format!("{s}{other}"))
}

fn repeat(ctx: &mut Ctx, call: Call, (Receiver(s), n): (Receiver, i64)) -> EvalResult {
    if n < 0 {
        return Err(call
            .error(ErrorKind::Argument, format_args!("count is negative: {n}"))
            .into());
    }
    let bytes = s.len().saturating_mul(n as usize);
    ctx.charge(bytes)?;
    ctx.tick_n(bytes / 64)?;
    new_string(ctx, s.repeat(n as usize))
}

fn equals_ignore_case(
    _: &mut Ctx,
    _: Call,
    (Receiver(s), other): (Receiver, &Value),
) -> EvalResult {
    Ok(Value::Bool(match other {
        Value::Str(other) => {
            s.chars().count() == other.chars().count()
                && s.chars().zip(other.chars()).all(|(a, b)| {
                    a == b
                        || a.to_uppercase().eq(b.to_uppercase())
                        || a.to_lowercase().eq(b.to_lowercase())
                })
        }
        _ => false,
    }))
}

fn equals(_: &mut Ctx, call: Call, (x, y): (&Value, &Value)) -> EvalResult {
    if x.is_nil() {
        return Err(called_on_nil(call).into());
    }
    Ok(Value::Bool(x == y))
}

fn compare_to(_: &mut Ctx, call: Call, (x, y): (&Value, &Value)) -> EvalResult {
    if x.is_nil() {
        return Err(called_on_nil(call).into());
    }
    Ok(super::number::compare_values(x, y)?)
}

fn to_string(ctx: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    match x {
        Value::Nil => Err(called_on_nil(call).into()),
        Value::Str(_) => Ok(x.clone()),
        other => new_string(ctx, str_of(other)),
    }
}

fn get_message(_: &mut Ctx, call: Call, e: &Value) -> EvalResult {
    match e {
        Value::Map(m) if m.contains_key(&Value::keyword(EXCEPTION_MARKER)) => Ok(m
            .get(&Value::keyword("message"))
            .cloned()
            .unwrap_or_default()),
        other => Err(Error::type_error(format!(
            "{call} is an exception method, called on {}",
            got(other)
        ))
        .into()),
    }
}

fn string_value_of(ctx: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    match x {
        // Clojure picks the char-array overload for nil, which throws.
        Value::Nil => Err(Error::type_error(format!(
            "{call} of nil (NullPointerException); use (str x)"
        ))
        .into()),
        other => new_string(ctx, str_of(other)),
    }
}

fn string_join(
    ctx: &mut Ctx,
    call: Call,
    (StringArg(separator), coll): (StringArg, &Value),
) -> EvalResult {
    let mut items = Items::new(coll).map_err(|_| call.expected("a collection of strings", coll))?;
    if items.is_unbounded() {
        return Err(call.unbounded(coll).into());
    }
    let mut out = String::new();
    let mut first = true;
    while let Some(item) = items.next(ctx)? {
        super::check_text(out.len())?;
        if !first {
            out.push_str(separator);
        }
        first = false;
        match &*item {
            Value::Str(s) => out.push_str(s),
            other => {
                return Err(Error::type_error(format!(
                    "{call} joins strings only, got {}; use clojure.string/join for other \
                     values",
                    pr_str(other)
                ))
                .into());
            }
        }
    }
    new_string(ctx, out)
}

/// A char argument of a `Character/` function (an integer code point is accepted, as in Java).
struct CharArg(char);

impl Arg<'_> for CharArg {
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        match value {
            Value::Char(c) => Ok(CharArg(*c)),
            Value::Int(i) => u32::try_from(*i)
                .ok()
                .and_then(char::from_u32)
                .map(CharArg)
                .ok_or_else(|| {
                    call.error(
                        ErrorKind::Argument,
                        format_args!("{i} is not a character code"),
                    )
                }),
            other => Err(call.expected("a char such as \\a", other)),
        }
    }
}

fn is_digit(_: &mut Ctx, _: Call, CharArg(c): CharArg) -> EvalResult {
    Ok(Value::Bool(c.is_numeric()))
}

fn is_letter(_: &mut Ctx, _: Call, CharArg(c): CharArg) -> EvalResult {
    Ok(Value::Bool(c.is_alphabetic()))
}

fn is_letter_or_digit(_: &mut Ctx, _: Call, CharArg(c): CharArg) -> EvalResult {
    Ok(Value::Bool(c.is_alphanumeric()))
}

fn is_upper_case(_: &mut Ctx, _: Call, CharArg(c): CharArg) -> EvalResult {
    Ok(Value::Bool(c.is_uppercase()))
}

fn is_lower_case(_: &mut Ctx, _: Call, CharArg(c): CharArg) -> EvalResult {
    Ok(Value::Bool(c.is_lowercase()))
}

fn is_whitespace(_: &mut Ctx, _: Call, CharArg(c): CharArg) -> EvalResult {
    Ok(Value::Bool(is_java_whitespace(c)))
}

/// A one-to-one case mapping, as Java's `Character` gives (a char that would map to several
/// characters, like ß, stays as it is).
fn map_case(c: char, mut mapped: impl Iterator<Item = char>) -> char {
    match (mapped.next(), mapped.next()) {
        (Some(m), None) => m,
        _ => c,
    }
}

fn char_to_upper_case(_: &mut Ctx, _: Call, CharArg(c): CharArg) -> EvalResult {
    Ok(Value::Char(map_case(c, c.to_uppercase())))
}

fn char_to_lower_case(_: &mut Ctx, _: Call, CharArg(c): CharArg) -> EvalResult {
    Ok(Value::Char(map_case(c, c.to_lowercase())))
}

fn get_numeric_value(_: &mut Ctx, _: Call, CharArg(c): CharArg) -> EvalResult {
    Ok(Value::Int(c.to_digit(36).map_or(-1, i64::from)))
}
