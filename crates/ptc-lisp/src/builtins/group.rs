//! Grouping and splitting: `group-by`, `frequencies`, `partition` and friends, `split-at`,
//! `split-with`.

use super::args::{Call, Callable, CountDown, Seqable};
use super::build::list_of;
use super::seq::{drop_items_of, drop_while_of, take_of, take_while_of};
use super::{Builtin, builtin, got};
use crate::error::{Error, Result};
use crate::eval::{Ctx, EvalResult};
use crate::value::{LazyKind, LazySeq, MapBuilder, Seq, Value};
use std::borrow::Cow;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("group-by", group_by, "(group-by f coll)", "A map from each (f item) to the vector of items giving it, in first-seen order.", "(group-by odd? [1 2 3])" => "{true [1 3], false [2]}"),
    builtin!("frequencies", frequencies, "(frequencies coll)", "A map from each distinct item to how many times it occurs.", "(frequencies [:a :b :a])" => "{:a 2, :b 1}"),
    builtin!("partition", partition, "(partition n coll) (partition n step coll) (partition n step pad coll)", "Lists of n items, starting every step (n) items; a short last part is dropped, or filled from pad when given.", "(partition 2 [1 2 3 4 5])" => "((1 2) (3 4))"),
    builtin!("partition-all", partition_all, "(partition-all n coll) (partition-all n step coll) (partition-all n)", "Lists of n items, starting every step (n) items, keeping a short last part.", "(partition-all 2 [1 2 3 4 5])" => "((1 2) (3 4) (5))"),
    builtin!("partition-by", partition_by, "(partition-by f coll) (partition-by f)", "Splits coll into runs of consecutive items with the same (f item).", "(partition-by odd? [1 3 2 4 5])" => "((1 3) (2 4) (5))"),
    builtin!("split-at", split_at, "(split-at n coll)", "[(take n coll) (drop n coll)].", "(split-at 2 [1 2 3 4])" => "[(1 2) (3 4)]"),
    builtin!("split-with", split_with, "(split-with pred coll)", "[(take-while pred coll) (drop-while pred coll)].", "(split-with neg? [-1 -2 3 -4])" => "[(-1 -2) (3 -4)]"),
];

fn positive(call: Call, what: &str, n: i64) -> Result<usize> {
    usize::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
        Error::argument(format!(
            "{call} needs a positive {what}, got {n}; e.g. ({call} 2 coll) makes parts of 2 items"
        ))
    })
}

/// The size of `partition`'s parts: an integer (a big one counts as the integer it is). Clojure
/// compares each part's length with the size by `=`, so a float, ratio or decimal size gives
/// no part at all; PTC-Lisp says so instead of returning ().
fn partition_size(call: Call, n: &Value) -> Result<i64> {
    match n {
        Value::Int(i) => Ok(*i),
        Value::Big(b) if matches!(b.kind(), crate::value::BigKind::Int(_)) => Ok(b
            .to_i64()
            .unwrap_or(if b.to_f64() > 0.0 { i64::MAX } else { i64::MIN })),
        Value::Float(_) | Value::Big(_) => Err(Error::type_error(format!(
            "{call} needs an integer size, got {}: no part can have that many items (Clojure \
             returns ()); use an integer, e.g. ({call} (long n) coll)",
            got(n)
        ))),
        other => Err(call.expected("an integer size", other)),
    }
}

/// How many items a long range has (0 for anything else).
fn known_count(coll: &Value) -> usize {
    match coll {
        Value::Lazy(l) => l
            .known_count()
            .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        _ => 0,
    }
}

