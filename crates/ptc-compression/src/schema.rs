//! The shape of a large input over all of its items: what a model needs to write a program for
//! data it cannot be shown whole. A sample of three records says nothing of the statuses the
//! other twenty thousand have, of a field only some records carry, or of the range of a number;
//! this walks every item once and says so in one line:
//!
//! ```text
//! list[20000] of maps {:id string, :status one of "delivered" "returned" "pending",
//!   :total float 1.99..998.5, :lines list of maps {:sku string, :qty integer 1..5},
//!   :note string (in 120 of 20000)}
//! ```

use std::fmt::Write as _;

use ptc_lisp::{Value, ValueShape};

use crate::output::push_one_line;
use crate::vocabulary::TypeVocabulary;

/// Distinct values of a text field listed as its choices: more, and it is just `string`.
const CHOICES: usize = 8;
/// Characters of one listed choice.
const CHOICE_CHARS: usize = 24;
/// How deep records inside records are described.
const DEPTH: usize = 3;
/// Items looked at per list, so that describing a huge input stays cheap.
const ITEMS: usize = 100_000;

/// What the items of one field (or of a list) hold, over every item looked at.
#[derive(Default)]
struct Column {
    /// How many items have it.
    present: usize,
    /// The kinds seen, in the order first seen.
    kinds: Vec<&'static str>,
    /// Text values seen, while there are at most [`CHOICES`] (`None` once there are more).
    choices: Option<Vec<String>>,
    /// The smallest and largest number seen.
    range: Option<(Value, Value)>,
    /// The items of lists of this field, described together.
    items: Option<Box<Record>>,
}

/// The fields of maps, in the order first seen, described over every map.
#[derive(Default)]
struct Record {
    maps: usize,
    /// The values that are not maps (a list of mostly maps may hold others).
    others: Column,
    fields: Vec<(Value, Column)>,
}

/// Whether a list should be described by its schema: a list of maps.
pub(crate) fn describable(value: &Value) -> bool {
    matches!(value, Value::List(items) | Value::Vector(items)
        if items.iter().next().is_some_and(|v| matches!(v, Value::Map(_))))
}

/// `list[N] of maps {...}`: the schema of a list of maps, over all of its items; at most
/// `chars` characters (then it ends with `...}`).
pub(crate) fn write_schema(out: &mut String, value: &Value, chars: usize) {
    let (Value::List(items) | Value::Vector(items)) = value else {
        return;
    };
    let mut record = Record::default();
    for item in items.iter().take(ITEMS) {
        record.add(item, 0);
    }
    let start = out.len();
    TypeVocabulary::write_label(out, ValueShape::of(value));
    out.push_str(" of ");
    record.write(out, items.len().min(ITEMS), 0);
    let written = out[start..].chars().count();
    if written > chars {
        let cut = out[start..]
            .char_indices()
            .nth(chars.saturating_sub(4))
            .map_or(out.len(), |(i, _)| start + i);
        out.truncate(cut);
        out.push_str("...}");
    }
}

impl Record {
    fn add(&mut self, value: &Value, depth: usize) {
        let Value::Map(map) = value else {
            self.others.add(value, depth);
            return;
        };
        self.maps += 1;
        for (key, field) in map.iter() {
            let column = match self.fields.iter().position(|(k, _)| k == key) {
                Some(i) => &mut self.fields[i].1,
                None => {
                    self.fields.push((key.clone(), Column::new()));
                    let last = self.fields.len() - 1;
                    &mut self.fields[last].1
                }
            };
            column.add(field, depth);
        }
    }

    /// `maps {:a string, :b integer 1..5 (in 3 of 10)}`, the maps counted over `of` items.
    fn write(&self, out: &mut String, of: usize, depth: usize) {
        if self.maps == 0 {
            self.others.write_kinds(out, depth);
            return;
        }
        out.push_str("maps {");
        for (i, (key, column)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(out, "{}", ptc_lisp::pr_str(key));
            out.push(' ');
            column.write(out, self.maps, depth);
        }
        out.push('}');
        if self.others.present > 0 {
            out.push_str(" and ");
            self.others.write_kinds(out, depth);
            let _ = write!(
                out,
                " (in {} of {})",
                TypeVocabulary::grouped(self.others.present as u64),
                TypeVocabulary::grouped(of as u64)
            );
        }
    }
}

impl Column {
    fn new() -> Column {
        Column {
            choices: Some(Vec::new()),
            ..Column::default()
        }
    }

