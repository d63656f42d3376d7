//! Sequence functions.
//!
//! Finite inputs give realized results at once (a list for `map`/`filter`/..., as Clojure's
//! lazy sequences print). Unbounded inputs (`(range)`, `(iterate f x)`, `(repeat x)`,
//! `(cycle coll)`) give unbounded results where Clojure's would be infinite (`map`, `filter`,
//! `drop`, ...), and are consumed item by item by `take`, `first`, `nth`, `some`, ...

use super::number::clojure_compare;
use super::{Builtin, builtin, expect_fn, expect_int, got};
use crate::error::{Error, Result};
use crate::eval::{Ctx, EvalResult, Items, unbounded_error};
use crate::value::{LazyKind, LazySeq, MapBuilder, Seq, Value};
use std::cmp::Ordering;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("count", [1], count, "(count coll)", "Number of items in a collection or characters in a string; (count nil) is 0.", "(count [1 2 3])" => "3"),
    builtin!("first", [1], first, "(first coll)", "The first item, or nil.", "(first [1 2])" => "1"),
    builtin!("second", [1], second, "(second coll)", "The second item, or nil.", "(second [1 2])" => "2"),
    builtin!("last", [1], last, "(last coll)", "The last item, or nil.", "(last [1 2 3])" => "3"),
    builtin!("rest", [1], rest, "(rest coll)", "All items after the first, as a list (empty, never nil).", "(rest [1 2 3])" => "(2 3)"),
    builtin!("next", [1], next, "(next coll)", "All items after the first, or nil when there are none.", "(next [1])" => "nil"),
    builtin!("nth", [2..=3], nth, "(nth coll i) (nth coll i not-found)", "Item at index i; an error (or not-found) when out of range.", "(nth [10 20 30] 1)" => "20"),
    builtin!("nthnext", [2], nthnext, "(nthnext coll n)", "The items after the first n, or nil when there are none.", "(nthnext [1 2 3] 2)" => "(3)"),
    builtin!("seq", [1], seq, "(seq coll)", "The items as a sequence, or nil when empty (maps give [k v] entries).", "(seq {:a 1})" => "([:a 1])"),
    builtin!("empty?", [1], is_empty, "(empty? coll)", "True if coll has no items.", "(empty? [])" => "true"),
    builtin!("cons", [2], cons, "(cons x coll)", "A list of x followed by the items of coll.", "(cons 0 [1 2])" => "(0 1 2)"),
    builtin!("concat", [0..], concat, "(concat & colls)", "The items of all collections, in order, as a list.", "(concat [1 2] '(3) #{4})" => "(1 2 3 4)"),
    builtin!("conj", [0..], conj, "(conj coll x & xs)", "Adds items: at the end of a vector, the front of a list, into a set or map ([k v] entries).", "[(conj [1 2] 3) (conj '(1 2) 3)]" => "[[1 2 3] (3 1 2)]"),
    builtin!("into", [2], into, "(into to from)", "Adds every item of from to the collection to, as conj does one by one.", "(into {} [[:a 1] [:b 2]])" => "{:a 1, :b 2}"),
    builtin!("vec", [1], vec, "(vec coll)", "A vector of the items of coll.", "(vec '(1 2))" => "[1 2]"),
    builtin!("vector", [0..], vector, "(vector & items)", "A vector of the arguments.", "(vector 1 2)" => "[1 2]"),
    builtin!("list", [0..], list, "(list & items)", "A list of the arguments.", "(list 1 2)" => "(1 2)"),
    builtin!("map", [1..], map, "(map f coll) (map f c1 c2 & colls)", "Applies f to each item (to items at the same position of several collections, stopping at the shortest).", "(map + [1 2] [10 20 30])" => "(11 22)"),
    builtin!("filter", [2], filter, "(filter pred coll)", "The items for which pred is truthy.", "(filter even? [1 2 3 4])" => "(2 4)"),
    builtin!("remove", [2], remove, "(remove pred coll)", "The items for which pred is falsey.", "(remove even? [1 2 3 4])" => "(1 3)"),
    builtin!("reduce", [2..=3], reduce, "(reduce f coll) (reduce f init coll)", "Combines the items with f, from the left, starting from init (or the first item).", "(reduce + 10 [1 2 3])" => "16"),
    builtin!("reduce-kv", [3], reduce_kv, "(reduce-kv f init m)", "Like reduce over a map, calling (f acc k v); vectors give index and item.", "(reduce-kv (fn [acc k v] (+ acc v)) 0 {:a 1 :b 2})" => "3"),
    builtin!("range", [0..=3], range, "(range) (range end) (range start end) (range start end step)", "Numbers from start (0) up to, not including, end, by step (1); without end, unbounded.", "(range 1 10 3)" => "(1 4 7)"),
    builtin!("take", [2], take, "(take n coll)", "The first n items (fewer if coll is shorter).", "(take 2 (range))" => "(0 1)"),
    builtin!("drop", [2], drop, "(drop n coll)", "All but the first n items.", "(drop 2 [1 2 3 4])" => "(3 4)"),
    builtin!("sort", [1..=2], sort, "(sort coll) (sort comparator coll)", "The items in ascending order (stable); comparator is a function like compare or <.", "(sort > [3 1 2])" => "(3 2 1)"),
    builtin!("sort-by", [2..=3], sort_by, "(sort-by keyfn coll) (sort-by keyfn comparator coll)", "The items ordered by (keyfn item) (stable).", "(sort-by :age [{:age 30} {:age 20}])" => "({:age 20} {:age 30})"),
    builtin!("group-by", [2], group_by, "(group-by f coll)", "A map from each (f item) to the vector of items giving it, in first-seen order.", "(group-by odd? [1 2 3])" => "{true [1 3], false [2]}"),
    builtin!("frequencies", [1], frequencies, "(frequencies coll)", "A map from each distinct item to how many times it occurs.", "(frequencies [:a :b :a])" => "{:a 2, :b 1}"),
    builtin!("some", [2], some, "(some pred coll)", "The first truthy (pred item), or nil.", "(some #(when (> % 2) %) [1 2 3 4])" => "3"),
    builtin!("every?", [2], every, "(every? pred coll)", "True if (pred item) is truthy for every item.", "(every? pos? [1 2])" => "true"),
    builtin!("repeat", [1..=2], repeat, "(repeat x) (repeat n x)", "n copies of x; without n, unbounded.", "(repeat 3 :a)" => "(:a :a :a)"),
    builtin!("iterate", [2], iterate, "(iterate f x)", "The unbounded sequence x, (f x), (f (f x)), ...", "(take 4 (iterate #(* 2 %) 1))" => "(1 2 4 8)"),
    builtin!("cycle", [1], cycle, "(cycle coll)", "The items of coll repeated without end.", "(take 5 (cycle [1 2]))" => "(1 2 1 2 1)"),
    builtin!("apply", [2..], apply, "(apply f args* coll)", "Calls f with the given arguments followed by the items of coll.", "(apply max 1 [5 3])" => "5"),
];

