//! Maps and keyed access.
//!
//! Key leniency: `get`, `get-in` (and keyword lookups and destructuring) find a string key when
//! given a keyword and a keyword key when given a string, because data that arrives as JSON has
//! string keys while programs naturally write `(:price p)`.

use super::{Builtin, builtin, expect_fn, expect_int, got};
use crate::error::{Error, Result};
use crate::eval::{Ctx, EvalResult, Items, get_key, lookup};
use crate::value::{Map, MapBuilder, Seq, Set, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("get", [2..=3], get, "(get m k) (get m k not-found)", "Value of key k in a map (index in a vector, member of a set), or not-found/nil.", "(get {:a 1} :b 0)" => "0"),
    builtin!("get-in", [2..=3], get_in, "(get-in m path) (get-in m path not-found)", "Value at a path of keys through nested maps and vectors.", "(get-in {:a {:b [10 20]}} [:a :b 1])" => "20"),
    builtin!("assoc", [3..], assoc, "(assoc m k v & kvs)", "The map with k set to v (a vector with index k replaced).", "(assoc {:a 1} :b 2)" => "{:a 1, :b 2}"),
    builtin!("assoc-in", [3], assoc_in, "(assoc-in m path v)", "The nested map with the value at path set to v, creating maps as needed.", "(assoc-in {} [:a :b] 1)" => "{:a {:b 1}}"),
    builtin!("dissoc", [1..], dissoc, "(dissoc m & ks)", "The map without the given keys.", "(dissoc {:a 1 :b 2} :a)" => "{:b 2}"),
    builtin!("update", [3..], update, "(update m k f & args)", "The map with k set to (f old-value args...).", "(update {:n 1} :n + 10)" => "{:n 11}"),
    builtin!("update-in", [3..], update_in, "(update-in m path f & args)", "The nested map with the value at path set to (f old-value args...).", "(update-in {:a {:n 1}} [:a :n] inc)" => "{:a {:n 2}}"),
    builtin!("keys", [1], keys, "(keys m)", "The keys of a map as a list, or nil for an empty map.", "(keys {:a 1 :b 2})" => "(:a :b)"),
    builtin!("vals", [1], vals, "(vals m)", "The values of a map as a list, or nil for an empty map.", "(vals {:a 1 :b 2})" => "(1 2)"),
    builtin!("merge", [0..], merge, "(merge & maps)", "One map with the entries of all maps; later maps win.", "(merge {:a 1} {:a 2 :b 3})" => "{:a 2, :b 3}"),
    builtin!("select-keys", [2], select_keys, "(select-keys m ks)", "The map with only the given keys.", "(select-keys {:a 1 :b 2 :c 3} [:a :c])" => "{:a 1, :c 3}"),
    builtin!("contains?", [2], contains, "(contains? coll k)", "True if a map has key k, a set has member k, or a vector has index k.", "(contains? {:a nil} :a)" => "true"),
    builtin!("hash-map", [0..], hash_map, "(hash-map & kvs)", "A map of the key/value arguments.", "(hash-map :a 1)" => "{:a 1}"),
    builtin!("hash-set", [0..], hash_set, "(hash-set & items)", "A set of the arguments.", "(hash-set 1 2 1)" => "#{1 2}"),
    builtin!("set", [1], set, "(set coll)", "A set of the items of coll.", "(set [1 2 1])" => "#{1 2}"),
    builtin!("merge-with", [1..], merge_with, "(merge-with f & maps)", "Like merge, combining the values of a key found in several maps with (f earlier later).", "(merge-with + {:a 1 :b 2} {:a 10})" => "{:a 11, :b 2}"),
    builtin!("find", [2], find, "(find m k)", "The [k v] entry of key k in a map (or index k in a vector), or nil.", "(find {:a 1 :b 2} :b)" => "[:b 2]"),
    builtin!("key", [1], key, "(key entry)", "The key of a map entry.", "(key (first {:a 1}))" => ":a"),
    builtin!("val", [1], val, "(val entry)", "The value of a map entry.", "(val (first {:a 1}))" => "1"),
    builtin!("update-vals", [2], update_vals, "(update-vals m f)", "The map with every value v replaced by (f v).", "(update-vals {:a 1 :b 2} inc)" => "{:a 2, :b 3}"),
    builtin!("update-keys", [2], update_keys, "(update-keys m f)", "The map with every key k replaced by (f k).", "(update-keys {:a 1} name)" => "{\"a\" 1}"),
    builtin!("zipmap", [2], zipmap, "(zipmap keys vals)", "A map pairing each key with the value at the same position, stopping at the shorter.", "(zipmap [:a :b] [1 2])" => "{:a 1, :b 2}"),
    builtin!("empty", [1], empty, "(empty coll)", "An empty collection of the same kind as coll (nil for other values).", "(empty {:a 1})" => "{}"),
    builtin!("disj", [1..], disj, "(disj set & ks)", "The set without the given members.", "(disj #{1 2 3} 2)" => "#{1 3}"),
    builtin!("peek", [1], peek, "(peek coll)", "The last item of a vector or the first of a list, or nil when empty.", "[(peek [1 2]) (peek '(1 2))]" => "[2 1]"),
    builtin!("pop", [1], pop, "(pop coll)", "A vector without its last item or a list without its first; an error when empty.", "[(pop [1 2 3]) (pop '(1 2 3))]" => "[[1 2] (2 3)]"),
    builtin!("subvec", [2..=3], subvec, "(subvec v start) (subvec v start end)", "The items of vector v from start up to, not including, end.", "(subvec [1 2 3 4] 1 3)" => "[2 3]"),
    builtin!("sorted-map", [0..], sorted_map, "(sorted-map & kvs)", "A map of the key/value arguments that keeps its keys sorted (also after assoc).", "(sorted-map :b 2 :a 1)" => "{:a 1, :b 2}"),
    builtin!("sorted-set", [0..], sorted_set, "(sorted-set & items)", "A set of the arguments that keeps its members sorted (also after conj).", "(sorted-set 3 1 2)" => "#{1 2 3}"),
];

