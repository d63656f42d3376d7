//! Sequence functions.
//!
//! Finite inputs give realized results at once (a list for `map`/`filter`/..., as Clojure's
//! lazy sequences print). Lazy inputs (`(range)`, `(iterate f x)`, `(repeat x)`, `(cycle coll)`,
//! and ranges too long to realize) give lazy results where Clojure's would be lazy (`map`,
//! `filter`, `drop`, ...), and are consumed item by item by `take`, `first`, `nth`, `some`, ...

use super::args::{AtLeastOne, Call, Callable, CountDown, Seqable, Truncated};
use super::build::{conj_one, list_of, vector_of};
use super::number::{Num, clojure_compare};
use super::transduce::{self, as_reduced};
use super::{Builtin, builtin, got};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{Ctx, EvalResult, Items};
use crate::ir::FnRepr;
use crate::value::{LazyKind, LazySeq, RangeEnd, Seq, Value, to_f64};
use std::cmp::Ordering;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("count", count, "(count coll)", "Number of items in a collection or characters in a string; (count nil) is 0.", "(count [1 2 3])" => "3"),
    builtin!("first", first, "(first coll)", "The first item, or nil.", "(first [1 2])" => "1"),
    builtin!("second", second, "(second coll)", "The second item, or nil.", "(second [1 2])" => "2"),
    builtin!("last", last, "(last coll)", "The last item, or nil.", "(last [1 2 3])" => "3"),
    builtin!("rest", rest, "(rest coll)", "All items after the first, as a list (empty, never nil).", "(rest [1 2 3])" => "(2 3)"),
    builtin!("next", next, "(next coll)", "All items after the first, or nil when there are none.", "(next [1])" => "nil"),
    builtin!("nth", nth, "(nth coll i) (nth coll i not-found)", "Item at index i; an error (or not-found) when out of range.", "(nth [10 20 30] 1)" => "20"),
    builtin!("nthnext", nthnext, "(nthnext coll n)", "The items after the first n, or nil when there are none.", "(nthnext [1 2 3] 2)" => "(3)"),
    builtin!("seq", seq, "(seq coll)", "The items as a sequence, or nil when empty (maps give [k v] entries).", "(seq {:a 1})" => "([:a 1])"),
    builtin!("empty?", is_empty, "(empty? coll)", "True if coll has no items.", "(empty? [])" => "true"),
    builtin!("cons", cons, "(cons x coll)", "A list of x followed by the items of coll.", "(cons 0 [1 2])" => "(0 1 2)"),
    builtin!("concat", concat, "(concat & colls)", "The items of all collections, in order, as a list.", "(concat [1 2] '(3) #{4})" => "(1 2 3 4)"),
    builtin!("conj", conj, "(conj coll x & xs)", "Adds items: at the end of a vector, the front of a list, into a set or map ([k v] entries).", "[(conj [1 2] 3) (conj '(1 2) 3)]" => "[[1 2 3] (3 1 2)]"),
    builtin!("into", into, "(into to from) (into to xform from)", "Adds every item of from to the collection to, as conj does one by one (through the transducer xform if given).", "(into {} [[:a 1] [:b 2]])" => "{:a 1, :b 2}"),
    builtin!("vec", vec, "(vec coll)", "A vector of the items of coll.", "(vec '(1 2))" => "[1 2]"),
    builtin!("vector", vector, "(vector & items)", "A vector of the arguments.", "(vector 1 2)" => "[1 2]"),
    builtin!("list", list, "(list & items)", "A list of the arguments.", "(list 1 2)" => "(1 2)"),
    builtin!("map", map, "(map f coll) (map f c1 c2 & colls) (map f)", "Applies f to each item (to items at the same position of several collections, stopping at the shortest); (map f) is a transducer.", "(map + [1 2] [10 20 30])" => "(11 22)"),
    builtin!("mapv", mapv, "(mapv f coll) (mapv f c1 c2 & colls)", "Like map, returning a vector.", "(mapv inc [1 2 3])" => "[2 3 4]"),
    builtin!("map-indexed", map_indexed, "(map-indexed f coll) (map-indexed f)", "Calls (f index item) for each item, indices from 0.", "(map-indexed vector [:a :b])" => "([0 :a] [1 :b])"),
    builtin!("mapcat", mapcat, "(mapcat f coll) (mapcat f c1 c2 & colls) (mapcat f)", "Concatenates the collections (f item) returns.", "(mapcat (fn [x] [x x]) [1 2])" => "(1 1 2 2)"),
    builtin!("filter", filter, "(filter pred coll) (filter pred)", "The items for which pred is truthy.", "(filter even? [1 2 3 4])" => "(2 4)"),
    builtin!("filterv", filterv, "(filterv pred coll)", "Like filter, returning a vector.", "(filterv odd? (range 6))" => "[1 3 5]"),
    builtin!("remove", remove, "(remove pred coll) (remove pred)", "The items for which pred is falsey.", "(remove even? [1 2 3 4])" => "(1 3)"),
    builtin!("keep", keep, "(keep f coll) (keep f)", "The non-nil results of (f item) (false is kept).", "(keep :email [{:email \"a@x\"} {:name \"b\"}])" => "(\"a@x\")"),
    builtin!("keep-indexed", keep_indexed, "(keep-indexed f coll) (keep-indexed f)", "The non-nil results of (f index item).", "(keep-indexed (fn [i x] (when (even? i) x)) [:a :b :c])" => "(:a :c)"),
    builtin!("reduce", reduce, "(reduce f coll) (reduce f init coll)", "Combines the items with f, from the left, starting from init (or the first item); stops early at a (reduced x).", "(reduce + 10 [1 2 3])" => "16"),
    builtin!("reduce-kv", reduce_kv, "(reduce-kv f init m)", "Like reduce over a map, calling (f acc k v); vectors give index and item.", "(reduce-kv (fn [acc k v] (+ acc v)) 0 {:a 1 :b 2})" => "3"),
    builtin!("reductions", reductions, "(reductions f coll) (reductions f init coll)", "The intermediate results of reduce, as a sequence.", "(reductions + [1 2 3 4])" => "(1 3 6 10)"),
    builtin!("range", range, "(range) (range end) (range start end) (range start end step)", "Numbers from start (0) up to, not including, end, by step (1); without end, unbounded; lazy when longer than memory could hold.", "(range 1 10 3)" => "(1 4 7)"),
    builtin!("take", take, "(take n coll) (take n)", "The first n items (fewer if coll is shorter).", "(take 2 (range))" => "(0 1)"),
    builtin!("drop", drop, "(drop n coll) (drop n)", "All but the first n items.", "(drop 2 [1 2 3 4])" => "(3 4)"),
    builtin!("take-while", take_while, "(take-while pred coll) (take-while pred)", "The items before the first one for which pred is falsey.", "(take-while #(< % 10) (iterate #(* 2 %) 1))" => "(1 2 4 8)"),
    builtin!("drop-while", drop_while, "(drop-while pred coll) (drop-while pred)", "The items from the first one for which pred is falsey.", "(drop-while neg? [-2 -1 0 1 -5])" => "(0 1 -5)"),
    builtin!("take-last", take_last, "(take-last n coll)", "The last n items, or nil when there are none.", "(take-last 2 [1 2 3 4])" => "(3 4)"),
    builtin!("drop-last", drop_last, "(drop-last coll) (drop-last n coll)", "All but the last n (1) items.", "(drop-last [1 2 3])" => "(1 2)"),
    builtin!("take-nth", take_nth, "(take-nth n coll) (take-nth n)", "Every nth item, starting with the first.", "(take-nth 2 [0 1 2 3 4])" => "(0 2 4)"),
    builtin!("nthrest", nthrest, "(nthrest coll n)", "The items after the first n (coll itself when n is 0).", "(nthrest [1 2 3 4] 2)" => "(3 4)"),
    builtin!("butlast", butlast, "(butlast coll)", "All but the last item, or nil when there are none.", "(butlast [1 2 3])" => "(1 2)"),
    builtin!("ffirst", ffirst, "(ffirst coll)", "The first item of the first item.", "(ffirst [[1 2] [3]])" => "1"),
    builtin!("distinct", distinct, "(distinct coll) (distinct)", "The items without repeats, in first-seen order.", "(distinct [1 2 1 3 2])" => "(1 2 3)"),
    builtin!("dedupe", dedupe, "(dedupe coll) (dedupe)", "The items without consecutive repeats.", "(dedupe [1 1 2 1 1])" => "(1 2 1)"),
    builtin!("flatten", flatten, "(flatten coll)", "The non-sequential items of nested lists and vectors, in order (maps and sets stay whole).", "(flatten [1 [2 [3]] {:a 4}])" => "(1 2 3 {:a 4})"),
    builtin!("reverse", reverse, "(reverse coll)", "The items in reverse order, as a list.", "(reverse [1 2 3])" => "(3 2 1)"),
    builtin!("interleave", interleave, "(interleave c1 c2 & colls)", "The first item of each collection, then the second of each, ..., stopping at the shortest.", "(interleave [1 2] [:a :b])" => "(1 :a 2 :b)"),
    builtin!("interpose", interpose, "(interpose sep coll) (interpose sep)", "The items with sep between each two.", "(interpose \", \" [\"a\" \"b\"])" => "(\"a\" \", \" \"b\")"),
    builtin!("tree-seq", tree_seq, "(tree-seq branch? children root)", "Every node of a tree, depth first: root, then the nodes under (children node) for each node where (branch? node) is truthy.", "(tree-seq vector? seq [1 [2]])" => "([1 [2]] 1 [2] 2)"),
    builtin!("min-key", min_key, "(min-key k x & more)", "The x for which (k x), a number, is least (the last one on ties).", "(min-key count \"abc\" \"a\" \"ab\")" => "\"a\""),
    builtin!("max-key", max_key, "(max-key k x & more)", "The x for which (k x), a number, is greatest (the last one on ties).", "(max-key :n {:n 1} {:n 3} {:n 2})" => "{:n 3}"),
    builtin!("doall", doall, "(doall coll) (doall n coll)", "Returns coll, realized (sequences are already realized but long ranges; unbounded ones are refused).", "(doall (map inc [1 2]))" => "(2 3)"),
    builtin!("dorun", dorun, "(dorun coll) (dorun n coll)", "Returns nil (sequences are already realized).", "(dorun (map inc [1 2]))" => "nil"),
    builtin!("sort", sort, "(sort coll) (sort comparator coll)", "The items in ascending order (stable); comparator is a function like compare or <.", "(sort > [3 1 2])" => "(3 2 1)"),
    builtin!("sort-by", sort_by, "(sort-by keyfn coll) (sort-by keyfn comparator coll)", "The items ordered by (keyfn item) (stable).", "(sort-by :age [{:age 30} {:age 20}])" => "({:age 20} {:age 30})"),
    builtin!("some", some, "(some pred coll)", "The first truthy (pred item), or nil.", "(some #(when (> % 2) %) [1 2 3 4])" => "3"),
    builtin!("every?", every, "(every? pred coll)", "True if (pred item) is truthy for every item.", "(every? pos? [1 2])" => "true"),
    builtin!("not-any?", not_any, "(not-any? pred coll)", "True if (pred item) is falsey for every item.", "(not-any? neg? [1 2])" => "true"),
    builtin!("not-every?", not_every, "(not-every? pred coll)", "True if (pred item) is falsey for some item.", "(not-every? even? [2 3])" => "true"),
    builtin!("not-empty", not_empty, "(not-empty coll)", "coll, or nil when it is empty.", "[(not-empty [1]) (not-empty \"\")]" => "[[1] nil]"),
    builtin!("repeat", repeat, "(repeat x) (repeat n x)", "n copies of x; without n, unbounded.", "(repeat 3 :a)" => "(:a :a :a)"),
    builtin!("iterate", iterate, "(iterate f x)", "The unbounded sequence x, (f x), (f (f x)), ...", "(take 4 (iterate #(* 2 %) 1))" => "(1 2 4 8)"),
    builtin!("cycle", cycle, "(cycle coll)", "The items of coll repeated without end.", "(take 5 (cycle [1 2]))" => "(1 2 1 2 1)"),
];

