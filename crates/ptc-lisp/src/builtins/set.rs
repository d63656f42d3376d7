//! `clojure.set`, also reachable as `set/...`.

use super::args::{Arg, Call, Callable};
use super::{Builtin, builtin, got};
use crate::error::{Error, Result};
use crate::eval::{Ctx, EvalResult};
use crate::value::{Map, MapBuilder, Set, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("clojure.set/union", union, "(set/union & sets)", "A set of the members of all the sets.", "(set/union #{1 2} #{2 3})" => "#{1 2 3}"),
    builtin!("clojure.set/intersection", intersection, "(set/intersection s & sets)", "A set of the members found in every set.", "(set/intersection #{1 2 3} #{2 3 4})" => "#{2 3}"),
    builtin!("clojure.set/difference", difference, "(set/difference s & sets)", "The members of s found in none of the other sets.", "(set/difference #{1 2 3} #{2})" => "#{1 3}"),
    builtin!("clojure.set/subset?", is_subset, "(set/subset? a b)", "True if every member of a is in b.", "(set/subset? #{1} #{1 2})" => "true"),
    builtin!("clojure.set/superset?", is_superset, "(set/superset? a b)", "True if every member of b is in a.", "(set/superset? #{1 2} #{1})" => "true"),
    builtin!("clojure.set/select", select, "(set/select pred s)", "The members of s for which pred is truthy, as a set.", "(set/select even? #{1 2 3 4})" => "#{2 4}"),
    builtin!("clojure.set/project", project, "(set/project rel ks)", "The set of maps in rel, each keeping only the keys ks.", "(set/project #{{:a 1 :b 2}} [:a])" => "#{{:a 1}}"),
    builtin!("clojure.set/rename-keys", rename_keys, "(set/rename-keys m kmap)", "The map m with each key k of kmap renamed to (kmap k).", "(set/rename-keys {:a 1 :b 2} {:a :x})" => "{:b 2, :x 1}"),
    builtin!("clojure.set/rename", rename, "(set/rename rel kmap)", "The set of maps in rel with their keys renamed as rename-keys does.", "(set/rename #{{:a 1}} {:a :x})" => "#{{:x 1}}"),
    builtin!("clojure.set/index", index, "(set/index rel ks)", "A map from each combination of values of the keys ks to the set of maps in rel having it.", "(set/index #{{:k 1 :v :a}} [:k])" => "{{:k 1} #{{:k 1, :v :a}}}"),
    builtin!("clojure.set/join", join, "(set/join xrel yrel) (set/join xrel yrel km)", "The set of merged pairs of maps from both relations that agree on their shared keys (or on the keys km maps from xrel's to yrel's).", "(set/join #{{:id 1 :n \"a\"}} #{{:id 1 :age 5}})" => "#{{:id 1, :n \"a\", :age 5}}"),
    builtin!("clojure.set/map-invert", map_invert, "(set/map-invert m)", "The map with keys and values swapped.", "(set/map-invert {:a 1 :b 2})" => "{1 :a, 2 :b}"),
];

/// A set argument; nil counts as the empty set (`None`).
struct SetArg<'a>(Option<&'a Set>);

impl<'a> Arg<'a> for SetArg<'a> {
    fn from_arg(call: Call, value: &'a Value) -> Result<Self> {
        match value {
            Value::Set(s) => Ok(SetArg(Some(s))),
            Value::Nil => Ok(SetArg(None)),
            other => Err(call.expected_with("sets", other, "; convert with (set coll)")),
        }
    }
}

