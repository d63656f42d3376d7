//! Golden tests for the reader: every case in `tests/reader/*.txt` is data, checked by one
//! function.
//!
//! A file holds cases of this shape:
//!
//! ```text
//! === name of the case [option ...]
//! program text (any number of lines)
//! ---
//! expected rendering, one line per top-level form, or the error
//! ```
//!
//! Lines before the first `===` are a free-form preamble; inside a program, `;` comments are
//! ordinary program text. Options: `spans` shows every form's byte span as `@start..end`;
//! `max_depth=N`, `max_program_bytes=N`, `max_number_literal_len=N` change the limits.
//! In program text, `{{TEXT * N}}` stands for TEXT repeated N times (for the limit cases),
//! and `{{TEXT}}` where TEXT is `\n`, `\t`, `\r` or `\uXXXX` stands for that one character.
//!
//! Forms render in a compact notation that shows their kind: `int:42`, `float:1.5`,
//! `str:"a\n"`, `char:'a'`, `kw:a/b`, `sym:x`, `regex:"\\d+"`, `nil`, `bool:true`,
//! `list(...)`, `vec[...]`, `map{...}`, `set#{...}`, `fn#(...)`, `quote(...)`,
//! `deref(...)`, `var:name`, `tag:inst(...)`, `syntax-quote(...)`, `unquote(...)`,
//! `unquote-splicing(...)`; a form with metadata is preceded by `^` and its metadata map
//! (`^map{kw:private bool:true} vec[int:1]`). An error renders as
//! `error[kind] line:col: message`.
//!
//! Set `UPDATE_GOLDEN=1` to rewrite the files with the current output (then review the diff).

use pretty_assertions::assert_eq;
use ptc_lisp::{Form, FormKind, Program, ReadLimits};
use std::fmt::Write as _;
use std::path::Path;

/// The forms of `src`, read with `limits`.
fn read(src: &str, limits: &ReadLimits) -> ptc_lisp::Result<Vec<Form>> {
    Program::parse_with(src, limits).map(|p| p.forms().to_vec())
}

fn render(form: &Form, spans: bool, out: &mut String) {
    let seq = |out: &mut String, open: &str, close: &str, forms: &[Form]| {
        out.push_str(open);
        for (i, f) in forms.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            render(f, spans, out);
        }
        out.push_str(close);
    };
    if let Some(meta) = &form.meta {
        out.push('^');
        render(meta, spans, out);
        out.push(' ');
    }
    match &form.kind {
        FormKind::Nil => out.push_str("nil"),
        FormKind::Bool(b) => {
            let _ = write!(out, "bool:{b}");
        }
        FormKind::Int(i) => {
            let _ = write!(out, "int:{i}");
        }
        FormKind::Float(f) => {
            let _ = write!(out, "float:{f:?}");
        }
        FormKind::Big(b) => {
            let _ = write!(out, "big:{b:?}");
        }
        FormKind::Str(s) => {
            let _ = write!(out, "str:{s:?}");
        }
        FormKind::Char(c) => {
            let _ = write!(out, "char:{c:?}");
        }
        FormKind::Keyword(k) => {
            let _ = write!(out, "kw:{k}");
        }
        FormKind::Symbol(s) => {
            let _ = write!(out, "sym:{s}");
        }
        FormKind::Regex(r) => {
            let _ = write!(out, "regex:{r:?}");
        }
        FormKind::List(forms) => seq(out, "list(", ")", forms),
        FormKind::Vector(forms) => seq(out, "vec[", "]", forms),
        FormKind::Map(forms) => seq(out, "map{", "}", forms),
        FormKind::Set(forms) => seq(out, "set#{", "}", forms),
        FormKind::AnonFn(forms) => seq(out, "fn#(", ")", forms),
        FormKind::Quote(inner) => seq(out, "quote(", ")", std::slice::from_ref(inner)),
        FormKind::Deref(inner) => seq(out, "deref(", ")", std::slice::from_ref(inner)),
        FormKind::Var(name) => {
            let _ = write!(out, "var:{name}");
        }
        FormKind::Tagged(tag, inner) => seq(
            out,
            &format!("tag:{tag}("),
            ")",
            std::slice::from_ref(inner),
        ),
        FormKind::SyntaxQuote(inner) => seq(out, "syntax-quote(", ")", std::slice::from_ref(inner)),
        FormKind::Unquote(inner) => seq(out, "unquote(", ")", std::slice::from_ref(inner)),
        FormKind::UnquoteSplicing(inner) => {
            seq(out, "unquote-splicing(", ")", std::slice::from_ref(inner))
        }
    }
    if spans {
        let _ = write!(out, "@{}..{}", form.span.start, form.span.end);
    }
}