fn count(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    match coll {
        Value::Lazy(l) if l.is_bounded() => match l.known_count() {
            Some(n) => i64::try_from(n).map(Value::Int).map_err(|_| {
                call.error(
                    ErrorKind::Arithmetic,
                    format_args!("{n} items do not fit a 64-bit integer"),
                )
                .into()
            }),
            None => {
                let mut items = Items::new(coll)?;
                let mut n = 0i64;
                while items.next(ctx)?.is_some() {
                    n += 1;
                }
                Ok(Value::Int(n))
            }
        },
        Value::Lazy(_) => Err(call.unbounded(coll).into()),
        v => v
            .count()
            .map(Value::from)
            .ok_or_else(|| call.expected("a collection or string", v).into()),
    }
}

fn nth_item(ctx: &mut Ctx, call: Call, coll: &Value, index: usize) -> EvalResult<Option<Value>> {
    match coll {
        Value::List(s) | Value::Vector(s) => Ok(s.get(index).cloned()),
        Value::Nil => Ok(None),
        Value::Str(s) => Ok(s.chars().nth(index).map(Value::Char)),
        Value::Map(_) | Value::Set(_) | Value::Lazy(_) => {
            // A long range: the item is computed, not walked to.
            if let Value::Lazy(l) = coll
                && let Some(rest) = l.drop_from_range(index)
            {
                return Ok(Items::new(&Value::Lazy(rest))?
                    .next(ctx)?
                    .map(|c| c.into_owned()));
            }
            let mut items = Items::new(coll)?;
            for _ in 0..index {
                if items.next(ctx)?.is_none() {
                    return Ok(None);
                }
            }
            Ok(items.next(ctx)?.map(|c| c.into_owned()))
        }
        other => Err(call.expected("a collection", other).into()),
    }
}

fn first(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    Ok(nth_item(ctx, call, coll, 0)?.unwrap_or_default())
}

fn second(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    Ok(nth_item(ctx, call, coll, 1)?.unwrap_or_default())
}

fn last(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    match coll {
        Value::List(s) | Value::Vector(s) => Ok(s.last().cloned().unwrap_or_default()),
        v => Ok(call.collect(ctx, v)?.pop().unwrap_or_default()),
    }
}

