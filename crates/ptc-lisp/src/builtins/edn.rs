//! `clojure.edn/read-string`: the first value written in a text, read as data and never as
//! code.

use super::args::Call;
use super::{Builtin, builtin};
use crate::error::{Error, ErrorKind};
use crate::eval::{Ctx, EvalResult, lookup};
use crate::format::pr_str;
use crate::reader::lexer::{Lexer, Tok};
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
    let forms = read_first(text)?;
    match forms.first() {
        None => Ok(options.eof),
        Some(form) => edn_value(ctx, call, &options, form),
    }
}

/// The forms of `text`, or when the whole text cannot be read, the first form alone: like
/// Clojure's reader, a read stops after the first form, so what follows it (`"1]"`, `"[1 2] ("`)
/// is never looked at.
fn read_first(text: &str) -> Result<Vec<Form>, Error> {
    let limits = ReadLimits::default();
    let err = match read(text, &limits) {
        Ok(forms) => return Ok(forms),
        Err(err) => err,
    };
    match first_form_end(text, &limits).map(|end| read(&text[..end], &limits)) {
        Some(Ok(forms)) if !forms.is_empty() => Ok(forms),
        _ => Err(err),
    }
}

/// Where the first form of `text` ends, found from its tokens: after the first atom outside
/// any collection, or after the closer of the first collection.
fn first_form_end(text: &str, limits: &ReadLimits) -> Option<usize> {
    let mut depth = 0usize;
    for token in Lexer::new(text, limits) {
        let (tok, span) = token.ok()?;
        if tok.opener().is_some() {
            depth += 1;
        } else if tok.closer().is_some() {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(span.end as usize);
            }
        } else if depth == 0 && !tok.is_prefix() && tok != Tok::VarQuote {
            return Some(span.end as usize);
        }
    }
    None
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
            if tag == "inst" || tag == "uuid" {
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
        // In data a quote is a symbol character: `'a` is the symbol named 'a.
        FormKind::Quote(inner)
            if inner.span.start == form.span.start + 1 && inner.as_symbol().is_some() =>
        {
            Value::symbol(&format!("'{}", inner.as_symbol().unwrap_or_default()))
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
