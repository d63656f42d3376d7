//! What one turn's program did, as HTML: the program, its tool calls with their arguments and
//! results, what it printed, its value or its error with a caret under the place, and the
//! definitions it made or changed.

use std::fmt::Write;

use ptc_lisp::{Definition, ToolOutcome, pr_str};
use ptc_turn::{Turn, TurnError, TurnResult};

use crate::escape::{bounded, html, push_html};
use crate::highlight;

/// Characters of a value shown before the rest is cut (with a note of the full length).
pub const VALUE_CHARS: usize = 20_000;

/// Values longer than this are shown collapsed under their first characters.
pub const COLLAPSE_ABOVE: usize = 160;

/// The turn's program, or its reply when it held no program.
pub fn program(out: &mut String, turn: &Turn) {
    if turn.program().trim().is_empty() {
        out.push_str("<h3>Reply (no program in it)</h3>\n<pre class=\"reply\">");
        push_bounded(out, turn.raw_response());
        out.push_str("</pre>\n");
        return;
    }
    out.push_str("<h3>Program</h3>\n<pre class=\"program\"><code>");
    out.push_str(&highlight::program(turn.program()));
    out.push_str("</code></pre>\n");
    if turn.reply_cut_off() {
        let _ = writeln!(
            out,
            "<p class=\"status error\">The reply was cut off at the token limit (stop reason: {}).</p>",
            html(turn.stop_reason().unwrap_or_default())
        );
    }
}

/// The turn's tool calls, output, value or error, and definitions.
pub fn effects(out: &mut String, turn: &Turn, before: Option<&Turn>) {
    let calls = turn.tool_calls();
    if !calls.is_empty() {
        let _ = writeln!(
            out,
            "<h3>Tool calls (<span data-figure=\"tool-calls\">{}</span>)</h3>\n<ol class=\"calls\">",
            calls.len()
        );
        for call in calls {
            let args: Vec<String> = call.args.iter().map(pr_str).collect();
            out.push_str("<li class=\"call\"><code class=\"tool\">");
            push_html(out, &call.name);
            out.push_str("</code>");
            let (result, failed) = match &call.result {
                ToolOutcome::Ok(value) => (pr_str(value), false),
                ToolOutcome::Error(message) => (message.clone(), true),
            };
            let _ = write!(
                out,
                " <span class=\"muted\">({})</span>",
                html(&micros(call.duration_us))
            );
            value_block(out, "arguments", &args.join(" "));
            value_block(out, if failed { "error" } else { "result" }, &result);
            out.push_str("</li>\n");
        }
        out.push_str("</ol>\n");
    }
    if !turn.prints().is_empty() {
        out.push_str("<h3>Output</h3>\n<pre class=\"output\">");
        push_bounded(out, &turn.prints().join("\n"));
        out.push_str("</pre>\n");
    }
    match turn.result() {
        TurnResult::Value(value) => {
            out.push_str("<h3>Value</h3>\n");
            value_block(out, "value", &pr_str(value));
        }
        TurnResult::Error(error) => {
            out.push_str("<h3>Error</h3>\n<pre class=\"error\">");
            push_html(out, &error_text(turn.program(), error));
            out.push_str("</pre>\n");
        }
    }
    let made = made_definitions(turn, before);
    if !made.is_empty() {
        out.push_str("<h3>Definitions made</h3>\n<ul class=\"definitions\">\n");
        for definition in made {
            out.push_str("<li><code>");
            push_html(out, &definition.name);
            for params in &definition.params {
                out.push(' ');
                push_html(out, params);
            }
            out.push_str("</code>");
            if let Some(doc) = &definition.doc {
                out.push_str(": ");
                push_html(out, doc);
            }
            if definition.params.is_empty() {
                value_block(out, "value", &pr_str(&definition.value));
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n");
    }
}

/// The error, and under the program line it points to, a caret at its column.
pub fn error_text(program: &str, error: &TurnError) -> String {
    let mut text = format!("{}: {}", error.kind, error.message);
    if let Some(line) = error.line {
        let col = error.col.unwrap_or(1);
        let _ = write!(text, "\n  at line {line}, column {col}");
        if let Some(source) = program.lines().nth((line as usize).saturating_sub(1)) {
            let pad = " ".repeat(col.saturating_sub(1) as usize);
            let _ = write!(text, "\n{line:>4} | {source}\n     | {pad}^");
        }
    }
    text
}

/// The definitions `turn` added or changed, against the namespace after `before`.
fn made_definitions<'t>(turn: &'t Turn, before: Option<&Turn>) -> Vec<&'t Definition> {
    let earlier = before.map_or(&[][..], Turn::memory);
    turn.memory()
        .iter()
        .filter(|d| !earlier.contains(d))
        .collect()
}

/// A value under its label: inline when short, collapsed under its start when long.
fn value_block(out: &mut String, label: &str, text: &str) {
    let class = label.replace(' ', "-");
    if text.chars().count() <= COLLAPSE_ABOVE && !text.contains('\n') {
        let _ = write!(
            out,
            "<div class=\"{class}\"><span class=\"muted\">{label}:</span> <code>{}</code></div>",
            html(text)
        );
        return;
    }
    let (start, _) = bounded(text, 80);
    let _ = write!(
        out,
        "<details class=\"{class}\"><summary><span class=\"muted\">{label} ({} characters):</span> <code>{}…</code></summary><pre>",
        text.chars().count(),
        html(&start.replace('\n', " "))
    );
    push_bounded(out, text);
    out.push_str("</pre></details>");
}

/// `text` escaped, cut at [`VALUE_CHARS`] characters with a note of its full length.
fn push_bounded(out: &mut String, text: &str) {
    let (shown, total) = bounded(text, VALUE_CHARS);
    push_html(out, shown);
    if let Some(total) = total {
        let _ = write!(
            out,
            "\n… (cut: {VALUE_CHARS} of {total} characters shown; the step holds all of them)"
        );
    }
}

/// A time in microseconds as a person reads it.
pub fn micros(us: u64) -> String {
    ptc_agent::HumanDuration(std::time::Duration::from_micros(us)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_caret_stands_under_the_column() {
        let error = TurnError::new("undefined_symbol", "y is not defined").at(2, 4);
        assert_eq!(
            error_text("(def x 1)\n(+ y 1)", &error),
            "undefined_symbol: y is not defined\n  at line 2, column 4\n   2 | (+ y 1)\n     |    ^"
        );
    }

    #[test]
    fn an_error_without_a_place_has_no_caret() {
        let error = TurnError::new("timeout", "the program ran out of time");
        assert_eq!(
            error_text("(loop [] (recur))", &error),
            "timeout: the program ran out of time"
        );
    }
}
