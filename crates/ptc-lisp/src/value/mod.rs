//! Runtime values.
//!
//! A [`Value`] is 16 bytes, cheap to clone (at most one atomic increment) and `Send + Sync`, so tool
//! calls and `pmap` workers can run on other threads. Collections are persistent: `assoc` and `conj`
//! share structure with the collection they extend, so building a collection in a loop is not
//! quadratic. Map and set iteration order never depends on a random seed: small maps and sets keep
//! insertion order (like Clojure's array maps), larger ones use a fixed hash function.

mod bignum;
pub(crate) mod date;
mod function;
mod intern;
mod lazy;
mod map;
mod meta;
pub(crate) mod meter;
pub(crate) mod precision;
mod seq;
mod set;
mod shape;
mod tagged;

pub use bignum::{BigKind, BigNumber, Decimal};
pub(crate) use bignum::{NumberKind, numbers_equal, to_bigint, to_f64, to_rational};
pub use date::{Date, DateKind};
pub(crate) use function::FnBody;
pub use function::Function;
pub use intern::intern;
pub use lazy::{ForSeq, LazyKind, LazySeq, RangeEnd};
pub use map::{Map, MapBuilder, MapIter, SMALL_MAP_MAX};
pub(crate) use precision::{MathContext, Rounding};
pub use seq::{Seq, SeqIter};
pub use set::{Set, SetIter};
pub use shape::ValueShape;
pub use tagged::{TaggedLiteral, Uuid};

use crate::stack::with_stack_room;
use arcstr::ArcStr;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Run `f`, which walks into the children of a collection nested `depth` deep, where the stack
/// can grow. Values nest up to [`crate::Limits::max_value_depth`] levels; every walker (printing,
/// hashing, comparing, dropping) recurses that deep, which in a debug build on a 2 MiB thread
/// is more than the stack holds. Only every 16th level looks at the stack, so scalars and
/// shallow values cost nothing (the red zone covers the levels between two looks).
#[inline]
pub(crate) fn nested<R>(depth: u32, f: impl FnOnce() -> R) -> R {
    if depth != 0 && depth.is_multiple_of(16) {
        with_stack_room(f)
    } else {
        f()
    }
}

/// Deepest nesting of collections inside one value by default (see
/// `Limits::max_value_depth`): deeper values could not be printed, compared or freed without
/// exhausting the stack.
pub(crate) const MAX_VALUE_DEPTH: u32 = 1_000;

/// Bytes one value slot takes, the unit of the memory budget's estimates.
const SLOT_BYTES: usize = std::mem::size_of::<Value>();

/// A PTC-Lisp value.
///
/// The tag is a whole word so that every payload starts at the second word. With a byte tag,
/// `Bool` and `Char` payloads start at byte 1 and 4, and the compiler moves a value (or an
/// `Option<Cow<Value>>` taken from an iterator) as bytes 1 to 15: a load that straddles the two
/// stores that wrote it, which the processor cannot forward and stalls on. Evaluation moves
/// values all the time, so this costs a large share of a pipeline's time.
#[derive(Clone, Default)]
#[repr(u64)]
pub enum Value {
    /// `nil`.
    #[default]
    Nil,
    /// `true` or `false`.
    Bool(bool),
    /// A 64-bit integer; overflow is an error, never a wrap.
    Int(i64),
    /// A 64-bit float.
    Float(f64),
    /// A string.
    Str(ArcStr),
    /// A character, `\\a`.
    Char(char),
    /// A keyword, `:name`.
    Keyword(Keyword),
    /// A symbol, `name` (quoted data).
    Symbol(Symbol),
    /// A list or realized sequence, printed `(1 2 3)`.
    List(Seq),
    /// A vector, printed `[1 2 3]`.
    Vector(Seq),
    /// A map, `{:a 1}`.
    Map(Map),
    /// A set, `#{1 2}`.
    Set(Set),
    /// A function.
    Fn(Function),
    /// A regular expression, `#"\\d+"`.
    Regex(Regex),
    /// `#'name`: a reference to a user definition.
    Var(Symbol),
    /// A lazy sequence, realized only as far as consumed: an unbounded one (`(range)`,
    /// `(iterate f x)`, ...) or a range too long to realize at once.
    Lazy(LazySeq),
    /// A `java.time.LocalDate` or a `java.util.Date`.
    Date(Date),
    /// A big integer (`7N`), a ratio (`1/3`) or a big decimal (`1.50M`).
    Big(BigNumber),
    /// A UUID, `#uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"`.
    Uuid(Uuid),
    /// A tagged literal kept as data, `#tag form` (`(tagged-literal 'tag form)`).
    Tagged(TaggedLiteral),
}