/// Items after the first `n`, as a list (or an unbounded sequence).
pub(crate) fn drop_items_of(ctx: &mut Ctx, call: Call, coll: &Value, n: usize) -> EvalResult {
    match coll {
        Value::List(s) | Value::Vector(s) => {
            let rest = s.slice(n, s.len());
            Ok(Value::List(rest))
        }
        Value::Lazy(l) => match l.drop_from_range(n) {
            // A long range: the rest is computed, not walked to, and realized when it is short
            // enough, as a short range is.
            Some(rest)
                if rest
                    .known_count()
                    .is_some_and(|k| k <= most_range_items(ctx)) =>
            {
                let items = call.collect(ctx, &Value::Lazy(rest))?;
                Ok(Value::List(Seq::from(items)))
            }
            Some(rest) => Ok(Value::Lazy(rest)),
            None => Ok(Value::Lazy(LazySeq::new(LazyKind::Drop {
                n,
                source: l.clone(),
            }))),
        },
        other => {
            let items = call.collect(ctx, other)?;
            list_of(ctx, items.into_iter().skip(n).collect())
        }
    }
}

fn rest(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    drop_items_of(ctx, call, coll, 1)
}

fn next(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    let r = drop_items_of(ctx, call, coll, 1)?;
    Ok(if r.count() == Some(0) { Value::Nil } else { r })
}

fn nth(
    ctx: &mut Ctx,
    call: Call,
    (coll, Truncated(i), not_found): (&Value, Truncated, Option<&Value>),
) -> EvalResult {
    if let Value::Map(_) | Value::Set(_) = coll {
        return Err(Error::type_error(format!(
            "{call} does not work on a {}; use get, or (nth (vec coll) i)",
            coll.type_name()
        ))
        .into());
    }
    // Clojure casts the index to a Java int: beyond 32 bits is an error, not "not found".
    if i32::try_from(i).is_err() {
        return Err(Error::argument(format!(
            "{call} needs an index within 32 bits, got {i}; no collection is that long"
        ))
        .into());
    }
    let found = match usize::try_from(i) {
        Ok(i) => nth_item(ctx, call, coll, i)?,
        Err(_) => None,
    };
    match (found, not_found) {
        (Some(v), _) => Ok(v),
        (None, Some(default)) => Ok(default.clone()),
        (None, None) if coll.is_nil() => Ok(Value::Nil),
        (None, None) => Err(call
            .error(
                ErrorKind::Index,
                format_args!(
                    "index {i} is out of bounds for a {} of {} items",
                    coll.type_name(),
                    coll.count().unwrap_or(0)
                ),
            )
            .into()),
    }
}

fn nthnext(ctx: &mut Ctx, call: Call, (coll, CountDown(n)): (&Value, CountDown)) -> EvalResult {
    let r = drop_items_of(ctx, call, coll, n.max(0) as usize)?;
    Ok(if r.count() == Some(0) { Value::Nil } else { r })
}

fn seq(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    match coll {
        Value::List(s) if s.is_empty() => Ok(Value::Nil),
        Value::Lazy(l) if l.is_bounded() => Ok(if nth_item(ctx, call, coll, 0)?.is_some() {
            coll.clone()
        } else {
            Value::Nil
        }),
        Value::List(_) | Value::Lazy(_) => Ok(coll.clone()),
        Value::Vector(s) => Ok(if s.is_empty() {
            Value::Nil
        } else {
            Value::List(s.without_meta())
        }),
        v => {
            let items = call.collect(ctx, v)?;
            if items.is_empty() {
                Ok(Value::Nil)
            } else {
                list_of(ctx, items)
            }
        }
    }
}

fn is_empty_of(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult<bool> {
    match coll {
        Value::Lazy(l) if l.is_bounded() => Ok(nth_item(ctx, call, coll, 0)?.is_none()),
        Value::Lazy(_) => Ok(false),
        v => match v.count() {
            Some(n) => Ok(n == 0),
            None => {
                call.items(v)?;
                Ok(false)
            }
        },
    }
}

fn is_empty(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    Ok(Value::Bool(is_empty_of(ctx, call, coll)?))
}

fn cons(ctx: &mut Ctx, call: Call, (x, coll): (&Value, &Value)) -> EvalResult {
    match coll {
        Value::Lazy(l) => Ok(Value::Lazy(LazySeq::new(LazyKind::Concat {
            prefix: Seq::from(vec![x.clone()]),
            source: l.clone(),
        }))),
        Value::List(s) | Value::Vector(s) => {
            ctx.charge_items(1)?;
            let mut out = s.clone();
            out.push_front(x.clone());
            Ok(Value::List(out))
        }
        coll => {
            let mut items = vec![x.clone()];
            items.extend(call.collect(ctx, coll)?);
            list_of(ctx, items)
        }
    }
}

/// Appends the items of a finite collection (or string) to `out`, charging for them.
pub(crate) fn extend_items(
    ctx: &mut Ctx,
    call: Call,
    out: &mut Vec<Value>,
    coll: &Value,
) -> EvalResult<()> {
    match coll {
        Value::List(s) | Value::Vector(s) => {
            ctx.charge_items(s.len())?;
            ctx.tick_n(s.len())?;
            out.extend(s.iter().cloned());
        }
        other => out.extend(call.collect(ctx, other)?),
    }
    Ok(())
}

fn concat(ctx: &mut Ctx, call: Call, colls: &[Value]) -> EvalResult {
    let mut out = Vec::new();
    for (i, coll) in colls.iter().enumerate() {
        match coll {
            Value::Lazy(l) if i == colls.len() - 1 => {
                return Ok(Value::Lazy(LazySeq::new(LazyKind::Concat {
                    prefix: Seq::from(out),
                    source: l.clone(),
                })));
            }
            other => extend_items(ctx, call, &mut out, other)?,
        }
    }
    Ok(Value::List(Seq::from(out)))
}

fn conj(ctx: &mut Ctx, call: Call, (coll, items): (Option<&Value>, &[Value])) -> EvalResult {
    let Some(coll) = coll else {
        return Ok(Value::vector([]));
    };
    let mut out = coll.clone();
    ctx.charge_items(items.len())?;
    for item in items {
        conj_one(call, &mut out, item.clone())?;
    }
    Ok(out)
}

/// `(into)`, `(into to)`, `(into to from)` or `(into to xform from)`.
fn into(
    ctx: &mut Ctx,
    call: Call,
    (to, second, third): (Option<&Value>, Option<&Value>, Option<&Value>),
) -> EvalResult {
    let empty_list_for_nil = |to: &Value| match to {
        Value::Nil => Value::empty_list(),
        other => other.clone(),
    };
    let (to, from) = match (to, second, third) {
        (None, _, _) => return Ok(Value::vector([])),
        (Some(to), None, _) => return Ok(to.clone()),
        (Some(to), Some(from), None) => (to, from),
        (Some(to), Some(xform), Some(from)) => {
            return transduce::into_with(ctx, call, empty_list_for_nil(to), xform, from);
        }
    };
    let mut out = empty_list_for_nil(to);
    let items = call.collect(ctx, from)?;
    ctx.charge_items(items.len())?;
    for item in items {
        conj_one(call, &mut out, item)?;
    }
    Ok(out)
}

fn vec(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    match coll {
        Value::Vector(s) | Value::List(s) => Ok(Value::Vector(s.without_meta())),
        other => {
            let items = call.collect(ctx, other)?;
            vector_of(ctx, items)
        }
    }
}

fn vector(ctx: &mut Ctx, _: Call, items: &[Value]) -> EvalResult {
    vector_of(ctx, items.to_vec())
}

fn list(ctx: &mut Ctx, _: Call, items: &[Value]) -> EvalResult {
    list_of(ctx, items.to_vec())
}

fn map(ctx: &mut Ctx, call: Call, (f, colls): (Callable, &[Value])) -> EvalResult {
    map_of(ctx, call, &f, colls)
}

/// `(map f colls...)` with `f` known to be callable.
fn map_of(ctx: &mut Ctx, call: Call, f: &Value, colls: &[Value]) -> EvalResult {
    if colls.is_empty() {
        return Ok(transduce::map_xf(call, f.clone()));
    }
    // All lazy: the result is lazy too (`None` as soon as one is not).
    let lazy_sources: Option<Vec<LazySeq>> = colls
        .iter()
        .map(|c| match c {
            Value::Lazy(l) => Some(l.clone()),
            _ => None,
        })
        .collect();
    if let Some(sources) = lazy_sources {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Map {
            f: f.clone(),
            sources,
        })));
    }
    if let [coll] = colls {
        if let Value::List(s) | Value::Vector(s) = coll {
            let mut out = Vec::with_capacity(s.len());
            for item in s.iter() {
                out.push(ctx.apply1(f, item)?);
            }
            return list_of(ctx, out);
        }
        let mut items = call.items(coll)?;
        let mut out = Vec::new();
        while let Some(item) = items.next(ctx)? {
            out.push(ctx.apply1(f, item.as_ref())?);
        }
        return list_of(ctx, out);
    }
    let mut iters = colls
        .iter()
        .map(|c| call.items(c))
        .collect::<Result<Vec<_>>>()?;
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