/// Expand `{{TEXT * N}}` and `{{\n}}`-style placeholders in a program.
fn expand(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        out.push_str(&rest[..start]);
        let inner = &rest[start + 2..start + len];
        match inner.rsplit_once(" * ") {
            Some((text, count)) => {
                let count: usize = count
                    .trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("bad repeat count in {{{{{inner}}}}}"));
                out.push_str(&text.repeat(count));
            }
            None => match inner {
                "\\n" => out.push('\n'),
                "\\t" => out.push('\t'),
                "\\r" => out.push('\r'),
                _ => {
                    let code = inner
                        .strip_prefix("\\u")
                        .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                        .and_then(char::from_u32)
                        .unwrap_or_else(|| panic!("bad placeholder {{{{{inner}}}}}"));
                    out.push(code);
                }
            },
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

/// Run one case and render its outcome.
fn run_case(header: &str, program: &str) -> String {
    let mut limits = ReadLimits::default();
    let mut spans = false;
    if let Some(options) = header
        .rsplit_once('[')
        .and_then(|(_, o)| o.strip_suffix(']'))
    {
        for option in options.split_whitespace() {
            match option.split_once('=') {
                None if option == "spans" => spans = true,
                Some((key, value)) => {
                    let value: usize = value
                        .parse()
                        .unwrap_or_else(|_| panic!("bad option value in {header}"));
                    match key {
                        "max_depth" => limits.max_depth = value,
                        "max_program_bytes" => limits.max_program_bytes = value,
                        "max_number_literal_len" => limits.max_number_literal_len = value,
                        _ => panic!("unknown option {key} in {header}"),
                    }
                }
                None => panic!("unknown option {option} in {header}"),
            }
        }
    }
    match read(&expand(program), &limits) {
        Ok(forms) if forms.is_empty() => "(no forms)".to_owned(),
        Ok(forms) => {
            let mut out = String::new();
            for (i, form) in forms.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                render(form, spans, &mut out);
            }
            out
        }
        Err(err) => err.render(),
    }
}

/// Re-render a golden file with the actual outcome of each case.
fn check_file(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    // Preamble.
    while let Some(line) = lines.next_if(|l| !l.starts_with("=== ")) {
        out.push_str(line);
        out.push('\n');
    }
    while let Some(header) = lines.next() {
        out.push_str(header);
        out.push('\n');
        let mut program = Vec::new();
        for line in lines.by_ref() {
            if line == "---" {
                break;
            }
            program.push(line);
        }
        for line in &program {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("---\n");
        out.push_str(&run_case(header, &program.join("\n")));
        out.push('\n');
        // Skip the old expectation, keep blank separators.
        while lines.next_if(|l| !l.starts_with("=== ")).is_some() {}
        if lines.peek().is_some() {
            out.push('\n');
        }
    }
    out
}

#[test]
fn reader_golden_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reader");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no golden files in {}", dir.display());
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for path in files {
        let expected = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let actual = check_file(&expected);
        if update {
            if actual != expected {
                std::fs::write(&path, &actual)
                    .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
            }
        } else {
            assert_eq!(expected, actual, "golden file {} differs", path.display());
        }
    }
}
