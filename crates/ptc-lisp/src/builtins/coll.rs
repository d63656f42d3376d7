//! Maps and keyed access.
//!
//! Key leniency: `get`, `get-in` (and keyword lookups and destructuring) find a string key when
//! given a keyword and a keyword key when given a string, because data that arrives as JSON has
//! string keys while programs naturally write `(:price p)`.

use super::args::{Call, Callable, Truncated};
use super::{Builtin, builtin, got};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{Ctx, EvalResult, get_key, lookup};
use crate::value::{Map, MapBuilder, Seq, Set, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("get", get, "(get m k) (get m k not-found)", "Value of key k in a map (index in a vector, member of a set), or not-found/nil.", "(get {:a 1} :b 0)" => "0"),
    builtin!("get-in", get_in, "(get-in m path) (get-in m path not-found)", "Value at a path of keys through nested maps and vectors.", "(get-in {:a {:b [10 20]}} [:a :b 1])" => "20"),
    builtin!("assoc", assoc, "(assoc m k v & kvs)", "The map with k set to v (a vector with index k replaced).", "(assoc {:a 1} :b 2)" => "{:a 1, :b 2}"),
    builtin!("assoc-in", assoc_in, "(assoc-in m path v)", "The nested map with the value at path set to v, creating maps as needed.", "(assoc-in {} [:a :b] 1)" => "{:a {:b 1}}"),
    builtin!("dissoc", dissoc, "(dissoc m & ks)", "The map without the given keys.", "(dissoc {:a 1 :b 2} :a)" => "{:b 2}"),
    builtin!("update", update, "(update m k f & args)", "The map with k set to (f old-value args...).", "(update {:n 1} :n + 10)" => "{:n 11}"),
    builtin!("update-in", update_in, "(update-in m path f & args)", "The nested map with the value at path set to (f old-value args...).", "(update-in {:a {:n 1}} [:a :n] inc)" => "{:a {:n 2}}"),
    builtin!("keys", keys, "(keys m)", "The keys of a map as a list, or nil for an empty map.", "(keys {:a 1 :b 2})" => "(:a :b)"),
    builtin!("vals", vals, "(vals m)", "The values of a map as a list, or nil for an empty map.", "(vals {:a 1 :b 2})" => "(1 2)"),
    builtin!("merge", merge, "(merge & maps)", "One map with the entries of all maps; later maps win.", "(merge {:a 1} {:a 2 :b 3})" => "{:a 2, :b 3}"),
    builtin!("select-keys", select_keys, "(select-keys m ks)", "The map with only the given keys.", "(select-keys {:a 1 :b 2 :c 3} [:a :c])" => "{:a 1, :c 3}"),
    builtin!("contains?", contains, "(contains? coll k)", "True if a map has key k, a set has member k, or a vector has index k.", "(contains? {:a nil} :a)" => "true"),
    builtin!("array-map", hash_map, "(array-map & kvs)", "A map of the key/value pairs, in the order given (every small map keeps its order).", "(array-map :b 1 :a 2)" => "{:b 1, :a 2}"),
    builtin!("hash-map", hash_map, "(hash-map & kvs)", "A map of the key/value arguments.", "(hash-map :a 1)" => "{:a 1}"),
    builtin!("hash-set", hash_set, "(hash-set & items)", "A set of the arguments.", "(hash-set 1 2 1)" => "#{1 2}"),
    builtin!("set", set, "(set coll)", "A set of the items of coll.", "(set [1 2 1])" => "#{1 2}"),
    builtin!("merge-with", merge_with, "(merge-with f & maps)", "Like merge, combining the values of a key found in several maps with (f earlier later).", "(merge-with + {:a 1 :b 2} {:a 10})" => "{:a 11, :b 2}"),
    builtin!("find", find, "(find m k)", "The [k v] entry of key k in a map (or index k in a vector), or nil.", "(find {:a 1 :b 2} :b)" => "[:b 2]"),
    builtin!("key", key, "(key entry)", "The key of a map entry.", "(key (first {:a 1}))" => ":a"),
    builtin!("val", val, "(val entry)", "The value of a map entry.", "(val (first {:a 1}))" => "1"),
    builtin!("update-vals", update_vals, "(update-vals m f)", "The map with every value v replaced by (f v).", "(update-vals {:a 1 :b 2} inc)" => "{:a 2, :b 3}"),
    builtin!("update-keys", update_keys, "(update-keys m f)", "The map with every key k replaced by (f k).", "(update-keys {:a 1} name)" => "{\"a\" 1}"),
    builtin!("zipmap", zipmap, "(zipmap keys vals)", "A map pairing each key with the value at the same position, stopping at the shorter.", "(zipmap [:a :b] [1 2])" => "{:a 1, :b 2}"),
    builtin!("empty", empty, "(empty coll)", "An empty collection of the same kind as coll (nil for other values).", "(empty {:a 1})" => "{}"),
    builtin!("disj", disj, "(disj set & ks)", "The set without the given members.", "(disj #{1 2 3} 2)" => "#{1 3}"),
    builtin!("peek", peek, "(peek coll)", "The last item of a vector or the first of a list, or nil when empty.", "[(peek [1 2]) (peek '(1 2))]" => "[2 1]"),
    builtin!("pop", pop, "(pop coll)", "A vector without its last item or a list without its first; an error when empty.", "[(pop [1 2 3]) (pop '(1 2 3))]" => "[[1 2] (2 3)]"),
    builtin!("subvec", subvec, "(subvec v start) (subvec v start end)", "The items of vector v from start up to, not including, end.", "(subvec [1 2 3 4] 1 3)" => "[2 3]"),
    builtin!("sorted-map", sorted_map, "(sorted-map & kvs)", "A map of the key/value arguments that keeps its keys sorted (also after assoc).", "(sorted-map :b 2 :a 1)" => "{:a 1, :b 2}"),
    builtin!("sorted-set", sorted_set, "(sorted-set & items)", "A set of the arguments that keeps its members sorted (also after conj).", "(sorted-set 3 1 2)" => "#{1 2 3}"),
];