fn group_by(ctx: &mut Ctx, call: Call, (f, coll): (Callable, Seqable)) -> EvalResult {
    let mut keys = KeyIndex::default();
    let mut groups: Vec<Vec<Value>> = Vec::new();
    let mut items = coll.items()?;
    if items.is_unbounded() {
        return Err(call.unbounded(&coll).into());
    }
    // Every item of a long range ends up in a group: refuse at once what cannot fit.
    ctx.charge_items(known_count(&coll))?;
    while let Some(item) = items.next(ctx)? {
        let key = match ctx.keyword_field(&f, item.as_ref()) {
            Some(field) => Cow::Borrowed(field),
            None => Cow::Owned(ctx.apply1(&f, item.as_ref())?),
        };
        let group = match keys.find(key.as_ref()) {
            Some(i) => i,
            None => {
                groups.push(Vec::new());
                keys.add(key.into_owned())
            }
        };
        groups[group].push(item.into_owned());
    }
    let keys = keys.into_keys();
    ctx.charge_items(keys.len() * 2 + groups.iter().map(Vec::len).sum::<usize>())?;
    let mut out = MapBuilder::new();
    for (k, g) in keys.into_iter().zip(groups) {
        out.insert(k, Value::Vector(Seq::picked_from(g, coll.value())));
    }
    Ok(Value::Map(out.build()))
}

/// The distinct keys met so far, in first-seen order, each found by its position.
#[derive(Default)]
struct KeyIndex {
    keys: Vec<Value>,
    /// [`text_identity`] of the first [`IDENTIFIED_KEYS`] keys.
    identities: Vec<u128>,
    positions: rustc_hash::FxHashMap<Value, usize>,
}

/// How many keys are also found by identity, before any hashing.
const IDENTIFIED_KEYS: usize = 16;

/// Which string or keyword allocation `v` is: its address, doubled, plus one for a keyword (a
/// string and a keyword may share text); 0 for other values. Two values with the same nonzero
/// identity are equal. Records loaded from JSON share their repeated short strings, so grouping
/// them by a text field finds almost every group without hashing or comparing text.
fn text_identity(v: &Value) -> u128 {
    let (address, keyword) = match v {
        Value::Str(s) => (s.as_ptr(), 0),
        Value::Keyword(k) => (k.as_str().as_ptr(), 1),
        _ => return 0,
    };
    (address as usize as u128) << 1 | keyword
}

impl KeyIndex {
    fn find(&self, key: &Value) -> Option<usize> {
        let id = text_identity(key);
        if id != 0
            && let Some(i) = self.identities.iter().position(|k| *k == id)
        {
            return Some(i);
        }
        self.positions.get(key).copied()
    }

    /// Add a key not found yet; its position.
    fn add(&mut self, key: Value) -> usize {
        let position = self.keys.len();
        if position < IDENTIFIED_KEYS {
            self.identities.push(text_identity(&key));
        }
        self.positions.insert(key.clone(), position);
        self.keys.push(key);
        position
    }

    fn into_keys(self) -> Vec<Value> {
        self.keys
    }
}

fn frequencies(ctx: &mut Ctx, call: Call, coll: Seqable) -> EvalResult {
    let mut keys = KeyIndex::default();
    let mut counts: Vec<i64> = Vec::new();
    let mut items = coll.items()?;
    if items.is_unbounded() {
        return Err(call.unbounded(&coll).into());
    }
    // The items of a range are distinct: each is a key.
    ctx.charge_items(known_count(&coll).saturating_mul(2))?;
    while let Some(item) = items.next(ctx)? {
        match keys.find(item.as_ref()) {
            Some(i) => counts[i] += 1,
            None => {
                keys.add(item.into_owned());
                counts.push(1);
            }
        }
    }
    let keys = keys.into_keys();
    ctx.charge_items(keys.len() * 2)?;
    let mut out = MapBuilder::new();
    for (k, c) in keys.into_iter().zip(counts) {
        out.insert(k, Value::Int(c));
    }
    Ok(Value::Map(out.build()))
}

