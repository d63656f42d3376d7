//! `hash` and the collection hash helpers, giving the numbers Clojure gives: Murmur3 over
//! Java's hash codes, mixed as Clojure mixes them, so that a program comparing hashes (or
//! printing them) sees what it would on the JVM, and equal values hash alike.

use super::args::{Arg, Call};
use super::{Builtin, builtin};
use crate::error::Result;
use crate::eval::{Ctx, EvalResult, Items};
use crate::value::{BigKind, BigNumber, DateKind, Value, meter, nested};
use num_bigint::{BigInt, Sign};
use num_traits::{ToPrimitive, Zero};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("hash", hash, "(hash x)", "Clojure's hash of x: equal values (1 and 1N, [1 2] and '(1 2)) hash alike.", "(hash \"abc\")" => "74834163"),
    builtin!("hash-ordered-coll", hash_ordered_coll, "(hash-ordered-coll coll)", "The hash of coll's items in order, as lists and vectors hash.", "(= (hash-ordered-coll '(1 2)) (hash [1 2]))" => "true"),
    builtin!("hash-unordered-coll", hash_unordered_coll, "(hash-unordered-coll coll)", "The hash of coll's items in any order, as sets hash.", "(= (hash-unordered-coll [2 1]) (hash #{1 2}))" => "true"),
    builtin!("mix-collection-hash", mix_collection_hash, "(mix-collection-hash hash-basis count)", "The final mix of a collection hash: basis of the items' hashes, and their count.", "(mix-collection-hash 1 0)" => "-2017569654"),
    builtin!("hash-combine", hash_combine, "(hash-combine seed x)", "seed combined with x's Java hash code (Clojure's Util/hashCombine).", "(hash-combine 1 2)" => "-1640531462"),
];

const C1: i32 = 0xcc9e_2d51_u32 as i32;
const C2: i32 = 0x1b87_3593_u32 as i32;
/// The golden-ratio constant Clojure adds when combining hashes.
const GOLDEN: i32 = 0x9e37_79b9_u32 as i32;

fn mix_k1(k1: i32) -> i32 {
    k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

fn mix_h1(h1: i32, k1: i32) -> i32 {
    (h1 ^ k1)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64_u32 as i32)
}

fn fmix(h1: i32, length: i32) -> i32 {
    let mut h = (h1 ^ length) as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h as i32
}

fn murmur_int(input: i32) -> i32 {
    if input == 0 {
        return 0;
    }
    fmix(mix_h1(0, mix_k1(input)), 4)
}

fn murmur_long(input: i64) -> i32 {
    if input == 0 {
        return 0;
    }
    let low = input as i32;
    let high = ((input as u64) >> 32) as i32;
    let h1 = mix_h1(mix_h1(0, mix_k1(low)), mix_k1(high));
    fmix(h1, 8)
}

/// Murmur3 of a text's UTF-16 units, two at a time (Clojure's `hashUnencodedChars`).
fn murmur_chars(text: &str) -> i32 {
    let units: Vec<u16> = text.encode_utf16().collect();
    let mut h1 = 0;
    for pair in units.chunks_exact(2) {
        let k1 = i32::from(pair[0]) | (i32::from(pair[1]) << 16);
        h1 = mix_h1(h1, mix_k1(k1));
    }
    if let [.., last] = units.as_slice()
        && !units.len().is_multiple_of(2)
    {
        h1 ^= mix_k1(i32::from(*last));
    }
    fmix(h1, (2 * units.len()) as i32)
}

fn mix_coll_hash(hash: i32, count: i32) -> i32 {
    fmix(mix_h1(0, mix_k1(hash)), count)
}

fn combine(seed: i32, hash: i32) -> i32 {
    let mix = hash
        .wrapping_add(GOLDEN)
        .wrapping_add(seed.wrapping_shl(6))
        .wrapping_add(seed >> 2);
    seed ^ mix
}

/// Java's `String.hashCode`: over UTF-16 units.
fn java_string_hash(text: &str) -> i32 {
    text.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

fn java_long_hash(i: i64) -> i32 {
    (i ^ ((i as u64) >> 32) as i64) as i32
}

fn java_double_hash(f: f64) -> i32 {
    // Java's `Double.hashCode` sees every NaN as the canonical one.
    let bits = if f.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        f.to_bits()
    };
    java_long_hash(bits as i64)
}

/// Java's `BigInteger.hashCode`: the magnitude's 32-bit words, most significant first.
fn java_bigint_hash(n: &BigInt) -> i32 {
    let (sign, words) = n.to_u32_digits();
    let magnitude = words
        .iter()
        .rev()
        .fold(0i32, |h, w| h.wrapping_mul(31).wrapping_add(*w as i32));
    match sign {
        Sign::Minus => magnitude.wrapping_neg(),
        Sign::NoSign => 0,
        Sign::Plus => magnitude,
    }
}