/// `filter` (`keep` true) or `remove` with `pred` known to be callable.
fn filter_of(
    ctx: &mut Ctx,
    call: Call,
    pred: &Value,
    coll: Option<&Value>,
    keep: bool,
) -> EvalResult {
    let Some(coll) = coll else {
        return Ok(transduce::filter_xf(call, pred.clone(), keep));
    };
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Filter {
            pred: pred.clone(),
            source: l.clone(),
            keep,
        })));
    }
    let mut items = call.items(coll)?;
    let mut out = Vec::new();
    while let Some(item) = items.next(ctx)? {
        if ctx.apply1(pred, item.as_ref())?.into_truthy() == keep {
            out.push(item.into_owned());
        }
    }
    ctx.charge_items(out.len())?;
    Ok(Value::List(Seq::picked_from(out, coll)))
}

fn filter(ctx: &mut Ctx, call: Call, (pred, coll): (Callable, Option<&Value>)) -> EvalResult {
    filter_of(ctx, call, &pred, coll, true)
}

fn remove(ctx: &mut Ctx, call: Call, (pred, coll): (Callable, Option<&Value>)) -> EvalResult {
    filter_of(ctx, call, &pred, coll, false)
}

/// As in Clojure, a reducing function that is never called is never checked: reducing
/// nothing with an initial value gives that value (`Some`); `None` when `f` is a function.
fn never_called(
    ctx: &mut Ctx,
    call: Call,
    f: &Value,
    init: Option<&Value>,
    coll: &Value,
) -> EvalResult<Option<Value>> {
    match (call.arg::<Callable>(f), init) {
        (Ok(_), _) => Ok(None),
        (Err(e), Some(init)) => match call.items(coll)?.next(ctx)? {
            None => Ok(Some(init.clone())),
            Some(_) => Err(e.into()),
        },
        (Err(e), None) => Err(e.into()),
    }
}

fn reduce(
    ctx: &mut Ctx,
    call: Call,
    (f, init, coll): (&Value, Option<&Value>, &Value),
) -> EvalResult {
    if let Some(init) = never_called(ctx, call, f, init, coll)? {
        return Ok(init);
    }
    // An unbounded input is allowed when the function may end it with (reduced x); a builtin
    // such as + never does, so that would only run into a limit.
    let mut items = call.items(coll)?;
    if items.is_unbounded()
        && let Value::Fn(func) = f
        && let FnRepr::Builtin(b) = func.repr()
        && !matches!(b.name, "reduced" | "ensure-reduced")
    {
        return Err(call.unbounded(coll).into());
    }
    let mut acc = if let Some(init) = init {
        init.clone()
    } else {
        match items.next(ctx)? {
            Some(first) => first.into_owned(),
            None => return ctx.apply(f, &[]),
        }
    };
    // `(reduce + xs)` is the most common reduction: add without the general call.
    if let Value::Fn(func) = f
        && let FnRepr::Builtin(b) = func.repr()
        && b.name == "+"
    {
        while let Some(item) = items.next(ctx)? {
            ctx.tick()?;
            acc = super::number::add(&acc, item.as_ref())?;
        }
        return Ok(acc);
    }
    while let Some(item) = items.next(ctx)? {
        acc = ctx.apply(f, &[acc, item.into_owned()])?;
        if let Some(done) = as_reduced(&acc) {
            return Ok(done.clone());
        }
    }
    Ok(acc)
}

fn reduce_kv(ctx: &mut Ctx, call: Call, (f, init, coll): (Callable, &Value, &Value)) -> EvalResult {
    let (f, mut acc): (&Value, Value) = (&f, init.clone());
    match coll {
        Value::Map(m) => {
            for (k, v) in m.iter() {
                ctx.tick()?;
                acc = ctx.apply(f, &[acc, k.clone(), v.clone()])?;
                if let Some(done) = as_reduced(&acc) {
                    return Ok(done.clone());
                }
            }
        }
        Value::Vector(s) => {
            for (i, v) in s.iter().enumerate() {
                ctx.tick()?;
                acc = ctx.apply(f, &[acc, Value::from(i), v.clone()])?;
                if let Some(done) = as_reduced(&acc) {
                    return Ok(done.clone());
                }
            }
        }
        Value::Nil => {}
        other => return Err(call.expected("a map or vector", other).into()),
    }
    Ok(acc)
}

/// The most items a range is realized with at once: as many as the memory budget could hold.
fn most_range_items(ctx: &Ctx) -> u64 {
    (ctx.limits().max_memory_bytes / std::mem::size_of::<Value>()) as u64
}

