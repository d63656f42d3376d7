//! Regular expression syntax: patterns are written in Java's syntax (that is what Clojure
//! programs use) and run on the `regex` crate, whose matching time is linear in the input.
//!
//! [`compile`] translates a Java pattern to the engine's syntax. Java's meaning is kept where the
//! two differ in ways data programs notice: `\w`, `\d` and `\s` (and their negations) match
//! ASCII characters only, as in Java, while `\b` stays Unicode-aware, as in Java 17. `\Q...\E`
//! quoting is supported. Constructs that need backtracking (backreferences, look-around, atomic
//! groups, possessive quantifiers) are refused with an `unsupported` error that says so.

use crate::error::{Error, ErrorKind, Result};
use crate::value::Regex;

/// The most memory one compiled pattern may take.
const SIZE_LIMIT: usize = 1 << 20;

/// Compile a pattern written in Java syntax, with an error an LLM can act on.
pub(crate) fn compile(pattern: &str) -> Result<Regex> {
    let translated = translate(pattern)?;
    let engine = build(&translated).map_err(|e| engine_error(pattern, &e))?;
    Ok(Regex::new(pattern, engine))
}

fn build(pattern: &str) -> std::result::Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(SIZE_LIMIT)
        .build()
}

fn engine_error(pattern: &str, e: &regex::Error) -> Error {
    let detail = match e {
        regex::Error::Syntax(text) => text
            .lines()
            .rev()
            .find(|l| l.starts_with("error:"))
            .map(|l| l.trim_start_matches("error:").trim().to_string())
            .unwrap_or_else(|| text.clone()),
        regex::Error::CompiledTooBig(_) => {
            "the pattern is too large once compiled; use smaller repetition counts".to_string()
        }
        other => other.to_string(),
    };
    if detail.contains("look-around") {
        return unsupported(pattern, "look-ahead and look-behind");
    }
    if detail.contains("backreferences") {
        return unsupported(pattern, "backreferences (\\1)");
    }
    Error::new(
        ErrorKind::Argument,
        format!("invalid regex #\"{pattern}\": {detail}"),
    )
}

fn unsupported(pattern: &str, what: &str) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        format!(
            "regex #\"{pattern}\" uses {what}, which is not supported (patterns run in linear \
             time, without backtracking); match a larger piece with groups and check the rest \
             in code"
        ),
    )
}

