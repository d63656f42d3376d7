//! Taking the program out of a model's reply.
//!
//! Real replies are untidy: small models forget the opening fence and keep the closing one,
//! leave the language tag out, write prose before and after the code, or stop in the middle of
//! a block. The rules below take the program out of all of these, and nothing else: prose is
//! never run, and a block in another language is never mistaken for code.

use crate::normalize::INVISIBLE;

/// Fence languages that hold a program (compared without regard to case): any tag that starts
/// like Clojure's (`clojure`, `clj`, `cljs`, `cljc`, and the variants small models invent, such
/// as `cljd` or `cljre:`), and Lisp, EDN and PTC-Lisp.
const LANGUAGE_PREFIXES: [&str; 2] = ["clj", "clojure"];
const LANGUAGES: [&str; 3] = ["edn", "lisp", "ptc-lisp"];

/// The program in a model's reply, or `None` when it has none.
///
/// * **Fenced blocks.** A block opened by a line of three or more backticks (or tildes) runs
///   to the next line holding only such a fence, or to the end of the reply when it is never
///   closed. It holds a program when its language tag starts with `clj` or `clojure`
///   (`clj`, `cljs`, `clojurescript`, and variants small models invent such as `cljd`), is
///   `edn`, `lisp` or `ptc-lisp`, or when it has no tag and its first non-blank character is
///   `(` or `;`. A block tagged with another language is skipped whole, so nothing inside it
///   counts, unless it reads as PTC-Lisp made of calls only (a mistagged program).
/// * **Several blocks run in order.** The program is every program block of the reply, joined
///   by a blank line, so definitions in one block are seen by the next.
/// * **Otherwise, a bare program.** With no program block, the program starts at the first
///   line of text outside the blocks that starts with `(`, and takes every top-level form from
///   there for as long as each next form starts a line; the prose before and after it and any
///   stray fence lines are left out. An unbalanced form runs to the end, so that the reader
///   can say where it is unclosed.
/// * **Code inside a sentence is prose**: a form in backticks or after words on its line is
///   never run (models quote the instructions' examples; a quoted tool call must not happen).
/// * **Typographic characters are made readable.** Zero-width characters and byte-order marks
///   are dropped from the whole reply before it is read (they would hide a fence), no-break
///   spaces become spaces, and the program found is then passed through
///   [`normalize_program`](crate::normalize_program): curly quotes outside string literals
///   become straight ones.
///
/// ```
/// use ptc_run::extract_program;
///
/// let reply = "First the data.\n```clojure\n(def xs [1 2])\n```\nThen:\n```\n(count xs)\n```";
/// assert_eq!(extract_program(reply).as_deref(), Some("(def xs [1 2])\n\n(count xs)"));
/// // A program with a stray closing fence and a remark after it.
/// assert_eq!(
///     extract_program("(return 42)\n```\nThis returns 42.").as_deref(),
///     Some("(return 42)")
/// );
/// assert_eq!(extract_program("I cannot do that."), None);
/// assert_eq!(extract_program("Answer with `(return 42)` when done."), None);
/// assert_eq!(extract_program("```clojure\n(str “a”)\n```").as_deref(), Some("(str \"a\")"));
/// ```
pub fn extract_program(reply: &str) -> Option<String> {
    found_program(reply).map(
        |program| match crate::normalize::normalize_program(&program) {
            std::borrow::Cow::Borrowed(_) => program,
            std::borrow::Cow::Owned(normalized) => normalized,
        },
    )
}

fn found_program(reply: &str) -> Option<String> {
    let reply = visible(reply);
    let scan = scan_fences(&reply);
    let blocks: Vec<&str> = scan
        .blocks
        .iter()
        .filter(|block| block.is_program())
        .map(|block| block.content.trim_matches(['\n', '\r']))
        .filter(|content| !content.trim().is_empty())
        .collect();
    if !blocks.is_empty() {
        return Some(blocks.join("\n\n").trim().to_string());
    }
    bare_program(&scan.outside)
}

/// `reply` without the invisible characters that break parsing.
fn visible(reply: &str) -> String {
    reply
        .chars()
        .filter(|c| !INVISIBLE.contains(c))
        .map(|c| if c == '\u{a0}' { ' ' } else { c })
        .collect()
}

/// A fenced block: its language tag (lowercase, empty for none) and its contents, less the
/// indentation of its opening fence.
struct Block {
    language: String,
    content: String,
}

impl Block {
    fn is_program(&self) -> bool {
        if self.language.is_empty() {
            self.content.trim_start().starts_with(['(', ';'])
        } else if is_program_language(&self.language) {
            true
        } else {
            // Small models tag their Clojure `python` or `c` now and then; a block that reads
            // as PTC-Lisp calls only, as no other language's code does, is theirs.
            reads_as_calls(&self.content)
        }
    }
}

/// Whether `code` reads as PTC-Lisp and every top-level form is a call (a list).
fn reads_as_calls(code: &str) -> bool {
    ptc_lisp::Program::parse(code).is_ok_and(|program| {
        !program.forms().is_empty()
            && program
                .forms()
                .iter()
                .all(|form| matches!(form.kind, ptc_lisp::FormKind::List(_)))
    })
}

fn is_program_language(language: &str) -> bool {
    let language = language.to_ascii_lowercase();
    LANGUAGE_PREFIXES.iter().any(|p| language.starts_with(p))
        || LANGUAGES.iter().any(|l| language == *l)
}

