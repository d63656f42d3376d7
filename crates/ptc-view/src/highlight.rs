//! PTC-Lisp programs as HTML with their strings, comments, keywords, numbers, special forms and
//! tool calls marked, for a style sheet to colour. Every character of the program is kept, in
//! order: without the style sheet the text reads as written.

use crate::escape::push_html;

/// Names shown as the language's own forms.
const FORMS: &[&str] = &[
    "def",
    "defn",
    "defn-",
    "fn",
    "let",
    "letfn",
    "if",
    "if-let",
    "if-not",
    "when",
    "when-let",
    "when-not",
    "when-first",
    "cond",
    "condp",
    "case",
    "do",
    "loop",
    "recur",
    "for",
    "doseq",
    "dotimes",
    "return",
    "fail",
    "try",
    "catch",
    "finally",
    "throw",
    "and",
    "or",
    "->",
    "->>",
    "as->",
    "some->",
    "some->>",
    "cond->",
    "cond->>",
    "quote",
    "ns",
    "require",
];

/// `program` as HTML: each token that has a class wrapped in a `span` of that class (`c`
/// comment, `s` string, `k` keyword, `n` number, `f` special form, `t` tool).
///
/// ```
/// assert_eq!(
///     ptc_view::highlight::program("(def n (tool/count :all)) ; \"x\""),
///     "(<span class=\"f\">def</span> n (<span class=\"t\">tool/count</span> \
///      <span class=\"k\">:all</span>)) <span class=\"c\">; &quot;x&quot;</span>"
/// );
/// ```
pub fn program(program: &str) -> String {
    let mut out = String::with_capacity(program.len() * 3 / 2);
    let mut rest = program;
    while let Some(c) = rest.chars().next() {
        let (len, class) = token(rest, c);
        let (text, after) = rest.split_at(len);
        match class {
            Some(class) => {
                out.push_str("<span class=\"");
                out.push_str(class);
                out.push_str("\">");
                push_html(&mut out, text);
                out.push_str("</span>");
            }
            None => push_html(&mut out, text),
        }
        rest = after;
    }
    out
}

/// The length in bytes of the token `rest` starts with (whose first character is `c`), and its
/// class.
fn token(rest: &str, c: char) -> (usize, Option<&'static str>) {
    match c {
        ';' => (rest.find('\n').unwrap_or(rest.len()), Some("c")),
        '"' => (string_len(rest), Some("s")),
        ':' => (word_len(rest), Some("k")),
        c if c.is_ascii_digit() => (word_len(rest), Some("n")),
        '-' | '+' if rest[1..].starts_with(|d: char| d.is_ascii_digit()) => {
            (word_len(rest), Some("n"))
        }
        c if is_word(c) => {
            let len = word_len(rest);
            let word = &rest[..len];
            let class = if word.starts_with("tool/") {
                Some("t")
            } else if FORMS.contains(&word) {
                Some("f")
            } else {
                None
            };
            (len, class)
        }
        c => (c.len_utf8(), None),
    }
}

/// The length of the string literal `rest` starts with, its closing quote included (to the end
/// when it is not closed).
fn string_len(rest: &str) -> usize {
    let mut escaped = false;
    for (i, c) in rest.char_indices().skip(1) {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return i + 1,
            _ => escaped = false,
        }
    }
    rest.len()
}

/// The length of the word (symbol, keyword or number) `rest` starts with.
fn word_len(rest: &str) -> usize {
    rest.char_indices()
        .skip(1)
        .find(|&(_, c)| !is_word(c))
        .map_or(rest.len(), |(i, _)| i)
}

fn is_word(c: char) -> bool {
    !c.is_whitespace()
        && !matches!(
            c,
            '(' | ')' | '[' | ']' | '{' | '}' | '"' | ';' | ',' | '@' | '^' | '`' | '~' | '\''
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn marks_strings_with_escapes_and_numbers() {
        assert_eq!(
            program(r#"(str "a\"b" -12 3.5)"#),
            "(str <span class=\"s\">&quot;a\\&quot;b&quot;</span> <span class=\"n\">-12</span> \
             <span class=\"n\">3.5</span>)"
        );
    }

    #[test]
    fn keeps_an_unclosed_string_and_every_character() {
        let text = "(println \"open\n; not a comment";
        let html = program(text);
        assert_eq!(
            html,
            "(println <span class=\"s\">&quot;open\n; not a comment</span>"
        );
    }

    #[test]
    fn leaves_plain_symbols_and_punctuation_unmarked() {
        assert_eq!(program("#{a} @x 'y"), "#{a} @x &#39;y");
    }
}
