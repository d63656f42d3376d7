//! Rewriting a golden case file with the actual results (the test runners' update mode).

/// `text` with each case's expectation lines replaced by the matching block of `actual` (whose
/// first line, the case's label, is skipped). A case or turn begins at a line for which
/// `starts_block` holds; `is_expectation` picks the lines to replace.
pub fn rewrite(
    text: &str,
    actual: &[String],
    starts_block: impl Fn(&str) -> bool,
    is_expectation: impl Fn(&str) -> bool,
) -> String {
    let mut actual = actual.iter().map(|block| {
        block
            .lines()
            .skip(1)
            .map(str::to_string)
            .collect::<Vec<_>>()
    });
    let mut out = String::new();
    let mut pending: Option<Vec<String>> = None;
    let flush = |out: &mut String, pending: &mut Option<Vec<String>>| {
        if let Some(lines) = pending.take() {
            for l in lines {
                out.push_str(&l);
                out.push('\n');
            }
        }
    };
    for line in text.lines() {
        if starts_block(line) {
            flush(&mut out, &mut pending);
            pending = actual.next();
            out.push_str(line);
            out.push('\n');
            continue;
        }
        if is_expectation(line) {
            continue;
        }
        if line.trim().is_empty() {
            flush(&mut out, &mut pending);
        }
        out.push_str(line);
        out.push('\n');
    }
    flush(&mut out, &mut pending);
    out
}
