//! `clojure.set`, also reachable as `set/...`.

use super::{Builtin, builtin, expect_fn, got};
use crate::error::{Error, Result};
use crate::eval::{Ctx, EvalResult, Items};
use crate::value::{Map, MapBuilder, Set, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("clojure.set/union", [0..], union, "(set/union & sets)", "A set of the members of all the sets.", "(set/union #{1 2} #{2 3})" => "#{1 2 3}"),
    builtin!("clojure.set/intersection", [1..], intersection, "(set/intersection s & sets)", "A set of the members found in every set.", "(set/intersection #{1 2 3} #{2 3 4})" => "#{2 3}"),
    builtin!("clojure.set/difference", [1..], difference, "(set/difference s & sets)", "The members of s found in none of the other sets.", "(set/difference #{1 2 3} #{2})" => "#{1 3}"),
    builtin!("clojure.set/subset?", [2], is_subset, "(set/subset? a b)", "True if every member of a is in b.", "(set/subset? #{1} #{1 2})" => "true"),
    builtin!("clojure.set/superset?", [2], is_superset, "(set/superset? a b)", "True if every member of b is in a.", "(set/superset? #{1 2} #{1})" => "true"),
    builtin!("clojure.set/select", [2], select, "(set/select pred s)", "The members of s for which pred is truthy, as a set.", "(set/select even? #{1 2 3 4})" => "#{2 4}"),
    builtin!("clojure.set/project", [2], project, "(set/project rel ks)", "The set of maps in rel, each keeping only the keys ks.", "(set/project #{{:a 1 :b 2}} [:a])" => "#{{:a 1}}"),
    builtin!("clojure.set/rename-keys", [2], rename_keys, "(set/rename-keys m kmap)", "The map m with each key k of kmap renamed to (kmap k).", "(set/rename-keys {:a 1 :b 2} {:a :x})" => "{:b 2, :x 1}"),
    builtin!("clojure.set/rename", [2], rename, "(set/rename rel kmap)", "The set of maps in rel with their keys renamed as rename-keys does.", "(set/rename #{{:a 1}} {:a :x})" => "#{{:x 1}}"),
    builtin!("clojure.set/index", [2], index, "(set/index rel ks)", "A map from each combination of values of the keys ks to the set of maps in rel having it.", "(set/index #{{:k 1 :v :a}} [:k])" => "{{:k 1} #{{:k 1, :v :a}}}"),
    builtin!("clojure.set/map-invert", [1], map_invert, "(set/map-invert m)", "The map with keys and values swapped.", "(set/map-invert {:a 1 :b 2})" => "{1 :a, 2 :b}"),
];

/// A set argument; nil counts as the empty set.
fn expect_set<'v>(name: &str, v: &'v Value) -> Result<Option<&'v Set>> {
    match v {
        Value::Set(s) => Ok(Some(s)),
        Value::Nil => Ok(None),
        other => Err(Error::type_error(format!(
            "{name} expects sets, got {}; convert with (set coll)",
            got(other)
        ))),
    }
}

fn union(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    // As in Clojure, nil sets give nil (not #{}) when there is nothing else.
    if !args.is_empty() && args.iter().all(Value::is_nil) {
        return Ok(Value::Nil);
    }
    let mut out: Option<Set> = None;
    for arg in args {
        let Some(s) = expect_set("set/union", arg)? else {
            continue;
        };
        match &mut out {
            None => out = Some(s.clone()),
            Some(acc) => {
                ctx.charge_items(s.len())?;
                ctx.tick_n(s.len())?;
                for x in s.iter() {
                    acc.insert_mut(x.clone());
                }
            }
        }
    }
    Ok(Value::Set(out.unwrap_or_default()))
}

fn intersection(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let Some(first) = expect_set("set/intersection", &args[0])? else {
        return Ok(Value::Nil);
    };
    let mut others = Vec::with_capacity(args.len() - 1);
    for arg in &args[1..] {
        match expect_set("set/intersection", arg)? {
            Some(s) => others.push(s),
            // Clojure's answer for an intersection with nil.
            None => return Ok(Value::Nil),
        }
    }
    ctx.tick_n(first.len().saturating_mul(others.len()))?;
    let mut out = first.empty_like();
    for x in first.iter() {
        if others.iter().all(|s| s.contains(x)) {
            out.insert_mut(x.clone());
        }
    }
    ctx.charge_items(out.len())?;
    Ok(Value::Set(out))
}

fn difference(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let Some(first) = expect_set("set/difference", &args[0])? else {
        return Ok(Value::Nil);
    };
    let mut others = Vec::with_capacity(args.len() - 1);
    for arg in &args[1..] {
        if let Some(s) = expect_set("set/difference", arg)? {
            others.push(s);
        }
    }
    ctx.tick_n(first.len().saturating_mul(others.len()))?;
    let mut out = first.empty_like();
    for x in first.iter() {
        if !others.iter().any(|s| s.contains(x)) {
            out.insert_mut(x.clone());
        }
    }
    ctx.charge_items(out.len())?;
    Ok(Value::Set(out))
}

