//! Values shown as samples: a record with all its keys, a collection cut to its first items.

use crate::render_options::RenderLimits;
use ptc_lisp::{CollectionCut, Compact, HIDDEN, is_firewalled_key};
use ptc_lisp::{Value, ValueShape};
use ptc_turn::{push_cut_note, push_preview};

/// Keys shown of a record in a sample: enough for any record a tool returns, while a map used
/// as a lookup table (thousands of ids) still stays one line.
const RECORD_KEYS: usize = 30;

/// A value as a sample: collections cut to `sample_limit` items and strings to
/// `sample_printable_limit` characters, except that a record (a map, or the first map of a list)
/// shows every key, so the model sees the shape of the data without printing it. Values inside
/// a record are cut as usual.
pub(crate) fn push_sample(out: &mut String, value: &Value, limits: &RenderLimits) {
    match value {
        Value::Map(map) => push_record(out, map, limits),
        Value::List(items) | Value::Vector(items)
            if matches!(items.iter().next(), Some(Value::Map(_))) =>
        {
            let (open, close) = match value {
                Value::List(_) => ("(", ")"),
                _ => ("[", "]"),
            };
            let len = items.len();
            let shown = limits.sample_limit.min(len);
            out.push_str(open);
            for (i, item) in items.iter().take(shown).enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                match item {
                    Value::Map(map) if i == 0 => push_record(out, map, limits),
                    other => push_inner(out, other, limits),
                }
            }
            if shown < len {
                if shown > 0 {
                    out.push(' ');
                }
                out.push_str("...");
                out.push_str(close);
                push_cut_note(out, CollectionCut { total: len, shown });
            } else {
                out.push_str(close);
            }
        }
        other => push_preview(out, other, sample_form(limits)),
    }
}

/// The compact form of samples: every part a sample shows has its firewalled entries hidden.
fn sample_form(limits: &RenderLimits) -> Compact {
    Compact::new(limits.sample_limit, limits.sample_printable_limit).with_firewall_hidden()
}

/// `{:key value ...}` with every key (up to [`RECORD_KEYS`]).
pub(super) fn push_record(out: &mut String, map: &ptc_lisp::Map, limits: &RenderLimits) {
    let len = map.len();
    let shown = len.min(RECORD_KEYS);
    out.push('{');
    for (i, (key, value)) in map.iter().take(shown).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        push_inner(out, key, limits);
        out.push(' ');
        if is_firewalled_key(key) && !matches!(value, Value::Nil) {
            push_inner(out, &Value::string(HIDDEN), limits);
        } else {
            push_inner(out, value, limits);
        }
    }
    if shown < len {
        out.push_str(" ...}");
        push_cut_note(out, CollectionCut { total: len, shown });
    } else {
        out.push('}');
    }
}

/// A value inside a sample: cut like a sample, without the note on how much was cut (only the
/// outermost collection gets one).
fn push_inner(out: &mut String, value: &Value, limits: &RenderLimits) {
    sample_form(limits).write(value, out);
}

/// A value as prompts show it: cut to `items` per collection and `chars` characters per
/// string, with firewalled fields hidden.
pub(super) fn push_value(out: &mut String, value: &Value, items: usize, chars: usize) {
    push_preview(
        out,
        value,
        Compact::new(items, chars).with_firewall_hidden(),
    );
}

/// Whether a sample tells more than the type label: not for `nil` or an empty collection
/// (`x = nil`, `x = list[0]`), nor for functions.
pub(super) fn sample_adds_information(value: &Value) -> bool {
    !matches!(
        ValueShape::of(value),
        ValueShape::Nil
            | ValueShape::List(0)
            | ValueShape::Map(0)
            | ValueShape::Set(0)
            | ValueShape::Function
    )
}