fn get(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(get_key(&args[0], &args[1]).unwrap_or_else(|| args.get(2).cloned().unwrap_or_default()))
}

fn path_items(ctx: &mut Ctx, path: &Value, name: &str) -> EvalResult<Vec<Value>> {
    match path {
        Value::Vector(_) | Value::List(_) | Value::Nil => Items::collect_all(path, ctx, name),
        other => Err(Error::type_error(format!(
            "{name} expects a vector of keys as its path, got {}",
            got(other)
        ))
        .into()),
    }
}

fn get_in(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let path = path_items(ctx, &args[1], "get-in")?;
    let mut current = args[0].clone();
    for key in &path {
        match get_key(&current, key) {
            Some(v) => current = v,
            None => return Ok(args.get(2).cloned().unwrap_or_default()),
        }
    }
    Ok(current)
}

/// `(assoc coll k v)` for maps, vectors and nil.
pub(crate) fn assoc_one(coll: &Value, k: Value, v: Value) -> Result<Value> {
    match coll {
        Value::Map(m) => Ok(Value::Map(m.assoc(k, v))),
        Value::Nil => Ok(Value::map([(k, v)])),
        Value::Vector(s) => {
            let i = super::expect_int("assoc", &k)?;
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
                _ => Err(Error::index(format!(
                    "assoc: index {i} is out of bounds for a vector of {len} items"
                ))),
            }
        }
        other => Err(Error::type_error(format!(
            "assoc expects a map or vector, got {}",
            got(other)
        ))),
    }
}

fn assoc(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let pairs = &args[1..];
    if !pairs.len().is_multiple_of(2) {
        return Err(Error::arity("assoc expects key/value pairs after the map").into());
    }
    ctx.charge_items(pairs.len())?;
    let mut out = args[0].clone();
    for pair in pairs.chunks(2) {
        out = assoc_one(&out, pair[0].clone(), pair[1].clone())?;
    }
    Ok(out)
}

