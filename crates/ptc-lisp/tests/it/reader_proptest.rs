//! The reader never panics, whatever it is given, and what it returns is well-formed: forms
//! have spans inside the text on character boundaries, and errors point inside the text.

use proptest::prelude::*;
use ptc_lisp::{Error, ErrorKind};
use ptc_lisp::{Form, FormKind, Program, ReadLimits};

/// The forms of `src`, read with `limits`.
fn read(src: &str, limits: &ReadLimits) -> ptc_lisp::Result<Vec<Form>> {
    Program::parse_with(src, limits).map(|p| p.forms().to_vec())
}

/// Pieces that exercise every token kind, their error paths and the places where two tokens
/// touch: delimiters, prefixes, broken literals, lone `#` and `\`, multi-byte characters.
const PIECES: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "#{",
    "#(",
    "'",
    "@",
    "^",
    "#_",
    "#'",
    "#inst",
    "#",
    "##",
    "##NaN",
    "##-Inf",
    "`",
    "~",
    "~@",
    "#?",
    "#=",
    "#:",
    "\"",
    "\"str\"",
    "\"a\\",
    "\\",
    "\\a",
    "\\newline",
    "\\u00e9",
    "\\uD800",
    "#\"re\"",
    "#\"",
    ":",
    "::",
    ":a",
    ":a/b",
    "x",
    "a/b",
    "/",
    "a/",
    "-",
    "+",
    "->",
    "1",
    "-7",
    "0xFF",
    "1/2",
    "1.5",
    "1e",
    "3.",
    "9999999999999999999",
    "017",
    "09",
    "2r101",
    "N",
    "M",
    "nil",
    "true",
    "%",
    "%1",
    " ",
    ",",
    "\n",
    "\r\n",
    "\t",
    ";",
    "; comment\n",
    "#!",
    "é",
    "§",
    "😀",
    "\u{200b}",
    "\u{a0}",
    "\0",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|pieces| pieces.concat())
}

fn check_spans(src: &str, form: &Form) {
    let range = form.span.range();
    assert!(
        range.start <= range.end && range.end <= src.len(),
        "span {range:?} outside a {}-byte text: {src:?}",
        src.len()
    );
    assert!(
        src.is_char_boundary(range.start) && src.is_char_boundary(range.end),
        "span {range:?} splits a character: {src:?}"
    );
    match &form.kind {
        FormKind::List(forms)
        | FormKind::Vector(forms)
        | FormKind::Map(forms)
        | FormKind::Set(forms)
        | FormKind::AnonFn(forms) => {
            for inner in forms {
                check_spans(src, inner);
            }
        }
        FormKind::Quote(inner) | FormKind::Deref(inner) | FormKind::Tagged(_, inner) => {
            check_spans(src, inner)
        }
        _ => {}
    }
}

fn check_error(src: &str, err: &Error) {
    // Only the whole-program size limit has no position.
    if err.kind == ErrorKind::ProgramLimit && err.span.is_none() {
        return;
    }
    let span = err
        .span
        .unwrap_or_else(|| panic!("error without a span: {err:?} for {src:?}"));
    assert!(
        span.range().end <= src.len(),
        "error span {span:?} outside the text: {src:?}"
    );
    assert!(err.pos.is_some(), "error without a position: {err:?}");
    assert!(!err.message.is_empty());
}

fn check(src: &str, limits: &ReadLimits) {
    match read(src, limits) {
        Ok(forms) => forms.iter().for_each(|form| check_spans(src, form)),
        Err(err) => check_error(src, &err),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_text_never_panics(src in any::<String>()) {
        check(&src, &ReadLimits::default());
    }

    #[test]
    fn token_soup_never_panics(src in soup()) {
        check(&src, &ReadLimits::default());
    }

    #[test]
    fn token_soup_with_tight_limits_never_panics(
        src in soup(),
        max_depth in 0usize..4,
        max_number_literal_len in 0usize..4,
        max_program_bytes in 0usize..64,
    ) {
        check(&src, &ReadLimits { max_program_bytes, max_depth, max_number_literal_len });
    }
}