/// A keyword such as `:name` or `:user/id`; the text excludes the leading colon.
#[derive(Clone)]
pub struct Keyword(ArcStr);

/// A symbol such as `x` or `tool/fetch`.
#[derive(Clone)]
pub struct Symbol(ArcStr);

macro_rules! name_type {
    ($ty:ident) => {
        impl $ty {
            /// The name `text` (interned: equal names share one allocation).
            pub fn new(text: &str) -> $ty {
                $ty(intern(text))
            }
            /// The full text, `ns/name` or `name`.
            pub fn as_str(&self) -> &str {
                &self.0
            }
            /// The part before the first `/`, if any (`nil` namespace otherwise).
            pub fn namespace(&self) -> Option<&str> {
                match self.0.find('/') {
                    Some(i) if i > 0 && i + 1 < self.0.len() => Some(&self.0[..i]),
                    _ => None,
                }
            }
            /// The part after the namespace.
            pub fn name(&self) -> &str {
                match self.namespace() {
                    Some(ns) => &self.0[ns.len() + 1..],
                    None => &self.0,
                }
            }
        }
        impl PartialEq for $ty {
            fn eq(&self, other: &$ty) -> bool {
                ArcStr::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
            }
        }
        impl Eq for $ty {}
        impl Hash for $ty {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.0.as_str().hash(state)
            }
        }
        impl PartialOrd for $ty {
            fn partial_cmp(&self, other: &$ty) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for $ty {
            fn cmp(&self, other: &$ty) -> Ordering {
                // Clojure orders by namespace first (no namespace sorts first), then name.
                (self.namespace(), self.name()).cmp(&(other.namespace(), other.name()))
            }
        }
        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({:?})", stringify!($ty), self.as_str())
            }
        }
    };
}
name_type!(Keyword);
name_type!(Symbol);

impl Keyword {
    /// The interned text, to compare keywords by identity first.
    pub(crate) fn arc(&self) -> &ArcStr {
        &self.0
    }
}

/// A compiled regular expression (linear-time engine; no backtracking blow-up), with the
/// pattern as the program wrote it.
#[derive(Clone)]
pub struct Regex(Arc<CompiledRegex>);

struct CompiledRegex {
    source: Box<str>,
    engine: regex::Regex,
    /// The pattern anchored at both ends, for whole-string matching; built on first use.
    whole: std::sync::OnceLock<regex::Regex>,
}

