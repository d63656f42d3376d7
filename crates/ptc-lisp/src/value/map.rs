//! Persistent maps with deterministic iteration order.
//!
//! Up to [`SMALL_MAP_MAX`] entries a map is a key array and a value array in insertion order (keys
//! arrays are shared between maps of the same shape, so ten thousand JSON records with the same
//! fields store their key list once). Up to `INLINE_VALS` values live in the map's own
//! allocation: a record is then one allocation, and reading a field follows one pointer. Larger maps are hash array mapped tries keyed by a fixed,
//! seedless hash, so their order is the same in every process. Sorted maps are B-trees.

use super::{Value, hash_value, meter};
use imbl::shared_ptr::DefaultSharedPtr;
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// Largest map kept in the insertion-ordered small representation.
pub const SMALL_MAP_MAX: usize = 16;

type FxBuild = BuildHasherDefault<rustc_hash::FxHasher>;
type HashRepr = imbl::GenericHashMap<Value, Value, FxBuild, DefaultSharedPtr>;
type SortedRepr = imbl::OrdMap<Value, Value>;

/// Values a small map keeps in its own allocation. Most records have a handful of fields;
/// keeping them inline saves an allocation per map and a dependent load per field read, which is
/// what a pipeline over thousands of records spends its time on when they are spread over the
/// heap.
const INLINE_VALS: usize = 8;
type SmallVals = smallvec::SmallVec<[Value; INLINE_VALS]>;

/// A persistent map: small maps keep insertion order in one allocation, larger ones a
/// seedless hash map (or a sorted map for `sorted-map`).
#[derive(Clone)]
pub struct Map(Arc<MapInner>);

#[derive(Clone)]
struct MapInner {
    /// 1 + the deepest key or value (an upper bound after `dissoc`).
    depth: u32,
    repr: MapRepr,
    /// Slots charged to the memory budget of a run for this map's own allocation (made in a
    /// run), given back when it is dropped. What a map is charged for its entries is charged by
    /// the builtin that builds it, and not given back; what it costs on top (its `Arc`, a copy
    /// of a small map's values made to change it while shared) is charged here, so that a
    /// program keeping many small maps pays for them, and a loop changing one small map pays
    /// for the copy it keeps rather than for every copy it made.
    own: u32,
    /// Slots charged for this map's own copy of a small map's values kept outside it, or for the trie or B-tree
    /// nodes it copied from a map it shares them with; given back when it is dropped.
    copied: u32,
    /// Whether the key array was made for a change of a small map and charged the same way
    /// (given back by the last map holding it).
    own_keys: bool,
    /// Metadata attached with `with-meta`; kept by `assoc` and `dissoc`.
    meta: Option<Map>,
}

/// Slots of a map's own allocation: its `Arc`, fields (inline values included), and the header
/// of its key array.
const INNER_SLOTS: usize = (std::mem::size_of::<MapInner>() + 32).div_ceil(16);

/// Slots a hash map entry takes beyond the two of its key and value, charged as it is added:
/// its share of the trie nodes, which are allocated 32 entries at a time. Measured on maps of
/// 1,000 to 1,000,000 entries, an entry takes 136 to 175 bytes in all.
const HASH_ENTRY_SLOTS: usize = 9;

/// A hash map's trie: 32 entries of a key, a value and a hash per node.
const HASH_SHAPE: meter::TreeShape = meter::TreeShape {
    fanout: 32,
    node_slots: 96,
    item_slots: HASH_ENTRY_SLOTS,
};

/// A sorted map's B-tree: up to 64 entries and 65 children per node.
const SORTED_SHAPE: meter::TreeShape = meter::TreeShape {
    fanout: 64,
    node_slots: 160,
    item_slots: 3,
};

impl MapInner {
    /// Slots charged for a small map's arrays that dropping them frees.
    fn charged_arrays(&self) -> usize {
        let keys = match &self.repr {
            MapRepr::Small { keys, .. } if self.own_keys && Arc::strong_count(keys) == 1 => {
                keys.len() + 1
            }
            _ => 0,
        };
        self.copied as usize + keys
    }

    /// Charge what a change just copied: a fresh copy of a small map's values, or the nodes on
    /// the path to the change in a hash or sorted map.
    fn charge_change(&mut self, fresh_copy: bool) {
        let shape = match &self.repr {
            MapRepr::Small { vals, .. } => {
                // Inline values were copied with the map itself, which `own` pays for.
                if fresh_copy && vals.spilled() {
                    self.copied = meter::own_copy(vals.len());
                }
                return;
            }
            MapRepr::Hash(m) if !m.is_empty() => HASH_SHAPE,
            MapRepr::Sorted(m) if !m.is_empty() => SORTED_SHAPE,
            _ => return,
        };
        self.copied = meter::charge_path_copy(self.copied, fresh_copy, self.len(), shape);
    }

