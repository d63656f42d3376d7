//! The Java methods programs call on strings and other values: `(.toUpperCase s)`,
//! `(.indexOf s "x")`, `(Character/isDigit c)`, `(String/join "," xs)`, `(.getMessage e)`.
//!
//! A method call `(.name target args...)` is a call of the builtin named `.name`, so methods are
//! values like any function (`(map #(.trim %) xs)`). Each follows Java's result, including its
//! conventions that differ from `clojure.string`: `.indexOf` gives -1 when absent, `.trim`
//! removes every character up to the space, `.split` and `.replaceAll` take the regex as a
//! string. Positions count characters, as everywhere in PTC-Lisp. Methods not listed here are
//! not available; the error lists the ones that are.

use super::string::{is_java_whitespace, matches_whole, split_by};
use super::{Builtin, builtin, expect_int, got};
use crate::error::{Error, Result};
use crate::eval::{Ctx, EXCEPTION_MARKER, EvalResult, Items};
use crate::format::{pr_str, str_of};
use crate::value::Value;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!(".toUpperCase", [1], to_upper_case, "(.toUpperCase s)", "Java String.toUpperCase: s in upper case.", "(.toUpperCase \"abc\")" => "\"ABC\""),
    builtin!(".toLowerCase", [1], to_lower_case, "(.toLowerCase s)", "Java String.toLowerCase: s in lower case.", "(.toLowerCase \"ÀB\")" => "\"àb\""),
    builtin!(".length", [1], length, "(.length s)", "Java String.length: the number of characters of s.", "(.length \"héllo\")" => "5"),
    builtin!(".trim", [1], trim, "(.trim s)", "Java String.trim: s without leading and trailing spaces and control characters.", "(.trim \"  x \\t\")" => "\"x\""),
    builtin!(".strip", [1], strip, "(.strip s)", "Java String.strip: s without leading and trailing whitespace.", "(.strip \" x \")" => "\"x\""),
    builtin!(".isEmpty", [1], is_empty, "(.isEmpty s)", "Java isEmpty: true for an empty string or collection.", "[(.isEmpty \"\") (.isEmpty [1])]" => "[true false]"),
    builtin!(".isBlank", [1], is_blank, "(.isBlank s)", "Java String.isBlank: true if s is empty or only whitespace.", "(.isBlank \"  \")" => "true"),
    builtin!(".startsWith", [2], starts_with, "(.startsWith s prefix)", "Java String.startsWith.", "(.startsWith \"hello\" \"he\")" => "true"),
    builtin!(".endsWith", [2], ends_with, "(.endsWith s suffix)", "Java String.endsWith.", "(.endsWith \"hello\" \"lo\")" => "true"),
    builtin!(".contains", [2], contains, "(.contains s part)", "Java contains: a substring of a string, or an element of a list, vector or set.", "[(.contains \"hello\" \"ell\") (.contains [1 2] 3)]" => "[true false]"),
    builtin!(".indexOf", [2..=3], index_of, "(.indexOf s part) (.indexOf s part from)", "Java indexOf: position of the first occurrence of a string or char in s (or of an item in a list), -1 if absent.", "[(.indexOf \"hello\" \"l\") (.indexOf \"hello\" \"z\")]" => "[2 -1]"),
    builtin!(".lastIndexOf", [2], last_index_of, "(.lastIndexOf s part)", "Java lastIndexOf: position of the last occurrence, -1 if absent.", "(.lastIndexOf \"abca\" \"a\")" => "3"),
    builtin!(".substring", [2..=3], substring, "(.substring s start) (.substring s start end)", "Java String.substring: like subs.", "(.substring \"hello\" 1 3)" => "\"el\""),
    builtin!(".charAt", [2], char_at, "(.charAt s i)", "Java String.charAt: the character at position i.", "(.charAt \"abc\" 1)" => "\\b"),
    builtin!(".split", [2..=3], split, "(.split s regex-string) (.split s regex-string limit)", "Java String.split: the pieces of s around matches of the regex given as a string, as a vector.", "(vec (.split \"a,b,,c,,\" \",\"))" => "[\"a\" \"b\" \"\" \"c\"]"),
    builtin!(".replace", [3], replace, "(.replace s target replacement)", "Java String.replace: every occurrence of a string (or char) replaced literally.", "(.replace \"a.b.c\" \".\" \"-\")" => "\"a-b-c\""),
    builtin!(".replaceAll", [3], replace_all, "(.replaceAll s regex-string replacement)", "Java String.replaceAll: every match of the regex (a string) replaced, with $1 for groups.", "(.replaceAll \"a1b22\" \"\\\\d+\" \"<$0>\")" => "\"a<1>b<22>\""),
    builtin!(".replaceFirst", [3], replace_first, "(.replaceFirst s regex-string replacement)", "Java String.replaceFirst: the first match of the regex (a string) replaced.", "(.replaceFirst \"a1b2\" \"\\\\d\" \"#\")" => "\"a#b2\""),
    builtin!(".matches", [2], matches, "(.matches s regex-string)", "Java String.matches: true if the regex (a string) matches the whole of s.", "(.matches \"123\" \"\\\\d+\")" => "true"),
    builtin!(".concat", [2], concat, "(.concat s other)", "Java String.concat.", "(.concat \"a\" \"b\")" => "\"ab\""),
    builtin!(".repeat", [2], repeat, "(.repeat s n)", "Java String.repeat: s n times over.", "(.repeat \"ab\" 3)" => "\"ababab\""),
    builtin!(".equalsIgnoreCase", [2], equals_ignore_case, "(.equalsIgnoreCase s other)", "Java String.equalsIgnoreCase.", "(.equalsIgnoreCase \"AbC\" \"abc\")" => "true"),
    builtin!(".equals", [2], equals, "(.equals x y)", "Java equals: like =.", "(.equals \"a\" \"a\")" => "true"),
    builtin!(".compareTo", [2], compare_to, "(.compareTo x y)", "Java compareTo: like compare.", "(.compareTo \"a\" \"c\")" => "-2"),
    builtin!(".toString", [1], to_string, "(.toString x)", "Java toString: like str, but nil is an error.", "(.toString :a)" => "\":a\""),
    builtin!(".getMessage", [1], get_message, "(.getMessage e)", "The message of a caught exception (like ex-message).", "(try (throw (ex-info \"boom\" {})) (catch Exception e (.getMessage e)))" => "\"boom\""),
    builtin!("String/valueOf", [1], string_value_of, "(String/valueOf x)", "Java String.valueOf: like str, but nil is an error.", "(String/valueOf 5)" => "\"5\""),
    builtin!("String/join", [2], string_join, "(String/join separator strings)", "Java String.join: the strings with separator between them.", "(String/join \",\" [\"a\" \"b\"])" => "\"a,b\""),
    builtin!("Character/isDigit", [1], is_digit, "(Character/isDigit c)", "True if the char c is a digit.", "[(Character/isDigit \\5) (Character/isDigit \\a)]" => "[true false]"),
    builtin!("Character/isLetter", [1], is_letter, "(Character/isLetter c)", "True if the char c is a letter.", "(Character/isLetter \\é)" => "true"),
    builtin!("Character/isLetterOrDigit", [1], is_letter_or_digit, "(Character/isLetterOrDigit c)", "True if the char c is a letter or a digit.", "(Character/isLetterOrDigit \\_)" => "false"),
    builtin!("Character/isAlphabetic", [1], is_letter, "(Character/isAlphabetic c)", "True if the char (or code point) c is alphabetic.", "(Character/isAlphabetic (int \\a))" => "true"),
    builtin!("Character/isUpperCase", [1], is_upper_case, "(Character/isUpperCase c)", "True if the char c is an upper-case letter.", "(Character/isUpperCase \\A)" => "true"),
    builtin!("Character/isLowerCase", [1], is_lower_case, "(Character/isLowerCase c)", "True if the char c is a lower-case letter.", "(Character/isLowerCase \\A)" => "false"),
    builtin!("Character/isWhitespace", [1], is_whitespace, "(Character/isWhitespace c)", "True if the char c is whitespace (not counting no-break spaces).", "(Character/isWhitespace \\space)" => "true"),
    builtin!("Character/toUpperCase", [1], char_to_upper_case, "(Character/toUpperCase c)", "The upper-case form of the char c.", "(Character/toUpperCase \\a)" => "\\A"),
    builtin!("Character/toLowerCase", [1], char_to_lower_case, "(Character/toLowerCase c)", "The lower-case form of the char c.", "(Character/toLowerCase \\A)" => "\\a"),
    builtin!("Character/getNumericValue", [1], get_numeric_value, "(Character/getNumericValue c)", "The digit value of the char c (letters count as 10 to 35), -1 if it has none.", "[(Character/getNumericValue \\7) (Character/getNumericValue \\z)]" => "[7 35]"),
];