fn assoc_in_path(ctx: &mut Ctx, coll: &Value, path: &[Value], v: Value) -> EvalResult {
    let Some((key, rest)) = path.split_first() else {
        return Ok(v);
    };
    ctx.charge_items(2)?;
    if rest.is_empty() {
        return Ok(assoc_one(coll, key.clone(), v)?);
    }
    let inner = get_key(coll, key).unwrap_or_default();
    let updated = assoc_in_path(ctx, &inner, rest, v)?;
    Ok(assoc_one(coll, key.clone(), updated)?)
}

/// A path nests the result at least as deeply as it is long; refusing a too-long path up front
/// also bounds the recursion that follows it.
fn check_path_depth(ctx: &Ctx, path: &[Value]) -> Result<()> {
    ctx.check_nesting(path.len())
}

fn assoc_in(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let path = path_items(ctx, &args[1], "assoc-in")?;
    check_path_depth(ctx, &path)?;
    assoc_in_path(ctx, &args[0], &path, args[2].clone())
}

fn dissoc(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Map(m) => {
            let mut out = m.clone();
            for k in &args[1..] {
                out = out.dissoc(k);
            }
            Ok(Value::Map(out))
        }
        Value::Nil => Ok(Value::Nil),
        other => Err(Error::type_error(format!("dissoc expects a map, got {}", got(other))).into()),
    }
}

fn update(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (coll, key, f) = (&args[0], &args[1], &args[2]);
    expect_fn("update", f)?;
    let mut call = vec![get_key(coll, key).unwrap_or_default()];
    call.extend_from_slice(&args[3..]);
    let v = ctx.apply(f, &call)?;
    ctx.charge_items(1)?;
    Ok(assoc_one(coll, key.clone(), v)?)
}

fn update_in_path(
    ctx: &mut Ctx,
    coll: &Value,
    path: &[Value],
    f: &Value,
    extra: &[Value],
) -> EvalResult {
    let Some((key, rest)) = path.split_first() else {
        let mut call = vec![coll.clone()];
        call.extend_from_slice(extra);
        return ctx.apply(f, &call);
    };
    let inner = get_key(coll, key).unwrap_or_default();
    let updated = update_in_path(ctx, &inner, rest, f, extra)?;
    ctx.charge_items(1)?;
    Ok(assoc_one(coll, key.clone(), updated)?)
}

fn update_in(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let path = path_items(ctx, &args[1], "update-in")?;
    expect_fn("update-in", &args[2])?;
    check_path_depth(ctx, &path)?;
    update_in_path(ctx, &args[0], &path, &args[2], &args[3..])
}

fn map_part(ctx: &mut Ctx, args: &[Value], name: &str, key_part: bool) -> EvalResult {
    match &args[0] {
        Value::Map(m) if m.is_empty() => Ok(Value::Nil),
        Value::Map(m) => {
            let items: Vec<Value> = if key_part {
                m.keys().cloned().collect()
            } else {
                m.values().cloned().collect()
            };
            super::seq::list_of(ctx, items)
        }
        Value::Nil => Ok(Value::Nil),
        other => Err(Error::type_error(format!("{name} expects a map, got {}", got(other))).into()),
    }
}

fn keys(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    map_part(ctx, args, "keys", true)
}

fn vals(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    map_part(ctx, args, "vals", false)
}

fn merge(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let mut out: Option<Map> = None;
    for m in args {
        match m {
            Value::Nil => {}
            Value::Map(m) => match &mut out {
                None => out = Some(m.clone()),
                Some(acc) => {
                    ctx.charge_items(m.len() * 2)?;
                    for (k, v) in m.iter() {
                        acc.assoc_mut(k.clone(), v.clone());
                    }
                }
            },
            other => {
                return Err(
                    Error::type_error(format!("merge expects maps, got {}", got(other))).into(),
                );
            }
        }
    }
    Ok(out.map(Value::Map).unwrap_or_default())
}