    #[inline]
    fn len(&self) -> usize {
        match &self.repr {
            MapRepr::Small { keys, .. } => keys.len(),
            MapRepr::Hash(m) => m.len(),
            MapRepr::Sorted(m) => m.len(),
        }
    }
}

impl Drop for MapInner {
    fn drop(&mut self) {
        let slots = self.own as usize + self.charged_arrays();
        if slots > 0 {
            meter::note_free(slots);
        }
    }
}

/// Dropping a deeply nested value recurses as deeply as it nests: every 16th level continues
/// where the stack can grow (see `value::nested`).
impl Drop for Map {
    fn drop(&mut self) {
        if self.0.depth.is_multiple_of(16) && Arc::strong_count(&self.0) == 1 {
            static EMPTY: std::sync::OnceLock<Arc<MapInner>> = std::sync::OnceLock::new();
            let empty = EMPTY
                .get_or_init(|| {
                    Arc::new(MapInner {
                        depth: 1,
                        repr: MapRepr::Small {
                            keys: empty_keys(),
                            vals: SmallVals::new(),
                        },
                        own: 0,
                        copied: 0,
                        own_keys: false,
                        meta: None,
                    })
                })
                .clone();
            let inner = std::mem::replace(&mut self.0, empty);
            super::with_stack_room(move || drop(inner));
        }
    }
}

impl Map {
    fn of(repr: MapRepr) -> Map {
        let depth = 1 + match &repr {
            MapRepr::Small { keys, vals } => keys.iter().chain(vals.iter()).map(Value::depth).max(),
            MapRepr::Hash(m) => m.iter().map(|(k, v)| k.depth().max(v.depth())).max(),
            MapRepr::Sorted(m) => m.iter().map(|(k, v)| k.depth().max(v.depth())).max(),
        }
        .unwrap_or(0);
        Map(Arc::new(MapInner {
            depth,
            repr,
            own: meter::own(INNER_SLOTS),
            copied: 0,
            own_keys: false,
            meta: None,
        }))
    }

    pub(crate) fn depth(&self) -> u32 {
        self.0.depth
    }

    /// The metadata attached with `with-meta`, if any.
    #[inline]
    pub fn meta(&self) -> Option<&Map> {
        self.0.meta.as_ref()
    }

    /// The same entries carrying `meta` instead: a copy, charged like one made by `dissoc`.
    pub(crate) fn with_meta(&self, meta: Option<Map>) -> Map {
        let mut out = self.clone();
        if self.0.meta.is_none() && meta.is_none() {
            return out;
        }
        let inner = Arc::make_mut(&mut out.0);
        inner.own = meter::own(INNER_SLOTS);
        inner.copied = 0;
        // The metadata is freed with the collection, so it counts in its nesting depth.
        inner.depth = inner.depth.max(meta.as_ref().map_or(0, |m| 1 + m.depth()));
        inner.meta = meta;
        inner.charge_change(true);
        out
    }
}

#[derive(Clone)]
enum MapRepr {
    Small { keys: Arc<[Value]>, vals: SmallVals },
    Hash(HashRepr),
    Sorted(SortedRepr),
}

impl Default for Map {
    fn default() -> Map {
        Map::new()
    }
}

fn empty_keys() -> Arc<[Value]> {
    static EMPTY: std::sync::OnceLock<Arc<[Value]>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Arc::from(Vec::new())).clone()
}

impl Map {
    /// An empty map.
    pub fn new() -> Map {
        Map::of(MapRepr::Small {
            keys: empty_keys(),
            vals: SmallVals::new(),
        })
    }

    /// An empty sorted map (`sorted-map`).
    pub(crate) fn new_sorted() -> Map {
        Map::of(MapRepr::Sorted(SortedRepr::new()))
    }

