//! Transducers, early termination (`reduced`) and the functions that run transducers.
//!
//! A transducer is an ordinary function value: given a reducing function it returns another
//! one. A reducing function takes no arguments (the initial value), one (completion) or two (one
//! step), so `comp` composes transducers in Clojure's order, data flowing through the leftmost
//! first, and programs can write their own transducers with `fn`. Stateful transducers (`take`,
//! `distinct`, `partition-all`, ...) create fresh state each time they are applied to a reducing
//! function, so one transducer value can be used many times.
//!
//! `(reduced x)` is represented as a one-entry map under the key `:ptc/reduced` (it prints as
//! `{:ptc/reduced x}`); `reduce`, `transduce`, `into`, `reductions` and friends stop when a step
//! returns one and unwrap it.

use super::args::{Call, Callable};
use super::build::{conj_one, list_of};
pub(crate) use crate::eval::reduced::{as_reduced, make_reduced, unreduced};

use super::{Builtin, builtin};
use crate::error::Error;
use crate::eval::{Ctx, EvalResult, Items, arity_error};
use crate::value::{Function, Seq, Value};
use rustc_hash::FxHashSet;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("transduce", transduce, "(transduce xform f coll) (transduce xform f init coll)", "Reduces coll with (xform f), starting from init (or (f)), then completes the result with a one-argument call.", "(transduce (comp (filter odd?) (map inc)) + [1 2 3])" => "6"),
    builtin!("sequence", sequence, "(sequence coll) (sequence xform coll & colls)", "The items of coll as a sequence (() when empty), passed through the transducer xform if one is given (with several colls, each step takes one item of each).", "(sequence (comp (map inc) (take 3)) (range))" => "(1 2 3)"),
    builtin!("reduced", reduced_fn, "(reduced x)", "Wraps x so that reduce, transduce, into and reductions stop at once with x.", "(reduce (fn [acc x] (if (> x 2) (reduced acc) (+ acc x))) 0 [1 2 3 4])" => "3"),
    builtin!("reduced?", is_reduced, "(reduced? x)", "True if x was made by reduced.", "(reduced? (reduced 1))" => "true"),
    builtin!("unreduced", unreduced_fn, "(unreduced x)", "The value inside a reduced, or x itself.", "(unreduced (reduced 5))" => "5"),
    builtin!("ensure-reduced", ensure_reduced_fn, "(ensure-reduced x)", "x if it is already reduced, else (reduced x).", "(unreduced (ensure-reduced (reduced 5)))" => "5"),
    builtin!("completing", completing, "(completing f) (completing f cf)", "A reducing function that steps with f and completes with cf (identity by default), for transduce with a two-argument function.", "(transduce (map inc) (completing (fn [acc x] (+ acc x))) 0 [1 2])" => "5"),
    builtin!("cat", cat, "(cat rf)", "The transducer that passes on the items of each collection it receives.", "(into [] cat [[1 2] [3]])" => "[1 2 3]"),
];

// ---------------------------------------------------------------------------------------------
// reduced
// ---------------------------------------------------------------------------------------------

fn ensure_reduced(v: Value) -> Value {
    if as_reduced(&v).is_some() {
        v
    } else {
        make_reduced(v)
    }
}

fn reduced_fn(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(make_reduced(x.clone()))
}

fn is_reduced(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(as_reduced(x).is_some()))
}

fn unreduced_fn(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(unreduced(x.clone()))
}

fn ensure_reduced_fn(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(ensure_reduced(x.clone()))
}

// ---------------------------------------------------------------------------------------------
// Running transducers
// ---------------------------------------------------------------------------------------------

