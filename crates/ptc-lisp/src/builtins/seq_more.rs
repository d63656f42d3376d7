//! The sequence functions of `clojure.core` beyond the everyday ones: `fnext`, `nfirst`,
//! `nnext`, `rseq`, `list*`, `bounded-count`, `replace`, `distinct?`, `repeatedly`, `run!`,
//! `trampoline` and `comparator`. Most are short compositions of builtins, and call them
//! through the registry so that they behave exactly alike.

use super::args::{Call, Callable, Truncated};
use super::transduce::{as_reduced, map_xf};
use super::{Builtin, builtin};
use crate::error::Error;
use crate::eval::{Ctx, EvalResult};
use crate::value::{Function, Seq, Set, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("fnext", fnext, "(fnext coll)", "The second item, as (first (next coll)).", "(fnext [1 2 3])" => "2"),
    builtin!("nfirst", nfirst, "(nfirst coll)", "(next (first coll)): the first item without its own first item.", "(nfirst [[1 2 3] [4]])" => "(2 3)"),
    builtin!("nnext", nnext, "(nnext coll)", "(next (next coll)): the items after the second, or nil.", "(nnext [1 2 3])" => "(3)"),
    builtin!("rseq", rseq, "(rseq coll)", "The items of a vector, sorted map or sorted set in reverse order, or nil when empty.", "(rseq [1 2 3])" => "(3 2 1)"),
    builtin!("list*", list_star, "(list* coll) (list* x & more coll)", "The items before the last argument followed by the items of the last one, as a sequence (nil when there are none).", "(list* 1 2 [3 4])" => "(1 2 3 4)"),
    builtin!("bounded-count", bounded_count, "(bounded-count n coll)", "The size of coll if it is counted, else the number of items up to n (walking at most n).", "[(bounded-count 2 [1 2 3]) (bounded-count 5 (range))]" => "[3 5]"),
    builtin!("replace", replace, "(replace smap coll) (replace smap)", "coll with each item that is a key of smap (a map, or a vector by index) replaced by its value; a vector stays a vector. Without coll, a transducer.", "(replace {:a 1} [:a :b :a])" => "[1 :b 1]"),
    builtin!("distinct?", distinct_p, "(distinct? x & more)", "True if no two arguments are equal.", "[(distinct? 1 2 3) (distinct? 1 2 1)]" => "[true false]"),
    builtin!("repeatedly", repeatedly, "(repeatedly f) (repeatedly n f)", "The results of calling f (with no arguments) n times; without n, unbounded and lazy.", "(repeatedly 3 (constantly :x))" => "(:x :x :x)"),
    builtin!("run!", run, "(run! f coll)", "Calls f on each item for its side effects (stopping at a reduced value); nil.", "(run! println [1 2])" => "nil"),
    builtin!("trampoline", trampoline, "(trampoline f & args)", "Calls f with args, then calls the result with no arguments as long as it is a function: mutual recursion without growing the stack.", "(letfn [(down [n] (if (zero? n) :done #(down (dec n))))] (trampoline down 1000))" => ":done"),
    builtin!("comparator", comparator, "(comparator pred)", "A comparator for sort from a two-argument predicate such as <: -1 when (pred a b), 1 when (pred b a), else 0.", "(sort (comparator >) [1 3 2])" => "(3 2 1)"),
];

/// Call the registered builtin `name` (one of this module's own compositions; the registry
/// test runs every example, so a missing name cannot go unnoticed).
fn call_builtin(ctx: &mut Ctx, name: &str, args: &[Value]) -> EvalResult {
    match super::lookup(name) {
        Some(b) => (b.f)(ctx, b, args),
        None => Err(Error::new(
            crate::error::ErrorKind::UndefinedSymbol,
            format!("undefined symbol {name}"),
        )
        .into()),
    }
}

fn fnext(ctx: &mut Ctx, _: Call, coll: &Value) -> EvalResult {
    let rest = call_builtin(ctx, "next", std::slice::from_ref(coll))?;
    call_builtin(ctx, "first", &[rest])
}

fn nfirst(ctx: &mut Ctx, _: Call, coll: &Value) -> EvalResult {
    let first = call_builtin(ctx, "first", std::slice::from_ref(coll))?;
    call_builtin(ctx, "next", &[first])
}

fn nnext(ctx: &mut Ctx, _: Call, coll: &Value) -> EvalResult {
    let rest = call_builtin(ctx, "next", std::slice::from_ref(coll))?;
    call_builtin(ctx, "next", &[rest])
}

fn rseq(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    let reversible = match coll {
        Value::Vector(_) => true,
        Value::Map(m) => m.is_sorted(),
        Value::Set(s) => s.is_sorted(),
        _ => false,
    };
    if !reversible {
        return Err(call
            .expected("a vector, a sorted map or a sorted set", coll)
            .into());
    }
    let mut items = call.collect(ctx, coll)?;
    if items.is_empty() {
        return Ok(Value::Nil);
    }
    items.reverse();
    super::build::list_of(ctx, items)
}