/// A list of `items`, charged to the memory budget.
pub(crate) fn list_of(ctx: &mut Ctx, items: Vec<Value>) -> EvalResult {
    ctx.charge_items(items.len())?;
    Ok(Value::List(Seq::from(items)))
}

pub(crate) fn vector_of(ctx: &mut Ctx, items: Vec<Value>) -> EvalResult {
    ctx.charge_items(items.len())?;
    Ok(Value::Vector(Seq::from(items)))
}

fn count(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Lazy(_) => Err(unbounded_error("count", &args[0]).into()),
        v => v.count().map(Value::from).ok_or_else(|| {
            Error::type_error(format!(
                "count expects a collection or string, got {}",
                got(v)
            ))
            .into()
        }),
    }
}

fn nth_item(ctx: &mut Ctx, coll: &Value, index: usize) -> EvalResult<Option<Value>> {
    match coll {
        Value::List(s) | Value::Vector(s) => Ok(s.get(index).cloned()),
        Value::Nil => Ok(None),
        Value::Str(s) => Ok(s.chars().nth(index).map(Value::Char)),
        Value::Map(_) | Value::Set(_) | Value::Lazy(_) => {
            let mut items = Items::new(coll)?;
            for _ in 0..index {
                if items.next(ctx)?.is_none() {
                    return Ok(None);
                }
            }
            Ok(items.next(ctx)?.map(|c| c.into_owned()))
        }
        other => {
            Err(Error::type_error(format!("expected a collection, got {}", got(other))).into())
        }
    }
}