/// Feed the items of `coll` to the reducing function `rf`, starting from `acc`; stop at a
/// reduced result and unwrap it. Unbounded inputs are accepted: a transducer such as `take` ends
/// them (and one that never does runs into the step limit).
fn reduce_items(ctx: &mut Ctx, call: Call, rf: &Value, mut acc: Value, coll: &Value) -> EvalResult {
    let mut items = call.items(coll)?;
    while let Some(item) = items.next(ctx)? {
        acc = ctx.apply(rf, &[acc, item.into_owned()])?;
        if let Some(done) = as_reduced(&acc) {
            return Ok(done.clone());
        }
    }
    Ok(acc)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A reducing function that adds each item to `target` with `conj` semantics. It keeps the
/// collection itself and passes a placeholder accumulator along the chain, so each step updates
/// the collection in place instead of copying a shared one.
fn collecting_sink(call: Call, target: Arc<Mutex<Value>>) -> Value {
    Value::Fn(Function::native(call.name(), move |ctx, args| match args {
        [] => Ok(Value::Nil),
        // Completion gives the collection filled so far, which is what `into` returns unless
        // a transducer completes with something else (`halt-when`).
        [_] => Ok(lock(&target).clone()),
        [acc, item] => {
            ctx.charge_items(1)?;
            conj_one(call, &mut lock(&target), item.clone())?;
            Ok(acc.clone())
        }
        _ => Err(arity_error(call.name(), args.len(), "0 to 2").into()),
    }))
}

/// `(into to xform from)`.
pub(crate) fn into_with(
    ctx: &mut Ctx,
    call: Call,
    to: Value,
    xform: &Value,
    from: &Value,
) -> EvalResult {
    let xform = call.arg::<Callable>(xform)?;
    let target = Arc::new(Mutex::new(to));
    let rf = ctx.apply(&xform, &[collecting_sink(call, target.clone())])?;
    let acc = reduce_items(ctx, call, &rf, Value::Nil, from)?;
    let done = ctx.apply(&rf, &[acc]);
    drop(target);
    done
}

/// `(sequence xform c1 c2 ...)`: each step of `(xform rf)` gets one item of every
/// collection, until the shortest ends.
fn into_multi(ctx: &mut Ctx, call: Call, xform: &Value, colls: &[&Value]) -> EvalResult {
    let xform = call.arg::<Callable>(xform)?;
    let target = Arc::new(Mutex::new(Value::vector([])));
    let rf = ctx.apply(&xform, &[collecting_sink(call, target.clone())])?;
    let mut sources = colls
        .iter()
        .map(|c| call.items(c))
        .collect::<Result<Vec<_>, _>>()?;
    let mut args = vec![Value::Nil];
    'steps: loop {
        args.truncate(1);
        for source in &mut sources {
            match source.next(ctx)? {
                Some(item) => args.push(item.into_owned()),
                None => break 'steps,
            }
        }
        args[0] = ctx.apply(&rf, &args)?;
        if let Some(done) = as_reduced(&args[0]) {
            args[0] = done.clone();
            break;
        }
    }
    let acc = std::mem::take(&mut args[0]);
    let done = ctx.apply(&rf, &[acc]);
    drop(target);
    done
}

fn transduce(
    ctx: &mut Ctx,
    call: Call,
    (xform, f, init, coll): (Callable, Callable, Option<&Value>, &Value),
) -> EvalResult {
    let init = match init {
        Some(init) => init.clone(),
        None => ctx.apply(&f, &[])?,
    };
    let rf = ctx.apply1(&xform, &f)?;
    let acc = reduce_items(ctx, call, &rf, init, coll)?;
    ctx.apply(&rf, &[acc])
}

/// `(sequence coll)`, `(sequence xform coll)` or `(sequence xform coll & colls)`.
fn sequence(
    ctx: &mut Ctx,
    call: Call,
    (first, second, more): (&Value, Option<&Value>, &[Value]),
) -> EvalResult {
    if let (Some(coll), false) = (second, more.is_empty()) {
        let colls: Vec<&Value> = std::iter::once(coll).chain(more).collect();
        return match into_multi(ctx, call, first, &colls)? {
            Value::Vector(items) => Ok(Value::List(items)),
            other => Ok(other),
        };
    }
    match (first, second) {
        (coll, None) => match coll {
            Value::List(_) | Value::Lazy(_) => Ok(coll.clone()),
            Value::Vector(s) => Ok(Value::List(s.without_meta())),
            other => {
                let items = call.collect(ctx, other)?;
                list_of(ctx, items)
            }
        },
        (xform, Some(coll)) => match into_with(ctx, call, Value::vector([]), xform, coll)? {
            Value::Vector(items) => Ok(Value::List(items)),
            other => Ok(other),
        },
    }
}

fn completing(_: &mut Ctx, call: Call, (f, cf): (Callable, Option<Callable>)) -> EvalResult {
    let f = f.clone();
    let complete = cf.map(|cf| cf.clone());
    Ok(Value::Fn(Function::native(
        call.name(),
        move |ctx, args| match (args, &complete) {
            ([], _) => ctx.apply(&f, &[]),
            ([acc], None) => Ok(acc.clone()),
            ([acc], Some(cf)) => ctx.apply1(cf, acc),
            ([_, _], _) => ctx.apply(&f, args),
            _ => Err(arity_error("a completing function", args.len(), "0 to 2").into()),
        },
    )))
}