fn select_keys(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let wanted = Items::collect_all(&args[1], ctx, "select-keys")?;
    let mut out = Map::new();
    if let Value::Map(m) = &args[0] {
        for k in wanted {
            if let Some(v) = lookup(m, &k) {
                out.assoc_mut(k, v.clone());
            }
        }
    }
    ctx.charge_items(out.len() * 2)?;
    Ok(Value::Map(out))
}

fn contains(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (coll, k) = (&args[0], &args[1]);
    Ok(Value::Bool(match coll {
        Value::Map(m) => m.contains_key(k),
        Value::Set(s) => s.contains(k),
        Value::Vector(v) => {
            matches!(k, Value::Int(i) if usize::try_from(*i).is_ok_and(|i| i < v.len()))
        }
        Value::Str(s) => {
            matches!(k, Value::Int(i) if usize::try_from(*i).is_ok_and(|i| i < s.chars().count()))
        }
        Value::Nil => false,
        other => {
            return Err(Error::argument(format!(
                "contains? checks keys of maps and sets (and indices of vectors), not {}; to \
                 look for an item in a list use (some #{{x}} coll)",
                got(other)
            ))
            .into());
        }
    }))
}

fn hash_map(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    if !args.len().is_multiple_of(2) {
        return Err(Error::arity("hash-map expects key/value pairs").into());
    }
    ctx.charge_items(args.len())?;
    Ok(Value::Map(Map::from_pairs(
        args.chunks(2).map(|p| (p[0].clone(), p[1].clone())),
    )))
}

fn hash_set(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    ctx.charge_items(args.len())?;
    Ok(Value::Set(Set::from_items(args.iter().cloned())))
}

fn set(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    if let Value::Set(_) = &args[0] {
        return Ok(args[0].clone());
    }
    let items = Items::collect_all(&args[0], ctx, "set")?;
    Ok(Value::Set(Set::from_items(items)))
}

fn merge_with(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let f = &args[0];
    expect_fn("merge-with", f)?;
    let mut out: Option<Map> = None;
    for m in &args[1..] {
        match m {
            Value::Nil => {}
            Value::Map(m) => match &mut out {
                None => out = Some(m.clone()),
                Some(acc) => {
                    ctx.charge_items(m.len() * 2)?;
                    for (k, v) in m.iter() {
                        let merged = match acc.get(k) {
                            Some(old) => ctx.apply(f, &[old.clone(), v.clone()])?,
                            None => v.clone(),
                        };
                        acc.assoc_mut(k.clone(), merged);
                    }
                }
            },
            other => {
                return Err(Error::type_error(format!(
                    "merge-with expects maps after the function, got {}",
                    got(other)
                ))
                .into());
            }
        }
    }
    Ok(out.map(Value::Map).unwrap_or_default())
}

fn find(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (coll, k) = (&args[0], &args[1]);
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
                "find looks up a key in a map, got {}; to find an item in a list use \
                 (some #(when (pred %) %) coll) or (first (filter pred coll))",
                got(other)
            ))
            .into());
        }
    })
}

fn entry_part(v: &Value, name: &str, index: usize) -> EvalResult {
    match v {
        Value::Vector(pair) if pair.len() == 2 => Ok(pair[index].clone()),
        other => Err(Error::type_error(format!(
            "{name} expects a map entry (a [key value] pair from a map), got {}",
            got(other)
        ))
        .into()),
    }
}

fn key(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    entry_part(&args[0], "key", 0)
}

fn val(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    entry_part(&args[0], "val", 1)
}

fn expect_map<'v>(name: &str, v: &'v Value) -> Result<Option<&'v Map>> {
    match v {
        Value::Map(m) => Ok(Some(m)),
        Value::Nil => Ok(None),
        Value::Fn(_) => Err(Error::type_error(format!(
            "{name} takes the map first: ({name} m f); in a pipeline thread it with ->, not ->>"
        ))),
        other => Err(Error::type_error(format!(
            "{name} expects a map, got {}",
            got(other)
        ))),
    }
}