fn first(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(nth_item(ctx, &args[0], 0)?.unwrap_or_default())
}

fn second(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(nth_item(ctx, &args[0], 1)?.unwrap_or_default())
}

fn last(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::List(s) | Value::Vector(s) => Ok(s.last().cloned().unwrap_or_default()),
        v => Ok(Items::collect_all(v, ctx, "last")?
            .pop()
            .unwrap_or_default()),
    }
}

/// Items after the first `n`, as a list (or an unbounded sequence).
fn drop_items(ctx: &mut Ctx, coll: &Value, n: usize) -> EvalResult {
    match coll {
        Value::List(s) | Value::Vector(s) => {
            let rest = s.slice(n, s.len());
            Ok(Value::List(rest))
        }
        Value::Lazy(l) => Ok(Value::Lazy(LazySeq::new(LazyKind::Drop {
            n,
            source: l.clone(),
        }))),
        other => {
            let items = Items::collect_all(other, ctx, "drop")?;
            list_of(ctx, items.into_iter().skip(n).collect())
        }
    }
}

fn rest(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    drop_items(ctx, &args[0], 1)
}

fn next(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let r = drop_items(ctx, &args[0], 1)?;
    Ok(if r.count() == Some(0) { Value::Nil } else { r })
}

fn nth(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let coll = &args[0];
    let i = expect_int("nth", &args[1])?;
    if let (Value::Map(_), _) | (Value::Set(_), _) = (coll, ()) {
        return Err(Error::type_error(format!(
            "nth does not work on a {}; use get, or (nth (vec coll) i)",
            coll.type_name()
        ))
        .into());
    }
    let found = match usize::try_from(i) {
        Ok(i) => nth_item(ctx, coll, i)?,
        Err(_) => None,
    };
    match (found, args.get(2)) {
        (Some(v), _) => Ok(v),
        (None, Some(default)) => Ok(default.clone()),
        (None, None) if coll.is_nil() => Ok(Value::Nil),
        (None, None) => Err(Error::index(format!(
            "nth: index {i} is out of bounds for a {} of {} items",
            coll.type_name(),
            coll.count().unwrap_or(0)
        ))
        .into()),
    }
}

fn nthnext(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let n = expect_int("nthnext", &args[1])?.max(0) as usize;
    let r = drop_items(ctx, &args[0], n)?;
    Ok(if r.count() == Some(0) { Value::Nil } else { r })
}

fn seq(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::List(s) if s.is_empty() => Ok(Value::Nil),
        Value::List(_) | Value::Lazy(_) => Ok(args[0].clone()),
        Value::Vector(s) => Ok(if s.is_empty() {
            Value::Nil
        } else {
            Value::List(s.clone())
        }),
        v => {
            let items = Items::collect_all(v, ctx, "seq")?;
            if items.is_empty() {
                Ok(Value::Nil)
            } else {
                list_of(ctx, items)
            }
        }
    }
}

fn is_empty(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Lazy(_) => Ok(Value::Bool(false)),
        v => match v.count() {
            Some(n) => Ok(Value::Bool(n == 0)),
            None => {
                Items::new(v)?;
                let _ = ctx;
                Ok(Value::Bool(false))
            }
        },
    }
}

fn cons(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[1] {
        Value::Lazy(l) => Ok(Value::Lazy(LazySeq::new(LazyKind::Concat {
            prefix: Seq::from(vec![args[0].clone()]),
            source: l.clone(),
        }))),
        Value::List(s) | Value::Vector(s) => {
            ctx.charge_items(1)?;
            let mut out = s.clone();
            out.push_front(args[0].clone());
            Ok(Value::List(out))
        }
        coll => {
            let mut items = vec![args[0].clone()];
            items.extend(Items::collect_all(coll, ctx, "cons")?);
            list_of(ctx, items)
        }
    }
}

