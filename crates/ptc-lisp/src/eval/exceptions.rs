//! Exceptions: `try`/`catch`/`finally`, the map a `catch` binds, and what `throw` raises.

use super::Env;
use crate::context::{Ctx, EvalResult, Flow};
use crate::error::{EXCEPTION_MARKER, Error, ErrorKind};
use crate::ir::{CatchFilter, TryExpr};
use crate::value::{Map, Value};

impl Ctx {
    pub(crate) fn eval_try(&mut self, t: &TryExpr, env: &Env) -> EvalResult {
        // Calls restore the stack, base and depth as they unwind, so the frame is intact here.
        let mut result = self.eval(&t.body, env);
        if let Err(Flow::Error(err)) = &result
            && is_catchable(err)
            && let Some(c) = t.catches.iter().find(|c| catch_matches(&c.filter, err))
        {
            let exception = exception_value(err);
            *self.slot(c.slot) = exception;
            result = self.eval(&c.body, env);
        }
        if let Some(finally) = &t.finally {
            self.eval(finally, env)?;
        }
        result
    }
}

/// Limits end the run: a program cannot catch them.
fn is_catchable(err: &Error) -> bool {
    !err.kind.is_limit()
}

fn catch_matches(filter: &CatchFilter, err: &Error) -> bool {
    match filter {
        CatchFilter::Any => true,
        CatchFilter::ExInfo => err.kind == ErrorKind::Thrown && err.data.is_some(),
        CatchFilter::Kinds(kinds) => kinds.contains(&err.kind),
    }
}

/// The value a `catch` binds: a map with `:message`, `:kind` and, for `ex-info`, `:data`
/// (and `:cause` when one was given).
pub(crate) fn exception_value(err: &Error) -> Value {
    let mut m = Map::new();
    m.assoc_mut(Value::keyword("message"), Value::string(&err.message));
    m.assoc_mut(Value::keyword("kind"), Value::keyword(err.kind.as_str()));
    if let Some(data) = &err.data {
        m.assoc_mut(Value::keyword("data"), data.clone());
    }
    if let Some(cause) = &err.cause {
        m.assoc_mut(Value::keyword("cause"), cause.clone());
    }
    m.assoc_mut(Value::keyword(EXCEPTION_MARKER), Value::Bool(true));
    Value::Map(m)
}

/// The error a `(throw v)` raises.
pub(crate) fn throw_value(v: Value) -> Error {
    if let Value::Map(m) = &v
        && m.contains_key(&Value::keyword(EXCEPTION_MARKER))
    {
        let message = m
            .get(&Value::keyword("message"))
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let data = m.get(&Value::keyword("data")).cloned();
        let kind = m
            .get(&Value::keyword("kind"))
            .and_then(|k| match k {
                Value::Keyword(k) => ErrorKind::from_name(k.as_str()).filter(|k| !k.is_limit()),
                _ => None,
            })
            .unwrap_or(ErrorKind::Thrown);
        let mut err = Error::new(kind, message);
        err.data = data;
        err.cause = m.get(&Value::keyword("cause")).cloned();
        return err;
    }
    Error::new(
        ErrorKind::Type,
        format!(
            "throw needs an exception made with (ex-info \"message\" {{...}}), got {}",
            v.type_name()
        ),
    )
}