// ---------------------------------------------------------------------------------------------
// Transducer values
// ---------------------------------------------------------------------------------------------

/// A transducer: applied to a reducing function `rf`, it returns `make(rf)`.
fn transducer(name: Call, make: impl Fn(Value) -> Value + Send + Sync + 'static) -> Value {
    let label = format!("({name} ...)");
    Value::Fn(Function::native(&label, move |_ctx, args| match args {
        [rf] => Ok(make(rf.clone())),
        _ => Err(Error::arity(format!(
            "({name} ...) without a collection is a transducer, which takes one reducing \
             function; to process a collection write ({name} ... coll), or use the transducer \
             with into, sequence or transduce: (into [] ({name} ...) coll)"
        ))
        .into()),
    }))
}

/// A reducing function around `rf`: init and completion pass through to `rf`, `step` handles
/// `(acc, item)`.
fn stepper(
    rf: Value,
    step: impl Fn(&mut Ctx, &Value, Value, Value) -> EvalResult + Send + Sync + 'static,
) -> Value {
    Value::Fn(Function::native(
        "reducing function",
        move |ctx, args| match args {
            [] => ctx.apply(&rf, &[]),
            [acc] => ctx.apply1(&rf, acc),
            [acc, item] => step(ctx, &rf, acc.clone(), item.clone()),
            _ => Err(arity_error("a reducing function", args.len(), "0 to 2").into()),
        },
    ))
}

/// Like [`stepper`], with a completion that may flush buffered items before completing `rf`.
fn stepper_with_flush(
    rf: Value,
    step: impl Fn(&mut Ctx, &Value, Value, Value) -> EvalResult + Send + Sync + 'static,
    flush: impl Fn(&mut Ctx, &Value, Value) -> EvalResult + Send + Sync + 'static,
) -> Value {
    Value::Fn(Function::native(
        "reducing function",
        move |ctx, args| match args {
            [] => ctx.apply(&rf, &[]),
            [acc] => {
                let acc = flush(ctx, &rf, acc.clone())?;
                ctx.apply(&rf, &[acc])
            }
            [acc, item] => step(ctx, &rf, acc.clone(), item.clone()),
            _ => Err(arity_error("a reducing function", args.len(), "0 to 2").into()),
        },
    ))
}

#[inline]
fn call1(ctx: &mut Ctx, f: &Value, x: &Value) -> EvalResult {
    ctx.apply1(f, x)
}

/// `(map f)`.
pub(crate) fn map_xf(call: Call, f: Value) -> Value {
    transducer(call, move |rf| {
        let f = f.clone();
        Value::Fn(Function::native(
            "reducing function",
            move |ctx, args| match args {
                [] => ctx.apply(&rf, &[]),
                [acc] => ctx.apply1(&rf, acc),
                [acc, x] => {
                    let y = call1(ctx, &f, x)?;
                    ctx.apply(&rf, &[acc.clone(), y])
                }
                // One item of each collection (`(sequence (map f) c1 c2)`): f takes them all.
                [acc, inputs @ ..] => {
                    let y = ctx.apply(&f, inputs)?;
                    ctx.apply(&rf, &[acc.clone(), y])
                }
            },
        ))
    })
}

/// `(filter pred)` (`keep = true`) or `(remove pred)`.
pub(crate) fn filter_xf(call: Call, pred: Value, keep: bool) -> Value {
    transducer(call, move |rf| {
        let pred = pred.clone();
        stepper(rf, move |ctx, rf, acc, x| {
            if call1(ctx, &pred, &x)?.truthy() == keep {
                ctx.apply(rf, &[acc, x])
            } else {
                Ok(acc)
            }
        })
    })
}

/// `(keep f)`.
pub(crate) fn keep_xf(call: Call, f: Value) -> Value {
    transducer(call, move |rf| {
        let f = f.clone();
        stepper(rf, move |ctx, rf, acc, x| {
            let y = call1(ctx, &f, &x)?;
            if y.is_nil() {
                Ok(acc)
            } else {
                ctx.apply(rf, &[acc, y])
            }
        })
    })
}