impl Regex {
    /// Pair a compiled engine with the source text it was compiled from (which may differ from
    /// the engine's own pattern when Java syntax was translated).
    pub fn new(source: &str, engine: regex::Regex) -> Regex {
        Regex(Arc::new(CompiledRegex {
            source: source.into(),
            engine,
            whole: std::sync::OnceLock::new(),
        }))
    }
    /// The pattern as written, e.g. `\d+` for `#"\d+"`.
    pub fn as_str(&self) -> &str {
        &self.0.source
    }
    pub(crate) fn engine(&self) -> &regex::Regex {
        &self.0.engine
    }
    /// The engine that must match the whole input, built by `build` the first time.
    pub(crate) fn whole_engine<E>(
        &self,
        build: impl FnOnce(&str) -> std::result::Result<regex::Regex, E>,
    ) -> std::result::Result<&regex::Regex, E> {
        if let Some(engine) = self.0.whole.get() {
            return Ok(engine);
        }
        let engine = build(&self.0.source)?;
        Ok(self.0.whole.get_or_init(|| engine))
    }
    pub(crate) fn ptr_eq(&self, other: &Regex) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Value {
    /// The keyword `:text` (`text` without the colon).
    pub fn keyword(text: &str) -> Value {
        Value::Keyword(Keyword::new(text))
    }
    /// The symbol `text`.
    pub fn symbol(text: &str) -> Value {
        Value::Symbol(Symbol::new(text))
    }
    /// A string value.
    pub fn string(text: impl AsRef<str>) -> Value {
        Value::Str(ArcStr::from(text.as_ref()))
    }
    /// A list of `items`.
    pub fn list(items: impl IntoIterator<Item = Value>) -> Value {
        Value::List(Seq::from_iter(items))
    }
    /// A vector of `items`.
    pub fn vector(items: impl IntoIterator<Item = Value>) -> Value {
        Value::Vector(Seq::from_iter(items))
    }
    /// The empty list `()`.
    pub fn empty_list() -> Value {
        Value::List(Seq::new())
    }
    /// A map of `pairs`, in their order (a later pair replaces an earlier one of the same key).
    pub fn map(pairs: impl IntoIterator<Item = (Value, Value)>) -> Value {
        Value::Map(Map::from_pairs(pairs))
    }
    /// A set of `items`.
    pub fn set(items: impl IntoIterator<Item = Value>) -> Value {
        Value::Set(Set::from_items(items))
    }

    /// Clojure truthiness: everything except `nil` and `false` is true.
    #[inline]
    pub fn truthy(&self) -> bool {
        !matches!(self, Value::Nil | Value::Bool(false))
    }

    /// True for the variants that own no heap data, whose copies and drops are free.
    #[inline(always)]
    fn is_plain(&self) -> bool {
        matches!(
            self,
            Value::Nil | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Char(_)
        )
    }

    /// `clone`, without a call for the plain variants (the evaluator's hot path).
    #[inline(always)]
    pub(crate) fn clone_fast(&self) -> Value {
        if self.is_plain() {
            // SAFETY: a plain value owns nothing, so a bitwise copy is a complete clone and
            // both copies may be dropped (or forgotten) independently.
            unsafe { std::ptr::read(self) }
        } else {
            self.clone()
        }
    }

    /// Whether the value is truthy, dropping it (without a call for the plain variants).
    #[inline(always)]
    pub(crate) fn into_truthy(self) -> bool {
        let truthy = self.truthy();
        self.drop_fast();
        truthy
    }

    /// `drop`, without a call for the plain variants (the evaluator's hot path).
    #[inline(always)]
    pub(crate) fn drop_fast(self) {
        if self.is_plain() {
            // Nothing to release: skip the out-of-line destructor.
            std::mem::forget(self);
        } else {
            drop(self);
        }
    }

    /// Replace `*slot` with `value`, dropping the old value without a call when it is plain.
    #[inline(always)]
    pub(crate) fn store_fast(slot: &mut Value, value: Value) {
        std::mem::replace(slot, value).drop_fast();
    }

    /// Whether the value is `nil`.
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    /// The type name used in error messages ("integer", "vector", ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Char(_) => "char",
            Value::Keyword(_) => "keyword",
            Value::Symbol(_) => "symbol",
            Value::List(_) => "list",
            Value::Vector(_) => "vector",
            Value::Map(_) => "map",
            Value::Set(_) => "set",
            Value::Fn(_) => "function",
            Value::Regex(_) => "regex",
            Value::Var(_) => "var",
            Value::Lazy(_) => "lazy sequence",
            Value::Date(d) => match d.kind() {
                DateKind::Day(_) => "date",
                DateKind::Instant(_) => "instant",
            },
            Value::Big(b) => b.type_name(),
            Value::Uuid(_) => "uuid",
            Value::Tagged(_) => "tagged literal",
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The number of an integer.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The items of a list or vector.
    pub fn as_seq(&self) -> Option<&Seq> {
        match self {
            Value::List(v) | Value::Vector(v) => Some(v),
            _ => None,
        }
    }

    /// How deeply collections nest inside this value: 0 for scalars, 1 for a flat collection.
    /// Kept up to date in O(1) as collections are built, so the evaluator can refuse values too
    /// deep to print, compare or drop without exhausting the stack.
    #[inline]
    pub(crate) fn depth(&self) -> u32 {
        match self {
            Value::List(s) | Value::Vector(s) => s.depth(),
            Value::Map(m) => m.depth(),
            Value::Set(s) => s.depth(),
            Value::Fn(f) => f.depth(),
            Value::Lazy(l) => l.depth(),
            Value::Tagged(t) => t.depth(),
            _ => 0,
        }
    }

    /// The map, for a map.
    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Whether the value is a lazy sequence without end (`(range)`, `iterate`, ...).
    pub(crate) fn is_unbounded(&self) -> bool {
        matches!(self, Value::Lazy(l) if !l.is_bounded())
    }

    /// Number of elements of a finite collection or string; `None` for other values.
    pub fn count(&self) -> Option<usize> {
        match self {
            Value::Nil => Some(0),
            Value::Str(s) => Some(s.chars().count()),
            Value::List(v) | Value::Vector(v) => Some(v.len()),
            Value::Map(m) => Some(m.len()),
            Value::Set(s) => Some(s.len()),
            _ => None,
        }
    }

    /// A rough count of the bytes this value occupies, used by the memory budget. Shared structure
    /// is counted at every place it is reachable from, so this is an upper bound.
    pub(crate) fn estimated_size(&self) -> usize {
        nested(self.depth(), || self.estimated_size_here())
    }

    fn estimated_size_here(&self) -> usize {
        const SLOT: usize = std::mem::size_of::<Value>();
        // Past the walking budget the answer only needs to be too large for any memory budget.
        const UNKNOWN: usize = usize::MAX / 4;
        let fits = |len: usize| meter::spend(len);
        match self {
            Value::Str(s) => SLOT + s.len(),
            Value::Big(b) => SLOT + b.heap_bytes(),
            Value::List(v) | Value::Vector(v) => {
                if !fits(v.len()) {
                    return UNKNOWN;
                }
                v.iter()
                    .fold(SLOT, |acc, x| acc.saturating_add(x.estimated_size()))
            }
            Value::Map(m) => {
                if !fits(m.len()) {
                    return UNKNOWN;
                }
                m.iter().fold(SLOT, |acc, (k, v)| {
                    acc.saturating_add(k.estimated_size())
                        .saturating_add(v.estimated_size())
                })
            }
            Value::Set(s) => {
                if !fits(s.len()) {
                    return UNKNOWN;
                }
                s.iter()
                    .fold(SLOT, |acc, x| acc.saturating_add(x.estimated_size()))
            }
            _ => SLOT,
        }
    }

    /// Whether [`Value::estimated_size`] is at most `max`, found by walking no more than about
    /// `max / 16` elements: cheap even for a value whose shared parts repeat so often that
    /// writing it out in full would never end.
    pub(crate) fn estimated_size_within(&self, max: usize) -> bool {
        self.estimated_size_up_to(max) <= max
    }

    /// [`Value::estimated_size`] if it is at most `max`, else a number above `max`; found by
    /// walking no more than about `max / 16` elements.
    pub(crate) fn estimated_size_up_to(&self, max: usize) -> usize {
        fn walk(v: &Value, left: &mut usize) -> bool {
            nested(v.depth(), || walk_here(v, left))
        }
        fn walk_here(v: &Value, left: &mut usize) -> bool {
            let cost = match v {
                Value::Str(s) => SLOT_BYTES.saturating_add(s.len()),
                Value::Big(b) => SLOT_BYTES.saturating_add(b.heap_bytes()),
                _ => SLOT_BYTES,
            };
            if cost > *left {
                return false;
            }
            *left -= cost;
            match v {
                Value::List(s) | Value::Vector(s) => s.iter().all(|x| walk(x, left)),
                Value::Map(m) => m.iter().all(|(k, x)| walk(k, left) && walk(x, left)),
                Value::Set(s) => s.iter().all(|x| walk(x, left)),
                _ => true,
            }
        }
        // The whole value counts its own slot, like `estimated_size`.
        let mut left = max;
        if walk(self, &mut left) {
            max - left
        } else {
            max.saturating_add(1)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Equality, hashing and ordering
// ---------------------------------------------------------------------------------------------

impl PartialEq for Value {
    /// Clojure's `=`: lists and vectors with equal elements are equal, `1` and `1.0` are not.
    fn eq(&self, other: &Value) -> bool {
        nested(self.depth(), || self.eq_here(other))
    }
}

impl Value {
    fn eq_here(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Nil, Nil) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a == b,
            (Str(a), Str(b)) => a == b,
            (Char(a), Char(b)) => a == b,
            (Keyword(a), Keyword(b)) => a == b,
            (Symbol(a), Symbol(b)) => a == b,
            (List(a) | Vector(a), List(b) | Vector(b)) => {
                a.ptr_eq(b)
                    || (a.len() == b.len()
                        && meter::spend(a.len())
                        && a.iter().zip(b.iter()).all(|(x, y)| x == y))
            }
            (Map(a), Map(b)) => a == b,
            (Set(a), Set(b)) => a == b,
            (Fn(a), Fn(b)) => a.ptr_eq(b) || a.same_as_read_back(b),
            (Regex(a), Regex(b)) => a.ptr_eq(b),
            (Var(a), Var(b)) => a == b,
            (Lazy(a), Lazy(b)) => a.ptr_eq(b) || a.same_as_read_back(b),
            (Date(a), Date(b)) => a == b,
            (Uuid(a), Uuid(b)) => a == b,
            (Tagged(a), Tagged(b)) => a == b,
            (Big(_), Int(_) | Float(_) | Big(_)) | (Int(_) | Float(_), Big(_)) => {
                numbers_equal(self, other)
            }
            _ => false,
        }
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(hash_value(self));
    }
}

fn fx(bytes_or_word: impl Hash) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    bytes_or_word.hash(&mut h);
    h.finish()
}

/// A hash consistent with [`PartialEq`] and independent of the process (no random seed).
pub(crate) fn hash_value(value: &Value) -> u64 {
    nested(value.depth(), || hash_here(value))
}

fn hash_here(value: &Value) -> u64 {
    use Value::*;
    match value {
        Nil => 0x6e69_6c00,
        Bool(b) => fx((1u8, *b)),
        Int(i) => fx((2u8, *i)),
        // -0.0 == 0.0, so both hash alike.
        Float(f) => fx((3u8, if *f == 0.0 { 0u64 } else { f.to_bits() })),
        Str(s) => fx((4u8, s.as_str())),
        Char(c) => fx((5u8, *c)),
        Keyword(k) => fx((6u8, k.as_str())),
        Symbol(s) => fx((7u8, s.as_str())),
        // Past the walking budget (see `meter`) any hash will do: the run is ending.
        List(v) | Vector(v) if !meter::spend(v.len()) => 0,
        Map(m) if !meter::spend(m.len()) => 0,
        Set(s) if !meter::spend(s.len()) => 0,
        List(v) | Vector(v) => v.iter().fold(0x7365_7100u64, |acc, x| {
            acc.wrapping_mul(31).wrapping_add(hash_value(x))
        }),
        Map(m) => m.iter().fold(0x6d61_7000u64, |acc, (k, v)| {
            acc.wrapping_add(hash_value(k).rotate_left(17) ^ hash_value(v))
        }),
        Set(s) => s
            .iter()
            .fold(0x7365_7400u64, |acc, x| acc.wrapping_add(hash_value(x))),
        // By name, so that a function read back from its printed form (equal to any function
        // printed the same way) hashes alike.
        Fn(f) => fx((8u8, f.shown_name())),
        Regex(r) => fx((9u8, r.as_str())),
        Var(s) => fx((10u8, s.as_str())),
        Lazy(l) => fx((11u8, l.describe())),
        Date(d) => fx((12u8, d.bits())),
        Big(b) => b.hash_key(),
        Uuid(u) => fx((13u8, u.bits())),
        Tagged(t) => fx((14u8, t.tag().as_str())) ^ hash_value(t.form()),
    }
}

impl Value {
    /// Rank of each type in the total order used by sorted collections.
    fn type_rank(&self) -> u8 {
        use Value::*;
        match self {
            Nil => 0,
            Bool(_) => 1,
            Int(_) | Float(_) | Big(_) => 2,
            Char(_) => 3,
            Str(_) => 4,
            Symbol(_) => 5,
            Keyword(_) => 6,
            List(_) | Vector(_) => 7,
            Map(_) => 8,
            Set(_) => 9,
            Regex(_) => 10,
            Var(_) => 11,
            Fn(_) => 12,
            Lazy(_) => 13,
            Date(_) => 14,
            Uuid(_) => 15,
            Tagged(_) => 16,
        }
    }
}

/// Compare two numbers numerically (an integer and a float compare by value).
pub(crate) fn compare_numbers(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Float(y)) => (*x as f64).partial_cmp(y),
        (Value::Float(x), Value::Int(y)) => x.partial_cmp(&(*y as f64)),
        _ => bignum::compare_big(a, b),
    }
}