fn get(_: &mut Ctx, _: Call, (m, k, not_found): (&Value, &Value, Option<&Value>)) -> EvalResult {
    Ok(get_key(m, k).unwrap_or_else(|| not_found.cloned().unwrap_or_default()))
}

/// `items` two at a time: the key/value pairs of `(hash-map k v ...)` and the like.
fn pairs(items: &[Value]) -> impl Iterator<Item = (&Value, &Value)> {
    items.chunks_exact(2).filter_map(|pair| match pair {
        [k, v] => Some((k, v)),
        _ => None,
    })
}

/// The error for key/value arguments of odd count.
#[cold]
fn unpaired(call: Call, after: &str) -> Error {
    Error::arity(format!("{call} expects key/value pairs{after}"))
}

fn path_items(ctx: &mut Ctx, call: Call, path: &Value) -> EvalResult<Vec<Value>> {
    match path {
        Value::Vector(_) | Value::List(_) | Value::Nil => call.collect(ctx, path),
        other => Err(call.expected("a vector of keys as its path", other).into()),
    }
}

fn get_in(
    ctx: &mut Ctx,
    call: Call,
    (m, path, not_found): (&Value, &Value, Option<&Value>),
) -> EvalResult {
    let path = path_items(ctx, call, path)?;
    let mut current = m.clone();
    for key in &path {
        match get_key(&current, key) {
            Some(v) => current = v,
            None => return Ok(not_found.cloned().unwrap_or_default()),
        }
    }
    Ok(current)
}