/// `(range)`, `(range end)`, `(range start end)` or `(range start end step)`.
fn range(
    ctx: &mut Ctx,
    call: Call,
    (first, second, third): (Option<&Value>, Option<&Value>, Option<&Value>),
) -> EvalResult {
    let number = |v: &Value| call.arg::<Num>(v).map(Value::from);
    let unbounded = |start: Value, step: Value| {
        Value::Lazy(LazySeq::new(LazyKind::Range {
            start,
            step,
            end: None,
        }))
    };
    let (start, end, step) = match (first, second, third) {
        (None, _, _) => return Ok(unbounded(Value::Int(0), Value::Int(1))),
        (Some(end), None, _) => (Value::Int(0), number(end)?, Value::Int(1)),
        (Some(start), Some(end), step) => {
            let (start, end) = (number(start)?, number(end)?);
            let step = match step {
                Some(step) => number(step)?,
                None => Value::Int(1),
            };
            (start, end, step)
        }
    };
    // More items than the memory budget could ever hold are produced one at a time, so that
    // (first (range 100000000000)) works; shorter ranges are realized at once (faster to walk).
    let most_items = u128::from(most_range_items(ctx));
    if let (Value::Int(s), Value::Int(e), Value::Int(st)) = (&start, &end, &step) {
        // Counted exactly: no step past the end is ever computed, so nothing can overflow.
        let (s, e, st) = (i128::from(*s), i128::from(*e), i128::from(*st));
        let count = match st.cmp(&0) {
            Ordering::Greater if e > s => (e - s + st - 1) / st,
            Ordering::Less if e < s => (s - e - st - 1) / -st,
            Ordering::Equal if e != s => {
                return Ok(Value::Lazy(LazySeq::new(LazyKind::Repeat(start))));
            }
            _ => 0,
        };
        if count as u128 > most_items {
            return Ok(Value::Lazy(LazySeq::new(LazyKind::Range {
                start,
                step,
                end: Some(RangeEnd::Count(count as u64)),
            })));
        }
        let n = count as usize;
        ctx.charge_items(n)?;
        ctx.tick_n(n)?;
        let (mut x, st) = (s as i64, st as i64);
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            out.push(Value::Int(x));
            if i + 1 < n {
                x += st;
            }
        }
        return Ok(Value::List(Seq::from(out)));
    }
    // Any other numbers go up Clojure's tower as its `Range` does: start, start + step, ...
    // (a sum of 64-bit integers that overflows becomes a big integer) while below the end
    // (above it, for a negative step), each compared exactly in the greater kind of the two:
    // (range 0 1 1/4) is (0 1/4 1/2 3/4), (range 1.0M 4.0M) is (1.0M 2.0M 3.0M), and
    // (range 0 1 0.1) has 11 items, as in Clojure.
    let compare = |a: &Value, b: &Value| crate::eval::numbers::compare(a, b);
    if second.is_none() {
        // (range end): Clojure's Range.create(end) is empty unless end is positive (NaN is not).
        if compare(&end, &Value::Int(0))? != Some(Ordering::Greater) {
            return Ok(Value::empty_list());
        }
    }
    let step_sign = compare(&step, &Value::Int(0))?;
    let empty = match step_sign {
        Some(Ordering::Greater) => compare(&start, &end)? == Some(Ordering::Greater),
        Some(Ordering::Less) => compare(&end, &start)? == Some(Ordering::Greater),
        _ => false,
    };
    if empty || compare(&start, &end)? == Some(Ordering::Equal) {
        return Ok(Value::empty_list());
    }
    if step_sign == Some(Ordering::Equal) {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Repeat(start))));
    }
    let (s, e, st) = (to_f64(&start), to_f64(&end), to_f64(&step));
    // An end that is never reached (an infinite or NaN end; a NaN or infinite start or step
    // NaN, which stay so) leaves the range without end, as in Clojure.
    if e.is_nan() || e.is_infinite() || s.is_nan() || s.is_infinite() || st.is_nan() {
        return Ok(unbounded(start, step));
    }
    let estimate = ((e - s) / st).ceil();
    if !estimate.is_finite() || estimate > most_items as f64 {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Range {
            start,
            step,
            end: Some(RangeEnd::Below(end)),
        })));
    }
    ctx.charge_items(estimate as usize + 1)?;
    let mut out = Vec::with_capacity(estimate as usize + 1);
    let mut x = start;
    while crate::eval::numbers::range_continues(&x, &step, &end)? {
        ctx.tick()?;
        let next = crate::eval::numbers::promoting(crate::eval::numbers::Op::Add, &x, &step)?;
        out.push(x);
        x = next;
    }
    Ok(Value::List(Seq::from(out)))
}

fn take(
    ctx: &mut Ctx,
    call: Call,
    (CountDown(n), coll): (CountDown, Option<&Value>),
) -> EvalResult {
    // Clojure counts down by one while the count is positive: (take 2.5 xs) takes 3.
    match coll {
        Some(coll) => take_of(ctx, call, n, coll),
        None => Ok(transduce::take_xf(call, n)),
    }
}

/// The first `n` items of `coll`.
pub(crate) fn take_of(ctx: &mut Ctx, call: Call, n: i64, coll: &Value) -> EvalResult {
    if n <= 0 {
        return Ok(Value::empty_list());
    }
    let n = n as usize;
    if let Value::List(s) | Value::Vector(s) = coll {
        return Ok(Value::List(s.slice(0, n)));
    }
    // The items of a lazy sequence are new, and n may be huge: they are counted at once when
    // the length is known (a range), else as they come.
    let (charge_first, charge_each) = match coll {
        Value::Lazy(l) => match l.known_count() {
            Some(known) => (n.min(usize::try_from(known).unwrap_or(usize::MAX)), false),
            None if l.is_endless() => (n, false),
            None => (0, true),
        },
        _ => (0, false),
    };
    ctx.charge_items(charge_first)?;
    let mut items = call.items(coll)?;
    let mut out = Vec::new();
    while out.len() < n {
        match items.next(ctx)? {
            Some(item) => {
                if charge_each {
                    ctx.charge_items(1)?;
                }
                out.push(item.into_owned());
            }
            None => break,
        }
    }
    if !matches!(coll, Value::Lazy(_)) {
        ctx.charge_items(out.len())?;
    }
    Ok(Value::List(Seq::from(out)))
}

fn drop(
    ctx: &mut Ctx,
    call: Call,
    (CountDown(n), coll): (CountDown, Option<&Value>),
) -> EvalResult {
    match coll {
        Some(coll) => drop_items_of(ctx, call, coll, n.max(0) as usize),
        None => Ok(transduce::drop_xf(call, n)),
    }
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
    if let Some(Value::Keyword(k)) = cmp {
        return Err(Error::type_error(format!(
            "the keyword :{} is not a comparator: sort in descending order with (sort > coll) \
             or (sort-by :key > coll), and by a key with (sort-by :key coll)",
            k.as_str()
        ))
        .into());
    }
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
    // Each index comes once: every slot is still full when its turn comes.
    let mut slots: Vec<Option<Value>> = items.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}

fn sort(ctx: &mut Ctx, call: Call, (cmp, coll): (Option<&Value>, &Value)) -> EvalResult {
    let items = call.collect(ctx, coll)?;
    let keys = items.clone();
    let sorted = sort_with_keys(ctx, items, keys, cmp)?;
    list_of(ctx, sorted)
}

fn sort_by(
    ctx: &mut Ctx,
    call: Call,
    (keyfn, cmp, coll): (Callable, Option<&Value>, &Value),
) -> EvalResult {
    let items = call.collect(ctx, coll)?;
    let keys = items
        .iter()
        .map(|item| ctx.apply1(&keyfn, item))
        .collect::<EvalResult<Vec<_>>>()?;
    let sorted = sort_with_keys(ctx, items, keys, cmp)?;
    list_of(ctx, sorted)
}