fn update_vals(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let f = &args[1];
    expect_fn("update-vals", f)?;
    let Some(m) = expect_map("update-vals", &args[0])? else {
        return Ok(Value::Map(Map::new()));
    };
    ctx.charge_items(m.len() * 2)?;
    let mut out = m.clone();
    for (k, v) in m.iter() {
        out.assoc_mut(k.clone(), ctx.apply1(f, v)?);
    }
    Ok(Value::Map(out))
}

fn update_keys(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let f = &args[1];
    expect_fn("update-keys", f)?;
    let Some(m) = expect_map("update-keys", &args[0])? else {
        return Ok(Value::Map(Map::new()));
    };
    ctx.charge_items(m.len() * 2)?;
    let mut out = m.empty_like();
    for (k, v) in m.iter() {
        out.assoc_mut(ctx.apply1(f, k)?, v.clone());
    }
    Ok(Value::Map(out))
}

fn zipmap(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (ks, vs) = (&args[0], &args[1]);
    if ks.is_unbounded() && vs.is_unbounded() {
        return Err(crate::eval::unbounded_error("zipmap", ks).into());
    }
    let mut keys = Items::new(ks)?;
    let mut vals = Items::new(vs)?;
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

fn empty(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(match &args[0] {
        Value::List(_) | Value::Lazy(_) => Value::empty_list(),
        Value::Vector(_) => Value::Vector(Seq::new()),
        Value::Map(m) => Value::Map(m.empty_like()),
        Value::Set(s) => Value::Set(s.empty_like()),
        _ => Value::Nil,
    })
}

fn disj(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Set(s) => {
            let mut out = s.clone();
            for k in &args[1..] {
                out = out.remove(k);
            }
            Ok(Value::Set(out))
        }
        Value::Nil => Ok(Value::Nil),
        other => Err(Error::type_error(format!(
            "disj removes members from a set, got {}; use dissoc for maps or remove for lists",
            got(other)
        ))
        .into()),
    }
}

fn peek(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Vector(s) => Ok(s.last().cloned().unwrap_or_default()),
        Value::List(s) => Ok(s.first().cloned().unwrap_or_default()),
        Value::Nil => Ok(Value::Nil),
        other => Err(Error::type_error(format!(
            "peek expects a vector or list, got {}",
            got(other)
        ))
        .into()),
    }
}

fn pop(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Vector(s) if !s.is_empty() => Ok(Value::Vector(s.slice(0, s.len() - 1))),
        Value::List(s) if !s.is_empty() => Ok(Value::List(s.slice(1, s.len()))),
        Value::Vector(_) | Value::List(_) => Err(Error::argument(format!(
            "cannot pop an empty {}; check (empty? coll) first",
            args[0].type_name()
        ))
        .into()),
        Value::Nil => Ok(Value::Nil),
        other => Err(Error::type_error(format!(
            "pop expects a vector or list, got {}",
            got(other)
        ))
        .into()),
    }
}

fn subvec(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let Value::Vector(s) = &args[0] else {
        return Err(Error::type_error(format!(
            "subvec expects a vector, got {}; use (vec coll) first, or take/drop",
            got(&args[0])
        ))
        .into());
    };
    let len = s.len() as i64;
    let start = expect_int("subvec", &args[1])?;
    let end = match args.get(2) {
        Some(e) => expect_int("subvec", e)?,
        None => len,
    };
    if start < 0 || end < start || end > len {
        return Err(Error::index(format!(
            "subvec: range {start}..{end} is out of bounds for a vector of {len} items"
        ))
        .into());
    }
    Ok(Value::Vector(s.slice(start as usize, end as usize)))
}

fn sorted_map(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    if !args.len().is_multiple_of(2) {
        return Err(Error::arity("sorted-map expects key/value pairs").into());
    }
    ctx.charge_items(args.len())?;
    let mut out = Map::new_sorted();
    for pair in args.chunks(2) {
        out.assoc_mut(pair[0].clone(), pair[1].clone());
    }
    Ok(Value::Map(out))
}

fn sorted_set(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    ctx.charge_items(args.len())?;
    Ok(Value::Set(Set::sorted_from_items(args.iter().cloned())))
}
