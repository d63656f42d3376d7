//! Forms as data: what `quote` makes of a form, and how printed values are read back.

use super::{FnRepr, Function, Map, Regex, Set, Value};
use crate::error::{Error, ErrorKind, Result};
use crate::format::pr_str;
use crate::reader::{Form, FormKind};
use std::sync::Arc;

impl Value {
    /// The value a quoted form denotes: `'(a 1 [b])` is a list of a symbol, a number and a vector.
    pub fn from_form(form: &Form) -> Result<Value> {
        let items = |forms: &[Form]| {
            forms
                .iter()
                .map(Value::from_form)
                .collect::<Result<Vec<_>>>()
        };
        Ok(match &form.kind {
            FormKind::Nil => Value::Nil,
            FormKind::Bool(b) => Value::Bool(*b),
            FormKind::Int(i) => Value::Int(*i),
            FormKind::Float(f) => Value::Float(*f),
            FormKind::Str(s) => Value::string(s),
            FormKind::Char(c) => Value::Char(*c),
            FormKind::Keyword(k) => Value::keyword(k),
            FormKind::Symbol(s) => Value::symbol(s),
            FormKind::Regex(pattern) => {
                Value::Regex(compile_regex(pattern).map_err(|e| e.or_span(form.span))?)
            }
            FormKind::List(forms) => Value::list(items(forms)?),
            FormKind::Vector(forms) => Value::vector(items(forms)?),
            FormKind::Map(forms) => {
                let mut map = Map::new();
                for pair in forms.chunks(2) {
                    let key = Value::from_form(&pair[0])?;
                    if map.contains_key(&key) {
                        return Err(Error::syntax(
                            pair[0].span,
                            format!("duplicate key {} in map literal", pr_str(&key)),
                        ));
                    }
                    let value = pair
                        .get(1)
                        .map(Value::from_form)
                        .transpose()?
                        .unwrap_or_default();
                    map.assoc_mut(key, value);
                }
                Value::Map(map)
            }
            FormKind::Set(forms) => {
                let mut set = Set::new();
                for item in forms {
                    let value = Value::from_form(item)?;
                    if set.contains(&value) {
                        return Err(Error::syntax(
                            item.span,
                            format!("duplicate element {} in set literal", pr_str(&value)),
                        ));
                    }
                    set.insert_mut(value);
                }
                Value::Set(set)
            }
            FormKind::Quote(inner) => {
                Value::list([Value::symbol("quote"), Value::from_form(inner)?])
            }
            FormKind::Deref(inner) => {
                Value::list([Value::symbol("deref"), Value::from_form(inner)?])
            }
            FormKind::Var(name) => Value::Var(super::Symbol::new(
                name.strip_prefix("user/").unwrap_or(name),
            )),
            FormKind::AnonFn(_) => {
                return Err(Error::syntax(
                    form.span,
                    "#(...) cannot be used as quoted data",
                ));
            }
            FormKind::Tagged(tag, inner) if tag == "fn" => {
                let shown = pr_str(&Value::from_form(inner)?);
                Value::Fn(Function(Arc::new(FnRepr::Opaque(
                    format!("#fn{shown}").into(),
                ))))
            }
            // A lazy sequence as printed: a value that shows how the sequence was made.
            FormKind::Tagged(tag, inner) if tag == "lazy-seq" => match &inner.kind {
                FormKind::Vector(items) if items.len() == 1 && items[0].as_symbol().is_some() => {
                    let name = items[0].as_symbol().expect("checked");
                    Value::Lazy(super::LazySeq::new(super::LazyKind::Unrealized(
                        name.into(),
                    )))
                }
                _ => {
                    return Err(Error::syntax(
                        form.span,
                        "#lazy-seq needs a vector holding one name, e.g. #lazy-seq[range]",
                    ));
                }
            },
            FormKind::Tagged(tag, inner) if tag == "inst" || tag == "object" => {
                date_literal(tag, inner).map_err(|message| Error::syntax(form.span, message))?
            }
            FormKind::Tagged(tag, _) => {
                return Err(Error::syntax(
                    form.span,
                    format!("unknown tagged literal #{tag}"),
                ));
            }
        })
    }
}

/// Compile a regex written in Java syntax with the linear-time engine, with an error an LLM can
/// act on (see [`crate::builtins`]' regex family for what differs from Java).
pub fn compile_regex(pattern: &str) -> Result<Regex> {
    crate::builtins::regex::compile(pattern)
}

/// The dates the printer writes: `#inst "2024-03-15T10:30:00.000-00:00"` and
/// `#object[java.time.LocalDate "2024-03-15"]`.
pub(crate) fn date_literal(tag: &str, inner: &Form) -> std::result::Result<Value, String> {
    match (tag, &inner.kind) {
        ("inst", FormKind::Str(text)) => super::date::parse_inst(text).map(Value::Date),
        ("object", FormKind::Vector(items)) => match items.as_slice() {
            [class, text]
                if matches!(class.as_symbol(), Some("java.time.LocalDate" | "LocalDate")) =>
            {
                match &text.kind {
                    FormKind::Str(text) => super::date::parse_iso_day(text).map(Value::Date),
                    _ => Err("#object[java.time.LocalDate ...] needs a date string".into()),
                }
            }
            _ => Err(
                "#object[...] literals other than #object[java.time.LocalDate \"2024-03-15\"] \
                 cannot be read"
                    .into(),
            ),
        },
        ("inst", _) => Err("#inst needs a string, e.g. #inst \"2024-03-15T10:30:00Z\"".into()),
        _ => Err(format!("#{tag} needs a vector")),
    }
}

/// Serde for values as their printed text (`"{:a [1 2]}"`): readable in a JSON dump, and read
/// back exactly (functions come back as opaque `#fn[...]` values).
pub mod serde_text {
    use super::*;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        value: &Value,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&pr_str(value))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Value, D::Error> {
        let text = String::deserialize(deserializer)?;
        read_value(&text).map_err(serde::de::Error::custom)
    }
}

/// Read the one value printed in `text`.
pub fn read_value(text: &str) -> Result<Value> {
    let forms = crate::reader::read(text, &crate::reader::ReadLimits::default())?;
    match forms.as_slice() {
        [form] => Value::from_form(form),
        _ => Err(Error::new(
            ErrorKind::Parse,
            format!("expected exactly one value, found {} forms", forms.len()),
        )),
    }
}

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serde_text::serialize(self, serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Value, D::Error> {
        serde_text::deserialize(deserializer)
    }
}
