//! Type labels: the one place where the words used for value types in summaries are defined.

use ptc_lisp::{Value, ValueShape};
use std::fmt::Write;

/// Labels values by type for summaries: `list[3]`, `map[0]`, `set[2]`, `string`, `integer`,
/// `float`, `boolean`, `keyword`, `nil`, `#fn[...]`. Lists and vectors are both
/// `list[N]`. Kinds the requirements do not name get their own plain word: `char`, `symbol`,
/// `regex`, `var`, `lazy-seq`, `ratio`, `decimal` (a big integer is an `integer`).
///
/// ```
/// use ptc_compression::TypeVocabulary;
/// use ptc_lisp::Value;
/// assert_eq!(TypeVocabulary::type_of(&Value::vector([1.into(), 2.into()])), "list[2]");
/// assert_eq!(TypeVocabulary::type_of(&Value::string("hi")), "string");
/// ```
pub struct TypeVocabulary;

impl TypeVocabulary {
    /// The label of a value.
    pub fn type_of(value: &Value) -> String {
        TypeVocabulary::label(ValueShape::of(value))
    }

    /// The label of a value's shape (for values no longer at hand, such as a function's last
    /// return value).
    pub fn label(shape: ValueShape) -> String {
        let mut out = String::new();
        TypeVocabulary::write_label(&mut out, shape);
        out
    }

    /// A count as summaries write it, with thousands separators: `1,234,567`.
    pub(crate) fn grouped(n: u64) -> String {
        let digits = n.to_string();
        let mut out = String::with_capacity(digits.len() + digits.len() / 3);
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    /// Append what a value is and how big: `a string of 3,803 characters`, `a list of 22
    /// items`, `a map of 6 entries`, `a set of 2 items`; for any other value, its label.
    pub(crate) fn write_size(out: &mut String, value: &Value) {
        let (what, count, unit) = match ValueShape::of(value) {
            ValueShape::String => (
                "a string",
                value.as_str().map_or(0, |s| s.chars().count()),
                "character",
            ),
            ValueShape::List(n) => ("a list", n, "item"),
            ValueShape::Map(n) => ("a map", n, "entry"),
            ValueShape::Set(n) => ("a set", n, "item"),
            shape => return TypeVocabulary::write_label(out, shape),
        };
        let _ = write!(out, "{what} of {}", TypeVocabulary::grouped(count as u64));
        match (count, unit) {
            (1, unit) => {
                let _ = write!(out, " {unit}");
            }
            (_, "entry") => out.push_str(" entries"),
            (_, unit) => {
                let _ = write!(out, " {unit}s");
            }
        }
    }

    /// Append the label of `shape` to `out` (the allocation-free form used while rendering).
    pub(crate) fn write_label(out: &mut String, shape: ValueShape) {
        let (word, size) = match shape {
            ValueShape::Nil => ("nil", None),
            ValueShape::Boolean => ("boolean", None),
            ValueShape::Integer => ("integer", None),
            ValueShape::Float => ("float", None),
            ValueShape::String => ("string", None),
            ValueShape::Char => ("char", None),
            ValueShape::Keyword => ("keyword", None),
            ValueShape::Symbol => ("symbol", None),
            ValueShape::List(n) => ("list", Some(n)),
            ValueShape::Map(n) => ("map", Some(n)),
            ValueShape::Set(n) => ("set", Some(n)),
            // TYP-011: the simplest closure form; a function's name and arity add nothing a
            // summary line does not already show.
            ValueShape::Function => ("#fn[...]", None),
            ValueShape::Regex => ("regex", None),
            ValueShape::Var => ("var", None),
            ValueShape::LazySeq => ("lazy-seq", None),
            ValueShape::Date => ("date", None),
            ValueShape::Ratio => ("ratio", None),
            ValueShape::Decimal => ("decimal", None),
            ValueShape::Uuid => ("uuid", None),
            ValueShape::TaggedLiteral => ("tagged-literal", None),
        };
        out.push_str(word);
        if let Some(n) = size {
            let _ = write!(out, "[{n}]");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ptc_lisp::Function;

    fn kw(s: &str) -> Value {
        Value::keyword(s)
    }

    #[test]
    fn every_required_type_has_its_label() {
        let opaque_fn = Value::Fn(Function::read_back("#fn[double]"));
        let cases: Vec<(&str, Value, &str)> = vec![
            ("TYP-001", Value::vector([]), "list[0]"),
            ("TYP-001", Value::empty_list(), "list[0]"),
            (
                "TYP-002",
                Value::vector([1.into(), 2.into(), 3.into()]),
                "list[3]",
            ),
            ("TYP-002", Value::list([1.into()]), "list[1]"),
            ("TYP-003", Value::map([]), "map[0]"),
            ("TYP-004", Value::map([(kw("a"), 1.into())]), "map[1]"),
            ("TYP-005", Value::string("hello"), "string"),
            ("TYP-006", Value::Int(42), "integer"),
            ("TYP-007", Value::Float(2.5), "float"),
            ("TYP-008", Value::Bool(true), "boolean"),
            ("TYP-008", Value::Bool(false), "boolean"),
            ("TYP-009", kw("active"), "keyword"),
            ("TYP-010", Value::Nil, "nil"),
            ("TYP-011", opaque_fn, "#fn[...]"),
            (
                "TYP-012",
                Value::set([1.into(), 2.into(), 3.into()]),
                "set[3]",
            ),
            ("", Value::Char('a'), "char"),
            ("", Value::symbol("x"), "symbol"),
            ("", ptc_lisp::BigNumber::int(7), "integer"),
            ("", ptc_lisp::BigNumber::decimal(150, 2), "decimal"),
            (
                "",
                ptc_lisp::BigNumber::ratio(1.into(), 3.into()).expect("a ratio"),
                "ratio",
            ),
        ];
        for (id, value, label) in cases {
            assert_eq!(TypeVocabulary::type_of(&value), label, "{id}");
        }
    }

    #[test]
    fn shapes_are_labelled_like_the_values_they_describe() {
        assert_eq!(TypeVocabulary::label(ValueShape::Map(2)), "map[2]");
        assert_eq!(TypeVocabulary::label(ValueShape::Function), "#fn[...]");
        assert_eq!(TypeVocabulary::label(ValueShape::LazySeq), "lazy-seq");
    }

    #[test]
    fn sizes_name_the_kind_and_count_its_parts() {
        let size = |value: &Value| {
            let mut out = String::new();
            TypeVocabulary::write_size(&mut out, value);
            out
        };
        assert_eq!(
            size(&Value::string("x".repeat(3_803))),
            "a string of 3,803 characters"
        );
        assert_eq!(size(&Value::string("é")), "a string of 1 character");
        assert_eq!(
            size(&Value::vector([1.into(), 2.into()])),
            "a list of 2 items"
        );
        assert_eq!(size(&Value::map([(kw("a"), 1.into())])), "a map of 1 entry");
        assert_eq!(size(&Value::map([])), "a map of 0 entries");
        assert_eq!(size(&Value::set([1.into()])), "a set of 1 item");
        assert_eq!(size(&Value::Int(7)), "integer");
        assert_eq!(TypeVocabulary::grouped(1_234_567), "1,234,567");
        assert_eq!(TypeVocabulary::grouped(950), "950");
    }
}
