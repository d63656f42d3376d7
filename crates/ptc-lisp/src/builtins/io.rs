//! Printing and exceptions.
//!
//! Each `println` call is one output entry, however many lines it prints.

use super::args::Call;
use super::{Builtin, builtin};
use crate::eval::{Ctx, EXCEPTION_MARKER, EvalResult};
use crate::format::{Rendering, render_within};
use crate::value::{Map, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("println", println, "(println & xs)", "Prints the values separated by spaces (strings without quotes) as one output entry; returns nil.", "(println \"total:\" 42)" => "nil"),
    builtin!("print", println, "(print & xs)", "Like println: one output entry.", "(print \"x\")" => "nil"),
    builtin!("prn", prn, "(prn & xs)", "Prints the values readably (strings in quotes) as one output entry; returns nil.", "(prn \"x\" :k)" => "nil"),
    builtin!("pr", prn, "(pr & xs)", "Like prn: one output entry.", "(pr [1 \"a\"])" => "nil"),
    builtin!("ex-info", ex_info, "(ex-info message data)", "An exception carrying a message and a data map, for throw.", "(ex-message (ex-info \"bad input\" {:id 7}))" => "\"bad input\""),
    builtin!("ex-message", ex_message, "(ex-message e)", "The message of a caught exception.", "(try (throw (ex-info \"boom\" {})) (catch Exception e (ex-message e)))" => "\"boom\""),
    builtin!("ex-data", ex_data, "(ex-data e)", "The data map of an exception made with ex-info, or nil.", "(try (throw (ex-info \"boom\" {:id 7})) (catch Exception e (ex-data e)))" => "{:id 7}"),
    builtin!("Exception.", exception, "(Exception. message)", "An exception with a message and no data, for throw.", "(ex-message (Exception. \"no\"))" => "\"no\""),
];

/// The values rendered and separated by spaces. An entry is cut at `max_print_chars`
/// characters anyway, so no more than that is rendered: printing a huge value costs no more
/// than printing its beginning.
fn joined(ctx: &Ctx, values: &[Value], rendering: Rendering) -> String {
    let cap = ctx
        .limits()
        .max_print_chars
        .saturating_add(1)
        .saturating_mul(4);
    let mut out = String::new();
    for (i, arg) in values.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match render_within(arg, rendering, cap.saturating_sub(out.len())) {
            Ok(text) => out.push_str(&text),
            Err(prefix) => {
                out.push_str(&prefix);
                break;
            }
        }
    }
    out
}

fn println(ctx: &mut Ctx, _: Call, xs: &[Value]) -> EvalResult {
    let text = joined(ctx, xs, Rendering::Human);
    ctx.emit_print(text)?;
    Ok(Value::Nil)
}

fn prn(ctx: &mut Ctx, _: Call, xs: &[Value]) -> EvalResult {
    let text = joined(ctx, xs, Rendering::Readable);
    ctx.emit_print(text)?;
    Ok(Value::Nil)
}

fn exception_map(message: &str, data: Option<Value>) -> Value {
    let mut m = Map::new();
    m.assoc_mut(Value::keyword("message"), Value::string(message));
    m.assoc_mut(Value::keyword("kind"), Value::keyword("thrown"));
    if let Some(data) = data {
        m.assoc_mut(Value::keyword("data"), data);
    }
    m.assoc_mut(Value::keyword(EXCEPTION_MARKER), Value::Bool(true));
    Value::Map(m)
}

/// `(ex-info message data cause)`: the cause is accepted and not kept.
fn ex_info(
    _: &mut Ctx,
    call: Call,
    (message, data, _cause): (&str, &Value, Option<&Value>),
) -> EvalResult {
    match data {
        Value::Map(_) | Value::Nil => Ok(exception_map(message, Some(data.clone()))),
        other => Err(call
            .expected("a map of data as its second argument", other)
            .into()),
    }
}

fn exception(_: &mut Ctx, _: Call, message: Option<&str>) -> EvalResult {
    Ok(exception_map(message.unwrap_or_default(), None))
}

fn exception_field(v: &Value, field: &str) -> Option<Value> {
    match v {
        Value::Map(m) if m.contains_key(&Value::keyword(EXCEPTION_MARKER)) => {
            m.get(&Value::keyword(field)).cloned()
        }
        _ => None,
    }
}

fn ex_message(_: &mut Ctx, _: Call, e: &Value) -> EvalResult {
    Ok(exception_field(e, "message").unwrap_or_default())
}

fn ex_data(_: &mut Ctx, _: Call, e: &Value) -> EvalResult {
    Ok(exception_field(e, "data").unwrap_or_default())
}