    /// A map of the given pairs; a repeated key keeps its first position and its last value.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (Value, Value)>) -> Map {
        let mut builder = MapBuilder::new();
        for (k, v) in pairs {
            builder.insert(k, v);
        }
        builder.build()
    }

    /// A map whose keys (distinct, in order) are shared with other maps of the same shape.
    pub(crate) fn from_shape(keys: Arc<[Value]>, vals: Vec<Value>) -> Map {
        debug_assert_eq!(keys.len(), vals.len());
        if keys.len() <= SMALL_MAP_MAX {
            Map::of(MapRepr::Small {
                keys,
                vals: SmallVals::from_vec(vals),
            })
        } else {
            Map::from_pairs(keys.iter().cloned().zip(vals))
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn is_sorted(&self) -> bool {
        matches!(&self.0.repr, MapRepr::Sorted(_))
    }

    /// The value of `key`, compared with `=` (so `1` and `1.0` are different keys).
    #[inline]
    pub fn get(&self, key: &Value) -> Option<&Value> {
        match &self.0.repr {
            MapRepr::Small { keys, vals } => small_index(keys, key).map(|i| &vals[i]),
            MapRepr::Hash(m) => m.get(key),
            MapRepr::Sorted(m) => m.get(key),
        }
    }

    /// The value under the keyword `key` when it sits where `hint` says this call site last found
    /// it in a small map. Small enough to inline into every field read; `None` says nothing
    /// about whether the key is present.
    #[inline(always)]
    pub(crate) fn get_at_hint(&self, key: &Value, hint: &AtomicU8) -> Option<&Value> {
        let MapRepr::Small { keys, vals } = &self.0.repr else {
            return None;
        };
        let guess = hint.load(Relaxed) as usize;
        match (keys.get(guess), key) {
            (Some(Value::Keyword(k)), Value::Keyword(want))
                if arcstr::ArcStr::ptr_eq(k.arc(), want.arc()) =>
            {
                vals.get(guess)
            }
            _ => None,
        }
    }

    /// `get` for a call site that looks up the same key in many maps: `hint` remembers where the
    /// key was last found in a small map and is checked first.
    #[inline(always)]
    pub(crate) fn get_hinted(&self, key: &Value, hint: &AtomicU8) -> Option<&Value> {
        match self.get_at_hint(key, hint) {
            Some(v) => Some(v),
            None => self.get_and_hint(key, hint),
        }
    }

    /// `get`, remembering in `hint` where a small map holds `key`.
    #[inline(never)]
    fn get_and_hint(&self, key: &Value, hint: &AtomicU8) -> Option<&Value> {
        match &self.0.repr {
            MapRepr::Small { keys, vals } => {
                let i = small_index(keys, key)?;
                hint.store(i as u8, Relaxed);
                vals.get(i)
            }
            _ => self.get(key),
        }
    }

    /// Whether `key` has a value.
    pub fn contains_key(&self, key: &Value) -> bool {
        self.get(key).is_some()
    }

    /// The entry whose key equals `key`, with the key as stored.
    pub fn get_entry(&self, key: &Value) -> Option<(&Value, &Value)> {
        match &self.0.repr {
            MapRepr::Small { keys, vals } => small_index(keys, key).map(|i| (&keys[i], &vals[i])),
            MapRepr::Hash(m) => m.get_key_value(key),
            MapRepr::Sorted(m) => m.get_key_value(key),
        }
    }

    /// A new map with `key` set to `value`.
    pub fn assoc(&self, key: Value, value: Value) -> Map {
        let mut out = self.clone();
        out.assoc_mut(key, value);
        out
    }

    /// Set `key` to `value` in place (copying only what is shared with other maps).
    ///
    /// In a run, what this allocates is charged to the memory budget (see `value::meter`): a
    /// copy of a shared small map (given back when the copy is dropped), a new key array, a new
    /// hash map entry, the trie or B-tree nodes copied from a map this one shares them with
    /// (see `meter::charge_path_copy`).
    pub(crate) fn assoc_mut(&mut self, key: Value, value: Value) {
        let shared = Arc::strong_count(&self.0) > 1;
        let inner = Arc::make_mut(&mut self.0);
        if shared {
            // A fresh copy. It shares the key array, and whether that was charged: whichever
            // map drops the array last gives it back.
            inner.own = 0;
            inner.copied = 0;
        }
        inner.depth = inner.depth.max(1 + key.depth().max(value.depth()));
        let converting = matches!(&inner.repr, MapRepr::Small { keys, .. }
            if keys.len() >= SMALL_MAP_MAX && small_index(keys, &key).is_none());
        if converting {
            // The small arrays are freed: give back what was charged for them.
            meter::note_free(inner.charged_arrays());
            inner.copied = 0;
            inner.own_keys = false;
        }
        match &mut inner.repr {
            MapRepr::Small { keys, vals } => {
                if let Some(i) = small_index(keys, &key) {
                    vals[i] = value;
                } else if keys.len() < SMALL_MAP_MAX {
                    let mut new_keys = Vec::with_capacity(keys.len() + 1);
                    new_keys.extend(keys.iter().cloned());
                    new_keys.push(key);
                    let mut new_vals = std::mem::take(vals).into_vec();
                    new_vals.push(value);
                    let old_keys = std::mem::replace(keys, Arc::from(new_keys));
                    if inner.own_keys && Arc::strong_count(&old_keys) == 1 {
                        meter::note_free(old_keys.len() + 1);
                    }
                    inner.own_keys = meter::note_copy(keys.len() + 1);
                    *vals = SmallVals::from_vec(new_vals);
                } else {
                    let mut m = HashRepr::default();
                    for (k, v) in keys.iter().cloned().zip(std::mem::take(vals).into_vec()) {
                        m.insert(k, v);
                    }
                    m.insert(key, value);
                    meter::note_alloc(m.len() * HASH_ENTRY_SLOTS);
                    inner.repr = MapRepr::Hash(m);
                }
            }
            MapRepr::Hash(m) => {
                if m.insert(key, value).is_none() {
                    meter::note_alloc(HASH_ENTRY_SLOTS);
                }
            }
            MapRepr::Sorted(m) => {
                m.insert(key, value);
            }
        }
        if shared {
            inner.own = meter::own(INNER_SLOTS);
        }
        // A small map just turned into a hash map shares no nodes.
        inner.charge_change(shared && !converting);
    }

    /// A new map without `key`.
    pub(crate) fn dissoc(&self, key: &Value) -> Map {
        if !self.contains_key(key) {
            return self.clone();
        }
        let mut out = self.clone();
        // A copy (`self` still holds the original), charged like one made by `assoc_mut`.
        let inner = Arc::make_mut(&mut out.0);
        inner.own = meter::own(INNER_SLOTS);
        inner.copied = 0;
        match &mut inner.repr {
            MapRepr::Small { keys, vals } => {
                let i = small_index(keys, key).expect("checked above");
                let new_keys: Vec<Value> = keys
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, k)| k.clone())
                    .collect();
                let mut new_vals = std::mem::take(vals).into_vec();
                new_vals.remove(i);
                *keys = Arc::from(new_keys);
                *vals = SmallVals::from_vec(new_vals);
                inner.own_keys = meter::note_copy(keys.len() + 1);
            }
            MapRepr::Hash(m) => {
                m.remove(key);
            }
            MapRepr::Sorted(m) => {
                m.remove(key);
            }
        }
        inner.charge_change(true);
        out
    }

    /// An empty map of the same kind (sorted stays sorted).
    pub(crate) fn empty_like(&self) -> Map {
        if self.is_sorted() {
            Map::new_sorted()
        } else {
            Map::new()
        }
    }

    /// The entries, in the map's order: insertion order for a small map, the seedless hash's
    /// order for a large one, key order for a sorted one.
    pub fn iter(&self) -> MapIter<'_> {
        MapIter(match &self.0.repr {
            MapRepr::Small { keys, vals } => MapIterInner::Small(keys.iter().zip(vals.iter())),
            MapRepr::Hash(m) => MapIterInner::Hash(m.iter()),
            MapRepr::Sorted(m) => MapIterInner::Sorted(m.iter()),
        })
    }

    /// The keys, in the map's order.
    pub fn keys(&self) -> impl Iterator<Item = &Value> {
        self.iter().map(|(k, _)| k)
    }

    /// The values, in the map's order.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.iter().map(|(_, v)| v)
    }

    /// Whether the two maps share one allocation (then they are equal without looking inside).
    pub fn ptr_eq(&self, other: &Map) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[inline]