fn union(ctx: &mut Ctx, call: Call, sets: &[Value]) -> EvalResult {
    // As in Clojure, nil sets give nil (not #{}) when there is nothing else.
    if !sets.is_empty() && sets.iter().all(Value::is_nil) {
        return Ok(Value::Nil);
    }
    if sets
        .iter()
        .any(|s| matches!(s, Value::Vector(_) | Value::List(_)))
    {
        return union_of_collections(ctx, call, sets);
    }
    let mut out: Option<Set> = None;
    for arg in sets {
        let SetArg(Some(s)) = call.arg(arg)? else {
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

/// Clojure's `union` conjoins the smaller collection's items onto the larger one, whatever
/// they are; with a vector among them the result is that vector grown, as in Clojure
/// (`(set/union #{1} [2 3])` is `[2 3 1]`).
fn union_of_collections(ctx: &mut Ctx, call: Call, colls: &[Value]) -> EvalResult {
    let count = |v: &Value| v.count().unwrap_or(0);
    // The largest first (the last of equally large ones), then the others in order.
    let mut largest = 0;
    for (i, c) in colls.iter().enumerate() {
        if colls.len() > 2 && count(c) >= count(&colls[largest])
            || colls.len() == 2 && i == 1 && count(&colls[0]) < count(c)
        {
            largest = i;
        }
    }
    let mut acc = colls[largest].clone();
    for (i, c) in colls.iter().enumerate() {
        if i == largest {
            continue;
        }
        for item in call.collect(ctx, c)? {
            ctx.charge_items(1)?;
            super::build::conj_one(call, &mut acc, item)?;
        }
    }
    Ok(acc)
}

fn intersection(ctx: &mut Ctx, call: Call, (first, more): (SetArg, &[Value])) -> EvalResult {
    let SetArg(Some(first)) = first else {
        return Ok(Value::Nil);
    };
    let mut others = Vec::with_capacity(more.len());
    for arg in more {
        match call.arg(arg)? {
            SetArg(Some(s)) => others.push(s),
            // Clojure's answer for an intersection with nil.
            SetArg(None) => return Ok(Value::Nil),
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

fn difference(ctx: &mut Ctx, call: Call, (first, more): (SetArg, &[Value])) -> EvalResult {
    let SetArg(Some(first)) = first else {
        return Ok(Value::Nil);
    };
    let mut others = Vec::with_capacity(more.len());
    for arg in more {
        if let SetArg(Some(s)) = call.arg(arg)? {
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

fn subset(ctx: &mut Ctx, small: Option<&Set>, big: Option<&Set>) -> EvalResult {
    let Some(small) = small else {
        return Ok(Value::Bool(true));
    };
    ctx.tick_n(small.len())?;
    Ok(Value::Bool(match big {
        Some(big) => small.len() <= big.len() && small.iter().all(|x| big.contains(x)),
        None => small.is_empty(),
    }))
}

fn is_subset(ctx: &mut Ctx, _: Call, (a, b): (SetArg, SetArg)) -> EvalResult {
    subset(ctx, a.0, b.0)
}

fn is_superset(ctx: &mut Ctx, call: Call, (a, b): (&Value, &Value)) -> EvalResult {
    // The subset, b, is checked first.
    let SetArg(small) = call.arg(b)?;
    let SetArg(big) = call.arg(a)?;
    subset(ctx, small, big)
}

fn select(ctx: &mut Ctx, _: Call, (pred, set): (Callable, SetArg)) -> EvalResult {
    let SetArg(Some(s)) = set else {
        return Ok(Value::Nil);
    };
    let mut out = s.empty_like();
    for x in s.iter() {
        ctx.tick()?;
        if ctx.apply1(&pred, x)?.truthy() {
            out.insert_mut(x.clone());
        }
    }
    ctx.charge_items(out.len())?;
    Ok(Value::Set(out))
}

/// The maps of a relation (a set, or any collection of maps).
fn relation(ctx: &mut Ctx, call: Call, rel: &Value) -> EvalResult<Vec<Map>> {
    call.collect(ctx, rel)?
        .into_iter()
        .map(|x| match x {
            Value::Map(m) => Ok(m),
            other => Err(Error::type_error(format!(
                "{call} expects a set of maps, got a member {}",
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

fn project(ctx: &mut Ctx, call: Call, (rel, ks): (&Value, &Value)) -> EvalResult {
    let rel = relation(ctx, call, rel)?;
    let ks = call.collect(ctx, ks)?;
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

/// A map from old keys to new keys.
struct KeyMap<'a>(&'a Map);

impl<'a> Arg<'a> for KeyMap<'a> {
    fn from_arg(call: Call, value: &'a Value) -> Result<Self> {
        match value {
            Value::Map(m) => Ok(KeyMap(m)),
            other => Err(call.expected("a map from old keys to new keys", other)),
        }
    }
}

fn rename_keys(ctx: &mut Ctx, call: Call, (m, KeyMap(kmap)): (&Value, KeyMap)) -> EvalResult {
    match m {
        Value::Map(m) => {
            ctx.charge_items(m.len() * 2)?;
            Ok(Value::Map(rename_map(m, kmap)))
        }
        Value::Nil => Ok(Value::Nil),
        other => Err(call.expected("a map", other).into()),
    }
}

fn rename(ctx: &mut Ctx, call: Call, (rel, kmap): (&Value, &Value)) -> EvalResult {
    let rel = relation(ctx, call, rel)?;
    let KeyMap(kmap) = call.arg(kmap)?;
    ctx.charge_items(rel.iter().map(|m| 1 + 2 * m.len()).sum())?;
    Ok(Value::Set(Set::from_items(
        rel.iter().map(|m| Value::Map(rename_map(m, kmap))),
    )))
}

fn index(ctx: &mut Ctx, call: Call, (rel, ks): (&Value, &Value)) -> EvalResult {
    let rel = relation(ctx, call, rel)?;
    let ks = call.collect(ctx, ks)?;
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

fn map_invert(ctx: &mut Ctx, call: Call, m: &Value) -> EvalResult {
    match m {
        Value::Map(m) => {
            ctx.charge_items(m.len() * 2)?;
            Ok(Value::Map(invert(m)))
        }
        Value::Nil => Ok(Value::Map(Map::new())),
        other => Err(call.expected("a map", other).into()),
    }
}

/// Clojure's relational join: the smaller relation is indexed (here: scanned) by the join
/// keys, each map of the larger one merged over every match.
fn join(
    ctx: &mut Ctx,
    call: Call,
    (xrel, yrel, km): (&Value, &Value, Option<&Value>),
) -> EvalResult {
    let (xrel, yrel) = (relation(ctx, call, xrel)?, relation(ctx, call, yrel)?);
    let km = match km {
        Some(km) => Some(call.arg::<KeyMap>(km)?.0.clone()),
        None => None,
    };
    if km.is_none() && (xrel.is_empty() || yrel.is_empty()) {
        return Ok(Value::Set(Set::new()));
    }
    let x_smaller = xrel.len() <= yrel.len();
    let (r, s) = if x_smaller {
        (&xrel, &yrel)
    } else {
        (&yrel, &xrel)
    };
    // The keys each side is matched on, and how the larger side's keys are renamed to the
    // smaller side's.
    let (r_keys, s_keys, rename): (Vec<Value>, Vec<Value>, Option<Map>) = match &km {
        None => {
            let shared: Vec<Value> = xrel[0]
                .keys()
                .filter(|k| yrel[0].contains_key(k))
                .cloned()
                .collect();
            (shared.clone(), shared, None)
        }
        Some(km) => {
            let k = if x_smaller { invert(km) } else { km.clone() };
            (
                k.values().cloned().collect(),
                k.keys().cloned().collect(),
                Some(k),
            )
        }
    };
    ctx.tick_n(r.len().saturating_mul(s.len()))?;
    let mut out = Set::new();
    for x in s {
        let mut wanted = select_keys_of(x, &s_keys);
        if let Some(k) = &rename {
            wanted = rename_map(&wanted, k);
        }
        for y in r {
            if select_keys_of(y, &r_keys) == wanted {
                let mut merged = y.clone();
                for (k, v) in x.iter() {
                    merged.assoc_mut(k.clone(), v.clone());
                }
                ctx.charge_items(2 * merged.len())?;
                out.insert_mut(Value::Map(merged));
            }
        }
    }
    Ok(Value::Set(out))
}

fn invert(m: &Map) -> Map {
    let mut out = MapBuilder::new();
    for (k, v) in m.iter() {
        out.insert(v.clone(), k.clone());
    }
    out.build()
}
