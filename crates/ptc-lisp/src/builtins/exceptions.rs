//! The exception constructors programs write in `(throw (IllegalArgumentException. "..."))`
//! (`Exception.` itself is listed with `ex-info`, among the output and error functions).
//!
//! Each makes an exception value like `ex-info`'s, without data, that `throw` raises as an
//! error of the kind its class stands for, so the `catch` clauses that would catch the Java
//! exception catch it: `(catch IllegalArgumentException e ...)` catches
//! `(IllegalArgumentException. "bad")`, and `(catch Exception e ...)` catches them all.

use super::args::Call;
use super::{Builtin, builtin};
use crate::error::ErrorKind;
use crate::eval::{Ctx, EXCEPTION_MARKER, EvalResult};
use crate::value::{Map, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("RuntimeException.", exception, "(RuntimeException. message) (RuntimeException. message cause)", "An exception, as Exception.", "(ex-message (RuntimeException. \"rt\"))" => "\"rt\""),
    builtin!("Throwable.", exception, "(Throwable. message)", "An exception, as Exception.", "(ex-message (Throwable. \"t\"))" => "\"t\""),
    builtin!("Error.", exception, "(Error. message)", "An exception, as Exception.", "(ex-message (Error. \"e\"))" => "\"e\""),
    builtin!("IllegalArgumentException.", illegal_argument, "(IllegalArgumentException. message)", "An exception that (catch IllegalArgumentException e ...) catches: an argument error.", "(try (throw (IllegalArgumentException. \"ia\")) (catch IllegalArgumentException e (ex-message e)))" => "\"ia\""),
    builtin!("NumberFormatException.", illegal_argument, "(NumberFormatException. message)", "An exception that (catch NumberFormatException e ...) catches: an argument error.", "(ex-message (NumberFormatException. \"nf\"))" => "\"nf\""),
    builtin!("ArithmeticException.", arithmetic, "(ArithmeticException. message)", "An exception that (catch ArithmeticException e ...) catches.", "(try (throw (ArithmeticException. \"ae\")) (catch ArithmeticException e :caught))" => ":caught"),
    builtin!("IndexOutOfBoundsException.", index, "(IndexOutOfBoundsException. message)", "An exception that (catch IndexOutOfBoundsException e ...) catches.", "(ex-message (IndexOutOfBoundsException. \"i\"))" => "\"i\""),
    builtin!("ArrayIndexOutOfBoundsException.", index, "(ArrayIndexOutOfBoundsException. message)", "An exception that (catch IndexOutOfBoundsException e ...) catches.", "(ex-message (ArrayIndexOutOfBoundsException. \"i\"))" => "\"i\""),
    builtin!("ClassCastException.", type_error, "(ClassCastException. message)", "An exception that (catch ClassCastException e ...) catches: a type error.", "(ex-message (ClassCastException. \"c\"))" => "\"c\""),
    builtin!("NullPointerException.", type_error, "(NullPointerException. message)", "An exception that (catch NullPointerException e ...) catches: a type error.", "(ex-message (NullPointerException. \"n\"))" => "\"n\""),
];

fn construct(
    kind: ErrorKind,
    call: Call,
    (message, cause): (Option<&Value>, Option<&Value>),
) -> EvalResult {
    let message = match message {
        None => Value::Nil,
        Some(m @ (Value::Str(_) | Value::Nil)) => m.clone(),
        Some(other) => return Err(call.expected("a message string", other).into()),
    };
    let mut e = exception_map_of(kind.as_str(), message, None);
    if let (Some(cause), Value::Map(m)) = (cause.filter(|c| !c.is_nil()), &mut e) {
        m.assoc_mut(Value::keyword("cause"), cause.clone());
    }
    Ok(e)
}

pub(crate) type Args<'a> = (Option<&'a Value>, Option<&'a Value>);

pub(crate) fn exception(_: &mut Ctx, call: Call, args: Args<'_>) -> EvalResult {
    construct(ErrorKind::Thrown, call, args)
}

fn illegal_argument(_: &mut Ctx, call: Call, args: Args<'_>) -> EvalResult {
    construct(ErrorKind::Argument, call, args)
}

fn arithmetic(_: &mut Ctx, call: Call, args: Args<'_>) -> EvalResult {
    construct(ErrorKind::Arithmetic, call, args)
}

fn index(_: &mut Ctx, call: Call, args: Args<'_>) -> EvalResult {
    construct(ErrorKind::Index, call, args)
}

fn type_error(_: &mut Ctx, call: Call, args: Args<'_>) -> EvalResult {
    construct(ErrorKind::Type, call, args)
}

/// The value `ex-info` and the exception constructors make: a map `throw` raises as an error
/// of `kind` (`thrown` unless a constructor names another), with `message` (which may be nil).
pub(crate) fn exception_map_of(kind: &str, message: Value, data: Option<Value>) -> Value {
    let mut m = Map::new();
    m.assoc_mut(Value::keyword("message"), message);
    m.assoc_mut(Value::keyword("kind"), Value::keyword(kind));
    if let Some(data) = data {
        m.assoc_mut(Value::keyword("data"), data);
    }
    m.assoc_mut(Value::keyword(EXCEPTION_MARKER), Value::Bool(true));
    Value::Map(m)
}
