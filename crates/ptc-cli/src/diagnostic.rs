//! Program errors as a person reads them: the message, and the source line with a caret under
//! the place it points at.

use std::io::IsTerminal;

use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use ptc_turn::TurnError;

/// `error` of the program `source` (named `origin`, e.g. the file), with the line it points
/// at. An error with no place is its one-line form.
pub fn program_error(source: &str, origin: &str, error: &ptc_lisp::Error) -> String {
    let range = error
        .span
        .map(|s| s.start as usize..s.end as usize)
        .or_else(|| {
            error
                .pos
                .and_then(|p| offset(source, p.line, p.col))
                .map(|start| start..token_end(source, start))
        });
    match range {
        Some(range) => annotated(source, origin, error.kind.as_str(), &error.message, range),
        None => error.render(),
    }
}

/// A turn's error, shown on the turn's program.
pub fn turn_error(program: &str, origin: &str, error: &TurnError) -> String {
    let place = match (error.line, error.col) {
        (Some(line), Some(col)) => offset(program, line, col),
        _ => None,
    };
    match place {
        Some(start) => annotated(
            program,
            origin,
            error.kind.as_str(),
            &error.message,
            start..token_end(program, start),
        ),
        None => format!("error[{}]: {}", error.kind, error.message),
    }
}

fn annotated(
    source: &str,
    origin: &str,
    kind: &str,
    message: &str,
    range: std::ops::Range<usize>,
) -> String {
    let end = range
        .end
        .min(source.len())
        .max(range.start.min(source.len()));
    let start = range.start.min(end);
    let report = [Level::ERROR.primary_title(message).id(kind).element(
        Snippet::source(source)
            .path(origin)
            .annotation(AnnotationKind::Primary.span(start..end)),
    )];
    let renderer = if std::io::stderr().is_terminal() {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    renderer.render(&report).to_string()
}

/// The byte offset of 1-based `line` and `col` (in characters), if the source has it.
fn offset(source: &str, line: u32, col: u32) -> Option<usize> {
    let line_start = if line <= 1 {
        0
    } else {
        source
            .match_indices('\n')
            .nth(usize::try_from(line).ok()? - 2)?
            .0
            + 1
    };
    let text = &source[line_start..];
    let line_text = &text[..text.find('\n').unwrap_or(text.len())];
    let col = usize::try_from(col).ok()?.max(1) - 1;
    match line_text.char_indices().nth(col) {
        Some((at, _)) => Some(line_start + at),
        None if col == line_text.chars().count() => Some(line_start + line_text.len()),
        None => None,
    }
}

/// The end of the token starting at `start`: a bracket alone, else up to the next space or
/// bracket.
fn token_end(source: &str, start: usize) -> usize {
    let rest = &source[start..];
    match rest.chars().next() {
        None => start,
        Some(c) if "()[]{}".contains(c) => start + c.len_utf8(),
        Some(_) => {
            start
                + rest
                    .find(|c: char| c.is_whitespace() || "()[]{}\",".contains(c))
                    .unwrap_or(rest.len())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_program_error_points_at_its_place() {
        let source = "(def x 1)\n(+ x undefined-thing)\n";
        let error = ptc_lisp::Runtime::new()
            .run_str(source, &ptc_lisp::UserNamespace::new())
            .outcome
            .error()
            .cloned()
            .expect("an error");
        assert_eq!(
            program_error(source, "prog.clj", &error),
            "error[undefined_symbol]: undefined symbol undefined-thing\n \
             --> prog.clj:2:6\n  |\n2 | (+ x undefined-thing)\n  |      ^^^^^^^^^^^^^^^"
        );
    }

    #[test]
    fn a_turn_error_is_placed_from_its_line_and_column() {
        let error = TurnError::new("type", "+ expects numbers").at(2, 3);
        assert_eq!(
            turn_error("(def a 1)\n(+ \"x\" a)", "turn 1", &error),
            "error[type]: + expects numbers\n --> turn 1:2:3\n  |\n2 | (+ \"x\" a)\n  |   ^"
        );
        assert_eq!(
            turn_error("(x)", "turn 1", &TurnError::new("no_program", "no code")),
            "error[no_program]: no code"
        );
    }

    #[test]
    fn places_outside_the_source_are_not_placed() {
        assert_eq!(offset("ab\ncd", 2, 3), Some(5));
        assert_eq!(offset("ab\ncd", 3, 1), None);
        assert_eq!(offset("ab", 1, 9), None);
        assert_eq!(offset("ä(x)", 1, 2), Some(2));
    }
}