fn small_index(keys: &[Value], key: &Value) -> Option<usize> {
    // Keywords are interned, so the common lookup is a pointer compare per key.
    if let Value::Keyword(k) = key {
        for (i, candidate) in keys.iter().enumerate() {
            if let Value::Keyword(c) = candidate
                && (arcstr::ArcStr::ptr_eq(k.arc(), c.arc()) || k.as_str() == c.as_str())
            {
                return Some(i);
            }
        }
        return None;
    }
    keys.iter().position(|candidate| candidate == key)
}

/// The entries of a map, in its order.
pub struct MapIter<'a>(MapIterInner<'a>);

enum MapIterInner<'a> {
    Small(std::iter::Zip<std::slice::Iter<'a, Value>, std::slice::Iter<'a, Value>>),
    Hash(imbl::hashmap::Iter<'a, Value, Value, DefaultSharedPtr>),
    Sorted(imbl::ordmap::Iter<'a, Value, Value, DefaultSharedPtr>),
}

impl<'a> Iterator for MapIter<'a> {
    type Item = (&'a Value, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            MapIterInner::Small(it) => it.next(),
            MapIterInner::Hash(it) => it.next(),
            MapIterInner::Sorted(it) => it.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            MapIterInner::Small(it) => it.size_hint(),
            MapIterInner::Hash(it) => it.size_hint(),
            MapIterInner::Sorted(it) => it.size_hint(),
        }
    }
}

