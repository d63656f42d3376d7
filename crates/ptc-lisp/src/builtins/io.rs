//! Printing and exceptions.
//!
//! Each `println` call is one output entry, however many lines it prints.

use super::args::{Call, Callable};
use super::exceptions::exception_map_of;
use super::{Builtin, builtin};
use crate::eval::{Ctx, EXCEPTION_MARKER, EvalResult};
use crate::firewall::hide_firewalled;
use crate::format::{Rendering, render_within};
use crate::value::Value;
use std::borrow::Cow;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("println", println, "(println & xs)", "Prints the values separated by spaces (strings without quotes) as one output entry; returns nil.", "(println \"total:\" 42)" => "nil"),
    builtin!("print", print, "(print & xs)", "Like println: one output entry (inside with-out-str, no line end).", "(print \"x\")" => "nil"),
    builtin!("prn", prn, "(prn & xs)", "Prints the values readably (strings in quotes) as one output entry; returns nil.", "(prn \"x\" :k)" => "nil"),
    builtin!("pr", pr, "(pr & xs)", "Like prn: one output entry (inside with-out-str, no line end).", "(pr [1 \"a\"])" => "nil"),
    builtin!("ex-info", ex_info, "(ex-info message data)", "An exception carrying a message and a data map, for throw.", "(ex-message (ex-info \"bad input\" {:id 7}))" => "\"bad input\""),
    builtin!("ex-message", ex_message, "(ex-message e)", "The message of a caught exception.", "(try (throw (ex-info \"boom\" {})) (catch Exception e (ex-message e)))" => "\"boom\""),
    builtin!("ex-cause", ex_cause, "(ex-cause e)", "The exception given as the cause to ex-info, or nil.", "(ex-message (ex-cause (ex-info \"outer\" {} (ex-info \"inner\" {}))))" => "\"inner\""),
    builtin!("printf", printf, "(printf fmt & args)", "Prints (format fmt args...) as one output entry; returns nil.", "(printf \"%d items%n\" 3)" => "nil"),
    builtin!("flush", flush, "(flush)", "Does nothing: printed text is never buffered; nil.", "(flush)" => "nil"),
    builtin!("newline", newline, "(newline)", "Prints an empty output entry; returns nil.", "(newline)" => "nil"),
    builtin!("ex-data", ex_data, "(ex-data e)", "The data map of an exception made with ex-info, or nil.", "(try (throw (ex-info \"boom\" {:id 7})) (catch Exception e (ex-data e)))" => "{:id 7}"),
    builtin!("Exception.", super::exceptions::exception, "(Exception. message) (Exception. message cause)", "An exception with a message (and optionally a cause) and no data, for throw.", "(ex-message (Exception. \"no\"))" => "\"no\""),
];

/// The values rendered and separated by spaces. An entry is cut at `max_print_chars`
/// characters anyway, so no more than that is rendered: printing a huge value costs no more
/// than printing its beginning.
fn joined(ctx: &Ctx, values: &[Value], rendering: Rendering) -> String {
    // Captured text is a string value, bounded by the memory budget rather than the length of
    // an output entry.
    let cap = if ctx.is_capturing() {
        ctx.limits().max_memory_bytes
    } else {
        ctx.limits()
            .max_print_chars
            .saturating_add(1)
            .saturating_mul(4)
    };
    let mut out = String::new();
    for (i, arg) in values.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let room = cap.saturating_sub(out.len());
        // Nothing past `room` characters is printed, so no more values need hiding.
        let arg = if ctx.firewall {
            hide_firewalled(arg, None, Some(room.saturating_add(1)))
        } else {
            Cow::Borrowed(arg)
        };
        match render_within(&arg, rendering, room) {
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
    ctx.emit_text(text, true)?;
    Ok(Value::Nil)
}

fn print(ctx: &mut Ctx, _: Call, xs: &[Value]) -> EvalResult {
    let text = joined(ctx, xs, Rendering::Human);
    ctx.emit_text(text, false)?;
    Ok(Value::Nil)
}

fn prn(ctx: &mut Ctx, _: Call, xs: &[Value]) -> EvalResult {
    let text = joined(ctx, xs, Rendering::Readable);
    ctx.emit_text(text, true)?;
    Ok(Value::Nil)
}

fn pr(ctx: &mut Ctx, _: Call, xs: &[Value]) -> EvalResult {
    let text = joined(ctx, xs, Rendering::Readable);
    ctx.emit_text(text, false)?;
    Ok(Value::Nil)
}

/// What `(with-out-str body ...)` runs: the body as a function of no arguments, with
/// everything it prints captured and returned as a string.
pub(crate) static CAPTURE_OUTPUT: Builtin =
    builtin!("with-out-str", capture_output, "", "", "" => "");

fn capture_output(ctx: &mut Ctx, _: Call, body: Callable) -> EvalResult {
    let outer = ctx.captured.replace(String::new());
    let result = ctx.apply(&body, &[]);
    let text = std::mem::replace(&mut ctx.captured, outer).unwrap_or_default();
    result?;
    Ok(Value::string(text))
}

/// `(ex-info message data cause)`: a cause that is given is kept under `:cause`, for
/// `ex-cause`.
fn ex_info(
    _: &mut Ctx,
    call: Call,
    (message, data, cause): (&Value, &Value, Option<&Value>),
) -> EvalResult {
    if !matches!(message, Value::Str(_) | Value::Nil) {
        return Err(call.expected("a message string (or nil)", message).into());
    }
    match data {
        // Clojure's own message for it.
        Value::Nil => Err(call
            .error(
                crate::error::ErrorKind::Argument,
                "additional data must be non-nil; give a map, {} if there is nothing to add",
            )
            .into()),
        Value::Map(_) => {
            let mut e = exception_map_of("thrown", message.clone(), Some(data.clone()));
            if let (Some(cause), Value::Map(m)) = (cause.filter(|c| !c.is_nil()), &mut e) {
                m.assoc_mut(Value::keyword("cause"), cause.clone());
            }
            Ok(e)
        }
        other => Err(call
            .expected("a map of data as its second argument", other)
            .into()),
    }
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

fn ex_cause(_: &mut Ctx, _: Call, e: &Value) -> EvalResult {
    Ok(exception_field(e, "cause").unwrap_or_default())
}

fn printf(ctx: &mut Ctx, call: Call, (fmt, values): (&Value, &[Value])) -> EvalResult {
    let text = super::printf::format(ctx, call, (fmt, values))?;
    ctx.emit_text(crate::format::str_of(&text), false)?;
    Ok(Value::Nil)
}

fn flush(_: &mut Ctx, _: Call, (): ()) -> EvalResult {
    Ok(Value::Nil)
}

fn newline(ctx: &mut Ctx, _: Call, (): ()) -> EvalResult {
    ctx.emit_text(String::new(), true)?;
    Ok(Value::Nil)
}