fn concat(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let mut out = Seq::new();
    for (i, coll) in args.iter().enumerate() {
        match coll {
            Value::Lazy(l) if i == args.len() - 1 => {
                return Ok(Value::Lazy(LazySeq::new(LazyKind::Concat {
                    prefix: out,
                    source: l.clone(),
                })));
            }
            Value::List(s) | Value::Vector(s) => {
                ctx.charge_items(s.len())?;
                out.append(s);
            }
            other => {
                for item in Items::collect_all(other, ctx, "concat")? {
                    out.push_back(item);
                }
            }
        }
    }
    Ok(Value::List(out))
}

/// Add one item to a collection the way `conj` does.
pub(crate) fn conj_one(coll: &mut Value, item: Value) -> Result<()> {
    match coll {
        Value::Vector(s) => s.push_back(item),
        Value::List(s) => s.push_front(item),
        Value::Set(s) => s.insert_mut(item),
        Value::Map(m) => match item {
            Value::Vector(pair) if pair.len() == 2 => m.assoc_mut(pair[0].clone(), pair[1].clone()),
            Value::Map(other) => {
                for (k, v) in other.iter() {
                    m.assoc_mut(k.clone(), v.clone());
                }
            }
            Value::Nil => {}
            other => {
                return Err(Error::type_error(format!(
                    "only [key value] vectors or maps can be added to a map, got {}",
                    got(&other)
                )));
            }
        },
        Value::Nil => *coll = Value::list([item]),
        other => {
            return Err(Error::type_error(format!(
                "conj expects a collection, got {}",
                got(other)
            )));
        }
    }
    Ok(())
}

fn conj(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let Some((coll, items)) = args.split_first() else {
        return Ok(Value::vector([]));
    };
    let mut out = coll.clone();
    ctx.charge_items(items.len())?;
    for item in items {
        conj_one(&mut out, item.clone())?;
    }
    Ok(out)
}

fn into(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let mut out = match &args[0] {
        Value::Nil => Value::empty_list(),
        other => other.clone(),
    };
    let items = Items::collect_all(&args[1], ctx, "into")?;
    ctx.charge_items(items.len())?;
    for item in items {
        conj_one(&mut out, item)?;
    }
    Ok(out)
}

fn vec(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Vector(_) => Ok(args[0].clone()),
        Value::List(s) => Ok(Value::Vector(s.clone())),
        other => {
            let items = Items::collect_all(other, ctx, "vec")?;
            vector_of(ctx, items)
        }
    }
}

fn vector(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    vector_of(ctx, args.to_vec())
}

fn list(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    list_of(ctx, args.to_vec())
}

fn map(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let f = &args[0];
    expect_fn("map", f)?;
    let colls = &args[1..];
    if colls.is_empty() {
        return Err(Error::arity(
            "map needs a collection: (map f coll); the transducer form is only for into/sequence/transduce",
        )
        .into());
    }
    if colls.iter().all(|c| matches!(c, Value::Lazy(_))) {
        let sources = colls
            .iter()
            .map(|c| match c {
                Value::Lazy(l) => l.clone(),
                _ => unreachable!("all lazy"),
            })
            .collect();
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Map {
            f: f.clone(),
            sources,
        })));
    }
    if let [coll] = colls {
        if let Value::List(s) | Value::Vector(s) = coll {
            let mut out = Vec::with_capacity(s.len());
            for item in s.iter() {
                out.push(ctx.apply(f, std::slice::from_ref(item))?);
            }
            return list_of(ctx, out);
        }
        let mut items = Items::new(coll)?;
        let mut out = Vec::new();
        while let Some(item) = items.next(ctx)? {
            out.push(ctx.apply(f, std::slice::from_ref(item.as_ref()))?);
        }
        return list_of(ctx, out);
    }
    let mut iters = colls.iter().map(Items::new).collect::<Result<Vec<_>>>()?;
    let mut out = Vec::new();
    'outer: loop {
        let mut row = Vec::with_capacity(iters.len());
        for it in iters.iter_mut() {
            match it.next(ctx)? {
                Some(item) => row.push(item.into_owned()),
                None => break 'outer,
            }
        }
        out.push(ctx.apply(f, &row)?);
    }
    list_of(ctx, out)
}

