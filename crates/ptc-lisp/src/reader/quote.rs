//! Forms as data: what `quote` makes of a form, and how printed values are read back.

use super::regex::compile;
use super::{Form, FormKind, ReadLimits, literal_kind, read};
use crate::error::{Error, ErrorKind, Result};
use crate::format::pr_str;
use crate::value::{Function, LazyKind, LazySeq, MAX_VALUE_DEPTH, Map, Set, Symbol, Value};

impl Value {
    /// The value of a literal form (nil, a boolean, number, string, character or keyword), which
    /// is the same quoted or not; `None` for any other form.
    pub fn from_literal(form: &Form) -> Option<Value> {
        Some(match &form.kind {
            FormKind::Nil => Value::Nil,
            FormKind::Bool(b) => Value::Bool(*b),
            FormKind::Int(i) => Value::Int(*i),
            FormKind::Float(f) => Value::Float(*f),
            FormKind::Big(b) => Value::Big(b.clone()),
            FormKind::Str(s) => Value::string(s),
            FormKind::Char(c) => Value::Char(*c),
            FormKind::Keyword(k) => Value::keyword(k),
            _ => return None,
        })
    }

    /// The value a quoted form denotes: `'(a 1 [b])` is a list of a symbol, a number and a vector.
    /// A collection written with metadata (`'^:private [1]`) carries it, unevaluated.
    pub fn from_form(form: &Form) -> Result<Value> {
        Value::form_value(form, false)
    }

    /// The value of `form`; `printed` says it is a printed value read back, where a tag no
    /// reader knows is kept as a tagged literal (as `tagged-literal` makes and prints them).
    fn form_value(form: &Form, printed: bool) -> Result<Value> {
        let value = Value::form_value_bare(form, printed)?;
        let Some(meta) = &form.meta else {
            return Ok(value);
        };
        match Value::form_value(meta, printed)? {
            Value::Map(meta) => Ok(value.with_meta(Some(meta.clone())).unwrap_or(value)),
            _ => Ok(value),
        }
    }