/// The receiver of a string method.
fn receiver<'v>(method: &str, v: &'v Value) -> Result<&'v str> {
    match v {
        Value::Str(s) => Ok(s),
        Value::Nil => Err(Error::type_error(format!(
            "cannot call {method} on nil (NullPointerException)"
        ))),
        other => Err(Error::type_error(format!(
            "{method} is a String method, called on {}",
            got(other)
        ))),
    }
}

fn string_arg<'v>(method: &str, v: &'v Value) -> Result<&'v str> {
    match v {
        Value::Str(s) => Ok(s),
        other => Err(Error::type_error(format!(
            "{method} expects a string argument, got {}",
            got(other)
        ))),
    }
}

fn new_string(ctx: &mut Ctx, s: String) -> EvalResult {
    ctx.charge(s.len() + 16)?;
    Ok(Value::from(s))
}

fn to_upper_case(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".toUpperCase", &args[0])?;
    new_string(ctx, s.to_uppercase())
}

fn to_lower_case(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".toLowerCase", &args[0])?;
    new_string(ctx, s.to_lowercase())
}

fn length(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::from(receiver(".length", &args[0])?.chars().count()))
}

fn trim(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".trim", &args[0])?;
    new_string(ctx, s.trim_matches(|c: char| c <= ' ').to_string())
}