/// `(assoc coll k v)` for maps, vectors and nil.
fn assoc_one(call: Call, coll: &Value, k: Value, v: Value) -> Result<Value> {
    match coll {
        Value::Map(m) => Ok(Value::Map(m.assoc(k, v))),
        Value::Nil => Ok(Value::map([(k, v)])),
        Value::Vector(s) => {
            // An integer index by its Java `intValue`, as Clojure's vectors take one; a float
            // is refused ("Key must be integer").
            let i = crate::eval::int_value(&k).ok_or_else(|| {
                call.expected_with(
                    "an integer index for a vector",
                    &k,
                    "; convert with (long x), or use a map for other keys",
                )
            })?;
            let len = s.len();
            match usize::try_from(i) {
                Ok(i) if i < len => {
                    let mut out = s.clone();
                    out.set(i, v);
                    Ok(Value::Vector(out))
                }
                Ok(i) if i == len => {
                    let mut out = s.clone();
                    out.push_back(v);
                    Ok(Value::Vector(out))
                }
                _ => Err(call.error(
                    ErrorKind::Index,
                    format_args!("index {i} is out of bounds for a vector of {len} items"),
                )),
            }
        }
        other => Err(call.expected("a map or vector", other)),
    }
}

fn assoc(
    ctx: &mut Ctx,
    call: Call,
    (m, k, v, more): (&Value, &Value, &Value, &[Value]),
) -> EvalResult {
    if !more.len().is_multiple_of(2) {
        return Err(unpaired(call, " after the map").into());
    }
    ctx.charge_items(2 + more.len())?;
    let mut out = assoc_one(call, m, k.clone(), v.clone())?;
    for (k, v) in pairs(more) {
        out = assoc_one(call, &out, k.clone(), v.clone())?;
    }
    Ok(out)
}

fn assoc_in_path(ctx: &mut Ctx, call: Call, coll: &Value, path: &[Value], v: Value) -> EvalResult {
    let Some((key, rest)) = path.split_first() else {
        return Ok(v);
    };
    ctx.charge_items(2)?;
    if rest.is_empty() {
        return Ok(assoc_one(call, coll, key.clone(), v)?);
    }
    let inner = get_key(coll, key).unwrap_or_default();
    let updated = assoc_in_path(ctx, call, &inner, rest, v)?;
    Ok(assoc_one(call, coll, key.clone(), updated)?)
}

/// Clojure takes the first key of an empty path to be nil: `(assoc-in {:a 1} [] 2)` is
/// `{:a 1, nil 2}`.
fn path_or_nil_key(path: Vec<Value>) -> Vec<Value> {
    if path.is_empty() {
        vec![Value::Nil]
    } else {
        path
    }
}

/// A path nests the result at least as deeply as it is long; refusing a too-long path up front
/// also bounds the recursion that follows it.
fn check_path_depth(ctx: &Ctx, path: &[Value]) -> Result<()> {
    ctx.check_nesting(path.len())
}

fn assoc_in(ctx: &mut Ctx, call: Call, (m, path, v): (&Value, &Value, &Value)) -> EvalResult {
    let path = path_or_nil_key(path_items(ctx, call, path)?);
    check_path_depth(ctx, &path)?;
    assoc_in_path(ctx, call, m, &path, v.clone())
}

fn dissoc(_: &mut Ctx, call: Call, (m, ks): (&Value, &[Value])) -> EvalResult {
    match m {
        Value::Map(m) => {
            let mut out = m.clone();
            for k in ks {
                out = out.dissoc(k);
            }
            Ok(Value::Map(out))
        }
        Value::Nil => Ok(Value::Nil),
        other => Err(call.expected("a map", other).into()),
    }
}

fn update(
    ctx: &mut Ctx,
    call: Call,
    (coll, key, f, extra): (&Value, &Value, Callable, &[Value]),
) -> EvalResult {
    let mut f_args = vec![get_key(coll, key).unwrap_or_default()];
    f_args.extend_from_slice(extra);
    let v = ctx.apply(&f, &f_args)?;
    ctx.charge_items(1)?;
    Ok(assoc_one(call, coll, key.clone(), v)?)
}

