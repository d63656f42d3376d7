//! Printing and exceptions.
//!
//! Each `println` call is one output entry, however many lines it prints.

use super::{Builtin, builtin, expect_str, got};
use crate::error::Error;
use crate::eval::{Ctx, EXCEPTION_MARKER, EvalResult};
use crate::format::{Rendering, render_within};
use crate::value::{Map, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("println", [0..], println, "(println & xs)", "Prints the values separated by spaces (strings without quotes) as one output entry; returns nil.", "(println \"total:\" 42)" => "nil"),
    builtin!("print", [0..], println, "(print & xs)", "Like println: one output entry.", "(print \"x\")" => "nil"),
    builtin!("prn", [0..], prn, "(prn & xs)", "Prints the values readably (strings in quotes) as one output entry; returns nil.", "(prn \"x\" :k)" => "nil"),
    builtin!("pr", [0..], prn, "(pr & xs)", "Like prn: one output entry.", "(pr [1 \"a\"])" => "nil"),
    builtin!("ex-info", [2..=3], ex_info, "(ex-info message data)", "An exception carrying a message and a data map, for throw.", "(ex-message (ex-info \"bad input\" {:id 7}))" => "\"bad input\""),
    builtin!("ex-message", [1], ex_message, "(ex-message e)", "The message of a caught exception.", "(try (throw (ex-info \"boom\" {})) (catch Exception e (ex-message e)))" => "\"boom\""),
    builtin!("ex-data", [1], ex_data, "(ex-data e)", "The data map of an exception made with ex-info, or nil.", "(try (throw (ex-info \"boom\" {:id 7})) (catch Exception e (ex-data e)))" => "{:id 7}"),
    builtin!("Exception.", [0..=1], exception, "(Exception. message)", "An exception with a message and no data, for throw.", "(ex-message (Exception. \"no\"))" => "\"no\""),
];

/// The values rendered and separated by spaces. An entry is cut at `max_print_chars`
/// characters anyway, so no more than that is rendered: printing a huge value costs no more
/// than printing its beginning.
fn joined(ctx: &Ctx, args: &[Value], rendering: Rendering) -> String {
    let cap = ctx
        .limits()
        .max_print_chars
        .saturating_add(1)
        .saturating_mul(4);
    let mut out = String::new();
    for (i, arg) in args.iter().enumerate() {
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

fn println(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let text = joined(ctx, args, Rendering::Human);
    ctx.emit_print(text)?;
    Ok(Value::Nil)
}

fn prn(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let text = joined(ctx, args, Rendering::Readable);
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

fn ex_info(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let message = expect_str("ex-info", &args[0])?;
    match &args[1] {
        data @ (Value::Map(_) | Value::Nil) => Ok(exception_map(message, Some(data.clone()))),
        other => Err(Error::type_error(format!(
            "ex-info expects a map of data as its second argument, got {}",
            got(other)
        ))
        .into()),
    }
}

fn exception(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let message = match args.first() {
        Some(m) => expect_str("Exception.", m)?,
        None => "",
    };
    Ok(exception_map(message, None))
}

fn exception_field(v: &Value, field: &str) -> Option<Value> {
    match v {
        Value::Map(m) if m.contains_key(&Value::keyword(EXCEPTION_MARKER)) => {
            m.get(&Value::keyword(field)).cloned()
        }
        _ => None,
    }
}

fn ex_message(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(exception_field(&args[0], "message").unwrap_or_default())
}

fn ex_data(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(exception_field(&args[0], "data").unwrap_or_default())
}