fn strip(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".strip", &args[0])?;
    new_string(ctx, s.trim_matches(is_java_whitespace).to_string())
}

fn is_empty(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Str(s) => Ok(Value::Bool(s.is_empty())),
        v @ (Value::List(_) | Value::Vector(_) | Value::Map(_) | Value::Set(_)) => {
            Ok(Value::Bool(v.count() == Some(0)))
        }
        other => Err(Error::type_error(format!(
            ".isEmpty is a String and collection method, called on {}",
            got(other)
        ))
        .into()),
    }
}

fn is_blank(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".isBlank", &args[0])?;
    Ok(Value::Bool(s.chars().all(is_java_whitespace)))
}

fn starts_with(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".startsWith", &args[0])?;
    Ok(Value::Bool(
        s.starts_with(string_arg(".startsWith", &args[1])?),
    ))
}

fn ends_with(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".endsWith", &args[0])?;
    Ok(Value::Bool(s.ends_with(string_arg(".endsWith", &args[1])?)))
}

fn contains(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Str(s) => Ok(Value::Bool(s.contains(string_arg(".contains", &args[1])?))),
        Value::List(items) | Value::Vector(items) => {
            Ok(Value::Bool(items.iter().any(|x| *x == args[1])))
        }
        Value::Set(items) => Ok(Value::Bool(items.contains(&args[1]))),
        other => Err(Error::type_error(format!(
            ".contains is a String and collection method, called on {}; for a map key use \
             contains?",
            got(other)
        ))
        .into()),
    }
}

/// The text a string method searches for: a string or a char.
fn part(method: &str, v: &Value) -> Result<String> {
    match v {
        Value::Str(s) => Ok(s.to_string()),
        Value::Char(c) => Ok(c.to_string()),
        other => Err(Error::type_error(format!(
            "{method} expects a string or char to look for, got {}",
            got(other)
        ))),
    }
}