fn some_of(ctx: &mut Ctx, pred: &Value, coll: &Seqable) -> EvalResult {
    let mut items = coll.items()?;
    while let Some(item) = items.next(ctx)? {
        let r = ctx.apply1(pred, item.as_ref())?;
        if r.truthy() {
            return Ok(r);
        }
    }
    Ok(Value::Nil)
}

fn every_of(ctx: &mut Ctx, pred: &Value, coll: &Seqable) -> EvalResult<bool> {
    let mut items = coll.items()?;
    while let Some(item) = items.next(ctx)? {
        if !ctx.apply1(pred, item.as_ref())?.truthy() {
            return Ok(false);
        }
    }
    Ok(true)
}

fn some(ctx: &mut Ctx, _: Call, (pred, coll): (Callable, Seqable)) -> EvalResult {
    some_of(ctx, &pred, &coll)
}

fn every(ctx: &mut Ctx, _: Call, (pred, coll): (Callable, Seqable)) -> EvalResult {
    Ok(Value::Bool(every_of(ctx, &pred, &coll)?))
}

/// `(repeat x)` or `(repeat n x)`.
fn repeat(ctx: &mut Ctx, call: Call, (first, second): (&Value, Option<&Value>)) -> EvalResult {
    match (first, second) {
        (x, None) => Ok(Value::Lazy(LazySeq::new(LazyKind::Repeat(x.clone())))),
        (n, Some(x)) => {
            let Truncated(n) = call.arg(n)?;
            // More copies than the memory budget could hold are made as they are taken, as
            // Clojure's Repeat does: (take 4 (repeat Long/MAX_VALUE :x)) works.
            if n > 0 && n as u64 > most_range_items(ctx) {
                return Ok(Value::Lazy(LazySeq::new(LazyKind::RepeatCount(
                    x.clone(),
                    n as u64,
                ))));
            }
            let n = n.max(0) as usize;
            ctx.charge_items(n)?;
            ctx.tick_n(n)?;
            Ok(Value::List(std::iter::repeat_n(x.clone(), n).collect()))
        }
    }
}

fn iterate(_: &mut Ctx, _: Call, (f, seed): (Callable, &Value)) -> EvalResult {
    Ok(Value::Lazy(LazySeq::new(LazyKind::Iterate {
        f: f.clone(),
        seed: seed.clone(),
    })))
}

fn cycle(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    let items = call.collect(ctx, coll)?;
    if items.is_empty() {
        return Ok(Value::empty_list());
    }
    Ok(Value::Lazy(LazySeq::new(LazyKind::Cycle(Seq::from(items)))))
}

// ---------------------------------------------------------------------------------------------
// Mapping and filtering variants
// ---------------------------------------------------------------------------------------------

/// A sequence as a vector, realized.
fn into_vector(ctx: &mut Ctx, call: Call, sequence: Value) -> EvalResult {
    match sequence {
        Value::List(items) => Ok(Value::Vector(items)),
        lazy @ Value::Lazy(_) => {
            let items = call.collect(ctx, &lazy)?;
            vector_of(ctx, items)
        }
        other => Ok(other),
    }
}

/// Unbounded inputs are refused before `f` is checked, so `f` is read in the body.
fn mapv(ctx: &mut Ctx, call: Call, (f, colls): (&Value, AtLeastOne)) -> EvalResult {
    if colls.iter().all(Value::is_unbounded) {
        return Err(call.unbounded(colls.first()).into());
    }
    let f = call.arg::<Callable>(f)?;
    let mapped = map_of(ctx, call, &f, &colls)?;
    into_vector(ctx, call, mapped)
}

/// An unbounded input is refused before `pred` is checked, so `pred` is read in the body.
fn filterv(ctx: &mut Ctx, call: Call, (pred, coll): (&Value, &Value)) -> EvalResult {
    if coll.is_unbounded() {
        return Err(call.unbounded(coll).into());
    }
    let pred = call.arg::<Callable>(pred)?;
    let filtered = filter_of(ctx, call, &pred, Some(coll), true)?;
    into_vector(ctx, call, filtered)
}

fn map_indexed(ctx: &mut Ctx, call: Call, (f, coll): (Callable, Option<&Value>)) -> EvalResult {
    let Some(coll) = coll else {
        return Ok(transduce::indexed_xf(call, f.clone(), true));
    };
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::MapIndexed {
            f: f.clone(),
            source: l.clone(),
        })));
    }
    let mut items = call.items(coll)?;
    let mut out = Vec::with_capacity(coll.count().unwrap_or(0));
    while let Some(item) = items.next(ctx)? {
        out.push(ctx.apply(&f, &[Value::from(out.len()), item.into_owned()])?);
    }
    list_of(ctx, out)
}

fn keep(ctx: &mut Ctx, call: Call, (f, coll): (Callable, Option<&Value>)) -> EvalResult {
    let Some(coll) = coll else {
        return Ok(transduce::keep_xf(call, f.clone()));
    };
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Keep {
            f: f.clone(),
            source: l.clone(),
        })));
    }
    let mut items = call.items(coll)?;
    let mut out = Vec::new();
    while let Some(item) = items.next(ctx)? {
        let y = ctx.apply1(&f, item.as_ref())?;
        if !y.is_nil() {
            out.push(y);
        }
    }
    list_of(ctx, out)
}

fn keep_indexed(ctx: &mut Ctx, call: Call, (f, coll): (Callable, Option<&Value>)) -> EvalResult {
    let Some(coll) = coll else {
        return Ok(transduce::indexed_xf(call, f.clone(), false));
    };
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::KeepIndexed {
            f: f.clone(),
            source: l.clone(),
        })));
    }
    let mut items = call.items(coll)?;
    let mut out = Vec::new();
    let mut index = 0i64;
    while let Some(item) = items.next(ctx)? {
        let y = ctx.apply(&f, &[Value::Int(index), item.into_owned()])?;
        index += 1;
        if !y.is_nil() {
            out.push(y);
        }
    }
    list_of(ctx, out)
}

fn mapcat(ctx: &mut Ctx, call: Call, (f, colls): (Callable, &[Value])) -> EvalResult {
    let f: &Value = &f;
    if colls.is_empty() {
        return Ok(transduce::mapcat_xf(call, f.clone()));
    }
    if let [Value::Lazy(l)] = colls {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::MapCat {
            f: f.clone(),
            source: l.clone(),
        })));
    }
    if colls.iter().all(|c| matches!(c, Value::Lazy(_))) {
        // (mapcat f s1 s2) over unbounded inputs: the concatenation of (map f s1 s2).
        let mapped = map_of(ctx, call, f, colls)?;
        let Value::Lazy(l) = mapped else {
            return Ok(mapped);
        };
        let identity = super::lookup_function("identity").map(Value::Fn);
        return Ok(Value::Lazy(LazySeq::new(LazyKind::MapCat {
            f: identity.unwrap_or_default(),
            source: l,
        })));
    }
    let parts = map_of(ctx, call, f, colls)?;
    let mut out = Vec::new();
    let mut items = Items::new(&parts)?;
    while let Some(part) = items.next(ctx)? {
        extend_items(ctx, call, &mut out, part.as_ref())?;
    }
    Ok(Value::List(Seq::from(out)))
}

