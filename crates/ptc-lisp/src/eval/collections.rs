//! Looking into collections: `get` with the key leniency JSON data needs, and keyword reads
//! that remember where they last found their key.

use crate::context::Ctx;
use crate::ir::KeywordGet;
use crate::value::{Keyword, Map, Value};
use std::sync::atomic::AtomicU8;

impl Ctx {
    /// What the keyword `f` finds in the map `target`, borrowed; `None` when `f` is not a
    /// keyword, `target` not a map, or the key absent. For callers that only look at the value
    /// (grouping by a field), so it need not be copied.
    #[inline]
    pub(crate) fn keyword_field<'v>(&self, f: &Value, target: &'v Value) -> Option<&'v Value> {
        match (f, target) {
            (Value::Keyword(_), Value::Map(m)) => map_field(m, f, &self.keyword_hint),
            _ => None,
        }
    }
}

/// `get` with the key leniency JSON data needs: a keyword also finds the string key of the same
/// name, and a string finds the keyword.
#[inline]
pub fn lookup<'a>(m: &'a Map, key: &Value) -> Option<&'a Value> {
    if let Some(v) = m.get(key) {
        return Some(v);
    }
    match key {
        Value::Keyword(k) => m.get(&Value::string(k.as_str())),
        Value::Str(s) => m.get(&Value::Keyword(Keyword::new(s))),
        _ => None,
    }
}

/// `(:key target)` at a call site that remembers where the key was last found.
#[inline(always)]
pub(crate) fn keyword_get(target: &Value, k: &KeywordGet) -> Option<Value> {
    keyword_get_hinted(target, &k.key, &k.hint)
}

/// `(key target)` for a keyword `key`, looked for first where `hint` says it was last found.
#[inline(always)]
pub(crate) fn keyword_get_hinted(target: &Value, key: &Value, hint: &AtomicU8) -> Option<Value> {
    if let Value::Map(m) = target
        && let Some(v) = m.get_at_hint(key, hint)
    {
        return Some(v.clone_fast());
    }
    keyword_get_unhinted(target, key, hint)
}

/// What the keyword `key` finds in `m`, looked for first where `hint` says, then as any key,
/// then as the same text in a string-keyed map ([`lookup`]).
#[inline(always)]
fn map_field<'m>(m: &'m Map, key: &Value, hint: &AtomicU8) -> Option<&'m Value> {
    m.get_hinted(key, hint).or_else(|| lookup(m, key))
}

/// [`keyword_get_hinted`] where the hint did not point at the key; updates the hint.
#[inline(never)]
fn keyword_get_unhinted(target: &Value, key: &Value, hint: &AtomicU8) -> Option<Value> {
    match target {
        Value::Map(m) => map_field(m, key, hint).map(Value::clone_fast),
        other => get_key(other, key),
    }
}

/// `(get coll key)` for any collection (nil for everything else, as in Clojure).
#[inline]
/// Java's `intValue` of an integer (a long or a big integer), as Clojure indexes a vector by
/// one: the low 32 bits. `None` for anything else (a float or ratio key finds nothing).
pub(crate) fn int_value(key: &Value) -> Option<i32> {
    match key {
        Value::Int(i) => Some(*i as i32),
        Value::Big(b) => match b.kind() {
            crate::value::BigKind::Int(n) => {
                let low = n & num_bigint::BigInt::from(u32::MAX);
                num_traits::ToPrimitive::to_u32(&low).map(|u| u as i32)
            }
            _ => None,
        },
        _ => None,
    }
}

/// Java's `intValue` of any number, as Clojure indexes a string by one: an integer's low 32
/// bits, a float or ratio truncated toward zero and held within 32 bits (NaN is 0), a big
/// decimal's integer part's low 32 bits. `None` for what is not a number.
pub(crate) fn java_int_value(key: &Value) -> Option<i32> {
    match key {
        Value::Float(f) => Some(*f as i32),
        Value::Big(b) => match b.kind() {
            crate::value::BigKind::Int(_) => int_value(key),
            crate::value::BigKind::Ratio(_) => Some(b.to_f64() as i32),
            crate::value::BigKind::Decimal(d) => {
                let whole = d.to_rational().trunc().to_integer();
                int_value(&crate::value::BigNumber::int(whole))
            }
        },
        other => int_value(other),
    }
}

pub fn get_key(coll: &Value, key: &Value) -> Option<Value> {
    match coll {
        Value::Map(m) => lookup(m, key).cloned(),
        Value::Set(s) => s.get(key).cloned(),
        // Clojure takes an integer key's Java `intValue`: its low 32 bits.
        Value::Vector(v) => int_value(key)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| v.get(i))
            .cloned(),
        // Any number, by its Java `intValue`, as Clojure's get on a string takes one.
        Value::Str(s) => java_int_value(key)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| s.chars().nth(i))
            .map(Value::Char),
        // A tagged literal is a record of two fields.
        Value::Tagged(t) => match key {
            Value::Keyword(k) if k.as_str() == "tag" => Some(Value::Symbol(t.tag().clone())),
            Value::Keyword(k) if k.as_str() == "form" => Some(t.form().clone()),
            _ => None,
        },
        _ => None,
    }
}
