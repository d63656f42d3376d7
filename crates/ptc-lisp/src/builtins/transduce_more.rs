//! `halt-when`, `eduction` and `iteration`: the transducer that stops a reduction with a value
//! of its own, a transducer applied to a collection, and a sequence of pages fetched by a step
//! function.

use super::args::{Call, Callable};
use super::transduce::{into_with, make_reduced};
use super::{Builtin, builtin};
use crate::error::Error;
use crate::eval::{Ctx, EvalResult, arity_error};
use crate::value::{Function, Map, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("halt-when", halt_when, "(halt-when pred) (halt-when pred retf)", "A transducer that stops at the first item for which pred is truthy: the reduction's result is that item, or (retf result item).", "(into [] (halt-when neg?) [1 2 -3 4])" => "-3"),
    builtin!("eduction", eduction, "(eduction xform* coll)", "The items of coll passed through the transducers, applied in order, as a sequence.", "(eduction (filter odd?) (map inc) (range 5))" => "(2 4)"),
    builtin!("iteration", iteration, "(iteration step & {:keys [somef vf kf initk]})", "The values (vf ret) of ret = (step k) for k = initk, (kf ret), ... while (somef ret) is truthy and k is not nil (defaults: some?, identity, identity, nil).", "(iteration (fn [k] (when (< k 3) {:v k :next (inc k)})) :initk 0 :vf :v :kf :next)" => "(0 1 2)"),
];

/// The key of the map a halted reduction carries its result in, as Clojure's.
fn halt_key() -> Value {
    Value::keyword("clojure.core/halt")
}

fn halt_when(_: &mut Ctx, call: Call, (pred, retf): (Callable, Option<&Value>)) -> EvalResult {
    let pred = pred.clone();
    let retf = retf.filter(|f| f.truthy()).cloned();
    if let Some(f) = &retf {
        call.arg::<Callable>(f)?;
    }
    let label = format!("({call} ...)");
    Ok(Value::Fn(Function::native(&label, move |_, args| {
        let [rf] = args else {
            return Err(arity_error("a transducer", args.len(), "1 (a reducing function)").into());
        };
        let (rf, pred, retf) = (rf.clone(), pred.clone(), retf.clone());
        Ok(Value::Fn(Function::native(
            "reducing function",
            move |ctx, args| match args {
                [] => ctx.apply(&rf, &[]),
                [result] => match result {
                    Value::Map(m) if m.contains_key(&halt_key()) => {
                        Ok(m.get(&halt_key()).cloned().unwrap_or_default())
                    }
                    _ => ctx.apply1(&rf, result),
                },
                [result, input] => {
                    if !ctx.apply1(&pred, input)?.truthy() {
                        return ctx.apply(&rf, args);
                    }
                    let halted = match &retf {
                        Some(f) => {
                            let completed = ctx.apply1(&rf, result)?;
                            ctx.apply(f, &[completed, input.clone()])?
                        }
                        None => input.clone(),
                    };
                    let mut m = Map::new();
                    m.assoc_mut(halt_key(), halted);
                    Ok(make_reduced(Value::Map(m)))
                }
                _ => Err(arity_error("a reducing function", args.len(), "0 to 2").into()),
            },
        )))
    })))
}

/// An eduction is computed at once, as the other sequences over finite collections are: the
/// result can be reduced, counted and walked as Clojure's.
fn eduction(ctx: &mut Ctx, call: Call, args: &[Value]) -> EvalResult {
    let Some((coll, xforms)) = args.split_last() else {
        return Err(arity_error(call.name(), 0, "at least 1 (the collection)").into());
    };
    let xform = match xforms {
        [] => return as_list(ctx, call, coll),
        [only] => only.clone(),
        several => {
            let comp = super::lookup_function("comp").ok_or_else(|| {
                Error::new(crate::error::ErrorKind::UndefinedSymbol, "comp is missing")
            })?;
            ctx.apply(&Value::Fn(comp), several)?
        }
    };
    match into_with(ctx, call, Value::vector([]), &xform, coll)? {
        Value::Vector(items) => Ok(Value::List(items)),
        other => Ok(other),
    }
}

fn as_list(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    Ok(Value::list(call.collect(ctx, coll)?))
}

/// The options of `iteration`, as keyword arguments or one map.
struct IterationOptions {
    somef: Option<Value>,
    vf: Option<Value>,
    kf: Option<Value>,
    initk: Value,
}

fn iteration_options(call: Call, options: &[Value]) -> Result<IterationOptions, Error> {
    let pairs: Vec<(Value, Value)> = match options {
        [Value::Map(m)] => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        _ if options.len().is_multiple_of(2) => options
            .chunks_exact(2)
            .map(|kv| (kv[0].clone(), kv[1].clone()))
            .collect(),
        _ => {
            return Err(Error::argument(format!(
                "{call} takes options as keyword/value pairs: (iteration step :initk 0 :kf next-key)"
            )));
        }
    };
    let mut out = IterationOptions {
        somef: None,
        vf: None,
        kf: None,
        initk: Value::Nil,
    };
    for (k, v) in pairs {
        let slot = match &k {
            Value::Keyword(name) => match name.as_str() {
                "somef" => &mut out.somef,
                "vf" => &mut out.vf,
                "kf" => &mut out.kf,
                "initk" => {
                    out.initk = v;
                    continue;
                }
                _ => continue,
            },
            _ => continue,
        };
        if v.truthy() {
            call.arg::<Callable>(&v)?;
            *slot = Some(v);
        }
    }
    Ok(out)
}

/// The values are computed at once, until `somef` says there are no more or `kf` gives nil
/// (a step function that never ends runs into the step limit).
fn iteration(ctx: &mut Ctx, call: Call, (step, options): (Callable, &[Value])) -> EvalResult {
    let options = iteration_options(call, options)?;
    let mut out = Vec::new();
    let mut ret = ctx.apply1(&step, &options.initk)?;
    loop {
        let some = match &options.somef {
            Some(f) => ctx.apply1(f, &ret)?.truthy(),
            None => !ret.is_nil(),
        };
        if !some {
            break;
        }
        ctx.charge_items(1)?;
        out.push(match &options.vf {
            Some(f) => ctx.apply1(f, &ret)?,
            None => ret.clone(),
        });
        let k = match &options.kf {
            Some(f) => ctx.apply1(f, &ret)?,
            None => ret.clone(),
        };
        if k.is_nil() {
            break;
        }
        ret = ctx.apply1(&step, &k)?;
    }
    Ok(Value::list(out))
}