fn reductions(
    ctx: &mut Ctx,
    call: Call,
    (f, init, coll): (&Value, Option<&Value>, &Value),
) -> EvalResult {
    if let Some(init) = never_called(ctx, call, f, init, coll)? {
        return Ok(init);
    }
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Reductions {
            f: f.clone(),
            init: init.cloned(),
            source: l.clone(),
        })));
    }
    let mut items = call.items(coll)?;
    let mut acc = match init {
        Some(init) => init.clone(),
        None => match items.next(ctx)? {
            Some(first) => first.into_owned(),
            None => {
                let empty = ctx.apply(f, &[])?;
                return list_of(ctx, vec![empty]);
            }
        },
    };
    let mut out = vec![acc.clone()];
    while let Some(item) = items.next(ctx)? {
        acc = ctx.apply(f, &[acc, item.into_owned()])?;
        if let Some(done) = as_reduced(&acc) {
            out.push(done.clone());
            break;
        }
        out.push(acc.clone());
    }
    list_of(ctx, out)
}

// ---------------------------------------------------------------------------------------------
// Parts of a sequence
// ---------------------------------------------------------------------------------------------

fn take_while(ctx: &mut Ctx, call: Call, (pred, coll): (Callable, Option<&Value>)) -> EvalResult {
    match coll {
        Some(coll) => take_while_of(ctx, call, &pred, coll),
        None => Ok(transduce::take_while_xf(call, pred.clone())),
    }
}

/// The items of `coll` before the first one for which `pred` is falsey.
pub(crate) fn take_while_of(ctx: &mut Ctx, call: Call, pred: &Value, coll: &Value) -> EvalResult {
    // A lazy input is consumed until pred fails, which gives a finite result; its items are
    // new, so they are counted as they come.
    let mut items = call.items(coll)?;
    let mut out = Vec::new();
    let lazy = matches!(coll, Value::Lazy(_));
    while let Some(item) = items.next(ctx)? {
        if !ctx.apply1(pred, item.as_ref())?.truthy() {
            break;
        }
        if lazy {
            ctx.charge_items(1)?;
        }
        out.push(item.into_owned());
    }
    if !lazy {
        ctx.charge_items(out.len())?;
    }
    Ok(Value::List(Seq::from(out)))
}

fn drop_while(ctx: &mut Ctx, call: Call, (pred, coll): (Callable, Option<&Value>)) -> EvalResult {
    match coll {
        Some(coll) => drop_while_of(ctx, call, &pred, coll),
        None => Ok(transduce::drop_while_xf(call, pred.clone())),
    }
}

/// The items of `coll` from the first one for which `pred` is falsey.
pub(crate) fn drop_while_of(ctx: &mut Ctx, call: Call, pred: &Value, coll: &Value) -> EvalResult {
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::DropWhile {
            pred: pred.clone(),
            source: l.clone(),
        })));
    }
    let mut items = call.items(coll)?;
    let mut out = Vec::new();
    let mut dropping = true;
    while let Some(item) = items.next(ctx)? {
        if dropping && ctx.apply1(pred, item.as_ref())?.truthy() {
            continue;
        }
        dropping = false;
        out.push(item.into_owned());
    }
    list_of(ctx, out)
}

/// The items of a finite collection as a sequence slice (lists and vectors without copying).
fn finite_seq(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult<Seq> {
    match coll {
        Value::List(s) | Value::Vector(s) => Ok(s.clone()),
        other => Ok(Seq::from(call.collect(ctx, other)?)),
    }
}

fn take_last(ctx: &mut Ctx, call: Call, (CountDown(n), coll): (CountDown, &Value)) -> EvalResult {
    let items = finite_seq(ctx, call, coll)?;
    let n = usize::try_from(n).unwrap_or(0).min(items.len());
    if n == 0 {
        return Ok(Value::Nil);
    }
    Ok(Value::List(items.slice(items.len() - n, items.len())))
}

fn drop_last(ctx: &mut Ctx, call: Call, (n, coll): (Option<CountDown>, &Value)) -> EvalResult {
    let n = n.map_or(1, |CountDown(n)| n);
    let items = finite_seq(ctx, call, coll)?;
    let n = usize::try_from(n).unwrap_or(0).min(items.len());
    Ok(Value::List(items.slice(0, items.len() - n)))
}

fn butlast(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    let items = finite_seq(ctx, call, coll)?;
    if items.len() <= 1 {
        return Ok(Value::Nil);
    }
    Ok(Value::List(items.slice(0, items.len() - 1)))
}

fn nthrest(ctx: &mut Ctx, call: Call, (coll, CountDown(n)): (&Value, CountDown)) -> EvalResult {
    // Clojure returns the collection itself when there is nothing to drop from it.
    if n <= 0 || coll.count() == Some(0) {
        return Ok(coll.clone());
    }
    drop_items_of(ctx, call, coll, n as usize)
}

fn ffirst(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    let first = nth_item(ctx, call, coll, 0)?.unwrap_or_default();
    Ok(nth_item(ctx, call, &first, 0)?.unwrap_or_default())
}

fn take_nth(
    ctx: &mut Ctx,
    call: Call,
    (CountDown(n), coll): (CountDown, Option<&Value>),
) -> EvalResult {
    if let (true, Some(coll)) = (n <= 0, coll) {
        // Clojure steps by dropping n items, which for n <= 0 stays on the first one forever.
        let mut items = call.items(coll)?;
        return Ok(match items.next(ctx)? {
            Some(first) => Value::Lazy(LazySeq::new(LazyKind::Repeat(first.into_owned()))),
            None => Value::empty_list(),
        });
    }
    let n = usize::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
        Error::argument(format!(
            "{call} needs a positive step, got {n}; ({call} 2 coll) takes every second item"
        ))
    })?;
    let Some(coll) = coll else {
        return Ok(transduce::take_nth_xf(call, n));
    };
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::TakeNth {
            n,
            source: l.clone(),
        })));
    }
    let mut items = call.items(coll)?;
    let mut out = Vec::new();
    let mut index = 0usize;
    while let Some(item) = items.next(ctx)? {
        if index.is_multiple_of(n) {
            out.push(item.into_owned());
        }
        index += 1;
    }
    list_of(ctx, out)
}

fn distinct(ctx: &mut Ctx, call: Call, coll: Option<&Value>) -> EvalResult {
    let Some(coll) = coll else {
        return Ok(transduce::distinct_xf(call));
    };
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Distinct(l.clone()))));
    }
    let mut seen: rustc_hash::FxHashSet<Value> = rustc_hash::FxHashSet::default();
    let mut items = call.items(coll)?;
    let mut out = Vec::new();
    while let Some(item) = items.next(ctx)? {
        if !seen.contains(item.as_ref()) {
            let item = item.into_owned();
            seen.insert(item.clone());
            out.push(item);
        }
    }
    list_of(ctx, out)
}

fn dedupe(ctx: &mut Ctx, call: Call, coll: Option<&Value>) -> EvalResult {
    let Some(coll) = coll else {
        return Ok(transduce::dedupe_xf(call));
    };
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Dedupe(l.clone()))));
    }
    let mut items = call.items(coll)?;
    let mut out: Vec<Value> = Vec::new();
    while let Some(item) = items.next(ctx)? {
        if out.last() != Some(item.as_ref()) {
            out.push(item.into_owned());
        }
    }
    list_of(ctx, out)
}