/// Clojure's hash of a big number: a big integer within 64 bits hashes as that long; a
/// decimal as Java's `BigDecimal` with trailing zeros stripped; a ratio as its parts' Java
/// hash codes combined.
fn big_hash(b: &BigNumber) -> i32 {
    match b.kind() {
        BigKind::Int(n) => match n.to_i64() {
            Some(i) => murmur_long(i),
            None => java_bigint_hash(n),
        },
        BigKind::Ratio(r) => java_bigint_hash(r.numer()) ^ java_bigint_hash(r.denom()),
        BigKind::Decimal(d) => {
            if d.unscaled().is_zero() {
                // `BigDecimal.ZERO.hashCode()`.
                return 0;
            }
            let (mut unscaled, mut scale) = (d.unscaled().clone(), d.scale());
            let ten = BigInt::from(10);
            while (&unscaled % &ten).is_zero() {
                unscaled /= &ten;
                scale -= 1;
            }
            java_bigint_hash(&unscaled)
                .wrapping_mul(31)
                .wrapping_add(scale as i32)
        }
    }
}

fn symbol_hash(namespace: Option<&str>, name: &str) -> i32 {
    combine(murmur_chars(name), namespace.map_or(0, java_string_hash))
}

/// Clojure's `hash` (`hasheq`) of `value`.
pub(crate) fn hasheq(ctx: &mut Ctx, value: &Value) -> EvalResult<i32> {
    nested(value.depth(), || hasheq_here(ctx, value))
}

fn hasheq_here(ctx: &mut Ctx, value: &Value) -> EvalResult<i32> {
    Ok(match value {
        Value::Nil => 0,
        Value::Bool(true) => 1231,
        Value::Bool(false) => 1237,
        Value::Int(i) => murmur_long(*i),
        // `(hash -0.0)` is 0 in Clojure, like `(hash 0.0)`.
        Value::Float(f) if *f == 0.0 => 0,
        Value::Float(f) => java_double_hash(*f),
        Value::Big(b) => big_hash(b),
        Value::Str(s) => murmur_int(java_string_hash(s)),
        Value::Char(c) => *c as i32,
        Value::Symbol(s) => symbol_hash(s.namespace(), s.name()),
        Value::Keyword(k) => symbol_hash(k.namespace(), k.name()).wrapping_add(GOLDEN),
        Value::List(_) | Value::Vector(_) | Value::Lazy(_) => ordered(ctx, value)?,
        Value::Set(_) => unordered(ctx, value)?,
        Value::Map(m) => {
            if !meter::spend(m.len()) {
                return Ok(0);
            }
            let mut sum = 0i32;
            for (k, v) in m.iter() {
                let entry = mix_coll_hash(
                    31i32
                        .wrapping_add(hasheq(ctx, k)?)
                        .wrapping_mul(31)
                        .wrapping_add(hasheq(ctx, v)?),
                    2,
                );
                sum = sum.wrapping_add(entry);
            }
            mix_coll_hash(sum, m.len() as i32)
        }
        Value::Date(d) => match d.kind() {
            DateKind::Instant(millis) => java_long_hash(millis),
            DateKind::Day(_) => {
                // `LocalDate.hashCode`.
                let (year, month, day) = d.ymd();
                let (year, month, day) = (year as i32, month as i32, day as i32);
                (year & 0xFFFF_F800_u32 as i32)
                    ^ year
                        .wrapping_shl(11)
                        .wrapping_add(month.wrapping_shl(6))
                        .wrapping_add(day)
            }
        },
        // `UUID.hashCode`: the two halves of the bits, xored, and the two halves of that.
        Value::Uuid(u) => {
            let bits = u.bits();
            let hilo = ((bits >> 64) as u64) ^ (bits as u64);
            ((hilo >> 32) as i32) ^ (hilo as i32)
        }
        // Functions, regexes and vars hash by identity on the JVM, and a tagged literal by its
        // Java hash code; any fixed number consistent with `=` will do.
        Value::Fn(_) | Value::Regex(_) | Value::Var(_) | Value::Tagged(_) => {
            crate::value::hash_value(value) as i32
        }
    })
}

fn ordered(ctx: &mut Ctx, coll: &Value) -> EvalResult<i32> {
    let mut items = Items::new(coll)?;
    if items.is_unbounded() {
        return Err(crate::eval::unbounded_error("hash", coll).into());
    }
    let (mut hash, mut count) = (1i32, 0i32);
    while let Some(item) = items.next(ctx)? {
        hash = hash.wrapping_mul(31).wrapping_add(hasheq(ctx, &item)?);
        count = count.wrapping_add(1);
    }
    Ok(mix_coll_hash(hash, count))
}

fn unordered(ctx: &mut Ctx, coll: &Value) -> EvalResult<i32> {
    let mut items = Items::new(coll)?;
    if items.is_unbounded() {
        return Err(crate::eval::unbounded_error("hash", coll).into());
    }
    let (mut hash, mut count) = (0i32, 0i32);
    while let Some(item) = items.next(ctx)? {
        hash = hash.wrapping_add(hasheq(ctx, &item)?);
        count = count.wrapping_add(1);
    }
    Ok(mix_coll_hash(hash, count))
}