fn subset(ctx: &mut Ctx, name: &str, small: &Value, big: &Value) -> EvalResult {
    let small = expect_set(name, small)?;
    let big = expect_set(name, big)?;
    let Some(small) = small else {
        return Ok(Value::Bool(true));
    };
    ctx.tick_n(small.len())?;
    Ok(Value::Bool(match big {
        Some(big) => small.len() <= big.len() && small.iter().all(|x| big.contains(x)),
        None => small.is_empty(),
    }))
}

fn is_subset(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    subset(ctx, "set/subset?", &args[0], &args[1])
}

fn is_superset(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    subset(ctx, "set/superset?", &args[1], &args[0])
}

fn select(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let pred = &args[0];
    expect_fn("set/select", pred)?;
    let Some(s) = expect_set("set/select", &args[1])? else {
        return Ok(Value::Nil);
    };
    let mut out = s.empty_like();
    for x in s.iter() {
        ctx.tick()?;
        if ctx.apply1(pred, x)?.truthy() {
            out.insert_mut(x.clone());
        }
    }
    ctx.charge_items(out.len())?;
    Ok(Value::Set(out))
}

/// The maps of a relation (a set, or any collection of maps).
fn relation(ctx: &mut Ctx, name: &str, rel: &Value) -> EvalResult<Vec<Map>> {
    Items::collect_all(rel, ctx, name)?
        .into_iter()
        .map(|x| match x {
            Value::Map(m) => Ok(m),
            other => Err(Error::type_error(format!(
                "{name} expects a set of maps, got a member {}",
                got(&other)
            ))
            .into()),
        })
        .collect()
}

fn select_keys_of(m: &Map, ks: &[Value]) -> Map {
    let mut out = MapBuilder::new();
    for k in ks {
        if let Some((key, v)) = m.get_entry(k) {
            out.insert(key.clone(), v.clone());
        }
    }
    out.build()
}

fn project(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let rel = relation(ctx, "set/project", &args[0])?;
    let ks = Items::collect_all(&args[1], ctx, "set/project")?;
    ctx.charge_items(rel.len() * (1 + 2 * ks.len()))?;
    Ok(Value::Set(Set::from_items(
        rel.iter().map(|m| Value::Map(select_keys_of(m, &ks))),
    )))
}

fn rename_map(m: &Map, kmap: &Map) -> Map {
    let mut out = m.clone();
    for old in kmap.keys() {
        out = out.dissoc(old);
    }
    for (old, new) in kmap.iter() {
        if let Some(v) = m.get(old) {
            out.assoc_mut(new.clone(), v.clone());
        }
    }
    out
}

fn expect_kmap<'v>(name: &str, v: &'v Value) -> Result<&'v Map> {
    match v {
        Value::Map(m) => Ok(m),
        other => Err(Error::type_error(format!(
            "{name} expects a map from old keys to new keys, got {}",
            got(other)
        ))),
    }
}

fn rename_keys(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let kmap = expect_kmap("set/rename-keys", &args[1])?;
    match &args[0] {
        Value::Map(m) => {
            ctx.charge_items(m.len() * 2)?;
            Ok(Value::Map(rename_map(m, kmap)))
        }
        Value::Nil => Ok(Value::Nil),
        other => Err(Error::type_error(format!(
            "set/rename-keys expects a map, got {}",
            got(other)
        ))
        .into()),
    }
}

fn rename(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let rel = relation(ctx, "set/rename", &args[0])?;
    let kmap = expect_kmap("set/rename", &args[1])?;
    ctx.charge_items(rel.iter().map(|m| 1 + 2 * m.len()).sum())?;
    Ok(Value::Set(Set::from_items(
        rel.iter().map(|m| Value::Map(rename_map(m, kmap))),
    )))
}

fn index(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let rel = relation(ctx, "set/index", &args[0])?;
    let ks = Items::collect_all(&args[1], ctx, "set/index")?;
    let mut groups: MapBuilder = MapBuilder::new();
    let mut order: Vec<(Value, Set)> = Vec::new();
    let mut position: rustc_hash::FxHashMap<Value, usize> = rustc_hash::FxHashMap::default();
    for m in rel {
        ctx.tick()?;
        let key = Value::Map(select_keys_of(&m, &ks));
        match position.get(&key) {
            Some(&i) => order[i].1.insert_mut(Value::Map(m)),
            None => {
                position.insert(key.clone(), order.len());
                order.push((key, Set::from_items([Value::Map(m)])));
            }
        }
    }
    ctx.charge_items(order.len() * 3)?;
    for (k, s) in order {
        groups.insert(k, Value::Set(s));
    }
    Ok(Value::Map(groups.build()))
}

fn map_invert(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Map(m) => {
            ctx.charge_items(m.len() * 2)?;
            let mut out = MapBuilder::new();
            for (k, v) in m.iter() {
                out.insert(v.clone(), k.clone());
            }
            Ok(Value::Map(out.build()))
        }
        Value::Nil => Ok(Value::Map(Map::new())),
        other => Err(Error::type_error(format!(
            "set/map-invert expects a map, got {}",
            got(other)
        ))
        .into()),
    }
}