fn update_in_path(
    ctx: &mut Ctx,
    call: Call,
    coll: &Value,
    path: &[Value],
    f: &Value,
    extra: &[Value],
) -> EvalResult {
    let Some((key, rest)) = path.split_first() else {
        let mut f_args = vec![coll.clone()];
        f_args.extend_from_slice(extra);
        return ctx.apply(f, &f_args);
    };
    let inner = get_key(coll, key).unwrap_or_default();
    let updated = update_in_path(ctx, call, &inner, rest, f, extra)?;
    ctx.charge_items(1)?;
    Ok(assoc_one(call, coll, key.clone(), updated)?)
}

/// The path is checked before `f`, so `f` is read in the body.
fn update_in(
    ctx: &mut Ctx,
    call: Call,
    (m, path, f, extra): (&Value, &Value, &Value, &[Value]),
) -> EvalResult {
    let path = path_or_nil_key(path_items(ctx, call, path)?);
    let f = call.arg::<Callable>(f)?;
    check_path_depth(ctx, &path)?;
    update_in_path(ctx, call, m, &path, &f, extra)
}

fn map_part(ctx: &mut Ctx, call: Call, m: &Value, key_part: bool) -> EvalResult {
    match m {
        Value::Map(m) if m.is_empty() => Ok(Value::Nil),
        Value::Map(m) => {
            let items: Vec<Value> = if key_part {
                m.keys().cloned().collect()
            } else {
                m.values().cloned().collect()
            };
            super::build::list_of(ctx, items)
        }
        Value::Nil => Ok(Value::Nil),
        // A sequence of entries, such as a filtered map: entries are [key value] vectors.
        Value::List(_) | Value::Vector(_) | Value::Set(_) | Value::Lazy(_) => {
            let entries = call.collect(ctx, m)?;
            if entries.is_empty() {
                return Ok(Value::Nil);
            }
            let part = usize::from(!key_part);
            let items = entries
                .iter()
                .map(|e| match e {
                    Value::Vector(pair) if pair.len() == 2 => Ok(pair[part].clone()),
                    other => Err(call.expected("a map or a sequence of map entries", other)),
                })
                .collect::<Result<Vec<Value>>>()?;
            super::build::list_of(ctx, items)
        }
        other => Err(call.expected("a map", other).into()),
    }
}

fn keys(ctx: &mut Ctx, call: Call, m: &Value) -> EvalResult {
    map_part(ctx, call, m, true)
}

fn vals(ctx: &mut Ctx, call: Call, m: &Value) -> EvalResult {
    map_part(ctx, call, m, false)
}

/// As Clojure's `(reduce #(conj (or %1 {}) %2) maps)`: later maps win, and a `[k v]` entry
/// may stand for a map.
fn merge(ctx: &mut Ctx, call: Call, maps: &[Value]) -> EvalResult {
    let Some((first, rest)) = maps.split_first() else {
        return Ok(Value::Nil);
    };
    if rest.iter().all(Value::is_nil) {
        return Ok(first.clone());
    }
    let mut out = match first {
        Value::Nil => Value::Map(Map::new()),
        other => other.clone(),
    };
    for m in rest {
        if let Value::Map(m) = m {
            ctx.charge_items(m.len() * 2)?;
        } else {
            ctx.charge_items(1)?;
        }
        super::build::conj_one(call, &mut out, m.clone())?;
    }
    Ok(out)
}

fn select_keys(ctx: &mut Ctx, call: Call, (m, ks): (&Value, &Value)) -> EvalResult {
    let wanted = call.collect(ctx, ks)?;
    let mut out = Map::new();
    match m {
        Value::Map(m) => {
            for k in wanted {
                if let Some(v) = lookup(m, &k) {
                    out.assoc_mut(k, v.clone());
                }
            }
        }
        Value::Vector(items) => {
            for k in wanted {
                if let Value::Int(i) = k
                    && let Some(v) = usize::try_from(i).ok().and_then(|i| items.get(i))
                {
                    out.assoc_mut(k, v.clone());
                }
            }
        }
        Value::Nil => {}
        other => return Err(call.expected("a map or a vector", other).into()),
    }
    ctx.charge_items(out.len() * 2)?;
    Ok(Value::Map(out))
}

