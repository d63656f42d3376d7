//! Metadata: `meta`, `with-meta`, `vary-meta`.
//!
//! Collections and functions carry a metadata map that takes no part in their value (see
//! `value::meta`). A definition's var (`#'name`) has the metadata `def` gives it: its name and
//! docstring.

use super::args::{Call, Callable};
use super::{Builtin, builtin};
use crate::error::{Error, ErrorKind};
use crate::eval::{Ctx, EvalResult};
use crate::value::{Map, Value};

fn meta(ctx: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    if let Value::Var(sym) = x {
        return Ok(var_meta(ctx, sym.name()));
    }
    Ok(x.meta().map_or(Value::Nil, |m| Value::Map(m.clone())))
}

/// What `(meta #'name)` shows of a definition: `{:name name, :doc "..."}`.
fn var_meta(ctx: &Ctx, name: &str) -> Value {
    let Some(binding) = ctx.globals.iter().find(|b| b.name.as_str() == name) else {
        return Value::Nil;
    };
    let mut meta = Map::new().assoc(Value::keyword("name"), Value::symbol(name));
    if let Some(doc) = &binding.doc {
        meta = meta.assoc(Value::keyword("doc"), Value::Str(doc.clone()));
    }
    Value::Map(meta)
}

/// The metadata argument: a map or nil.
fn meta_arg(call: Call, m: &Value) -> Result<Option<Map>, Error> {
    match m {
        Value::Nil => Ok(None),
        Value::Map(m) => Ok(Some(m.clone())),
        other => Err(call.expected("a map (or nil) as metadata", other)),
    }
}

/// `x` carrying `meta`: lists, vectors, maps, sets and functions carry metadata.
pub(crate) fn attach(ctx: &mut Ctx, call: Call, x: &Value, meta: Option<Map>) -> EvalResult {
    let out = match x.with_meta(meta) {
        Some(out) => out,
        None if matches!(x, Value::Symbol(_) | Value::Var(_)) => {
            return Err(call
                .error(
                    ErrorKind::Unsupported,
                    format_args!(
                        "{} cannot carry metadata in PTC-Lisp; put the data beside it, e.g. in a map {{:value x :meta {{...}}}}",
                        super::got(x)
                    ),
                )
                .into());
        }
        None if matches!(x, Value::Lazy(_)) => {
            return Err(call
                .expected_with(
                    "a collection or function",
                    x,
                    "; realize the lazy sequence first: (with-meta (vec s) m)",
                )
                .into());
        }
        None => return Err(call.expected("a collection or function", x).into()),
    };
    ctx.check_depth(&out)?;
    Ok(out)
}

fn with_meta(ctx: &mut Ctx, call: Call, (x, m): (&Value, &Value)) -> EvalResult {
    let meta = meta_arg(call, m)?;
    attach(ctx, call, x, meta)
}

fn vary_meta(ctx: &mut Ctx, call: Call, (x, f, extra): (&Value, Callable, &[Value])) -> EvalResult {
    if !x.can_carry_meta() {
        // The value's own kind is checked before `f` runs, as `with-meta` would check it.
        return attach(ctx, call, x, None);
    }
    let mut f_args = Vec::with_capacity(extra.len() + 1);
    f_args.push(x.meta().map_or(Value::Nil, |m| Value::Map(m.clone())));
    f_args.extend_from_slice(extra);
    let m = ctx.apply(&f, &f_args)?;
    let meta = meta_arg(call, &m)?;
    attach(ctx, call, x, meta)
}

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("meta", meta, "(meta x)", "The metadata map of a collection, function or var (#'name), or nil; metadata never takes part in equality.", "(meta (with-meta [1 2] {:source :api}))" => "{:source :api}"),
    builtin!("with-meta", with_meta, "(with-meta coll m)", "The same collection or function carrying the metadata map m (nil removes it).", "(let [v (with-meta [1 2] {:n 2})] [v (:n (meta v))])" => "[[1 2] 2]"),
    builtin!("vary-meta", vary_meta, "(vary-meta coll f & args)", "The same collection or function with its metadata replaced by (apply f (meta coll) args).", "(meta (vary-meta ^{:n 1} [] update :n + 10))" => "{:n 11}"),
];
