//! Delays: `(delay body ...)`, `force`, `deref`/`@`, `realized?` and `delay?`.
//!
//! A delay is a function value of its own kind (it prints as `#fn[delay]`, and `fn?` is false
//! for it) holding the body as a function of no arguments and, once forced, the body's value.
//! The body runs the first time the delay is forced; later forcings give the kept value.
//!
//! What is kept is a cache of a computation that never changes, so a delay stays an immutable
//! value in every way a program can observe: it may be kept with `def` into later turns, and
//! if the turn that forced it fails, the value it computed is still the value of the delay (a
//! later forcing would compute the same). A body that fails (an exception, or a limit of the
//! run) keeps nothing: the next forcing runs it again. Two `pmap` items forcing the same delay
//! at the same moment may each run its body; the first value kept is the one both get.

use super::args::Call;
use super::{Builtin, builtin};
use crate::error::Error;
use crate::eval::{Ctx, EvalResult};
use crate::value::{FnBody, Function, LazyKind, Value};
use std::sync::{Mutex, PoisonError};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("force", force, "(force x)", "The value of the delay x, running its body the first time; any other x itself.", "(force (delay (+ 1 2)))" => "3"),
    builtin!("deref", deref, "(deref delay)", "The value of a delay, as force (@d is (deref d)). There are no atoms or other references to dereference.", "@(delay :x)" => ":x"),
    builtin!("delay?", is_delay_p, "(delay? x)", "True if x is a delay.", "[(delay? (delay 1)) (delay? 1)]" => "[true false]"),
    builtin!("realized?", realized, "(realized? x)", "True once a delay has been forced; true for (range), iterate and cycle, whose first item exists at once.", "(let [d (delay 1)] [(realized? d) (do (force d) (realized? d))])" => "[false true]"),
];

/// What `(delay body ...)` expands to: the body as a function of no arguments, made into a
/// delay. Not in the registry: programs write `delay`.
pub(crate) static MAKE_DELAY: Builtin = builtin!("delay", make_delay, "", "", "" => "");

struct Delay {
    body: Value,
    value: Mutex<Option<Value>>,
}

impl FnBody for Delay {
    fn name(&self) -> &str {
        "delay"
    }
}

/// Whether `f` is a delay rather than a function that can be called.
pub(crate) fn is_delay(f: &Function) -> bool {
    f.body::<Delay>().is_some()
}

fn as_delay(value: &Value) -> Option<&Delay> {
    match value {
        Value::Fn(f) => f.body::<Delay>(),
        _ => None,
    }
}

fn make_delay(_: &mut Ctx, _: Call, body: &Value) -> EvalResult {
    let depth = body.depth().saturating_add(1);
    Ok(Value::Fn(Function::new(
        Delay {
            body: body.clone(),
            value: Mutex::new(None),
        },
        depth,
    )))
}

fn kept(delay: &Delay) -> Option<Value> {
    delay
        .value
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

fn force_delay(ctx: &mut Ctx, delay: &Delay) -> EvalResult {
    if let Some(value) = kept(delay) {
        return Ok(value);
    }
    let value = ctx.apply(&delay.body, &[])?;
    let mut slot = delay.value.lock().unwrap_or_else(PoisonError::into_inner);
    Ok(slot.get_or_insert(value).clone())
}

fn force(ctx: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    match as_delay(x) {
        Some(delay) => force_delay(ctx, delay),
        None => Ok(x.clone()),
    }
}

fn deref(ctx: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    match as_delay(x) {
        Some(delay) => force_delay(ctx, delay),
        None => Err(Error::unsupported(format!(
            "{call} of {}: only a delay can be dereferenced; {}",
            crate::eval::got(x),
            crate::analyze::refused("atom").map_or("", |r| r.hint)
        ))
        .into()),
    }
}

fn is_delay_p(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(as_delay(x).is_some()))
}

fn realized(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    if let Some(delay) = as_delay(x) {
        return Ok(Value::Bool(kept(delay).is_some()));
    }
    match x {
        // Clojure's unbounded range, iterate and cycle hold their first item from the start
        // (its repeat cannot be asked); the other lazy sequences here compute every item when
        // asked.
        Value::Lazy(l) if !matches!(l.kind(), LazyKind::Repeat(_)) => Ok(Value::Bool(matches!(
            l.kind(),
            LazyKind::Range { .. } | LazyKind::Iterate { .. } | LazyKind::Cycle(_)
        ))),
        // A realized sequence.
        Value::List(_) => Ok(Value::Bool(true)),
        other => Err(call.expected("a delay or a lazy sequence", other).into()),
    }
}
