//! Typographic characters in programs written by a model, made readable to the parser.
//!
//! Models trained on prose sometimes write “curly” quotes, or leave zero-width characters and
//! non-breaking spaces in code. Outside string literals these are never meant as themselves,
//! so they are replaced; inside string literals they are the string's content and stay.

use std::borrow::Cow;

/// Characters that take no room and mean nothing in code: zero-width space, non-joiner and
/// joiner, word joiner, and the byte-order mark.
pub(crate) const INVISIBLE: [char; 5] =
    ['\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}'];

/// Spaces that look like a space: no-break, narrow no-break, figure and thin spaces.
const SPACES: [char; 4] = ['\u{00A0}', '\u{202F}', '\u{2007}', '\u{2009}'];

/// `program` with, outside string literals and comments: curly double quotes (`“ ” „`) made
/// `"`, curly single quotes (`‘ ’`) made `'`, zero-width characters removed and non-breaking
/// spaces made spaces. A string opened with a curly quote is closed by a curly or a straight
/// one, so `(println “hi”)` reads as `(println "hi")`; inside a string opened with `"`, curly
/// quotes are text, so `"he said “hi”"` keeps them. Comments are left as written.
///
/// ```
/// use ptc_run::normalize_program;
///
/// assert_eq!(normalize_program("(println “hi”)"), "(println \"hi\")");
/// assert_eq!(normalize_program("(def\u{200B} x 1)"), "(def x 1)");
/// assert_eq!(normalize_program("(str \"he said “hi”\")"), "(str \"he said “hi”\")");
/// ```
pub fn normalize_program(program: &str) -> Cow<'_, str> {
    let needs_work = program
        .chars()
        .any(|c| is_curly_quote(c) || INVISIBLE.contains(&c) || SPACES.contains(&c));
    if !needs_work {
        return Cow::Borrowed(program);
    }
    let mut out = String::with_capacity(program.len());
    let mut chars = program.chars();
    let mut state = State::Code;
    while let Some(c) = chars.next() {
        match state {
            State::Code => match c {
                '"' => {
                    out.push('"');
                    state = State::Str { curly: false };
                }
                '“' | '”' | '„' => {
                    out.push('"');
                    state = State::Str { curly: true };
                }
                '‘' | '’' => out.push('\''),
                ';' => {
                    out.push(c);
                    state = State::Comment;
                }
                '\\' => {
                    out.push(c);
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                c if INVISIBLE.contains(&c) => {}
                c if SPACES.contains(&c) => out.push(' '),
                c => out.push(c),
            },
            State::Str { curly } => match c {
                '\\' => {
                    out.push(c);
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                '"' => {
                    out.push('"');
                    state = State::Code;
                }
                '”' | '“' if curly => {
                    out.push('"');
                    state = State::Code;
                }
                c => out.push(c),
            },
            State::Comment => {
                out.push(c);
                if c == '\n' {
                    state = State::Code;
                }
            }
        }
    }
    Cow::Owned(out)
}

#[derive(Clone, Copy)]
enum State {
    Code,
    /// In a string literal opened with a curly quote or not.
    Str {
        curly: bool,
    },
    Comment,
}

fn is_curly_quote(c: char) -> bool {
    matches!(c, '“' | '”' | '„' | '‘' | '’')
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn each_kind_of_character_outside_strings() {
        let cases = [
            ("(println “hi”)", "(println \"hi\")"),
            ("(println „hi“)", "(println \"hi\")"),
            ("(println “hi\")", "(println \"hi\")"),
            ("(first ‘(1 2))", "(first '(1 2))"),
            ("(+\u{00A0}1\u{2009}2)", "(+ 1 2)"),
            (
                "\u{FEFF}(def x\u{200B}\u{200C}\u{200D}\u{2060} 1)",
                "(def x 1)",
            ),
        ];
        for (program, expected) in cases {
            assert_eq!(normalize_program(program), expected, "{program:?}");
        }
    }

    #[test]
    fn strings_and_comments_keep_what_they_hold() {
        let cases = [
            ("(str \"it’s “fine”\")", "(str \"it’s “fine”\")"),
            ("(str “a \\” b”)", "(str \"a \\” b\")"),
            ("(str \"\\\"“\")", "(str \"\\\"“\")"),
            ("(str \"👨\u{200D}👩\")", "(str \"👨\u{200D}👩\")"),
            ("; don’t “x”\n(+ 1 2)", "; don’t “x”\n(+ 1 2)"),
            ("; “\n(str “a”)", "; “\n(str \"a\")"),
        ];
        for (program, expected) in cases {
            assert_eq!(normalize_program(program), expected, "{program:?}");
        }
    }

    #[test]
    fn a_program_without_such_characters_is_not_copied() {
        assert!(matches!(normalize_program("(+ 1 2)"), Cow::Borrowed(_)));
    }
}