fn char_index(s: &str, byte: usize) -> i64 {
    s[..byte].chars().count() as i64
}

fn index_of(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    if let Value::List(items) | Value::Vector(items) = &args[0] {
        return Ok(Value::Int(
            items
                .iter()
                .position(|x| *x == args[1])
                .map_or(-1, |i| i as i64),
        ));
    }
    let s = receiver(".indexOf", &args[0])?;
    let wanted = part(".indexOf", &args[1])?;
    let from = match args.get(2) {
        Some(f) => expect_int(".indexOf", f)?.max(0),
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
            .find(wanted.as_str())
            .map_or(-1, |i| char_index(s, start + i)),
    ))
}

fn last_index_of(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    if let Value::List(items) | Value::Vector(items) = &args[0] {
        return Ok(Value::Int(
            items
                .iter()
                .rposition(|x| *x == args[1])
                .map_or(-1, |i| i as i64),
        ));
    }
    let s = receiver(".lastIndexOf", &args[0])?;
    let wanted = part(".lastIndexOf", &args[1])?;
    Ok(Value::Int(
        s.rfind(wanted.as_str()).map_or(-1, |i| char_index(s, i)),
    ))
}

fn substring(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    receiver(".substring", &args[0])?;
    super::string::subs_of(ctx, ".substring", args)
}

fn char_at(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".charAt", &args[0])?;
    let i = expect_int(".charAt", &args[1])?;
    usize::try_from(i)
        .ok()
        .and_then(|i| s.chars().nth(i))
        .map(Value::Char)
        .ok_or_else(|| {
            Error::index(format!(
                ".charAt: index {i} is out of range for a string of {} characters",
                s.chars().count()
            ))
            .into()
        })
}

fn regex_arg(method: &str, v: &Value) -> Result<crate::value::Regex> {
    match v {
        Value::Str(pattern) => super::regex::compile(pattern),
        Value::Regex(re) => Ok(re.clone()),
        other => Err(Error::type_error(format!(
            "{method} expects a regex written as a string, got {}",
            got(other)
        ))),
    }
}

fn split(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".split", &args[0])?;
    let re = regex_arg(".split", &args[1])?;
    let limit = match args.get(2) {
        Some(l) => expect_int(".split", l)?,
        None => 0,
    };
    // Java's String.split gives [""] for "" (unlike splitting a non-empty string into nothing).
    Ok(Value::vector(split_by(ctx, s, re.engine(), limit)?))
}

fn replace(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".replace", &args[0])?;
    match (&args[1], &args[2]) {
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
            ".replace replaces strings or chars literally, got {} and {}; for a regex use \
             .replaceAll or clojure.string/replace",
            got(from),
            got(to)
        ))
        .into()),
    }
}

fn replace_regex(ctx: &mut Ctx, method: &str, args: &[Value], first_only: bool) -> EvalResult {
    receiver(method, &args[0])?;
    let re = regex_arg(method, &args[1])?;
    let replacement = string_arg(method, &args[2])?;
    let call = [
        args[0].clone(),
        Value::Regex(re),
        Value::string(replacement),
    ];
    super::string::replace_impl(ctx, method, &call, first_only)
}

fn replace_all(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    replace_regex(ctx, ".replaceAll", args, false)
}

fn replace_first(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    replace_regex(ctx, ".replaceFirst", args, true)
}

fn matches(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".matches", &args[0])?;
    let re = regex_arg(".matches", &args[1])?;
    Ok(Value::Bool(matches_whole(&re, s)?))
}

fn concat(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".concat", &args[0])?;
    let other = string_arg(".concat", &args[1])?;
    new_string(ctx, format!("{s}{other}"))
}

fn repeat(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".repeat", &args[0])?;
    let n = expect_int(".repeat", &args[1])?;
    if n < 0 {
        return Err(Error::argument(format!(".repeat: count is negative: {n}")).into());
    }
    let bytes = s.len().saturating_mul(n as usize);
    ctx.charge(bytes)?;
    ctx.tick_n(bytes / 64)?;
    new_string(ctx, s.repeat(n as usize))
}