fn contains(_: &mut Ctx, call: Call, (coll, k): (&Value, &Value)) -> EvalResult {
    Ok(Value::Bool(match coll {
        Value::Map(m) => m.contains_key(k),
        Value::Set(s) => s.contains(k),
        // Integers by their Java `intValue` for a vector, any number for a string, as Clojure.
        Value::Vector(v) => {
            crate::eval::int_value(k).is_some_and(|i| usize::try_from(i).is_ok_and(|i| i < v.len()))
        }
        Value::Str(s) => match crate::eval::java_int_value(k) {
            Some(i) => usize::try_from(i).is_ok_and(|i| i < s.chars().count()),
            None => {
                let other = k;
                return Err(Error::argument(format!(
                    "{call} checks indices of a string, not {}; to look for a character or \
                     text in a string use clojure.string/includes?",
                    got(other)
                ))
                .into());
            }
        },
        Value::Nil => false,
        other => {
            return Err(Error::argument(format!(
                "{call} checks keys of maps and sets (and indices of vectors), not {}; to \
                 look for an item in a list use (some #{{x}} coll)",
                got(other)
            ))
            .into());
        }
    }))
}

fn hash_map(ctx: &mut Ctx, call: Call, kvs: &[Value]) -> EvalResult {
    if !kvs.len().is_multiple_of(2) {
        return Err(unpaired(call, "").into());
    }
    ctx.charge_items(kvs.len())?;
    Ok(Value::Map(Map::from_pairs(
        pairs(kvs).map(|(k, v)| (k.clone(), v.clone())),
    )))
}

fn hash_set(ctx: &mut Ctx, _: Call, items: &[Value]) -> EvalResult {
    ctx.charge_items(items.len())?;
    Ok(Value::Set(Set::from_items(items.iter().cloned())))
}

fn set(ctx: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    if let Value::Set(_) = coll {
        return Ok(coll.clone());
    }
    let items = call.collect(ctx, coll)?;
    Ok(Value::Set(Set::from_items(items)))
}

fn merge_with(ctx: &mut Ctx, call: Call, (f, maps): (Callable, &[Value])) -> EvalResult {
    let mut out: Option<Map> = None;
    for m in maps {
        match m {
            Value::Nil => {}
            Value::Map(m) => match &mut out {
                None => out = Some(m.clone()),
                Some(acc) => {
                    ctx.charge_items(m.len() * 2)?;
                    for (k, v) in m.iter() {
                        let merged = match acc.get(k) {
                            Some(old) => ctx.apply(&f, &[old.clone(), v.clone()])?,
                            None => v.clone(),
                        };
                        acc.assoc_mut(k.clone(), merged);
                    }
                }
            },
            other => return Err(call.expected("maps after the function", other).into()),
        }
    }
    Ok(out.map(Value::Map).unwrap_or_default())
}

fn find(_: &mut Ctx, call: Call, (coll, k): (&Value, &Value)) -> EvalResult {
    Ok(match coll {
        Value::Map(m) => m
            .get_entry(k)
            .map(|(k, v)| Value::vector([k.clone(), v.clone()]))
            .unwrap_or_default(),
        Value::Vector(s) => match k {
            Value::Int(i) => usize::try_from(*i)
                .ok()
                .and_then(|i| s.get(i))
                .map(|v| Value::vector([k.clone(), v.clone()]))
                .unwrap_or_default(),
            _ => Value::Nil,
        },
        Value::Nil => Value::Nil,
        other => {
            return Err(Error::type_error(format!(
                "{call} looks up a key in a map, got {}; to find an item in a list use \
                 (some #(when (pred %) %) coll) or (first (filter pred coll))",
                got(other)
            ))
            .into());
        }
    })
}