/// Each size is checked to be positive before the next is read, so `step` is read in the body.
fn partition(
    ctx: &mut Ctx,
    call: Call,
    (n, step, pad, coll): (&Value, Option<&Value>, Option<&Value>, &Value),
) -> EvalResult {
    let n = positive(call, "size", partition_size(call, n)?)?;
    let step = match step {
        Some(step) => positive(call, "step", call.arg::<CountDown>(step)?.0)?,
        None => n,
    };
    // With a pad, a bounded sequence's short last part is padded: realized below.
    if let Value::Lazy(l) = coll
        && (pad.is_none() || !l.is_bounded())
    {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Partition {
            n,
            step,
            all: false,
            source: l.clone(),
        })));
    }
    let items = call.collect(ctx, coll)?;
    let len = items.len();
    let mut out = Vec::new();
    let mut start = 0;
    while start < len {
        let available = (len - start).min(n);
        ctx.tick_n(available)?;
        ctx.charge_items(available)?;
        if start + n <= len {
            out.push(Value::list(items[start..start + n].iter().cloned()));
        } else {
            if let Some(pad) = pad {
                let mut part = items[start..].to_vec();
                let mut fill = call.items(pad)?;
                while part.len() < n {
                    match fill.next(ctx)? {
                        Some(item) => part.push(item.into_owned()),
                        None => break,
                    }
                }
                out.push(Value::List(Seq::from(part)));
            }
            break;
        }
        start += step;
    }
    list_of(ctx, out)
}

/// `(partition-all n)`, `(partition-all n coll)` or `(partition-all n step coll)`.
fn partition_all(
    ctx: &mut Ctx,
    call: Call,
    (CountDown(n), second, third): (CountDown, Option<&Value>, Option<&Value>),
) -> EvalResult {
    let n = positive(call, "size", n)?;
    let (step, coll) = match (second, third) {
        (None, _) => return Ok(super::transduce::partition_all_xf(call, n)),
        (Some(coll), None) => (n, coll),
        (Some(step), Some(coll)) => (
            positive(call, "step", call.arg::<CountDown>(step)?.0)?,
            coll,
        ),
    };
    if let Value::Lazy(l) = coll {
        return Ok(Value::Lazy(LazySeq::new(LazyKind::Partition {
            n,
            step,
            all: true,
            source: l.clone(),
        })));
    }
    let items = call.collect(ctx, coll)?;
    let len = items.len();
    let mut out = Vec::new();
    let mut start = 0;
    while start < len {
        let end = (start + n).min(len);
        ctx.tick_n(end - start)?;
        ctx.charge_items(end - start)?;
        out.push(Value::list(items[start..end].iter().cloned()));
        start += step;
    }
    list_of(ctx, out)
}

fn partition_by(ctx: &mut Ctx, call: Call, (f, coll): (Callable, Option<Seqable>)) -> EvalResult {
    let Some(coll) = coll else {
        return Ok(super::transduce::partition_by_xf(call, f.clone()));
    };
    let mut items = coll.items()?;
    if items.is_unbounded() {
        return Err(call.unbounded(&coll).into());
    }
    let mut out = Vec::new();
    let mut run = Seq::new();
    let mut last: Option<Value> = None;
    while let Some(item) = items.next(ctx)? {
        let key = ctx.apply1(&f, item.as_ref())?;
        if last.as_ref().is_some_and(|k| *k != key) {
            out.push(Value::List(std::mem::take(&mut run)));
        }
        last = Some(key);
        run.push_back(item.into_owned());
    }
    if !run.is_empty() {
        out.push(Value::List(run));
    }
    ctx.charge_items(coll.count().unwrap_or(0))?;
    list_of(ctx, out)
}

fn split_at(ctx: &mut Ctx, call: Call, (CountDown(n), coll): (CountDown, &Value)) -> EvalResult {
    let front = take_of(ctx, call, n, coll)?;
    let back = drop_items_of(ctx, call, coll, n.max(0) as usize)?;
    Ok(Value::vector([front, back]))
}

fn split_with(ctx: &mut Ctx, call: Call, (pred, coll): (Callable, &Value)) -> EvalResult {
    let front = take_while_of(ctx, call, &pred, coll)?;
    let back = drop_while_of(ctx, call, &pred, coll)?;
    Ok(Value::vector([front, back]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Keyword;

    #[test]
    fn a_string_sharing_a_keywords_text_is_another_key() {
        let keyword = Keyword::new("a");
        let string = Value::Str(keyword.arc().clone());
        let keyword = Value::Keyword(keyword);
        let mut keys = KeyIndex::default();
        assert_eq!(keys.add(keyword.clone()), 0);
        assert_eq!(keys.find(&string), None);
        assert_eq!(keys.find(&keyword), Some(0));
        assert_eq!(keys.add(string.clone()), 1);
        assert_eq!(keys.find(&string), Some(1));
    }
}