/// Rewrite Java pattern syntax into the `regex` crate's where their meanings differ.
fn translate(pattern: &str) -> Result<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut class_depth = 0usize;
    // Whether the previous token can take a quantifier's `+` as "possessive".
    let mut after_quantifier = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let in_class = class_depth > 0;
        let was_quantifier = std::mem::take(&mut after_quantifier);
        match c {
            '\\' => {
                let Some(&next) = chars.get(i + 1) else {
                    return Err(Error::new(
                        ErrorKind::Argument,
                        format!("invalid regex #\"{pattern}\": it ends with a lone backslash"),
                    ));
                };
                i += 2;
                match next {
                    'w' | 'W' | 'd' | 'D' | 's' | 'S' => {
                        let (name, negated) = match next {
                            'w' => ("word", false),
                            'W' => ("word", true),
                            'd' => ("digit", false),
                            'D' => ("digit", true),
                            's' => ("space", false),
                            _ => ("space", true),
                        };
                        let class = format!("[:{}{name}:]", if negated { "^" } else { "" });
                        if in_class {
                            out.push_str(&class);
                        } else {
                            out.push('[');
                            out.push_str(&class);
                            out.push(']');
                        }
                        continue;
                    }
                    'Q' => {
                        let rest: String = chars[i..].iter().collect();
                        let (quoted, after) = match rest.find("\\E") {
                            Some(end) => (&rest[..end], end + 2),
                            None => (rest.as_str(), rest.len()),
                        };
                        out.push_str(&regex::escape(quoted));
                        i += rest[..after].chars().count();
                        continue;
                    }
                    // Java has no word-start/end assertions; there these are plain characters.
                    '<' | '>' => out.push(next),
                    'Z' if !in_class => out.push_str("\\z"),
                    'R' if !in_class => {
                        out.push_str("(?:\\r\\n|[\\n\\x0B\\x0C\\r\\x{85}\\x{2028}\\x{2029}])")
                    }
                    'p' | 'P' => {
                        if let Some((posix, len)) = posix_class(&chars[i..]) {
                            let negated = next == 'P';
                            let class = format!("[:{}{posix}:]", if negated { "^" } else { "" });
                            if in_class {
                                out.push_str(&class);
                            } else {
                                out.push('[');
                                out.push_str(&class);
                                out.push(']');
                            }
                            i += len;
                        } else {
                            out.push('\\');
                            out.push(next);
                            i += copy_braces(&chars[i..], &mut out);
                        }
                    }
                    'x' => {
                        out.push_str("\\x");
                        i += copy_braces(&chars[i..], &mut out);
                    }
                    d @ '1'..='9' if !in_class => {
                        return Err(unsupported(pattern, &format!("a backreference (\\{d})")));
                    }
                    'k' if !in_class => {
                        return Err(unsupported(pattern, "a named backreference (\\k<name>)"));
                    }
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            '[' => {
                // A `[` inside a class opens a nested class in Java, as in the regex crate; but
                // `[:` would start an ASCII class there (`[[:alpha:]]` is the characters
                // `:alph` to Java), so the colon is escaped.
                if in_class && chars.get(i + 1) == Some(&':') {
                    class_depth += 1;
                    out.push_str("[\\:");
                    i += 1;
                } else {
                    class_depth += 1;
                    out.push('[');
                    // A `]` right after `[` or `[^` is a literal in both dialects.
                    if chars.get(i + 1) == Some(&'^') {
                        out.push('^');
                        i += 1;
                    }
                    if chars.get(i + 1) == Some(&']') {
                        out.push_str("\\]");
                        i += 1;
                    }
                }
                i += 1;
            }
            ']' if in_class => {
                class_depth -= 1;
                out.push(']');
                i += 1;
            }
            '(' if !in_class && chars.get(i + 1) == Some(&'?') => {
                let ahead: String = chars[i + 2..chars.len().min(i + 4)].iter().collect();
                if ahead.starts_with('=') || ahead.starts_with('!') {
                    return Err(unsupported(pattern, "look-ahead ((?= or (?!)"));
                }
                if ahead == "<=" || ahead == "<!" {
                    return Err(unsupported(pattern, "look-behind ((?<= or (?<!)"));
                }
                if ahead.starts_with('>') {
                    return Err(unsupported(pattern, "an atomic group ((?>...))"));
                }
                out.push('(');
                i += 1;
            }
            '*' | '+' | '?' if !in_class => {
                if c == '+' && was_quantifier {
                    return Err(unsupported(
                        pattern,
                        "a possessive quantifier (such as a*+)",
                    ));
                }
                out.push(c);
                // `a*?` is lazy (fine); only a `+` right after a quantifier is possessive.
                after_quantifier = !(c == '?' && was_quantifier);
                i += 1;
            }
            '{' if !in_class => match counted_repetition(&chars[i..]) {
                Some(len) => {
                    out.extend(&chars[i..i + len]);
                    after_quantifier = true;
                    i += len;
                }
                // Java refuses a `{` that does not start a repetition, and so does the engine.
                None => {
                    out.push('{');
                    i += 1;
                }
            },
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// Copy a `{...}` argument of an escape (`\p{L}`, `\x{263A}`) as it is; returns its length.
fn copy_braces(rest: &[char], out: &mut String) -> usize {
    if rest.first() != Some(&'{') {
        return 0;
    }
    match rest.iter().position(|&c| c == '}') {
        Some(end) => {
            out.extend(&rest[..=end]);
            end + 1
        }
        None => 0,
    }
}

/// Java's ASCII POSIX classes (`\p{Alpha}`, ...): the name the regex crate gives the same class
/// and how many characters `{Name}` took.
fn posix_class(rest: &[char]) -> Option<(&'static str, usize)> {
    if rest.first() != Some(&'{') {
        return None;
    }
    let end = rest.iter().position(|&c| c == '}')?;
    let name: String = rest[1..end].iter().collect();
    let posix = match name.as_str() {
        "Lower" => "lower",
        "Upper" => "upper",
        "ASCII" => "ascii",
        "Alpha" => "alpha",
        "Digit" => "digit",
        "Alnum" => "alnum",
        "Punct" => "punct",
        "Graph" => "graph",
        "Print" => "print",
        "Blank" => "blank",
        "Cntrl" => "cntrl",
        "XDigit" => "xdigit",
        "Space" => "space",
        _ => return None,
    };
    Some((posix, end + 1))
}

/// The length of `{n}`, `{n,}` or `{n,m}` at the start of `rest`, if that is what it holds.
fn counted_repetition(rest: &[char]) -> Option<usize> {
    let end = rest.iter().position(|&c| c == '}')?;
    let inner: String = rest[1..end].iter().collect();
    let (low, high) = match inner.split_once(',') {
        Some((l, h)) => (l, Some(h)),
        None => (inner.as_str(), None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(low) && high.is_none_or(|h| h.is_empty() || digits(h))).then_some(end + 1)
}

/// The anchored form of a pattern for `re-matches`, compiled on first use.
pub(crate) fn whole_match_engine(re: &Regex) -> Result<&regex::Regex> {
    re.whole_engine(|source| {
        build(&format!("\\A(?:{})\\z", translate(source)?)).map_err(|e| engine_error(source, &e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn java_classes_become_ascii_classes() {
        assert_eq!(
            translate(r"\w+\d\s").unwrap(),
            "[[:word:]]+[[:digit:]][[:space:]]"
        );
        assert_eq!(translate(r"[\w-]").unwrap(), "[[:word:]-]");
        assert_eq!(translate(r"[^\S\n]").unwrap(), "[^[:^space:]\\n]");
        assert_eq!(
            translate(r"\p{Alpha}\P{Digit}").unwrap(),
            "[[:alpha:]][[:^digit:]]"
        );
        assert_eq!(translate(r"\p{L}\x{263A}").unwrap(), r"\p{L}\x{263A}");
    }

    #[test]
    fn java_literal_quirks_are_kept() {
        assert_eq!(translate(r"\Qa.b\E.").unwrap(), r"a\.b.");
        assert_eq!(translate(r"\Q(x").unwrap(), r"\(x");
        assert_eq!(translate("a{2,3}b{4}c{5,}").unwrap(), "a{2,3}b{4}c{5,}");
        assert_eq!(translate(r"[]a]").unwrap(), r"[\]a]");
        assert_eq!(translate("[[:alpha:]]").unwrap(), r"[[\:alpha:]]");
        assert_eq!(translate(r"\<").unwrap(), "<");
        assert_eq!(translate("a*?b+?").unwrap(), "a*?b+?");
    }

    #[test]
    fn backtracking_constructs_are_refused_clearly() {
        for (pattern, what) in [
            (r"(a)\1", "backreference"),
            ("a(?=b)", "look-ahead"),
            ("a(?!b)", "look-ahead"),
            ("(?<=a)b", "look-behind"),
            ("(?<!a)b", "look-behind"),
            ("(?>a)", "atomic group"),
            ("a*+", "possessive"),
            ("a{2}+", "possessive"),
        ] {
            let err = compile(pattern).err().unwrap();
            assert_eq!(err.kind, ErrorKind::Unsupported, "{pattern}");
            assert!(err.message.contains(what), "{pattern}: {}", err.message);
        }
        // A named group is fine.
        assert!(compile("(?<year>\\d{4})").is_ok());
    }

    #[test]
    fn syntax_errors_name_the_pattern() {
        let err = compile("(unclosed").err().unwrap();
        assert_eq!(err.kind, ErrorKind::Argument);
        assert_eq!(err.message, "invalid regex #\"(unclosed\": unclosed group");
    }

    #[test]
    fn the_engine_is_linear_on_classic_blowups() {
        let re = compile("(a+)+$").unwrap();
        let text = format!("{}b", "a".repeat(50_000));
        assert!(!re.engine().is_match(&text));
    }
}