/// `(map-indexed f)` (`keep_nil = true`) or `(keep-indexed f)`.
pub(crate) fn indexed_xf(call: Call, f: Value, keep_nil: bool) -> Value {
    transducer(call, move |rf| {
        let f = f.clone();
        let index = AtomicI64::new(0);
        stepper(rf, move |ctx, rf, acc, x| {
            let i = index.fetch_add(1, Ordering::Relaxed);
            let y = ctx.apply(&f, &[Value::Int(i), x])?;
            if y.is_nil() && !keep_nil {
                Ok(acc)
            } else {
                ctx.apply(rf, &[acc, y])
            }
        })
    })
}

/// Take one from a counter that stops at zero; the count before, or `None` when it was zero.
fn count_down(counter: &AtomicUsize) -> Option<usize> {
    counter
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
        .ok()
}

/// `(take n)`.
pub(crate) fn take_xf(call: Call, n: i64) -> Value {
    let n = usize::try_from(n).unwrap_or(0);
    transducer(call, move |rf| {
        let remaining = AtomicUsize::new(n);
        stepper(rf, move |ctx, rf, acc, x| {
            let before = count_down(&remaining).unwrap_or(0);
            let acc = if before > 0 {
                ctx.apply(rf, &[acc, x])?
            } else {
                acc
            };
            // Stop as soon as the last wanted item is in, without waiting for another.
            Ok(if before <= 1 {
                ensure_reduced(acc)
            } else {
                acc
            })
        })
    })
}

/// `(drop n)`.
pub(crate) fn drop_xf(call: Call, n: i64) -> Value {
    let n = usize::try_from(n).unwrap_or(0);
    transducer(call, move |rf| {
        let remaining = AtomicUsize::new(n);
        stepper(rf, move |ctx, rf, acc, x| {
            if count_down(&remaining).is_some() {
                Ok(acc)
            } else {
                ctx.apply(rf, &[acc, x])
            }
        })
    })
}

/// `(take-nth n)`.
pub(crate) fn take_nth_xf(call: Call, n: usize) -> Value {
    transducer(call, move |rf| {
        let index = AtomicUsize::new(0);
        stepper(rf, move |ctx, rf, acc, x| {
            if index.fetch_add(1, Ordering::Relaxed).is_multiple_of(n) {
                ctx.apply(rf, &[acc, x])
            } else {
                Ok(acc)
            }
        })
    })
}

/// `(take-while pred)`.
pub(crate) fn take_while_xf(call: Call, pred: Value) -> Value {
    transducer(call, move |rf| {
        let pred = pred.clone();
        stepper(rf, move |ctx, rf, acc, x| {
            if call1(ctx, &pred, &x)?.truthy() {
                ctx.apply(rf, &[acc, x])
            } else {
                Ok(make_reduced(acc))
            }
        })
    })
}

/// `(drop-while pred)`.
pub(crate) fn drop_while_xf(call: Call, pred: Value) -> Value {
    transducer(call, move |rf| {
        let pred = pred.clone();
        let dropping = AtomicBool::new(true);
        stepper(rf, move |ctx, rf, acc, x| {
            if dropping.load(Ordering::Relaxed) {
                if call1(ctx, &pred, &x)?.truthy() {
                    return Ok(acc);
                }
                dropping.store(false, Ordering::Relaxed);
            }
            ctx.apply(rf, &[acc, x])
        })
    })
}

/// Pass each item of `coll` to `rf`, stopping (still reduced) when a step returns a reduced.
fn each_item(ctx: &mut Ctx, rf: &Value, mut acc: Value, coll: &Value) -> EvalResult {
    let mut items = Items::new(coll)?;
    while let Some(item) = items.next(ctx)? {
        acc = ctx.apply(rf, &[acc, item.into_owned()])?;
        if as_reduced(&acc).is_some() {
            break;
        }
    }
    Ok(acc)
}

fn cat(_: &mut Ctx, _: Call, rf: &Value) -> EvalResult {
    Ok(stepper(rf.clone(), |ctx, rf, acc, coll| {
        each_item(ctx, rf, acc, &coll)
    }))
}

/// `(mapcat f)`.
pub(crate) fn mapcat_xf(call: Call, f: Value) -> Value {
    transducer(call, move |rf| {
        let f = f.clone();
        stepper(rf, move |ctx, rf, acc, x| {
            let coll = call1(ctx, &f, &x)?;
            each_item(ctx, rf, acc, &coll)
        })
    })
}