impl Ord for Value {
    /// A total order over all values, used by sorted maps and sets and as a deterministic
    /// tie-breaker. Within one type it agrees with Clojure's `compare` (vectors by length, then
    /// element by element). Numbers compare by value; an integer sorts before an equal float.
    fn cmp(&self, other: &Value) -> Ordering {
        nested(self.depth(), || self.cmp_here(other))
    }
}

impl Value {
    fn cmp_here(&self, other: &Value) -> Ordering {
        use Value::*;
        let rank = self.type_rank().cmp(&other.type_rank());
        if rank != Ordering::Equal {
            return rank;
        }
        match (self, other) {
            (Nil, Nil) => Ordering::Equal,
            (Bool(a), Bool(b)) => a.cmp(b),
            (Int(_) | Float(_) | Big(_), Int(_) | Float(_) | Big(_)) => {
                match compare_numbers(self, other) {
                    Some(Ordering::Equal) | None => {
                        let kind = |v: &Value| NumberKind::of(v).map(NumberKind::class);
                        kind(self)
                            .cmp(&kind(other))
                            .then_with(|| match (self, other) {
                                (Float(a), Float(b)) => a.total_cmp(b),
                                _ => Ordering::Equal,
                            })
                    }
                    Some(ord) => ord,
                }
            }
            (Char(a), Char(b)) => a.cmp(b),
            (Str(a), Str(b)) => a.cmp(b),
            (Symbol(a), Symbol(b)) => a.cmp(b),
            (Keyword(a), Keyword(b)) => a.cmp(b),
            // Past the walking budget (see `meter`) any order will do: the run is ending.
            (List(a) | Vector(a), List(b) | Vector(b)) => a.len().cmp(&b.len()).then_with(|| {
                if a.ptr_eq(b) || !meter::spend(a.len()) {
                    Ordering::Equal
                } else {
                    a.iter().cmp(b.iter())
                }
            }),
            (Map(_), Map(_)) | (Set(_), Set(_)) if !meter::spend(self.count().unwrap_or(0)) => {
                Ordering::Equal
            }
            (Map(a), Map(b)) => a.len().cmp(&b.len()).then_with(|| {
                let mut x: Vec<_> = a.iter().collect();
                let mut y: Vec<_> = b.iter().collect();
                x.sort();
                y.sort();
                x.cmp(&y)
            }),
            (Set(a), Set(b)) => a.len().cmp(&b.len()).then_with(|| {
                let mut x: Vec<_> = a.iter().collect();
                let mut y: Vec<_> = b.iter().collect();
                x.sort();
                y.sort();
                x.cmp(&y)
            }),
            (Regex(a), Regex(b)) => a.as_str().cmp(b.as_str()),
            (Var(a), Var(b)) => a.cmp(b),
            (Fn(_), Fn(_)) | (Lazy(_), Lazy(_)) if self == other => Ordering::Equal,
            (Fn(a), Fn(b)) => a.addr().cmp(&b.addr()),
            (Lazy(a), Lazy(b)) => a.addr().cmp(&b.addr()),
            // Days sort before instants; within a kind, chronologically.
            (Date(a), Date(b)) => a
                .compare(*b)
                .unwrap_or_else(|| (a.bits() & 1).cmp(&(b.bits() & 1))),
            (Uuid(a), Uuid(b)) => a.cmp(b),
            (Tagged(a), Tagged(b)) => a.tag().cmp(b.tag()).then_with(|| a.form().cmp(b.form())),
            _ => Ordering::Equal,
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------------

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}
impl From<i32> for Value {
    fn from(i: i32) -> Value {
        Value::Int(i as i64)
    }
}
impl From<usize> for Value {
    fn from(i: usize) -> Value {
        Value::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Float(f)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::string(s)
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(ArcStr::from(s))
    }
}
impl From<Keyword> for Value {
    fn from(k: Keyword) -> Value {
        Value::Keyword(k)
    }
}
impl From<Map> for Value {
    fn from(m: Map) -> Value {
        Value::Map(m)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Value {
        o.map_or(Value::Nil, Into::into)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Value {
        Value::vector(items.into_iter().map(Into::into))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_two_words_and_thread_safe() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Value>();
        assert_eq!(std::mem::size_of::<Value>(), 16);
        // The unused tags hold `None`: an optional value costs nothing more.
        assert_eq!(std::mem::size_of::<Option<Value>>(), 16);
        assert_eq!(std::mem::size_of::<Option<std::borrow::Cow<Value>>>(), 16);
    }

    #[test]
    fn equality_follows_clojure() {
        assert_eq!(
            Value::vector([1.into(), 2.into()]),
            Value::list([1.into(), 2.into()])
        );
        assert_ne!(Value::Int(1), Value::Float(1.0));
        assert_eq!(Value::Float(0.0), Value::Float(-0.0));
        assert_eq!(
            hash_value(&Value::Float(0.0)),
            hash_value(&Value::Float(-0.0))
        );
        let a = Value::map([
            (Value::keyword("a"), 1.into()),
            (Value::keyword("b"), 2.into()),
        ]);
        let b = Value::map([
            (Value::keyword("b"), 2.into()),
            (Value::keyword("a"), 1.into()),
        ]);
        assert_eq!(a, b);
        assert_eq!(hash_value(&a), hash_value(&b));
    }

    #[test]
    fn keyword_parts() {
        let k = Keyword::new("user/id");
        assert_eq!(k.namespace(), Some("user"));
        assert_eq!(k.name(), "id");
        assert_eq!(Keyword::new("/").name(), "/");
    }
}
