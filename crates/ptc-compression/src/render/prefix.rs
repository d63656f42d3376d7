//! The stable start of every first user message: the mission, the `tool/` section and the
//! `data/` section.

use super::parts::{DATA_HEADER, Detail, Parts, TOOL_HEADER, open_comment};
use super::sample::{push_record, push_sample, sample_adds_information};
use crate::output::push_one_line;
use crate::render_options::RenderOptions;
use crate::schema;
use crate::vocabulary::TypeVocabulary;
use ptc_lisp::{Compact, is_firewalled_name};
use ptc_lisp::{Value, ValueShape};

/// `;; === tool/ ===` and one line per tool.
pub(crate) fn write_tools(out: &mut String, opts: &RenderOptions<'_>, detail: Detail) {
    if opts.tools.is_empty() {
        return;
    }
    out.push_str(TOOL_HEADER);
    for tool in opts.tools {
        out.push('\n');
        let line = out.len();
        out.push_str("(tool/");
        out.push_str(&tool.name);
        for param in &tool.params {
            out.push(' ');
            out.push_str(param);
        }
        out.push(')');
        let signature = tool.signature.as_deref().filter(|s| !s.trim().is_empty());
        let description = match detail {
            Detail::Full => Some(tool.description.trim()).filter(|d| !d.is_empty()),
            Detail::Minimal => None,
        };
        if signature.is_some() || description.is_some() {
            open_comment(out, line);
        }
        if let Some(signature) = signature {
            push_one_line(out, signature.trim());
            if description.is_some() {
                out.push_str(" -- ");
            }
        }
        if let Some(description) = description {
            push_one_line(out, description);
        }
    }
}

/// The most characters of the schema line of a large input.
const SCHEMA_CHARS: usize = 1_500;

/// `;; === data/ ===` and one line per input: a small input whole, as the program sees it; a
/// large list of records by its shape over all of its items and its first record; anything
/// else by its type and a sample. Data is shown whether or not the program printed, so this
/// section never changes between turns.
pub(crate) fn write_data(out: &mut String, opts: &RenderOptions<'_>, detail: Detail) {
    if opts.data.is_empty() {
        return;
    }
    out.push_str(DATA_HEADER);
    for (name, value) in opts.data {
        out.push('\n');
        let line = out.len();
        out.push_str("data/");
        out.push_str(name);
        open_comment(out, line);
        if is_firewalled_name(name) {
            // A firewalled input is for programs only: its name and type, never its content.
            TypeVocabulary::write_label(out, ValueShape::of(value));
            out.push_str(", hidden");
        } else if detail == Detail::Minimal {
            TypeVocabulary::write_label(out, ValueShape::of(value));
        } else if !push_whole(out, value, opts.limits.data_inline_chars) {
            if schema::describable(value) {
                schema::write_schema(out, value, SCHEMA_CHARS);
                if let Value::List(items) | Value::Vector(items) = value
                    && let Some(Value::Map(first)) = items.iter().next()
                {
                    out.push_str("; first: ");
                    push_record(out, first, &opts.limits);
                }
            } else {
                TypeVocabulary::write_label(out, ValueShape::of(value));
                if sample_adds_information(value) {
                    out.push_str(", sample: ");
                    push_sample(out, value, &opts.limits);
                }
            }
        }
        let description = opts
            .data_descriptions
            .get(name)
            .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|d| detail == Detail::Full && !d.is_empty());
        if let Some(description) = description {
            out.push_str(" -- ");
            out.push_str(&description);
        }
    }
}

/// `list[3], whole: [...]` or `string = "R-13"`: the value whole, as a program sees it
/// (firewalled entries hidden), when
/// that takes at most `chars` characters; otherwise nothing, and `false`.
fn push_whole(out: &mut String, value: &Value, chars: usize) -> bool {
    if chars == 0 {
        return false;
    }
    let start = out.len();
    let shape = ValueShape::of(value);
    TypeVocabulary::write_label(out, shape);
    // A collection says it is all there, so that it is not taken for a sample.
    out.push_str(match shape {
        ValueShape::List(_) | ValueShape::Map(_) | ValueShape::Set(_) => ", whole: ",
        _ => " = ",
    });
    let before = out.len();
    // One more item and character than the budget could show, so that a cut means "too big".
    Compact::new(chars + 1, chars + 1)
        .with_firewall_hidden()
        .write(value, out);
    let fits = out[before..].chars().count() <= chars && !out[before..].contains('\n');
    if !fits {
        out.truncate(start);
    }
    fits
}

/// The stable start of every first user message: the mission, `tool/` and `data/`.
pub(crate) fn write_prefix(parts: &mut Parts<'_>, opts: &RenderOptions<'_>, detail: Detail) {
    parts.part(|out| out.push_str(opts.mission));
    parts.part(|out| write_tools(out, opts, detail));
    parts.part(|out| write_data(out, opts, detail));
}