impl PartialEq for Map {
    fn eq(&self, other: &Map) -> bool {
        self.ptr_eq(other)
            || (self.len() == other.len()
                && super::meter::spend(self.len())
                && self
                    .iter()
                    .all(|(k, v)| other.get(k).is_some_and(|w| w == v)))
    }
}

impl std::hash::Hash for Map {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(hash_value(&Value::Map(self.clone())));
    }
}

/// Collects entries and picks the representation once, at the end.
#[derive(Default)]
pub struct MapBuilder {
    keys: Vec<Value>,
    vals: Vec<Value>,
    index: Option<rustc_hash::FxHashMap<Value, usize>>,
}

impl MapBuilder {
    /// Value slots one entry takes while the map is being built: its key and value, room the
    /// two vectors keep for growing, and the entry of the index that finds duplicate keys.
    pub const SLOTS_PER_ENTRY: usize = 7;

    pub fn new() -> MapBuilder {
        MapBuilder::default()
    }

    pub(crate) fn insert(&mut self, key: Value, value: Value) {
        if let Some(index) = &mut self.index {
            match index.get(&key) {
                Some(&i) => self.vals[i] = value,
                None => {
                    index.insert(key.clone(), self.keys.len());
                    self.keys.push(key);
                    self.vals.push(value);
                }
            }
            return;
        }
        if let Some(i) = small_index(&self.keys, &key) {
            self.vals[i] = value;
            return;
        }
        self.keys.push(key);
        self.vals.push(value);
        if self.keys.len() > SMALL_MAP_MAX {
            let index = self
                .keys
                .iter()
                .enumerate()
                .map(|(i, k)| (k.clone(), i))
                .collect();
            self.index = Some(index);
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub(crate) fn build(self) -> Map {
        if self.keys.len() <= SMALL_MAP_MAX {
            Map::of(MapRepr::Small {
                keys: Arc::from(self.keys),
                vals: SmallVals::from_vec(self.vals),
            })
        } else {
            let mut m = HashRepr::default();
            for (k, v) in self.keys.into_iter().zip(self.vals) {
                m.insert(k, v);
            }
            meter::note_alloc(m.len() * HASH_ENTRY_SLOTS);
            Map::of(MapRepr::Hash(m))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(s: &str) -> Value {
        Value::keyword(s)
    }

    #[test]
    fn small_maps_keep_insertion_order() {
        let m = Map::from_pairs([
            (kw("b"), 1.into()),
            (kw("a"), 2.into()),
            (kw("b"), 3.into()),
        ]);
        let entries: Vec<_> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(entries, vec![(kw("b"), 3.into()), (kw("a"), 2.into())]);
    }

    #[test]
    fn growing_past_the_small_size_keeps_every_entry() {
        let mut m = Map::new();
        for i in 0..100i64 {
            m.assoc_mut(Value::Int(i), Value::Int(i * 2));
        }
        assert_eq!(m.len(), 100);
        assert_eq!(m.get(&Value::Int(77)), Some(&Value::Int(154)));
        let smaller = m.dissoc(&Value::Int(77));
        assert_eq!(smaller.len(), 99);
        assert_eq!(m.len(), 100, "dissoc leaves the original untouched");
    }

    fn ints(n: i64) -> Map {
        Map::from_pairs((0..n).map(|i| (Value::Int(i), Value::Int(i))))
    }

    #[test]
    fn copies_of_shared_small_maps_are_charged_until_dropped() {
        let before = meter::install(1 << 20, None, usize::MAX);
        let m = ints(4);
        // Its entries are charged by the builtin that builds it; its own allocation here.
        assert_eq!(meter::settle().copied, INNER_SLOTS);
        // A new key: a copy of the map (its values are inline) and a new key array of 5.
        let added = m.assoc(Value::Int(9), Value::Int(9));
        assert_eq!(meter::settle().copied, INNER_SLOTS + 6);
        // A new value: a copy of the map; the key array stays shared.
        let changed = added.assoc(Value::Int(1), Value::Int(7));
        assert_eq!(meter::settle().copied, INNER_SLOTS);
        // `changed` still holds the key array of `added`: only the copy itself is free.
        drop(added);
        assert_eq!(meter::settle().freed, INNER_SLOTS);
        drop(changed);
        assert_eq!(meter::settle().freed, INNER_SLOTS + 6);
        let removed = m.dissoc(&Value::Int(0));
        assert_eq!(meter::settle().copied, INNER_SLOTS + 4);
        drop(m);
        assert_eq!(meter::settle().freed, INNER_SLOTS);
        drop(removed);
        assert_eq!(meter::settle().freed, INNER_SLOTS + 4);
        // More values than fit inline: a copy copies them too.
        let wide = ints(INLINE_VALS as i64 + 2);
        assert_eq!(meter::settle().copied, INNER_SLOTS);
        let changed = wide.assoc(Value::Int(1), Value::Int(7));
        assert_eq!(meter::settle().copied, INNER_SLOTS + INLINE_VALS + 2);
        drop(changed);
        assert_eq!(meter::settle().freed, INNER_SLOTS + INLINE_VALS + 2);
        drop(wide);
        meter::restore(before);
    }

    #[test]
    fn changes_in_place_and_hash_map_entries_are_charged_as_they_grow() {
        let before = meter::install(1 << 20, None, usize::MAX);
        let mut m = ints(15);
        assert_eq!(meter::settle().copied, INNER_SLOTS);
        // In place: a new key array only.
        m.assoc_mut(Value::Int(15), Value::Int(15));
        assert_eq!(meter::settle().copied, 17);
        // Past the small size: every entry moves into a hash map, and the key array is freed.
        m.assoc_mut(Value::Int(16), Value::Int(16));
        let settled = meter::settle();
        assert_eq!((settled.copied, settled.freed), (17 * HASH_ENTRY_SLOTS, 17));
        m.assoc_mut(Value::Int(17), Value::Int(17));
        assert_eq!(meter::settle().copied, HASH_ENTRY_SLOTS);
        m.assoc_mut(Value::Int(17), Value::Int(0));
        assert_eq!(
            meter::settle().copied,
            0,
            "a new value for a key allocates no entry"
        );
        let built = ints(40);
        assert_eq!(meter::settle().copied, 40 * HASH_ENTRY_SLOTS + INNER_SLOTS);
        // A copy of a shared hash map: the new entry and the trie nodes on its path, two
        // levels for 41 entries.
        let path = 2 * HASH_SHAPE.node_slots;
        let mut copy = built.assoc(Value::Int(40), Value::Nil);
        assert_eq!(
            meter::settle().copied,
            INNER_SLOTS + HASH_ENTRY_SLOTS + path
        );
        // The copy still shares the other nodes with `built`: its next changes are charged too.
        copy.assoc_mut(Value::Int(0), Value::Nil);
        let removed = copy.dissoc(&Value::Int(1));
        assert_eq!(meter::settle().copied, path + INNER_SLOTS + path);
        drop((m, built, copy, removed));
        assert_eq!(meter::settle().freed, 4 * INNER_SLOTS + 3 * path);
        meter::restore(before);
        // Outside a run nothing is counted.
        let mut m = ints(16);
        m.assoc_mut(Value::Int(16), Value::Nil);
        let shared = m.clone();
        m.assoc_mut(Value::Int(0), Value::Nil);
        drop((m, shared));
        let settled = meter::settle();
        assert_eq!((settled.copied, settled.freed), (0, 0));
    }

    #[test]
    fn large_map_order_is_fixed_across_processes() {
        // A randomly seeded hash would make this order differ from run to run.
        let m = Map::from_pairs((0..40i64).map(|i| (Value::Int(i), Value::Nil)));
        let first: Vec<i64> = m.keys().take(8).map(|k| k.as_int().unwrap()).collect();
        let again = Map::from_pairs((0..40i64).map(|i| (Value::Int(i), Value::Nil)));
        let second: Vec<i64> = again.keys().take(8).map(|k| k.as_int().unwrap()).collect();
        assert_eq!(first, second);
        assert_eq!(first, vec![24, 31, 32, 33, 8, 9, 10, 16]);
    }
}