    fn form_value_bare(form: &Form, printed: bool) -> Result<Value> {
        let items = |forms: &[Form]| {
            forms
                .iter()
                .map(|f| Value::form_value(f, printed))
                .collect::<Result<Vec<_>>>()
        };
        Ok(match &form.kind {
            literal_kind!() => Value::from_literal(form).unwrap_or_default(),
            FormKind::Symbol(s) => Value::symbol(s),
            FormKind::Regex(pattern) => {
                Value::Regex(compile(pattern).map_err(|e| e.or_span(form.span))?)
            }
            FormKind::List(forms) => Value::list(items(forms)?),
            FormKind::Vector(forms) => Value::vector(items(forms)?),
            FormKind::Map(forms) => {
                let mut map = Map::new();
                for pair in forms.chunks(2) {
                    let key = Value::form_value(&pair[0], printed)?;
                    if map.contains_key(&key) {
                        return Err(Error::syntax(
                            pair[0].span,
                            format!("duplicate key {} in map literal", pr_str(&key)),
                        ));
                    }
                    let value = pair
                        .get(1)
                        .map(|f| Value::form_value(f, printed))
                        .transpose()?
                        .unwrap_or_default();
                    map.assoc_mut(key, value);
                }
                Value::Map(map)
            }
            FormKind::Set(forms) => {
                let mut set = Set::new();
                for item in forms {
                    let value = Value::form_value(item, printed)?;
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
                Value::list([Value::symbol("quote"), Value::form_value(inner, printed)?])
            }
            FormKind::Deref(inner) => {
                Value::list([Value::symbol("deref"), Value::form_value(inner, printed)?])
            }
            FormKind::Unquote(inner) => Value::list([
                Value::symbol("clojure.core/unquote"),
                Value::form_value(inner, printed)?,
            ]),
            FormKind::UnquoteSplicing(inner) => Value::list([
                Value::symbol("clojure.core/unquote-splicing"),
                Value::form_value(inner, printed)?,
            ]),
            FormKind::SyntaxQuote(_) => {
                return Err(Error::syntax(
                    form.span,
                    "a syntax-quote (`) inside quoted data cannot be read; quote the form \
                     with ' alone",
                ));
            }
            FormKind::Var(name) => {
                Value::Var(Symbol::new(name.strip_prefix("user/").unwrap_or(name)))
            }
            FormKind::AnonFn(_) => {
                return Err(Error::syntax(
                    form.span,
                    "#(...) cannot be used as quoted data",
                ));
            }
            FormKind::Tagged(tag, inner) if tag == "fn" => {
                let shown = pr_str(&Value::form_value(inner, printed)?);
                Value::Fn(Function::read_back(&format!("#fn{shown}")))
            }
            // A lazy sequence as printed: a value that shows how the sequence was made.
            FormKind::Tagged(tag, inner) if tag == "lazy-seq" => match &inner.kind {
                FormKind::Vector(items) if items.len() == 1 && items[0].as_symbol().is_some() => {
                    let name = items[0].as_symbol().expect("checked");
                    Value::Lazy(LazySeq::new(LazyKind::Unrealized(name.into())))
                }
                _ => {
                    return Err(Error::syntax(
                        form.span,
                        "#lazy-seq needs a vector holding one name, e.g. #lazy-seq[range]",
                    ));
                }
            },
            FormKind::Tagged(tag, inner) if tag == "uuid" => {
                uuid_literal(&Value::form_value(inner, printed)?)
                    .map_err(|e| e.with_span(form.span))?
            }
            FormKind::Tagged(tag, inner) if tag == "inst" || tag == "object" => {
                date_literal(tag, inner).map_err(|message| Error::syntax(form.span, message))?
            }
            FormKind::Tagged(tag, inner) if printed => Value::Tagged(
                crate::value::TaggedLiteral::new(Symbol::new(tag), Value::form_value(inner, true)?),
            ),
            FormKind::Tagged(tag, _) => {
                return Err(Error::syntax(
                    form.span,
                    format!("unknown tagged literal #{tag}"),
                ));
            }
        })
    }
}

/// The value of `#uuid "..."` in a program, in quoted data or in a text read as data.
pub(crate) fn uuid_literal(text: &Value) -> std::result::Result<Value, Error> {
    match text {
        Value::Str(s) => crate::value::Uuid::parse(s)
            .map(Value::Uuid)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Syntax,
                    format!("#uuid needs 32 hexadecimal digits in groups 8-4-4-4-12, got \"{s}\""),
                )
            }),
        _ => Err(Error::new(
            ErrorKind::Syntax,
            "#uuid needs a string, e.g. #uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"",
        )),
    }
}

