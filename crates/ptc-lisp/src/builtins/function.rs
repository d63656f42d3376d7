//! Functions that make or call functions: `apply`, `comp`, `partial`, `juxt`, `memoize`, ...
//!
//! The functions they return are native function values; they can be passed anywhere a
//! function is expected, stored with `def`, and called from `pmap` workers (a memoization cache
//! is shared safely between threads).

use super::args::{Call, Callable};
use super::{Builtin, builtin};
use crate::eval::{Ctx, EvalResult};
use crate::value::{Function, Value};
use rustc_hash::FxHashMap;
use std::sync::Mutex;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("apply", apply, "(apply f args* coll)", "Calls f with the given arguments followed by the items of coll.", "(apply max 1 [5 3])" => "5"),
    builtin!("identity", identity, "(identity x)", "Returns x.", "(identity 7)" => "7"),
    builtin!("comp", comp, "(comp f g & fs)", "The function (f (g ... args)): the rightmost function is called first, with all the arguments.", "((comp inc #(* 2 %)) 5)" => "11"),
    builtin!("partial", partial, "(partial f & args)", "A function like f with the first arguments already given.", "((partial + 10) 5)" => "15"),
    builtin!("complement", complement, "(complement f)", "The function (not (f args...)).", "((complement even?) 3)" => "true"),
    builtin!("juxt", juxt, "(juxt f & fs)", "A function returning the vector [(f args...) (g args...) ...].", "((juxt first count) [7 8 9])" => "[7 3]"),
    builtin!("constantly", constantly, "(constantly x)", "A function that ignores its arguments and returns x.", "(map (constantly 0) [1 2])" => "(0 0)"),
    builtin!("fnil", fnil, "(fnil f default) (fnil f d1 d2) (fnil f d1 d2 d3)", "A function like f that replaces nil first arguments with the defaults.", "((fnil inc 0) nil)" => "1"),
    builtin!("memoize", memoize, "(memoize f)", "A function like f that remembers the result for each list of arguments (f must be pure).", "(let [sq (memoize (fn [x] (* x x)))] [(sq 4) (sq 4)])" => "[16 16]"),
    builtin!("every-pred", every_pred, "(every-pred p & ps)", "A predicate that is true when every p is truthy for every argument.", "((every-pred pos? even?) 2 4)" => "true"),
    builtin!("some-fn", some_fn, "(some-fn p & ps)", "A function returning the first truthy (p arg) over all ps and arguments, else the last result.", "((some-fn :a :b) {:b 5})" => "5"),
];

fn apply(ctx: &mut Ctx, call: Call, (f, fixed, spread): (&Value, &[Value], &Value)) -> EvalResult {
    let mut call_args: Vec<Value> = fixed.to_vec();
    call_args.extend(call.collect(ctx, spread)?);
    ctx.apply(f, &call_args)
}

fn identity(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(x.clone())
}

fn expect_fns(call: Call, fs: &[Value]) -> crate::error::Result<()> {
    fs.iter()
        .try_for_each(|f| call.arg::<Callable>(f).map(drop))
}

/// A function value named after the builtin that made it, whose body holds `captured`.
fn native<'a>(
    call: Call,
    captured: impl IntoIterator<Item = &'a Value>,
    f: impl Fn(&mut Ctx, &[Value]) -> EvalResult + Send + Sync + 'static,
) -> Value {
    Value::Fn(Function::native_capturing(call.name(), captured, f))
}

fn comp(_: &mut Ctx, call: Call, fs: &[Value]) -> EvalResult {
    expect_fns(call, fs)?;
    match fs {
        [] => Ok(super::lookup_function("identity")
            .map(Value::Fn)
            .unwrap_or_default()),
        [f] => Ok(f.clone()),
        [outer @ .., innermost] => {
            let (innermost, outer) = (innermost.clone(), outer.to_vec());
            Ok(native(call, fs, move |ctx, args| {
                let mut v = ctx.apply(&innermost, args)?;
                for f in outer.iter().rev() {
                    v = ctx.apply1(f, &v)?;
                }
                Ok(v)
            }))
        }
    }
}

