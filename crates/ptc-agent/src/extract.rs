//! Taking the program out of a model's reply.

/// Fence languages that hold a program (compared without regard to case).
const LANGUAGES: [&str; 2] = ["clojure", "lisp"];

/// The program in a model's reply, or `None` when it has none:
///
/// * the contents of every ```` ```clojure ```` or ```` ```lisp ```` fence, in order, joined by
///   a blank line (a fence left open at the end of the reply runs to the end);
/// * otherwise the whole reply, when it starts with `(` (a bare program).
///
/// Text around fences is ignored, and so are fences in other languages. Curly quotes,
/// zero-width characters and non-breaking spaces outside string literals are then made
/// readable ([`normalize_program`](crate::normalize_program)).
///
/// ```
/// use ptc_agent::extract_program;
///
/// let reply = "First the data.\n```clojure\n(def xs [1 2])\n```\nThen:\n```lisp\n(count xs)\n```";
/// assert_eq!(extract_program(reply).as_deref(), Some("(def xs [1 2])\n\n(count xs)"));
/// assert_eq!(extract_program("  (+ 1 2)\n").as_deref(), Some("(+ 1 2)"));
/// assert_eq!(extract_program("I cannot do that."), None);
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
    let blocks = fenced_blocks(reply);
    if !blocks.is_empty() {
        let program = blocks
            .iter()
            .map(|b| b.trim_matches(['\n', '\r']))
            .filter(|b| !b.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        return (!program.trim().is_empty()).then(|| program.trim().to_string());
    }
    let trimmed = reply.trim();
    trimmed.starts_with('(').then(|| trimmed.to_string())
}

/// The contents of the program fences of `text`, in order.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut lines = LineIter { text, pos: 0 };
    while let Some((line, _)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let language = info.trim();
        let is_program = LANGUAGES.iter().any(|l| language.eq_ignore_ascii_case(l));
        // Skip the fence's contents either way, so a fence of another language that shows
        // a program fence inside it is not mistaken for one.
        let start = lines.pos;
        let mut end = text.len();
        while let Some((line, line_start)) = lines.next() {
            if line.trim() == "```" {
                end = line_start;
                break;
            }
        }
        if is_program {
            blocks.push(&text[start..end]);
        }
    }
    blocks
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn one_fence_with_prose_around_it() {
        let reply = "Let me count them.\n\n```clojure\n(count data/users)\n```\nThat should do.";
        assert_eq!(
            extract_program(reply).as_deref(),
            Some("(count data/users)")
        );
    }

    #[test]
    fn several_fences_are_joined_in_order() {
        let reply =
            "```clojure\n(def a 1)\n```\ntext\n```lisp\n(def b 2)\n```\n```clojure\n(+ a b)\n```";
        assert_eq!(
            extract_program(reply).as_deref(),
            Some("(def a 1)\n\n(def b 2)\n\n(+ a b)")
        );
    }

    #[test]
    fn fence_languages_are_matched_exactly_without_case() {
        assert_eq!(
            extract_program("```Clojure\n(inc 1)\n```").as_deref(),
            Some("(inc 1)")
        );
        // Other languages are not programs, and nothing inside them is read as a fence.
        let reply = "```python\nprint(1)\n```\n```markdown\n```clojure\n(x)\n```";
        assert_eq!(extract_program(reply), None);
        assert_eq!(extract_program("```clojurescript\n(x)\n```"), None);
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        assert_eq!(
            extract_program("```clojure\n(def a 1)\n(return a)").as_deref(),
            Some("(def a 1)\n(return a)")
        );
    }

    #[test]
    fn a_bare_program_is_the_whole_reply() {
        assert_eq!(
            extract_program("\n(def a 1)\n(return a)\n").as_deref(),
            Some("(def a 1)\n(return a)")
        );
        // Prose first means it is not a bare program.
        assert_eq!(extract_program("Here: (return 1)"), None);
    }

    #[test]
    fn replies_without_code() {
        assert_eq!(extract_program(""), None);
        assert_eq!(extract_program("I need more information."), None);
        assert_eq!(extract_program("```clojure\n\n```"), None);
        // An unlabelled fence is not a program fence.
        assert_eq!(extract_program("```\n(+ 1 2)\n```"), None);
    }

    #[test]
    fn windows_line_endings() {
        assert_eq!(
            extract_program("Hi\r\n```clojure\r\n(+ 1 2)\r\n```\r\n").as_deref(),
            Some("(+ 1 2)")
        );
    }
}
