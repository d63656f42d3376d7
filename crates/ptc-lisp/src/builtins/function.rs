//! Functions that make or call functions: `apply`, `comp`, `partial`, `juxt`, `memoize`, ...
//!
//! The functions they return are native function values; they can be passed anywhere a
//! function is expected, stored with `def`, and called from `pmap` workers (a memoization cache
//! is shared safely between threads).

use super::{Builtin, builtin, expect_fn};
use crate::eval::{Ctx, EvalResult, Items};
use crate::value::{Function, Value};
use rustc_hash::FxHashMap;
use std::sync::Mutex;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("apply", [2..], apply, "(apply f args* coll)", "Calls f with the given arguments followed by the items of coll.", "(apply max 1 [5 3])" => "5"),
    builtin!("identity", [1], identity, "(identity x)", "Returns x.", "(identity 7)" => "7"),
    builtin!("comp", [0..], comp, "(comp f g & fs)", "The function (f (g ... args)): the rightmost function is called first, with all the arguments.", "((comp inc #(* 2 %)) 5)" => "11"),
    builtin!("partial", [1..], partial, "(partial f & args)", "A function like f with the first arguments already given.", "((partial + 10) 5)" => "15"),
    builtin!("complement", [1], complement, "(complement f)", "The function (not (f args...)).", "((complement even?) 3)" => "true"),
    builtin!("juxt", [1..], juxt, "(juxt f & fs)", "A function returning the vector [(f args...) (g args...) ...].", "((juxt first count) [7 8 9])" => "[7 3]"),
    builtin!("constantly", [1], constantly, "(constantly x)", "A function that ignores its arguments and returns x.", "(map (constantly 0) [1 2])" => "(0 0)"),
    builtin!("fnil", [2..=4], fnil, "(fnil f default) (fnil f d1 d2) (fnil f d1 d2 d3)", "A function like f that replaces nil first arguments with the defaults.", "((fnil inc 0) nil)" => "1"),
    builtin!("memoize", [1], memoize, "(memoize f)", "A function like f that remembers the result for each list of arguments (f must be pure).", "(let [sq (memoize (fn [x] (* x x)))] [(sq 4) (sq 4)])" => "[16 16]"),
    builtin!("every-pred", [1..], every_pred, "(every-pred p & ps)", "A predicate that is true when every p is truthy for every argument.", "((every-pred pos? even?) 2 4)" => "true"),
    builtin!("some-fn", [1..], some_fn, "(some-fn p & ps)", "A function returning the first truthy (p arg) over all ps and arguments, else the last result.", "((some-fn :a :b) {:b 5})" => "5"),
];

fn apply(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let f = &args[0];
    let (spread, fixed) = args[1..].split_last().expect("arity checked");
    let mut call_args: Vec<Value> = fixed.to_vec();
    call_args.extend(Items::collect_all(spread, ctx, "apply")?);
    ctx.apply(f, &call_args)
}

fn identity(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(args[0].clone())
}

fn expect_fns(name: &str, fs: &[Value]) -> crate::error::Result<()> {
    fs.iter().try_for_each(|f| expect_fn(name, f))
}

/// A function value whose body holds `captured`.
fn native(
    name: &str,
    captured: &[Value],
    f: impl Fn(&mut Ctx, &[Value]) -> EvalResult + Send + Sync + 'static,
) -> Value {
    Value::Fn(Function::native_capturing(name, captured, f))
}

fn comp(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    expect_fns("comp", args)?;
    match args {
        [] => Ok(super::lookup_function("identity")
            .map(Value::Fn)
            .unwrap_or_default()),
        [f] => Ok(f.clone()),
        _ => {
            let fs: Vec<Value> = args.to_vec();
            Ok(native("comp", args, move |ctx, call| {
                let (innermost, outer) = fs.split_last().expect("two or more functions");
                let mut v = ctx.apply(innermost, call)?;
                for f in outer.iter().rev() {
                    v = ctx.apply1(f, &v)?;
                }
                Ok(v)
            }))
        }
    }
}

fn partial(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let f = args[0].clone();
    expect_fn("partial", &f)?;
    let given: Vec<Value> = args[1..].to_vec();
    if given.is_empty() {
        return Ok(f);
    }
    Ok(native("partial", args, move |ctx, call| {
        let mut all = Vec::with_capacity(given.len() + call.len());
        all.extend_from_slice(&given);
        all.extend_from_slice(call);
        ctx.apply(&f, &all)
    }))
}

fn complement(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let f = args[0].clone();
    expect_fn("complement", &f)?;
    Ok(native("complement", args, move |ctx, call| {
        Ok(Value::Bool(!ctx.apply(&f, call)?.truthy()))
    }))
}

fn juxt(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    expect_fns("juxt", args)?;
    let fs: Vec<Value> = args.to_vec();
    Ok(native("juxt", args, move |ctx, call| {
        ctx.charge_items(fs.len())?;
        let mut out = crate::value::Seq::new();
        for f in &fs {
            out.push_back(ctx.apply(f, call)?);
        }
        Ok(Value::Vector(out))
    }))
}

fn constantly(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let x = args[0].clone();
    Ok(native("constantly", args, move |_ctx, _call| Ok(x.clone())))
}

fn fnil(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    expect_fn("fnil", &args[0])?;
    let f = args[0].clone();
    let defaults: Vec<Value> = args[1..].to_vec();
    Ok(native("fnil", args, move |ctx, call_args| {
        let patched: Vec<Value> = call_args
            .iter()
            .enumerate()
            .map(|(i, a)| match (a, defaults.get(i)) {
                (Value::Nil, Some(d)) => d.clone(),
                _ => a.clone(),
            })
            .collect();
        ctx.apply(&f, &patched)
    }))
}

fn memoize(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let f = args[0].clone();
    expect_fn("memoize", &f)?;
    let cache: Mutex<FxHashMap<Vec<Value>, Value>> = Mutex::new(FxHashMap::default());
    Ok(native("memoize", args, move |ctx, call| {
        let lock = || {
            cache
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        };
        if let Some(hit) = lock().get(call) {
            return Ok(hit.clone());
        }
        // The lock is not held while f runs: f may call this function again (recursion).
        let result = ctx.apply(&f, call)?;
        let entry_size: usize =
            call.iter().map(Value::estimated_size).sum::<usize>() + result.estimated_size();
        ctx.charge(entry_size)?;
        lock().insert(call.to_vec(), result.clone());
        Ok(result)
    }))
}

fn every_pred(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    expect_fns("every-pred", args)?;
    let preds: Vec<Value> = args.to_vec();
    Ok(native("every-pred", args, move |ctx, call| {
        for p in &preds {
            for x in call {
                if !ctx.apply1(p, x)?.truthy() {
                    return Ok(Value::Bool(false));
                }
            }
        }
        Ok(Value::Bool(true))
    }))
}

fn some_fn(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    expect_fns("some-fn", args)?;
    let preds: Vec<Value> = args.to_vec();
    Ok(native("some-fn", args, move |ctx, call| {
        // Clojure's (or (p1 x) (p1 y) (p2 x) ...): the first truthy result, else the last one.
        let mut last = Value::Nil;
        for p in &preds {
            for x in call {
                last = ctx.apply1(p, x)?;
                if last.truthy() {
                    return Ok(last);
                }
            }
        }
        Ok(last)
    }))
}