/// `(distinct)`.
pub(crate) fn distinct_xf(call: Call) -> Value {
    transducer(call, |rf| {
        let seen: Mutex<FxHashSet<Value>> = Mutex::new(FxHashSet::default());
        stepper(rf, move |ctx, rf, acc, x| {
            let fresh = lock(&seen).insert(x.clone());
            if fresh {
                ctx.charge_items(1)?;
                ctx.apply(rf, &[acc, x])
            } else {
                Ok(acc)
            }
        })
    })
}

/// `(dedupe)`.
pub(crate) fn dedupe_xf(call: Call) -> Value {
    transducer(call, |rf| {
        let last: Mutex<Option<Value>> = Mutex::new(None);
        stepper(rf, move |ctx, rf, acc, x| {
            let repeated = {
                let mut last = lock(&last);
                let repeated = last.as_ref() == Some(&x);
                *last = Some(x.clone());
                repeated
            };
            if repeated {
                Ok(acc)
            } else {
                ctx.apply(rf, &[acc, x])
            }
        })
    })
}

/// `(interpose sep)`.
pub(crate) fn interpose_xf(call: Call, sep: Value) -> Value {
    transducer(call, move |rf| {
        let sep = sep.clone();
        let started = AtomicBool::new(false);
        stepper(rf, move |ctx, rf, acc, x| {
            let acc = if started.swap(true, Ordering::Relaxed) {
                let acc = ctx.apply(rf, &[acc, sep.clone()])?;
                if as_reduced(&acc).is_some() {
                    return Ok(acc);
                }
                acc
            } else {
                acc
            };
            ctx.apply(rf, &[acc, x])
        })
    })
}

/// Hand a finished part (a vector, as Clojure's transducers make) to `rf`.
fn emit_part(ctx: &mut Ctx, rf: &Value, acc: Value, part: Vec<Value>) -> EvalResult {
    ctx.charge_items(part.len())?;
    ctx.apply(rf, &[acc, Value::Vector(Seq::from(part))])
}

/// `(partition-all n)`.
pub(crate) fn partition_all_xf(call: Call, n: usize) -> Value {
    transducer(call, move |rf| {
        let buffer: Arc<Mutex<Vec<Value>>> = Arc::new(Mutex::new(Vec::new()));
        let flush_buffer = buffer.clone();
        stepper_with_flush(
            rf,
            move |ctx, rf, acc, x| {
                let full = {
                    let mut buffer = lock(&buffer);
                    buffer.push(x);
                    (buffer.len() >= n).then(|| std::mem::take(&mut *buffer))
                };
                match full {
                    Some(part) => emit_part(ctx, rf, acc, part),
                    None => Ok(acc),
                }
            },
            move |ctx, rf, acc| {
                let rest = std::mem::take(&mut *lock(&flush_buffer));
                if rest.is_empty() {
                    Ok(acc)
                } else {
                    Ok(unreduced(emit_part(ctx, rf, acc, rest)?))
                }
            },
        )
    })
}

/// `(partition-by f)`.
pub(crate) fn partition_by_xf(call: Call, f: Value) -> Value {
    transducer(call, move |rf| {
        let f = f.clone();
        // The current run of items and the value of f they share.
        let state: Arc<Mutex<(Vec<Value>, Option<Value>)>> =
            Arc::new(Mutex::new((Vec::new(), None)));
        let flush_state = state.clone();
        stepper_with_flush(
            rf,
            move |ctx, rf, acc, x| {
                let key = call1(ctx, &f, &x)?;
                let finished = {
                    let mut state = lock(&state);
                    let (run, last) = &mut *state;
                    let same = last.as_ref().is_none_or(|k| *k == key);
                    *last = Some(key);
                    if same {
                        run.push(x);
                        None
                    } else {
                        Some(std::mem::replace(run, vec![x]))
                    }
                };
                let Some(part) = finished else {
                    return Ok(acc);
                };
                let acc = emit_part(ctx, rf, acc, part)?;
                if as_reduced(&acc).is_some() {
                    // The item that started the new run is not passed on after the end.
                    lock(&state).0.clear();
                }
                Ok(acc)
            },
            move |ctx, rf, acc| {
                let rest = std::mem::take(&mut lock(&flush_state).0);
                if rest.is_empty() {
                    Ok(acc)
                } else {
                    Ok(unreduced(emit_part(ctx, rf, acc, rest)?))
                }
            },
        )
    })
}
