//! Persistent maps with deterministic iteration order.
//!
//! Up to [`SMALL_MAP_MAX`] entries a map is a key array and a value array in insertion order (keys
//! arrays are shared between maps of the same shape, so ten thousand JSON records with the same
//! fields store their key list once). Larger maps are hash array mapped tries keyed by a fixed,
//! seedless hash, so their order is the same in every process. Sorted maps are B-trees.

use super::{Value, hash_value};
use imbl::shared_ptr::DefaultSharedPtr;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

/// Largest map kept in the insertion-ordered small representation.
pub const SMALL_MAP_MAX: usize = 16;

type FxBuild = BuildHasherDefault<rustc_hash::FxHasher>;
type HashRepr = imbl::GenericHashMap<Value, Value, FxBuild, DefaultSharedPtr>;
type SortedRepr = imbl::OrdMap<Value, Value>;

#[derive(Clone)]
pub struct Map(Arc<MapInner>);

#[derive(Clone)]
struct MapInner {
    /// 1 + the deepest key or value (an upper bound after `dissoc`).
    depth: u32,
    repr: MapRepr,
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
                            vals: Box::new([]),
                        },
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
        Map(Arc::new(MapInner { depth, repr }))
    }

    pub fn depth(&self) -> u32 {
        self.0.depth
    }
}

#[derive(Clone)]
enum MapRepr {
    Small {
        keys: Arc<[Value]>,
        vals: Box<[Value]>,
    },
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
    pub fn new() -> Map {
        Map::of(MapRepr::Small {
            keys: empty_keys(),
            vals: Box::new([]),
        })
    }

    /// An empty sorted map (`sorted-map`).
    pub fn new_sorted() -> Map {
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
    pub fn from_shape(keys: Arc<[Value]>, vals: Vec<Value>) -> Map {
        debug_assert_eq!(keys.len(), vals.len());
        if keys.len() <= SMALL_MAP_MAX {
            Map::of(MapRepr::Small {
                keys,
                vals: vals.into_boxed_slice(),
            })
        } else {
            Map::from_pairs(keys.iter().cloned().zip(vals))
        }
    }

    pub fn len(&self) -> usize {
        match &self.0.repr {
            MapRepr::Small { keys, .. } => keys.len(),
            MapRepr::Hash(m) => m.len(),
            MapRepr::Sorted(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_sorted(&self) -> bool {
        matches!(&self.0.repr, MapRepr::Sorted(_))
    }

    #[inline]
    pub fn get(&self, key: &Value) -> Option<&Value> {
        match &self.0.repr {
            MapRepr::Small { keys, vals } => small_index(keys, key).map(|i| &vals[i]),
            MapRepr::Hash(m) => m.get(key),
            MapRepr::Sorted(m) => m.get(key),
        }
    }

    /// `get` for a call site that looks up the same key in many maps: `hint` remembers where the
    /// key was last found in a small map and is checked first.
    #[inline]
    pub fn get_hinted(&self, key: &Value, hint: &std::sync::atomic::AtomicU8) -> Option<&Value> {
        use std::sync::atomic::Ordering::Relaxed;
        match &self.0.repr {
            MapRepr::Small { keys, vals } => {
                let guess = hint.load(Relaxed) as usize;
                if let (Some(Value::Keyword(k)), Value::Keyword(want)) = (keys.get(guess), key)
                    && arcstr::ArcStr::ptr_eq(k.arc(), want.arc())
                {
                    return Some(&vals[guess]);
                }
                let i = small_index(keys, key)?;
                hint.store(i as u8, Relaxed);
                Some(&vals[i])
            }
            _ => self.get(key),
        }
    }

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
    pub fn assoc_mut(&mut self, key: Value, value: Value) {
        let inner = Arc::make_mut(&mut self.0);
        inner.depth = inner.depth.max(1 + key.depth().max(value.depth()));
        let repr = &mut inner.repr;
        match repr {
            MapRepr::Small { keys, vals } => {
                if let Some(i) = small_index(keys, &key) {
                    vals[i] = value;
                } else if keys.len() < SMALL_MAP_MAX {
                    let mut new_keys = Vec::with_capacity(keys.len() + 1);
                    new_keys.extend(keys.iter().cloned());
                    new_keys.push(key);
                    let mut new_vals = std::mem::take(vals).into_vec();
                    new_vals.push(value);
                    *keys = Arc::from(new_keys);
                    *vals = new_vals.into_boxed_slice();
                } else {
                    let mut m = HashRepr::default();
                    for (k, v) in keys.iter().cloned().zip(std::mem::take(vals).into_vec()) {
                        m.insert(k, v);
                    }
                    m.insert(key, value);
                    *repr = MapRepr::Hash(m);
                }
            }
            MapRepr::Hash(m) => {
                m.insert(key, value);
            }
            MapRepr::Sorted(m) => {
                m.insert(key, value);
            }
        }
    }

    /// A new map without `key`.
    pub fn dissoc(&self, key: &Value) -> Map {
        if !self.contains_key(key) {
            return self.clone();
        }
        let mut out = self.clone();
        match &mut Arc::make_mut(&mut out.0).repr {
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
                *vals = new_vals.into_boxed_slice();
            }
            MapRepr::Hash(m) => {
                m.remove(key);
            }
            MapRepr::Sorted(m) => {
                m.remove(key);
            }
        }
        out
    }

    /// An empty map of the same kind (sorted stays sorted).
    pub fn empty_like(&self) -> Map {
        if self.is_sorted() {
            Map::new_sorted()
        } else {
            Map::new()
        }
    }

    pub fn iter(&self) -> MapIter<'_> {
        match &self.0.repr {
            MapRepr::Small { keys, vals } => MapIter::Small(keys.iter().zip(vals.iter())),
            MapRepr::Hash(m) => MapIter::Hash(m.iter()),
            MapRepr::Sorted(m) => MapIter::Sorted(m.iter()),
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &Value> {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.iter().map(|(_, v)| v)
    }

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

pub enum MapIter<'a> {
    Small(std::iter::Zip<std::slice::Iter<'a, Value>, std::slice::Iter<'a, Value>>),
    Hash(imbl::hashmap::Iter<'a, Value, Value, DefaultSharedPtr>),
    Sorted(imbl::ordmap::Iter<'a, Value, Value, DefaultSharedPtr>),
}

impl<'a> Iterator for MapIter<'a> {
    type Item = (&'a Value, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            MapIter::Small(it) => it.next(),
            MapIter::Hash(it) => it.next(),
            MapIter::Sorted(it) => it.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            MapIter::Small(it) => it.size_hint(),
            MapIter::Hash(it) => it.size_hint(),
            MapIter::Sorted(it) => it.size_hint(),
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
    pub fn new() -> MapBuilder {
        MapBuilder::default()
    }

    pub fn insert(&mut self, key: Value, value: Value) {
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

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn build(self) -> Map {
        if self.keys.len() <= SMALL_MAP_MAX {
            Map::of(MapRepr::Small {
                keys: Arc::from(self.keys),
                vals: self.vals.into_boxed_slice(),
            })
        } else {
            let mut m = HashRepr::default();
            for (k, v) in self.keys.into_iter().zip(self.vals) {
                m.insert(k, v);
            }
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