fn filter_items(ctx: &mut Ctx, name: &str, args: &[Value], keep: bool) -> EvalResult {
    let (pred, coll) = (&args[0], &args[1]);
    expect_fn(name, pred)?;
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Filter {
            pred: pred.clone(),
            source: l.clone(),
            keep,
        })));
    }
    let mut items = Items::new(coll)?;
    let mut out = Vec::new();
    while let Some(item) = items.next(ctx)? {
        if ctx
            .apply(pred, std::slice::from_ref(item.as_ref()))?
            .truthy()
            == keep
        {
            out.push(item.into_owned());
        }
    }
    list_of(ctx, out)
}

fn filter(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    filter_items(ctx, "filter", args, true)
}

fn remove(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    filter_items(ctx, "remove", args, false)
}

fn reduce(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let f = &args[0];
    expect_fn("reduce", f)?;
    let coll = args.last().expect("arity checked");
    let mut items = Items::new(coll)?;
    if items.is_unbounded() {
        return Err(unbounded_error("reduce", coll).into());
    }
    let mut acc = if args.len() == 3 {
        args[1].clone()
    } else {
        match items.next(ctx)? {
            Some(first) => first.into_owned(),
            None => return ctx.apply(f, &[]),
        }
    };
    while let Some(item) = items.next(ctx)? {
        acc = ctx.apply(f, &[acc, item.into_owned()])?;
    }
    Ok(acc)
}

fn reduce_kv(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (f, mut acc) = (&args[0], args[1].clone());
    expect_fn("reduce-kv", f)?;
    match &args[2] {
        Value::Map(m) => {
            for (k, v) in m.iter() {
                ctx.tick()?;
                acc = ctx.apply(f, &[acc, k.clone(), v.clone()])?;
            }
        }
        Value::Vector(s) => {
            for (i, v) in s.iter().enumerate() {
                ctx.tick()?;
                acc = ctx.apply(f, &[acc, Value::from(i), v.clone()])?;
            }
        }
        Value::Nil => {}
        other => {
            return Err(Error::type_error(format!(
                "reduce-kv expects a map or vector, got {}",
                got(other)
            ))
            .into());
        }
    }
    Ok(acc)
}

fn range(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let number = |v: &Value| -> Result<Value> {
        match v {
            Value::Int(_) | Value::Float(_) => Ok(v.clone()),
            other => Err(Error::type_error(format!(
                "range expects numbers, got {}",
                got(other)
            ))),
        }
    };
    let (start, end, step) = match args {
        [] => {
            return Ok(Value::Lazy(LazySeq::new(LazyKind::Range {
                start: Value::Int(0),
                step: Value::Int(1),
            })));
        }
        [end] => (Value::Int(0), number(end)?, Value::Int(1)),
        [start, end] => (number(start)?, number(end)?, Value::Int(1)),
        [start, end, step] => (number(start)?, number(end)?, number(step)?),
        _ => unreachable!("arity checked"),
    };
    let as_f = |v: &Value| match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => 0.0,
    };
    let (s, e, st) = (as_f(&start), as_f(&end), as_f(&step));
    if st == 0.0 {
        return if s == e {
            Ok(Value::empty_list())
        } else {
            Ok(Value::Lazy(LazySeq::new(LazyKind::Repeat(start))))
        };
    }
    let n = ((e - s) / st).ceil();
    let n = if n.is_finite() && n > 0.0 { n } else { 0.0 };
    if n > usize::MAX as f64 / 64.0 {
        return Err(Error::memory_limit(ctx.limits().max_memory_bytes).into());
    }
    let n = n as usize;
    ctx.charge_items(n)?;
    ctx.tick_n(n)?;
    let mut out = Vec::with_capacity(n);
    match (&start, &step) {
        (Value::Int(s), Value::Int(st)) => {
            let mut x = *s;
            for _ in 0..n {
                out.push(Value::Int(x));
                x = x.wrapping_add(*st);
            }
        }
        _ => {
            let mut x = start.clone();
            for _ in 0..n {
                out.push(x.clone());
                x = super::number::add(&x, &step)?;
            }
        }
    }
    Ok(Value::List(Seq::from(out)))
}

