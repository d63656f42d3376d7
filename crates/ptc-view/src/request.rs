//! One model request, as HTML: its tokens as a bar and in numbers, its modelled bill under each
//! pricing profile beside the full history's, and the messages the model saw.

use std::fmt::Write;

use ptc_compression::BillComparison;
use ptc_compression::cost::token_count_text;
use ptc_turn::{Message, Role, TokenUsage};

use crate::escape::{html, push_html};
use crate::figures::RequestFigures;

/// The four kinds of token of a request, in the order of the bar: class, label, count.
fn segments(tokens: &TokenUsage) -> [(&'static str, &'static str, u64); 4] {
    [
        ("input", "input", tokens.input_tokens),
        ("cache-read", "cache read", tokens.cache_read_tokens),
        ("cache-write", "cache write", tokens.cache_write_tokens),
        ("output", "output", tokens.output_tokens),
    ]
}

/// The request that produced turn `request.turn` (the `index`th of the run); `widest` is the
/// largest token total of any request of the run, the full width of a bar; `previous` is the
/// messages the request before sent, which this one's are shown against.
pub fn section(
    out: &mut String,
    request: &RequestFigures,
    index: usize,
    widest: u64,
    bills: &[BillComparison],
    messages: &[Message],
    previous: &[Message],
) {
    let _ = writeln!(
        out,
        "<section class=\"request\" data-request=\"{}\">\n<h3>Request {}: what the model saw and what it cost</h3>",
        index + 1,
        index + 1
    );
    tokens(out, &request.tokens, widest);
    bill(out, index, bills);
    folded(out, request);
    if let Some(rendered) = &request.rendered {
        let _ = writeln!(
            out,
            "<details class=\"messages\"><summary>The request as the strategy renders it ({} messages; the step recorded none)</summary>",
            rendered.len()
        );
        message_list(out, rendered, 0);
        out.push_str("</details>\n");
    } else {
        let shared = messages
            .iter()
            .zip(previous)
            .take_while(|(a, b)| a == b)
            .count();
        let _ = write!(
            out,
            "<details class=\"messages\"><summary>The request as sent: <span data-figure=\"messages\">{}</span> messages",
            messages.len()
        );
        if shared > 0 {
            let _ = write!(
                out,
                " (the first {shared} as in request {}; the {} after them shown)",
                index,
                messages.len() - shared
            );
        }
        out.push_str("</summary>\n");
        message_list(out, &messages[shared..], shared);
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

/// The request's tokens: a bar (each kind its own pattern, as wide as its share of `widest`)
/// and a line of numbers.
fn tokens(out: &mut String, tokens: &TokenUsage, widest: u64) {
    let parts = segments(tokens);
    let label: Vec<String> = parts
        .iter()
        .map(|(_, name, count)| format!("{name} {}", token_count_text(*count as f64)))
        .collect();
    let _ = write!(
        out,
        "<div class=\"bar\" role=\"img\" aria-label=\"tokens: {}\">",
        label.join(", ")
    );
    for (class, name, count) in parts {
        if count == 0 || widest == 0 {
            continue;
        }
        let share = count as f64 * 100.0 / widest as f64;
        let _ = write!(
            out,
            "<span class=\"seg-{class}\" style=\"width:{share:.2}%\" title=\"{name}: {count}\"></span>"
        );
    }
    out.push_str("</div>\n<p class=\"tokens\">Tokens reported: ");
    for (i, (class, name, count)) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(
            out,
            "<span class=\"key seg-{class}\"></span>{name} <span data-figure=\"{class}-tokens\" data-value=\"{count}\">{}</span>",
            token_count_text(*count as f64)
        );
    }
    out.push_str("</p>\n");
}

/// The request's modelled bill under each profile, beside the full history's.
fn bill(out: &mut String, index: usize, bills: &[BillComparison]) {
    out.push_str(
        "<table class=\"request-bill\"><caption>Modelled bill (billed-equivalent input tokens, estimated at 4 characters a token)</caption>\n\
         <tr><th scope=\"col\">pricing</th><th scope=\"col\">input</th><th scope=\"col\">cache read</th><th scope=\"col\">cache write</th><th scope=\"col\">billed</th><th scope=\"col\">full history billed</th></tr>\n",
    );
    for comparison in bills {
        let (Some(cost), Some(full)) = (
            comparison.strategy.requests.get(index),
            comparison.full_history.requests.get(index),
        ) else {
            continue;
        };
        let profile = comparison.strategy.profile.to_string();
        let _ = writeln!(
            out,
            "<tr data-pricing=\"{}\"><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td><td data-figure=\"billed\" data-value=\"{}\">{}</td><td data-figure=\"full-history-billed\" data-value=\"{}\">{}</td></tr>",
            html(&profile),
            html(&profile),
            token_count_text(cost.input_tokens as f64),
            token_count_text(cost.cache_read_tokens as f64),
            token_count_text(cost.cache_write_tokens as f64),
            cost.billed,
            token_count_text(cost.billed),
            full.billed,
            token_count_text(full.billed),
        );
    }
    out.push_str("</table>\n");
}

/// What the strategy's rendering of the turns before folded or dropped, against the full
/// history.
fn folded(out: &mut String, request: &RequestFigures) {
    let s = &request.stats;
    let _ = writeln!(
        out,
        "<p class=\"folded\">The strategy ({}) renders the {} turn{} before as {} characters (about {} tokens) against the full history's {} (about {}): {} turn{} summarized, {} of {} tool calls and {} of {} printed lines dropped, {} failed turn{} collapsed.</p>",
        html(&s.strategy),
        s.turns,
        plural(s.turns),
        token_count_text(s.chars as f64),
        token_count_text(s.estimated_tokens as f64),
        token_count_text(s.uncompressed_chars as f64),
        token_count_text(s.uncompressed_estimated_tokens as f64),
        s.turns_compressed,
        plural(s.turns_compressed),
        s.tool_calls_dropped,
        s.tool_calls_total,
        s.prints_dropped,
        s.prints_total,
        s.failed_turns_collapsed,
        plural(s.failed_turns_collapsed),
    );
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Each message under its role and number (`first` messages come before these).
fn message_list(out: &mut String, messages: &[Message], first: usize) {
    for (i, message) in messages.iter().enumerate() {
        let _ = write!(
            out,
            "<div class=\"message\"><span class=\"role\">{} {}</span>",
            first + i + 1,
            message.role.as_str()
        );
        if message.role == Role::System {
            let _ = write!(
                out,
                "<details><summary>the system prompt ({} characters)</summary><pre>",
                message.content.chars().count()
            );
            push_html(out, &message.content);
            out.push_str("</pre></details>");
        } else {
            out.push_str("<pre>");
            push_html(out, &message.content);
            out.push_str("</pre>");
        }
        for call in &message.tool_calls {
            out.push_str("<div class=\"tool-call\">asks for <code>");
            push_html(out, &call.name);
            out.push_str("</code> with <code>");
            push_html(out, &call.arguments.to_string());
            out.push_str("</code></div>");
        }
        out.push_str("</div>\n");
    }
}