fn partial(_: &mut Ctx, call: Call, (f, given): (Callable, &[Value])) -> EvalResult {
    if given.is_empty() {
        return Ok(f.clone());
    }
    let captured = std::iter::once(&*f).chain(given);
    let (f, given) = (f.clone(), given.to_vec());
    Ok(native(call, captured, move |ctx, args| {
        let mut all = Vec::with_capacity(given.len() + args.len());
        all.extend_from_slice(&given);
        all.extend_from_slice(args);
        ctx.apply(&f, &all)
    }))
}

fn complement(_: &mut Ctx, call: Call, f: Callable) -> EvalResult {
    let g = f.clone();
    Ok(native(call, [&*f], move |ctx, args| {
        Ok(Value::Bool(!ctx.apply(&g, args)?.truthy()))
    }))
}

fn juxt(_: &mut Ctx, call: Call, (f, more): (Callable, &[Value])) -> EvalResult {
    let fs = functions(call, &f, more)?;
    Ok(native(
        call,
        std::iter::once(&*f).chain(more),
        move |ctx, args| {
            ctx.charge_items(fs.len())?;
            let mut out = crate::value::Seq::new();
            for f in &fs {
                out.push_back(ctx.apply(f, args)?);
            }
            Ok(Value::Vector(out))
        },
    ))
}

fn constantly(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    let v = x.clone();
    Ok(native(call, [x], move |_ctx, _args| Ok(v.clone())))
}

fn fnil(
    _: &mut Ctx,
    call: Call,
    (f, first, second, third): (Callable, &Value, Option<&Value>, Option<&Value>),
) -> EvalResult {
    let given = [Some(first), second, third].into_iter().flatten();
    let defaults: Vec<Value> = given.clone().cloned().collect();
    let captured = std::iter::once(&*f).chain(given);
    let g = f.clone();
    Ok(native(call, captured, move |ctx, args| {
        let patched: Vec<Value> = args
            .iter()
            .enumerate()
            .map(|(i, a)| match (a, defaults.get(i)) {
                (Value::Nil, Some(d)) => d.clone(),
                _ => a.clone(),
            })
            .collect();
        ctx.apply(&g, &patched)
    }))
}

fn memoize(_: &mut Ctx, call: Call, f: Callable) -> EvalResult {
    let g = f.clone();
    let cache: Mutex<FxHashMap<Vec<Value>, Value>> = Mutex::new(FxHashMap::default());
    Ok(native(call, [&*f], move |ctx, args| {
        let lock = || {
            cache
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        };
        if let Some(hit) = lock().get(args) {
            return Ok(hit.clone());
        }
        // The lock is not held while f runs: f may call this function again (recursion).
        let result = ctx.apply(&g, args)?;
        let entry_size: usize =
            args.iter().map(Value::estimated_size).sum::<usize>() + result.estimated_size();
        ctx.charge(entry_size)?;
        lock().insert(args.to_vec(), result.clone());
        Ok(result)
    }))
}

/// `f` and `more`, all checked to be functions.
fn functions(call: Call, f: &Callable, more: &[Value]) -> crate::error::Result<Vec<Value>> {
    expect_fns(call, more)?;
    Ok(std::iter::once(&**f).chain(more).cloned().collect())
}

fn every_pred(_: &mut Ctx, call: Call, (p, more): (Callable, &[Value])) -> EvalResult {
    let preds = functions(call, &p, more)?;
    Ok(native(
        call,
        std::iter::once(&*p).chain(more),
        move |ctx, args| {
            for p in &preds {
                for x in args {
                    if !ctx.apply1(p, x)?.truthy() {
                        return Ok(Value::Bool(false));
                    }
                }
            }
            Ok(Value::Bool(true))
        },
    ))
}

fn some_fn(_: &mut Ctx, call: Call, (p, more): (Callable, &[Value])) -> EvalResult {
    let preds = functions(call, &p, more)?;
    Ok(native(
        call,
        std::iter::once(&*p).chain(more),
        move |ctx, args| {
            // Clojure's (or (p1 x) (p1 y) (p2 x) ...): the first truthy result, else the last one.
            let mut last = Value::Nil;
            for p in &preds {
                for x in args {
                    last = ctx.apply1(p, x)?;
                    if last.truthy() {
                        return Ok(last);
                    }
                }
            }
            Ok(last)
        },
    ))
}