/// The blocks of a reply, and its text outside them (fence lines left out).
struct Scan {
    blocks: Vec<Block>,
    outside: String,
}

/// An opening or closing fence line: its indentation, the fence character, how many, and the
/// tag after them.
struct Fence<'t> {
    indent: usize,
    marker: char,
    len: usize,
    info: &'t str,
}

fn fence(line: &str) -> Option<Fence<'_>> {
    let trimmed = line.trim_start();
    let marker = trimmed.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = trimmed.chars().take_while(|&c| c == marker).count();
    (len >= 3).then(|| Fence {
        indent: line.len() - trimmed.len(),
        marker,
        len,
        info: trimmed[len..].trim(),
    })
}

/// The lines of `content` with up to `indent` leading spaces taken off each, as a fence in a
/// list item indents its code.
fn dedent(content: &str, indent: usize) -> String {
    if indent == 0 {
        return content.to_string();
    }
    let mut out = String::with_capacity(content.len());
    for line in content.split_inclusive('\n') {
        let spaces = line.len() - line.trim_start_matches(' ').len();
        out.push_str(&line[spaces.min(indent)..]);
    }
    out
}

/// The language of a fence's info string: its first word, lowercase (```` ```Clojure title ````
/// is `clojure`).
fn language(info: &str) -> String {
    info.split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

fn scan_fences(text: &str) -> Scan {
    let mut blocks = Vec::new();
    let mut outside = String::new();
    let mut lines = LineIter { text, pos: 0 };
    let mut pending: Option<(Fence<'_>, usize)> = None;
    while let Some((line, start)) = lines.next() {
        let Some((open, content_start)) = pending.take() else {
            match fence(line) {
                Some(found) => pending = Some((found, lines.pos)),
                None => {
                    outside.push_str(line);
                    outside.push('\n');
                }
            }
            continue;
        };
        let language = language(open.info);
        let found = fence(line);
        let closes = found
            .as_ref()
            .is_some_and(|f| f.marker == open.marker && f.len >= open.len && f.info.is_empty());
        // A model that forgets to close a program block before opening the next one: a new
        // program fence inside a program block starts a new block. Inside a block of another
        // language every line is that language's, so its example fences stay inside it.
        let reopens = !closes
            && (language.is_empty() || is_program_language(&language))
            && found
                .as_ref()
                .is_some_and(|f| is_program_language(&self::language(f.info)));
        if closes || reopens {
            blocks.push(Block {
                language,
                content: dedent(&text[content_start..start], open.indent),
            });
            if reopens {
                pending = found.map(|f| (f, lines.pos));
            }
        } else {
            pending = Some((open, content_start));
        }
    }
    if let Some((open, content_start)) = pending {
        blocks.push(Block {
            language: language(open.info),
            content: dedent(&text[content_start..], open.indent),
        });
    }
    Scan { blocks, outside }
}

/// The bare program in text outside fences: from the first line that starts with `(`, every
/// top-level form for as long as each next one starts a line (comments and blank lines
/// between them are kept). The rest of the line a form ends on belongs to it, so a stray `)`
/// after a form reaches the reader instead of being dropped.
fn bare_program(text: &str) -> Option<String> {
    let start = line_starts(text).find(|&i| text[i..].trim_start().starts_with('('))?;
    let text = &text[start..];
    let mut end = 0;
    let mut pos = 0;
    loop {
        // Skip whitespace and comments up to the next form; it must start a line.
        let rest = &text[pos..];
        let skipped = skip_blank(rest);
        let next = &rest[skipped..];
        let at_line_start = rest[..skipped].contains('\n') || pos == 0;
        if !next.starts_with('(') || !at_line_start {
            break;
        }
        pos += skipped;
        match form_end(&text[pos..]) {
            Some(len) => {
                pos += len;
                // The rest of the line belongs to the form.
                pos += text[pos..].find('\n').unwrap_or(text.len() - pos);
                end = pos;
            }
            None => {
                end = text.len();
                break;
            }
        }
    }
    let program = text[..end].trim();
    (!program.is_empty()).then(|| program.to_string())
}

/// Byte offsets where the lines of `text` start.
fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1))
}

/// The length of the whitespace and `;` comments at the start of `text`.
fn skip_blank(text: &str) -> usize {
    let mut pos = 0;
    loop {
        let rest = &text[pos..];
        let trimmed = rest.trim_start();
        pos += rest.len() - trimmed.len();
        if trimmed.starts_with(';') {
            pos += trimmed.find('\n').unwrap_or(trimmed.len());
        } else {
            return pos;
        }
    }
}

/// The length of the bracketed form at the start of `text`, or `None` when it is not closed
/// before the end. Strings, comments and character literals (`\(`) are skipped.
fn form_end(text: &str) -> Option<usize> {
    let mut depth: usize = 0;
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            '"' => {
                let mut escaped = false;
                for (_, c) in chars.by_ref() {
                    match (escaped, c) {
                        (true, _) => escaped = false,
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        _ => {}
                    }
                }
            }
            ';' => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\\' => {
                chars.next();
            }
            _ => {}
        }
    }
    None
}

/// Lines of a text with the byte offset where each starts.
struct LineIter<'t> {
    text: &'t str,
    pos: usize,
}

impl<'t> LineIter<'t> {
    fn next(&mut self) -> Option<(&'t str, usize)> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        let rest = &self.text[start..];
        let (line, advance) = match rest.find('\n') {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.pos = start + advance;
        Some((line.strip_suffix('\r').unwrap_or(line), start))
    }
}