/// The dates the printer writes: `#inst "2024-03-15T10:30:00.000-00:00"` and
/// `#object[java.time.LocalDate "2024-03-15"]`.
pub(crate) fn date_literal(tag: &str, inner: &Form) -> std::result::Result<Value, String> {
    match (tag, &inner.kind) {
        ("inst", FormKind::Str(text)) => crate::value::date::parse_inst(text).map(Value::Date),
        ("object", FormKind::Vector(items)) => match items.as_slice() {
            [class, text]
                if matches!(class.as_symbol(), Some("java.time.LocalDate" | "LocalDate")) =>
            {
                match &text.kind {
                    FormKind::Str(text) => crate::value::date::parse_iso_day(text).map(Value::Date),
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

/// The name a `Value` is serialized under as a newtype, so that serde conversion of Rust types
/// (`crate::convert`) keeps a value embedded in a user type as the value it is.
pub(crate) const VALUE_TOKEN: &str = "$ptc_lisp::Value";

/// The stack a value nested deeper than a program may be is read on: reading takes a few KiB
/// of stack per level in a debug build, and values nest up to [`MAX_VALUE_DEPTH`] levels by
/// default.
const DEEP_READ_STACK: usize = 32 << 20;

/// Read the one value printed in `text`.
///
/// A printed value is data, not a program: it may be of any size, and may nest as deeply as a
/// value may at run time under the default limits (a program's text may nest only
/// [`ReadLimits::max_depth`] levels). Values nested deeper than that are read on a stack of
/// their own.
pub fn read_value(text: &str) -> Result<Value> {
    let shallow = ReadLimits {
        max_program_bytes: usize::MAX,
        ..ReadLimits::default()
    };
    match read_one(text, &shallow) {
        // With no size limit, only the nesting depth can be over a limit: printed numbers are
        // short.
        Err(e) if e.kind == ErrorKind::ProgramLimit => {
            let deep = ReadLimits {
                max_depth: MAX_VALUE_DEPTH as usize,
                ..shallow
            };
            crate::stack::grow(DEEP_READ_STACK, || read_one(text, &deep))
        }
        other => other,
    }
}

fn read_one(text: &str, limits: &ReadLimits) -> Result<Value> {
    let forms = read(text, limits)?;
    match forms.as_slice() {
        [form] => Value::form_value(form, true),
        _ => Err(Error::new(
            ErrorKind::Parse,
            format!("expected exactly one value, found {} forms", forms.len()),
        )),
    }
}

/// A value serializes as its printed text, wrapped in a newtype that formats such as JSON see
/// through and [`to_value`](crate::to_value) recognizes, so that a value inside converted data
/// converts as itself.
impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        struct Printed<'a>(&'a Value);

        impl serde::Serialize for Printed<'_> {
            fn serialize<S: serde::Serializer>(
                &self,
                serializer: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                serde_text::serialize(self.0, serializer)
            }
        }

        serializer.serialize_newtype_struct(VALUE_TOKEN, &Printed(self))
    }
}

impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Value, D::Error> {
        struct Text;

        impl<'de> serde::de::Visitor<'de> for Text {
            type Value = Value;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a printed PTC-Lisp value")
            }

            fn visit_newtype_struct<D: serde::Deserializer<'de>>(
                self,
                deserializer: D,
            ) -> std::result::Result<Value, D::Error> {
                serde_text::deserialize(deserializer)
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> std::result::Result<Value, E> {
                read_value(text).map_err(E::custom)
            }
        }

        deserializer.deserialize_newtype_struct(VALUE_TOKEN, Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// `levels` vectors, each holding the next, around a map holding a set.
    fn nested(levels: usize) -> Value {
        let mut value = Value::map([(Value::keyword("leaf"), Value::set([Value::Int(1)]))]);
        for _ in 2..levels {
            value = Value::vector([value]);
        }
        value
    }

    // A value is data, not a program: no program size limit applies to reading it back.
    #[test]
    fn values_larger_than_a_program_may_be_read_back() {
        let value = Value::vector([
            Value::string("x".repeat(1 << 21)),
            Value::vector((0..300_000).map(Value::Int)),
        ]);
        assert_eq!(read_value(&pr_str(&value)).unwrap(), value);
    }

    // Values nest as deeply as the runtime allows, deeper than a program may; reading one back
    // must not need more stack than a thread gets by default.
    #[test]
    fn values_nested_to_the_depth_limit_are_read_back_on_a_default_stack() {
        let limit = MAX_VALUE_DEPTH as usize;
        let reader = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let value = nested(limit);
                assert_eq!(value.depth() as usize, limit);
                assert_eq!(read_value(&pr_str(&value)).unwrap(), value);
                let shallow = nested(150);
                assert_eq!(read_value(&pr_str(&shallow)).unwrap(), shallow);
                let error = read_value(&pr_str(&nested(limit + 1))).unwrap_err();
                assert_eq!(error.kind, ErrorKind::ProgramLimit);
            })
            .expect("thread");
        reader.join().expect("no stack overflow");
    }
}