fn take(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let n = expect_int("take", &args[0])?;
    let coll = &args[1];
    if n <= 0 {
        return Ok(Value::empty_list());
    }
    let n = n as usize;
    if let Value::List(s) | Value::Vector(s) = coll {
        return Ok(Value::List(s.slice(0, n)));
    }
    let mut items = Items::new(coll)?;
    let mut out = Vec::new();
    while out.len() < n {
        match items.next(ctx)? {
            Some(item) => out.push(item.into_owned()),
            None => break,
        }
    }
    list_of(ctx, out)
}

fn drop(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let n = expect_int("drop", &args[0])?.max(0) as usize;
    drop_items(ctx, &args[1], n)
}

/// Order two values with a user comparator: a number (negative, zero, positive) or a boolean
/// "less than" test, as Clojure accepts both.
fn comparator_order(ctx: &mut Ctx, cmp: &Value, a: &Value, b: &Value) -> EvalResult<Ordering> {
    match ctx.apply(cmp, &[a.clone(), b.clone()])? {
        Value::Int(i) => Ok(i.cmp(&0)),
        Value::Float(f) => Ok(f.partial_cmp(&0.0).unwrap_or(Ordering::Equal)),
        Value::Bool(true) => Ok(Ordering::Less),
        Value::Bool(false) | Value::Nil => {
            if ctx.apply(cmp, &[b.clone(), a.clone()])?.truthy() {
                Ok(Ordering::Greater)
            } else {
                Ok(Ordering::Equal)
            }
        }
        other => Err(Error::type_error(format!(
            "a sort comparator must return a number or a boolean, got {}",
            got(&other)
        ))
        .into()),
    }
}

/// Stable sort of `items` by `keys` (parallel vectors), with `cmp` or Clojure's `compare`.
fn sort_with_keys(
    ctx: &mut Ctx,
    items: Vec<Value>,
    keys: Vec<Value>,
    cmp: Option<&Value>,
) -> EvalResult<Vec<Value>> {
    let n = items.len();
    ctx.tick_n(n.saturating_mul(usize::BITS as usize - n.leading_zeros() as usize))?;
    let mut order: Vec<usize> = (0..n).collect();
    let mut failure = None;
    order.sort_by(|&i, &j| {
        if failure.is_some() {
            return Ordering::Equal;
        }
        let result = match cmp {
            Some(cmp) => comparator_order(ctx, cmp, &keys[i], &keys[j]),
            None => clojure_compare(&keys[i], &keys[j]).map_err(Into::into),
        };
        result.unwrap_or_else(|e| {
            failure = Some(e);
            Ordering::Equal
        })
    });
    if let Some(e) = failure {
        return Err(e);
    }
    let mut slots: Vec<Option<Value>> = items.into_iter().map(Some).collect();
    Ok(order
        .into_iter()
        .map(|i| slots[i].take().expect("each index once"))
        .collect())
}

fn sort(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (cmp, coll) = match args {
        [coll] => (None, coll),
        [cmp, coll] => (Some(cmp), coll),
        _ => unreachable!("arity checked"),
    };
    let items = Items::collect_all(coll, ctx, "sort")?;
    let keys = items.clone();
    let sorted = sort_with_keys(ctx, items, keys, cmp)?;
    list_of(ctx, sorted)
}

fn sort_by(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (keyfn, cmp, coll) = match args {
        [keyfn, coll] => (keyfn, None, coll),
        [keyfn, cmp, coll] => (keyfn, Some(cmp), coll),
        _ => unreachable!("arity checked"),
    };
    expect_fn("sort-by", keyfn)?;
    let items = Items::collect_all(coll, ctx, "sort-by")?;
    let keys = items
        .iter()
        .map(|item| ctx.apply(keyfn, std::slice::from_ref(item)))
        .collect::<EvalResult<Vec<_>>>()?;
    let sorted = sort_with_keys(ctx, items, keys, cmp)?;
    list_of(ctx, sorted)
}

