//! Values as a run shows them to the model and in traces: ptc-lisp's compact form, with a note
//! after a cut outermost collection saying how much of it was shown.

use ptc_lisp::{CollectionCut, Compact, Value};
use std::fmt::Write;

/// `value` in the compact form `compact` gives, followed by the note on a cut outermost
/// collection ([`push_cut_note`]).
///
/// ```
/// use ptc_lisp::{Compact, Value, read_value};
/// use ptc_turn::preview;
/// let v = Value::vector((1..=5).map(Value::Int));
/// assert_eq!(preview(&v, Compact::new(3, 80)), "[1 2 3 ...] (5 items, showing first 3)");
/// let user = read_value(r#"{:name "ada" :_token "s3cret"}"#).unwrap();
/// assert_eq!(
///     preview(&user, Compact::new(3, 80).with_firewall_hidden()),
///     r#"{:name "ada" :_token "[hidden]"}"#
/// );
/// ```
pub fn preview(value: &Value, compact: Compact) -> String {
    let mut text = String::new();
    push_preview(&mut text, value, compact);
    text
}

/// Appends [`preview`]'s text to `out`.
pub fn push_preview(out: &mut String, value: &Value, compact: Compact) {
    if let Some(cut) = compact.write(value, out) {
        push_cut_note(out, cut);
    }
}

/// Appends the note that follows a cut collection: ` (5 items, showing first 3)`.
///
/// ```
/// use ptc_lisp::CollectionCut;
/// let mut text = String::from("[...]");
/// ptc_turn::push_cut_note(&mut text, CollectionCut { total: 1, shown: 0 });
/// assert_eq!(text, "[...] (1 item, showing first 0)");
/// ```
pub fn push_cut_note(out: &mut String, cut: CollectionCut) {
    let items = if cut.total == 1 { "item" } else { "items" };
    let _ = write!(out, " ({} {items}, showing first {})", cut.total, cut.shown);
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    // TRN-001..TRN-005, SAM-003
    #[test]
    fn only_the_outermost_cut_collection_gets_a_note() {
        let cases = [
            (
                "[1 2 3 4 5 6 7 8 9 10]",
                "[1 2 3 ...] (10 items, showing first 3)",
            ),
            (r#"{:name "Alice" :age 30}"#, r#"{:name "Alice" :age 30}"#),
            ("[[1 2 3 4 5] nil]", "[[1 2 3 ...] nil]"),
            (
                "{:a 1 :b 2 :c 3 :d 4}",
                "{:a 1 :b 2 :c 3 ...} (4 items, showing first 3)",
            ),
        ];
        for (value, shown) in cases {
            let value = ptc_lisp::read_value(value).expect("a value");
            assert_eq!(preview(&value, Compact::new(3, 80)), shown);
        }
        let long = Value::string("x".repeat(100));
        assert_eq!(
            preview(&long, Compact::new(3, 80)),
            format!("\"{}...\"", "x".repeat(80))
        );
    }
}