fn flatten_into(ctx: &mut Ctx, call: Call, items: &Seq, out: &mut Vec<Value>) -> EvalResult<()> {
    for item in items.iter() {
        ctx.tick()?;
        match item {
            Value::List(inner) | Value::Vector(inner) => flatten_into(ctx, call, inner, out)?,
            Value::Lazy(_) => {
                let inner = Seq::from(call.collect(ctx, item)?);
                flatten_into(ctx, call, &inner, out)?;
            }
            other => out.push(other.clone()),
        }
    }
    Ok(())
}

fn flatten(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    let mut out = Vec::new();
    match coll {
        // Recursion depth is bounded by the value depth limit.
        Value::List(items) | Value::Vector(items) => flatten_into(ctx, call, items, &mut out)?,
        Value::Lazy(_) => {
            let items = Seq::from(call.collect(ctx, coll)?);
            flatten_into(ctx, call, &items, &mut out)?;
        }
        _ => {}
    }
    list_of(ctx, out)
}

fn reverse(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    let mut items = call.collect(ctx, coll)?;
    items.reverse();
    list_of(ctx, items)
}

fn interleave(ctx: &mut Ctx, call: Call, colls: &[Value]) -> EvalResult {
    if colls.is_empty() {
        return Ok(Value::empty_list());
    }
    if colls.iter().all(|c| matches!(c, Value::Lazy(_))) {
        let sources = colls
            .iter()
            .filter_map(|c| match c {
                Value::Lazy(l) => Some(l.clone()),
                _ => None,
            })
            .collect();
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Interleave(sources))));
    }
    let mut iters = colls
        .iter()
        .map(|c| call.items(c))
        .collect::<Result<Vec<_>>>()?;
    let mut out = Vec::new();
    'rows: loop {
        let mut row = Vec::with_capacity(iters.len());
        for it in iters.iter_mut() {
            match it.next(ctx)? {
                Some(item) => row.push(item.into_owned()),
                None => break 'rows,
            }
        }
        out.extend(row);
    }
    list_of(ctx, out)
}

fn interpose(ctx: &mut Ctx, call: Call, (sep, coll): (&Value, Option<&Value>)) -> EvalResult {
    let Some(coll) = coll else {
        return Ok(transduce::interpose_xf(call, sep.clone()));
    };
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Interpose {
            sep: sep.clone(),
            source: l.clone(),
        })));
    }
    let mut items = call.items(coll)?;
    let mut out = Vec::new();
    while let Some(item) = items.next(ctx)? {
        if !out.is_empty() {
            out.push(sep.clone());
        }
        out.push(item.into_owned());
    }
    list_of(ctx, out)
}

fn tree_seq(
    ctx: &mut Ctx,
    call: Call,
    (branch, children, root): (Callable, Callable, &Value),
) -> EvalResult {
    let mut out = Vec::new();
    // Depth-first, without recursion: a stack of the children still to visit at each level.
    let mut pending: Vec<std::vec::IntoIter<Value>> = Vec::new();
    let mut next = Some(root.clone());
    loop {
        let node = match next.take() {
            Some(node) => node,
            None => loop {
                match pending.last_mut() {
                    None => return list_of(ctx, out),
                    Some(level) => match level.next() {
                        Some(node) => break node,
                        None => {
                            pending.pop();
                        }
                    },
                }
            },
        };
        ctx.tick()?;
        if ctx.apply1(&branch, &node)?.truthy() {
            let kids = ctx.apply1(&children, &node)?;
            let kids = call.collect(ctx, &kids)?;
            pending.push(kids.into_iter());
        }
        out.push(node);
    }
}

/// `min-key`/`max-key` as Clojure 1.11 defines them: of two, `y` unless `(k x)` is strictly
/// better; of more, the later of equal keys. Keys are compared as `<` compares numbers (any
/// kind; NaN is never better).
fn extreme_key(
    ctx: &mut Ctx,
    call: Call,
    (k, first, more): (Callable, &Value, &[Value]),
    want: Ordering,
) -> EvalResult {
    let Some((second, rest)) = more.split_first() else {
        return Ok(first.clone());
    };
    let key = |ctx: &mut Ctx, x: &Value| -> EvalResult {
        let key = ctx.apply1(&k, x)?;
        if crate::value::NumberKind::of(&key).is_none() {
            return Err(Error::type_error(format!(
                "{call} needs (k x) to be a number, got {} for {}",
                got(&key),
                crate::eval::pr_str_short(x)
            ))
            .into());
        }
        Ok(key)
    };
    let better = |a: &Value, b: &Value, or_equal: bool| -> Result<bool> {
        Ok(match crate::eval::numbers::compare(a, b)? {
            Some(o) => o == want || (or_equal && o == Ordering::Equal),
            None => false,
        })
    };
    let (kx, ky) = (key(ctx, first)?, key(ctx, second)?);
    let (mut best, mut best_key) = if better(&kx, &ky, false)? {
        (first, kx)
    } else {
        (second, ky)
    };
    for w in rest {
        let kw = key(ctx, w)?;
        if better(&kw, &best_key, true)? {
            best = w;
            best_key = kw;
        }
    }
    Ok(best.clone())
}

fn min_key(ctx: &mut Ctx, call: Call, xs: (Callable, &Value, &[Value])) -> EvalResult {
    extreme_key(ctx, call, xs, Ordering::Less)
}

fn max_key(ctx: &mut Ctx, call: Call, xs: (Callable, &Value, &[Value])) -> EvalResult {
    extreme_key(ctx, call, xs, Ordering::Greater)
}

fn not_any(ctx: &mut Ctx, _: Call, (pred, coll): (Callable, Seqable)) -> EvalResult {
    Ok(Value::Bool(!some_of(ctx, &pred, &coll)?.truthy()))
}

fn not_every(ctx: &mut Ctx, _: Call, (pred, coll): (Callable, Seqable)) -> EvalResult {
    Ok(Value::Bool(!every_of(ctx, &pred, &coll)?))
}

fn not_empty(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    if is_empty_of(ctx, call, coll)? {
        Ok(Value::Nil)
    } else {
        Ok(coll.clone())
    }
}

/// `(doall coll)` or `(doall n coll)`.
fn doall(ctx: &mut Ctx, call: Call, (n, coll): (Option<&Value>, &Value)) -> EvalResult {
    match coll {
        Value::Lazy(l) if n.is_none() && l.is_bounded() => {
            let items = call.collect(ctx, coll)?;
            list_of(ctx, items)
        }
        Value::Lazy(_) if n.is_none() => Err(call.unbounded(coll).into()),
        _ => Ok(coll.clone()),
    }
}

/// `(dorun coll)` or `(dorun n coll)`.
fn dorun(ctx: &mut Ctx, call: Call, (n, coll): (Option<&Value>, &Value)) -> EvalResult {
    match coll {
        Value::Lazy(l) if n.is_none() && l.is_bounded() => {
            let mut items = Items::new(coll)?;
            while items.next(ctx)?.is_some() {}
            Ok(Value::Nil)
        }
        Value::Lazy(_) if n.is_none() => Err(call.unbounded(coll).into()),
        _ => Ok(Value::Nil),
    }
}