fn group_by(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (f, coll) = (&args[0], &args[1]);
    expect_fn("group-by", f)?;
    let mut keys: Vec<Value> = Vec::new();
    let mut groups: Vec<Vec<Value>> = Vec::new();
    let mut index: rustc_hash::FxHashMap<Value, usize> = rustc_hash::FxHashMap::default();
    let mut items = Items::new(coll)?;
    if items.is_unbounded() {
        return Err(unbounded_error("group-by", coll).into());
    }
    while let Some(item) = items.next(ctx)? {
        let key = ctx.apply(f, std::slice::from_ref(item.as_ref()))?;
        let item = item.into_owned();
        match index.get(&key) {
            Some(&i) => groups[i].push(item),
            None => {
                index.insert(key.clone(), keys.len());
                keys.push(key);
                groups.push(vec![item]);
            }
        }
    }
    ctx.charge_items(keys.len() * 2 + groups.iter().map(Vec::len).sum::<usize>())?;
    let mut out = MapBuilder::new();
    for (k, g) in keys.into_iter().zip(groups) {
        out.insert(k, Value::Vector(Seq::from(g)));
    }
    Ok(Value::Map(out.build()))
}

fn frequencies(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let mut keys: Vec<Value> = Vec::new();
    let mut counts: Vec<i64> = Vec::new();
    let mut index: rustc_hash::FxHashMap<Value, usize> = rustc_hash::FxHashMap::default();
    let mut items = Items::new(&args[0])?;
    if items.is_unbounded() {
        return Err(unbounded_error("frequencies", &args[0]).into());
    }
    while let Some(item) = items.next(ctx)? {
        match index.get(item.as_ref()) {
            Some(&i) => counts[i] += 1,
            None => {
                let item = item.into_owned();
                index.insert(item.clone(), keys.len());
                keys.push(item);
                counts.push(1);
            }
        }
    }
    ctx.charge_items(keys.len() * 2)?;
    let mut out = MapBuilder::new();
    for (k, c) in keys.into_iter().zip(counts) {
        out.insert(k, Value::Int(c));
    }
    Ok(Value::Map(out.build()))
}

fn some(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let pred = &args[0];
    expect_fn("some", pred)?;
    let mut items = Items::new(&args[1])?;
    while let Some(item) = items.next(ctx)? {
        let r = ctx.apply(pred, std::slice::from_ref(item.as_ref()))?;
        if r.truthy() {
            return Ok(r);
        }
    }
    Ok(Value::Nil)
}

fn every(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let pred = &args[0];
    expect_fn("every?", pred)?;
    let mut items = Items::new(&args[1])?;
    while let Some(item) = items.next(ctx)? {
        if !ctx
            .apply(pred, std::slice::from_ref(item.as_ref()))?
            .truthy()
        {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn apply(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let f = &args[0];
    let (spread, fixed) = args[1..].split_last().expect("arity checked");
    let mut call_args: Vec<Value> = fixed.to_vec();
    call_args.extend(Items::collect_all(spread, ctx, "apply")?);
    ctx.apply(f, &call_args)
}

fn repeat(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match args {
        [x] => Ok(Value::Lazy(LazySeq::new(LazyKind::Repeat(x.clone())))),
        [n, x] => {
            let n = expect_int("repeat", n)?.max(0) as usize;
            ctx.charge_items(n)?;
            ctx.tick_n(n)?;
            Ok(Value::List(std::iter::repeat_n(x.clone(), n).collect()))
        }
        _ => unreachable!("arity checked"),
    }
}

fn iterate(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    expect_fn("iterate", &args[0])?;
    Ok(Value::Lazy(LazySeq::new(LazyKind::Iterate {
        f: args[0].clone(),
        seed: args[1].clone(),
    })))
}

fn cycle(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let items = Items::collect_all(&args[0], ctx, "cycle")?;
    if items.is_empty() {
        return Ok(Value::empty_list());
    }
    Ok(Value::Lazy(LazySeq::new(LazyKind::Cycle(Seq::from(items)))))
}