fn list_star(ctx: &mut Ctx, call: Call, args: &[Value]) -> EvalResult {
    let Some((tail, heads)) = args.split_last() else {
        return Err(Error::arity(format!("{call} needs at least a collection")).into());
    };
    let mut items = heads.to_vec();
    items.extend(call.collect(ctx, tail)?);
    if items.is_empty() {
        return Ok(Value::Nil);
    }
    super::build::list_of(ctx, items)
}

fn bounded_count(ctx: &mut Ctx, call: Call, (n, coll): (i64, &Value)) -> EvalResult {
    let size = match coll {
        Value::List(s) | Value::Vector(s) => s.len(),
        Value::Map(m) => m.len(),
        Value::Set(s) => s.len(),
        Value::Nil => 0,
        _ => {
            let limit = usize::try_from(n).unwrap_or(0);
            let mut items = call.items(coll)?;
            let mut seen = 0;
            while seen < limit && items.next(ctx)?.is_some() {
                seen += 1;
            }
            seen
        }
    };
    Ok(Value::Int(i64::try_from(size).unwrap_or(i64::MAX)))
}

/// `x` replaced by its value in `smap` (a map, or a vector by index), if it has one.
fn replacement(smap: &Value, x: &Value) -> Value {
    let found = match (smap, x) {
        (Value::Map(m), _) => m.get(x),
        (Value::Vector(v), Value::Int(i)) => usize::try_from(*i).ok().and_then(|i| v.get(i)),
        _ => None,
    };
    found.cloned().unwrap_or_else(|| x.clone())
}

fn replace(ctx: &mut Ctx, call: Call, (smap, coll): (&Value, Option<&Value>)) -> EvalResult {
    match smap {
        Value::Map(_) | Value::Vector(_) | Value::Nil => {}
        other => {
            return Err(call
                .expected("a map or a vector of replacements", other)
                .into());
        }
    }
    let Some(coll) = coll else {
        let held = smap.clone();
        let f = Function::native_capturing(call.name(), [smap], move |_, args| {
            Ok(replacement(&held, args.first().unwrap_or(&Value::Nil)))
        });
        return Ok(map_xf(call, Value::Fn(f)));
    };
    let items: Vec<Value> = call
        .collect(ctx, coll)?
        .iter()
        .map(|x| replacement(smap, x))
        .collect();
    match coll {
        Value::Vector(_) => super::build::vector_of(ctx, items),
        _ => super::build::list_of(ctx, items),
    }
}

fn distinct_p(ctx: &mut Ctx, _: Call, (first, more): (&Value, &[Value])) -> EvalResult {
    ctx.tick_n(more.len())?;
    let mut seen = Set::new();
    seen.insert_mut(first.clone());
    for x in more {
        if seen.contains(x) {
            return Ok(Value::Bool(false));
        }
        seen.insert_mut(x.clone());
    }
    Ok(Value::Bool(true))
}

fn repeatedly(ctx: &mut Ctx, call: Call, (first, second): (&Value, Option<&Value>)) -> EvalResult {
    match second {
        None => {
            let f: Value = (*call.arg::<Callable>(first)?).clone();
            // Unbounded: a lazy map over (range) whose function ignores the index.
            let each =
                Function::native_capturing(call.name(), [first], move |ctx, _| ctx.apply(&f, &[]));
            let range = call_builtin(ctx, "range", &[])?;
            call_builtin(ctx, "map", &[Value::Fn(each), range])
        }
        Some(f) => {
            let Truncated(n) = call.arg(first)?;
            let f: Value = (*call.arg::<Callable>(f)?).clone();
            let n = usize::try_from(n).unwrap_or(0);
            ctx.charge_items(n)?;
            let mut out = Vec::with_capacity(n.min(1 << 16));
            for _ in 0..n {
                out.push(ctx.apply(&f, &[])?);
            }
            Ok(Value::List(Seq::from(out)))
        }
    }
}

fn run(ctx: &mut Ctx, call: Call, (f, coll): (Callable, &Value)) -> EvalResult {
    let mut items = call.items(coll)?;
    while let Some(item) = items.next(ctx)? {
        let r = ctx.apply1(&f, item.as_ref())?;
        if as_reduced(&r).is_some() {
            break;
        }
    }
    Ok(Value::Nil)
}

fn trampoline(ctx: &mut Ctx, _: Call, (f, args): (Callable, &[Value])) -> EvalResult {
    let mut result = ctx.apply(&f, args)?;
    while let Value::Fn(next) = &result {
        ctx.tick()?;
        let next = Value::Fn(next.clone());
        result = ctx.apply(&next, &[])?;
    }
    Ok(result)
}

fn comparator(_: &mut Ctx, call: Call, pred: Callable) -> EvalResult {
    let captured: &Value = &pred;
    let pred: Value = captured.clone();
    let f = Function::native_capturing(call.name(), [captured], move |ctx, args| {
        let [a, b] = args else {
            return Err(Error::arity(format!(
                "a comparator takes 2 arguments, got {}",
                args.len()
            ))
            .into());
        };
        let order = if ctx.apply(&pred, &[a.clone(), b.clone()])?.truthy() {
            -1
        } else if ctx.apply(&pred, &[b.clone(), a.clone()])?.truthy() {
            1
        } else {
            0
        };
        Ok(Value::Int(order))
    });
    Ok(Value::Fn(f))
}