/// Java's `hashCode` of `value` (what `hash-combine` mixes in): for numbers, strings and
/// names the JVM's own codes; for collections Clojure's Java-compatible ones.
fn java_hash(ctx: &mut Ctx, value: &Value) -> EvalResult<i32> {
    nested(value.depth(), || java_hash_here(ctx, value))
}

fn java_hash_here(ctx: &mut Ctx, value: &Value) -> EvalResult<i32> {
    Ok(match value {
        Value::Int(i) => java_long_hash(*i),
        Value::Float(f) => java_double_hash(*f),
        Value::Big(b) => match b.kind() {
            BigKind::Int(n) => match n.to_i64() {
                // `clojure.lang.BigInt.hashCode` of a small one is its long's.
                Some(i) => java_long_hash(i),
                None => java_bigint_hash(n),
            },
            // `BigDecimal.hashCode` keeps the scale as written: 1.5M and 1.50M differ.
            BigKind::Decimal(d) => java_bigint_hash(d.unscaled())
                .wrapping_mul(31)
                .wrapping_add(d.scale() as i32),
            BigKind::Ratio(_) => big_hash(b),
        },
        Value::Str(s) => java_string_hash(s),
        Value::Symbol(s) => combine(
            java_string_hash(s.name()),
            s.namespace().map_or(0, java_string_hash),
        ),
        Value::Keyword(k) => combine(
            java_string_hash(k.name()),
            k.namespace().map_or(0, java_string_hash),
        )
        .wrapping_add(GOLDEN),
        Value::List(_) | Value::Vector(_) | Value::Lazy(_) => {
            let mut items = Items::new(value)?;
            if items.is_unbounded() {
                return Err(crate::eval::unbounded_error("hash-combine", value).into());
            }
            let mut hash = 1i32;
            while let Some(item) = items.next(ctx)? {
                hash = hash.wrapping_mul(31).wrapping_add(java_hash(ctx, &item)?);
            }
            hash
        }
        Value::Set(s) => {
            let mut hash = 0i32;
            for item in s.iter() {
                ctx.tick()?;
                hash = hash.wrapping_add(java_hash(ctx, item)?);
            }
            hash
        }
        Value::Map(m) => {
            let mut hash = 0i32;
            for (k, v) in m.iter() {
                ctx.tick()?;
                hash = hash.wrapping_add(java_hash(ctx, k)? ^ java_hash(ctx, v)?);
            }
            hash
        }
        other => hasheq(ctx, other)?,
    })
}

/// A Java `int`: an integer within 32 bits.
struct Int32(i32);

impl Arg<'_> for Int32 {
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        match value {
            Value::Int(i) => i32::try_from(*i)
                .map(Int32)
                .map_err(|_| call.expected_argument("an integer within 32 bits", value)),
            other => Err(call.expected("an integer", other)),
        }
    }
}

fn hash(ctx: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Int(i64::from(hasheq(ctx, x)?)))
}

/// A collection the JVM can iterate: not nil, not a string.
struct Iterable<'a>(&'a Value);

impl<'a> Arg<'a> for Iterable<'a> {
    fn from_arg(call: Call, value: &'a Value) -> Result<Self> {
        match value {
            Value::List(_) | Value::Vector(_) | Value::Map(_) | Value::Set(_) | Value::Lazy(_) => {
                Ok(Iterable(value))
            }
            other => Err(call.expected("a collection (not nil or a string)", other)),
        }
    }
}

fn hash_ordered_coll(ctx: &mut Ctx, _: Call, Iterable(coll): Iterable) -> EvalResult {
    Ok(Value::Int(i64::from(ordered(ctx, coll)?)))
}

fn hash_unordered_coll(ctx: &mut Ctx, _: Call, Iterable(coll): Iterable) -> EvalResult {
    Ok(Value::Int(i64::from(unordered(ctx, coll)?)))
}

fn mix_collection_hash(
    _: &mut Ctx,
    _: Call,
    (Int32(basis), Int32(count)): (Int32, Int32),
) -> EvalResult {
    Ok(Value::Int(i64::from(mix_coll_hash(basis, count))))
}

fn hash_combine(ctx: &mut Ctx, _: Call, (Int32(seed), x): (Int32, &Value)) -> EvalResult {
    Ok(Value::Int(i64::from(combine(seed, java_hash(ctx, x)?))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur_matches_clojure() {
        assert_eq!(murmur_long(42), 1871679806);
        assert_eq!(murmur_long(-1), 1651860712);
        assert_eq!(murmur_int(java_string_hash("abc")), 74834163);
        assert_eq!(mix_coll_hash(1, 0), -2017569654);
        assert_eq!(mix_coll_hash(0, 0), -15128758);
        assert_eq!(combine(1, 2), -1640531462);
        assert_eq!(symbol_hash(None, "a"), -482876059);
        assert_eq!(symbol_hash(None, "a").wrapping_add(GOLDEN), -2123407586);
    }
}