fn entry_part(call: Call, entry: &Value, key_part: bool) -> EvalResult {
    match entry {
        Value::Vector(pair) if pair.len() == 2 => {
            Ok(if key_part { pair.first() } else { pair.last() }
                .cloned()
                .unwrap_or_default())
        }
        other => Err(call
            .expected("a map entry (a [key value] pair from a map)", other)
            .into()),
    }
}

fn key(_: &mut Ctx, call: Call, entry: &Value) -> EvalResult {
    entry_part(call, entry, true)
}

fn val(_: &mut Ctx, call: Call, entry: &Value) -> EvalResult {
    entry_part(call, entry, false)
}

fn expect_map(call: Call, v: &Value) -> Result<Option<&Map>> {
    match v {
        Value::Map(m) => Ok(Some(m)),
        Value::Nil => Ok(None),
        Value::Fn(_) => Err(Error::type_error(format!(
            "{call} takes the map first: ({call} m f); in a pipeline thread it with ->, not ->>"
        ))),
        other => Err(call.expected("a map", other)),
    }
}

/// `update-vals` and `update-keys`: the function is checked first, as Clojure does.
fn update_entries(
    ctx: &mut Ctx,
    call: Call,
    (m, f): (&Value, &Value),
    update: fn(&mut Ctx, &mut Map, &Value, &Value, &Value) -> EvalResult<()>,
    empty: fn(&Map) -> Map,
) -> EvalResult {
    let f = call.arg::<Callable>(f)?;
    let Some(m) = expect_map(call, m)? else {
        return Ok(Value::Map(Map::new()));
    };
    ctx.charge_items(m.len() * 2)?;
    let mut out = empty(m);
    for (k, v) in m.iter() {
        update(ctx, &mut out, &f, k, v)?;
    }
    Ok(Value::Map(out))
}

fn update_vals(ctx: &mut Ctx, call: Call, args: (&Value, &Value)) -> EvalResult {
    update_entries(
        ctx,
        call,
        args,
        |ctx, out, f, k, v| {
            out.assoc_mut(k.clone(), ctx.apply1(f, v)?);
            Ok(())
        },
        Map::clone,
    )
}

fn update_keys(ctx: &mut Ctx, call: Call, args: (&Value, &Value)) -> EvalResult {
    update_entries(
        ctx,
        call,
        args,
        |ctx, out, f, k, v| {
            out.assoc_mut(ctx.apply1(f, k)?, v.clone());
            Ok(())
        },
        Map::empty_like,
    )
}

fn zipmap(ctx: &mut Ctx, call: Call, (ks, vs): (&Value, &Value)) -> EvalResult {
    if ks.is_unbounded() && vs.is_unbounded() {
        return Err(call.unbounded(ks).into());
    }
    let mut keys = call.items(ks)?;
    let mut vals = call.items(vs)?;
    let mut out = MapBuilder::new();
    // Charged as the map grows: a long lazy input (a huge range) must hit the memory limit
    // while it is read, not after the whole map is built.
    const CHARGE_EVERY: usize = 1024;
    let mut charged = 0;
    while let Some(k) = keys.next(ctx)? {
        let Some(v) = vals.next(ctx)? else { break };
        out.insert(k.into_owned(), v.into_owned());
        if out.len() - charged >= CHARGE_EVERY {
            ctx.charge_items((out.len() - charged) * MapBuilder::SLOTS_PER_ENTRY)?;
            charged = out.len();
        }
    }
    ctx.charge_items((out.len() - charged) * MapBuilder::SLOTS_PER_ENTRY)?;
    Ok(Value::Map(out.build()))
}

fn empty(_: &mut Ctx, _: Call, coll: &Value) -> EvalResult {
    let out = match coll {
        Value::List(_) | Value::Lazy(_) => Value::empty_list(),
        Value::Vector(_) => Value::Vector(Seq::new()),
        Value::Map(m) => Value::Map(m.empty_like()),
        Value::Set(s) => Value::Set(s.empty_like()),
        _ => Value::Nil,
    };
    // The empty collection keeps the metadata of the one it was made from, as in Clojure.
    Ok(match coll.meta() {
        Some(meta) => out.with_meta(Some(meta.clone())).unwrap_or_default(),
        None => out,
    })
}

