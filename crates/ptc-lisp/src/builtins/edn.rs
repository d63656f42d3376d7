//! `clojure.edn/read-string`: the first value written in a text, read as data and never as
//! code.

use super::args::Call;
use super::{Builtin, builtin};
use crate::error::{Error, ErrorKind};
use crate::eval::{Ctx, EvalResult, lookup};
use crate::format::pr_str;
use crate::reader::{Form, FormKind, ReadLimits, read};
use crate::value::{Map, Set, Value};

pub(crate) const BUILTINS: &[Builtin] = &[builtin!(
    "clojure.edn/read-string",
    read_string,
    "(clojure.edn/read-string s) (clojure.edn/read-string opts s)",
    "The first value written in s as data (nil when s is nil or blank); opts may give :eof (the value for a blank text), :readers (tag symbol to function) and :default (a function of tag and value).",
    "(clojure.edn/read-string \"{:a [1 2.5 \\\"x\\\"]}\")" => "{:a [1 2.5 \"x\"]}"
)];

/// The options of a read: what a blank text gives and the functions of tagged values.
struct Options<'a> {
    eof: Value,
    readers: Option<&'a Map>,
    default: Option<&'a Value>,
}

fn read_string(ctx: &mut Ctx, call: Call, (first, second): (&Value, Option<&Value>)) -> EvalResult {
    let (opts, text) = match second {
        Some(text) => (Some(first), text),
        None => (None, first),
    };
    let options = match opts {
        None | Some(Value::Nil) => Options {
            eof: Value::Nil,
            readers: None,
            default: None,
        },
        Some(Value::Map(m)) => Options {
            eof: lookup(m, &Value::keyword("eof"))
                .cloned()
                .unwrap_or_default(),
            readers: match lookup(m, &Value::keyword("readers")) {
                Some(Value::Map(r)) => Some(r),
                None | Some(Value::Nil) => None,
                Some(other) => return Err(call.expected("a map of :readers", other).into()),
            },
            default: lookup(m, &Value::keyword("default")).filter(|v| !v.is_nil()),
        },
        Some(other) => return Err(call.expected("a map of options", other).into()),
    };
    let text = match text {
        Value::Nil => return Ok(Value::Nil),
        Value::Str(s) => s,
        other => return Err(call.expected("a string", other).into()),
    };
    ctx.charge(text.len())?;
    let forms = read(text, &ReadLimits::default())?;
    match forms.first() {
        None => Ok(options.eof),
        Some(form) => edn_value(ctx, call, &options, form),
    }
}

fn not_edn(call: Call, form: &Form, what: &str) -> Error {
    Error::at(
        ErrorKind::Parse,
        form.span,
        format!("{call}: {what} is program syntax, not data"),
    )
}

fn edn_value(ctx: &mut Ctx, call: Call, options: &Options<'_>, form: &Form) -> EvalResult {
    ctx.tick()?;
    Ok(match &form.kind {
        FormKind::List(items) | FormKind::Vector(items) => {
            let values = items
                .iter()
                .map(|item| edn_value(ctx, call, options, item))
                .collect::<EvalResult<Vec<Value>>>()?;
            if matches!(form.kind, FormKind::List(_)) {
                Value::list(values)
            } else {
                Value::vector(values)
            }
        }
        FormKind::Set(items) => {
            let mut set = Set::new();
            for item in items {
                let value = edn_value(ctx, call, options, item)?;
                if set.contains(&value) {
                    return Err(duplicate(item, &value).into());
                }
                set.insert_mut(value);
            }
            Value::Set(set)
        }
        FormKind::Map(items) => {
            let mut map = Map::new();
            for pair in items.chunks(2) {
                let key = edn_value(ctx, call, options, &pair[0])?;
                if map.contains_key(&key) {
                    return Err(duplicate(&pair[0], &key).into());
                }
                let value = match pair.get(1) {
                    Some(v) => edn_value(ctx, call, options, v)?,
                    None => Value::Nil,
                };
                map.assoc_mut(key, value);
            }
            Value::Map(map)
        }
        FormKind::Tagged(tag, inner) => {
            let tag_symbol = Value::symbol(tag);
            if let Some(reader) = options.readers.and_then(|r| r.get(&tag_symbol)) {
                let value = edn_value(ctx, call, options, inner)?;
                return ctx.apply1(reader, &value);
            }
            if tag == "inst" {
                return Ok(Value::from_form(form)?);
            }
            if let Some(default) = options.default {
                let value = edn_value(ctx, call, options, inner)?;
                return ctx.apply(default, &[tag_symbol, value]);
            }
            return Err(Error::at(
                ErrorKind::Parse,
                form.span,
                format!(
                    "{call}: no reader function for the tag #{tag}; give one with \
                     {{:readers {{'{tag} f}}}} or {{:default (fn [tag value] ...)}}"
                ),
            )
            .into());
        }
        FormKind::Quote(_) => return Err(not_edn(call, form, "a quote (')").into()),
        FormKind::Deref(_) => return Err(not_edn(call, form, "@ (deref)").into()),
        FormKind::AnonFn(_) => return Err(not_edn(call, form, "#(...)").into()),
        FormKind::Regex(_) => return Err(not_edn(call, form, "a regex literal").into()),
        FormKind::Var(_) => return Err(not_edn(call, form, "#'var").into()),
        _ => Value::from_form(form)?,
    })
}

fn duplicate(form: &Form, key: &Value) -> Error {
    Error::at(
        ErrorKind::Parse,
        form.span,
        format!("duplicate key {} in the text read", pr_str(key)),
    )
}