fn equals_ignore_case(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = receiver(".equalsIgnoreCase", &args[0])?;
    Ok(Value::Bool(match &args[1] {
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

fn equals(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    if args[0].is_nil() {
        return Err(Error::type_error("cannot call .equals on nil (NullPointerException)").into());
    }
    Ok(Value::Bool(args[0] == args[1]))
}

fn compare_to(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    if args[0].is_nil() {
        return Err(
            Error::type_error("cannot call .compareTo on nil (NullPointerException)").into(),
        );
    }
    let compare = super::lookup("compare").expect("compare is a builtin");
    (compare.f)(ctx, args)
}

fn to_string(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Nil => {
            Err(Error::type_error("cannot call .toString on nil (NullPointerException)").into())
        }
        Value::Str(_) => Ok(args[0].clone()),
        other => new_string(ctx, str_of(other)),
    }
}

fn get_message(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Map(m) if m.contains_key(&Value::keyword(EXCEPTION_MARKER)) => Ok(m
            .get(&Value::keyword("message"))
            .cloned()
            .unwrap_or_default()),
        other => Err(Error::type_error(format!(
            ".getMessage is an exception method, called on {}",
            got(other)
        ))
        .into()),
    }
}

fn string_value_of(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        // Clojure picks the char-array overload for nil, which throws.
        Value::Nil => Err(Error::type_error(
            "String/valueOf of nil (NullPointerException); use (str x)",
        )
        .into()),
        other => new_string(ctx, str_of(other)),
    }
}

fn string_join(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let separator = string_arg("String/join", &args[0])?;
    let coll = &args[1];
    let mut items = Items::new(coll).map_err(|_| {
        Error::type_error(format!(
            "String/join expects a collection of strings, got {}",
            got(coll)
        ))
    })?;
    if items.is_unbounded() {
        return Err(crate::eval::unbounded_error("String/join", coll).into());
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
                    "String/join joins strings only, got {}; use clojure.string/join for other \
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
fn char_arg(name: &str, v: &Value) -> Result<char> {
    match v {
        Value::Char(c) => Ok(*c),
        Value::Int(i) => u32::try_from(*i)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| Error::argument(format!("{name}: {i} is not a character code"))),
        other => Err(Error::type_error(format!(
            "{name} expects a char such as \\a, got {}",
            got(other)
        ))),
    }
}

fn char_test(name: &str, args: &[Value], test: fn(char) -> bool) -> EvalResult {
    Ok(Value::Bool(test(char_arg(name, &args[0])?)))
}

fn is_digit(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    char_test("Character/isDigit", args, |c| c.is_numeric())
}

fn is_letter(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    char_test("Character/isLetter", args, char::is_alphabetic)
}

fn is_letter_or_digit(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    char_test("Character/isLetterOrDigit", args, char::is_alphanumeric)
}

fn is_upper_case(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    char_test("Character/isUpperCase", args, char::is_uppercase)
}

fn is_lower_case(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    char_test("Character/isLowerCase", args, char::is_lowercase)
}

fn is_whitespace(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    char_test("Character/isWhitespace", args, is_java_whitespace)
}

/// A one-to-one case mapping, as Java's `Character` gives (a char that would map to several
/// characters, like ß, stays as it is).
fn map_case(c: char, mut mapped: impl Iterator<Item = char>) -> char {
    match (mapped.next(), mapped.next()) {
        (Some(m), None) => m,
        _ => c,
    }
}

fn char_to_upper_case(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let c = char_arg("Character/toUpperCase", &args[0])?;
    Ok(Value::Char(map_case(c, c.to_uppercase())))
}

fn char_to_lower_case(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let c = char_arg("Character/toLowerCase", &args[0])?;
    Ok(Value::Char(map_case(c, c.to_lowercase())))
}

fn get_numeric_value(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let c = char_arg("Character/getNumericValue", &args[0])?;
    Ok(Value::Int(c.to_digit(36).map_or(-1, i64::from)))
}