fn disj(_: &mut Ctx, call: Call, (set, ks): (&Value, &[Value])) -> EvalResult {
    match set {
        Value::Set(s) => {
            let mut out = s.clone();
            for k in ks {
                out = out.remove(k);
            }
            Ok(Value::Set(out))
        }
        Value::Nil => Ok(Value::Nil),
        other => Err(Error::type_error(format!(
            "{call} removes members from a set, got {}; use dissoc for maps or remove for lists",
            got(other)
        ))
        .into()),
    }
}

fn peek(_: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    match coll {
        Value::Vector(s) => Ok(s.last().cloned().unwrap_or_default()),
        Value::List(s) => Ok(s.first().cloned().unwrap_or_default()),
        Value::Nil => Ok(Value::Nil),
        other => Err(call.expected("a vector or list", other).into()),
    }
}

fn pop(_: &mut Ctx, call: Call, coll: &Value) -> EvalResult {
    match coll {
        Value::Vector(s) if !s.is_empty() => {
            let mut out = s.clone();
            out.pop_back();
            Ok(Value::Vector(out))
        }
        Value::List(s) if !s.is_empty() => Ok(Value::List(s.slice(1, s.len()))),
        Value::Vector(_) | Value::List(_) => Err(Error::argument(format!(
            "cannot pop an empty {}; check (empty? coll) first",
            coll.type_name()
        ))
        .into()),
        Value::Nil => Ok(Value::Nil),
        other => Err(call.expected("a vector or list", other).into()),
    }
}

/// The vector is checked before the positions, so they are read in the body.
fn subvec(
    _: &mut Ctx,
    call: Call,
    (v, start, end): (&Value, &Value, Option<&Value>),
) -> EvalResult {
    let Value::Vector(s) = v else {
        return Err(call
            .expected_with("a vector", v, "; use (vec coll) first, or take/drop")
            .into());
    };
    let len = s.len() as i64;
    // Clojure casts both bounds to a Java int: a fraction is truncated.
    let start = call.arg::<Truncated>(start)?.0;
    let end = match end {
        Some(e) => call.arg::<Truncated>(e)?.0,
        None => len,
    };
    if start < 0 || end < start || end > len {
        return Err(call
            .error(
                ErrorKind::Index,
                format_args!("range {start}..{end} is out of bounds for a vector of {len} items"),
            )
            .into());
    }
    Ok(Value::Vector(s.slice(start as usize, end as usize)))
}

fn sorted_map(ctx: &mut Ctx, call: Call, kvs: &[Value]) -> EvalResult {
    if !kvs.len().is_multiple_of(2) {
        return Err(unpaired(call, "").into());
    }
    ctx.charge_items(kvs.len())?;
    check_sortable(call, kvs.iter().step_by(2))?;
    let mut out = Map::new_sorted();
    for (k, v) in pairs(kvs) {
        out.assoc_mut(k.clone(), v.clone());
    }
    Ok(Value::Map(out))
}

fn sorted_set(ctx: &mut Ctx, call: Call, items: &[Value]) -> EvalResult {
    ctx.charge_items(items.len())?;
    check_sortable(call, items.iter())?;
    Ok(Value::Set(Set::sorted_from_items(items.iter().cloned())))
}

/// Refuse keys that `compare` cannot order against each other (a keyword and a string, ...),
/// as Clojure's sorted collections do, instead of ordering them by type.
fn check_sortable<'v>(call: Call, mut keys: impl Iterator<Item = &'v Value>) -> Result<()> {
    let Some(first) = keys.find(|k| !k.is_nil()) else {
        return Ok(());
    };
    for key in keys {
        super::number::clojure_compare(first, key)
            .map_err(|e| Error::type_error(format!("{call}: {}", e.message)))?;
    }
    Ok(())
}