    fn add(&mut self, value: &Value, depth: usize) {
        self.present += 1;
        let kind = kind_of(value);
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
        match value {
            Value::Str(_) | Value::Keyword(_) => {
                let text = ptc_lisp::pr_str(value);
                if let Some(choices) = &mut self.choices
                    && !choices.contains(&text)
                {
                    if choices.len() == CHOICES {
                        self.choices = None;
                    } else {
                        choices.push(text);
                    }
                }
            }
            Value::Int(_) | Value::Float(_) => {
                self.range = Some(match self.range.take() {
                    None => (value.clone(), value.clone()),
                    Some((low, high)) => (
                        if numeric_less(value, &low) {
                            value.clone()
                        } else {
                            low
                        },
                        if numeric_less(&high, value) {
                            value.clone()
                        } else {
                            high
                        },
                    ),
                });
            }
            Value::List(items) | Value::Vector(items) if depth < DEPTH => {
                let record = self.items.get_or_insert_with(Box::default);
                for item in items.iter().take(ITEMS) {
                    record.add(item, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// `string one of "a" "b"`, `integer 1..5`, `list of maps {...}`, with `(in N of M)` when
    /// not every item has it.
    fn write(&self, out: &mut String, of: usize, depth: usize) {
        self.write_kinds(out, depth);
        if self.present < of {
            let _ = write!(
                out,
                " (in {} of {})",
                TypeVocabulary::grouped(self.present as u64),
                TypeVocabulary::grouped(of as u64)
            );
        }
    }

    fn write_kinds(&self, out: &mut String, depth: usize) {
        out.push_str(&self.kinds.join(" or "));
        let texts = self
            .kinds
            .iter()
            .all(|k| matches!(*k, "string" | "keyword" | "nil"));
        if let Some(choices) = self.choices.as_ref().filter(|c| texts && !c.is_empty()) {
            // Choices say something only when the values repeat.
            if choices.len() < self.present {
                out.push_str(" one of");
                for choice in choices {
                    out.push(' ');
                    match choice.char_indices().nth(CHOICE_CHARS) {
                        Some((cut, _)) => {
                            push_one_line(out, &choice[..cut]);
                            out.push_str("...");
                        }
                        None => push_one_line(out, choice),
                    }
                }
            }
        }
        if let Some((low, high)) = &self.range {
            let _ = write!(
                out,
                " {}..{}",
                ptc_lisp::pr_str(low),
                ptc_lisp::pr_str(high)
            );
        }
        if let Some(items) = &self.items
            && (items.maps > 0 || items.others.present > 0)
        {
            out.push_str(" of ");
            items.write(out, items.maps + items.others.present, depth + 1);
        }
    }
}

fn numeric_less(a: &Value, b: &Value) -> bool {
    let number = |v: &Value| match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    };
    number(a) < number(b)
}

/// The kind of a value as a schema names it: `string`, `integer`, `list`, `map`, ...
fn kind_of(value: &Value) -> &'static str {
    match ValueShape::of(value) {
        ValueShape::Nil => "nil",
        ValueShape::Boolean => "boolean",
        ValueShape::Integer => "integer",
        ValueShape::Float => "float",
        ValueShape::String => "string",
        ValueShape::Keyword => "keyword",
        ValueShape::List(_) => "list",
        ValueShape::Map(_) => "map",
        ValueShape::Set(_) => "set",
        _ => "value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_list_of_records_is_described_over_every_item() {
        let data = ptc_lisp::eval_str(
            r#"(vec (for [i (range 40)]
                     (cond-> {:id (str "o-" i)
                              :status (["paid" "refunded" "pending"] (mod i 3))
                              :total (+ 1.5 i)
                              :lines [{:sku "a" :qty (inc (mod i 4))}]}
                       (zero? (mod i 10)) (assoc :note "rush"))))"#,
        )
        .unwrap();
        let mut out = String::new();
        write_schema(&mut out, &data, 1000);
        assert_eq!(
            out,
            "list[40] of maps {:id string, :status string one of \"paid\" \"refunded\" \
             \"pending\", :total float 1.5..40.5, :lines list of maps {:sku string one of \
             \"a\", :qty integer 1..4}, :note string one of \"rush\" (in 4 of 40)}"
        );
        let mut short = String::new();
        write_schema(&mut short, &data, 40);
        assert_eq!(short, "list[40] of maps {:id string, :statu...}");
    }
}
