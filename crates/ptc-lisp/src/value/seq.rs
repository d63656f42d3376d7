//! The items of lists and vectors, with their nesting depth.
//!
//! Most sequences are built once, in full, by a builtin (`map`, `filter`, a literal) and then
//! only read: those are a plain array (`Flat`), which costs nothing to build from a `Vec`. A
//! sequence that is changed while shared (`conj` onto a vector someone else still holds, `rest` of
//! a long list, `cons`) becomes a persistent RRB vector (`Tree`) once, so that building a
//! collection in a loop or walking it with `rest` stays linear instead of copying on every step.
//! A `Flat` sequence held by one owner is changed in place.

use super::{Map, Value, meter};
use std::sync::Arc;

type Tree = imbl::Vector<Value>;

/// Sequences up to this length are copied rather than converted to a tree when a shared one is
/// changed: copying a few words is cheaper than building tree nodes.
const COPY_LIMIT: usize = 32;

/// The items of a list or vector: persistent, so adding to a copy shares the rest.
#[derive(Clone)]
pub struct Seq(Arc<SeqInner>);

struct SeqInner {
    depth: u32,
    items: Items,
    /// Slots charged to the memory budget of a run for this sequence's own allocation, given
    /// back when it is dropped (see the map module).
    own: u32,
    /// Slots charged for this sequence's own copy of a short shared sequence's items, made to
    /// change it, or for the tree nodes it copied from a sequence it shares them with; given
    /// back when it is dropped.
    copied: u32,
    /// Metadata attached with `with-meta`; kept by `conj`, `assoc` and `pop`, not by `rest`.
    meta: Option<Map>,
}

/// A tree's shape: 64 items or children per node.
const TREE_SHAPE: meter::TreeShape = meter::TreeShape {
    fanout: 64,
    node_slots: 64,
    item_slots: 1,
};

/// Slots of a sequence's own allocation: its `Arc` and fields.
const INNER_SLOTS: usize = (std::mem::size_of::<SeqInner>() + 16).div_ceil(16);

impl SeqInner {
    /// A sequence made in a run is charged for its own allocation.
    fn new(depth: u32, items: Items) -> SeqInner {
        SeqInner {
            depth,
            items,
            own: meter::own(INNER_SLOTS),
            copied: 0,
            meta: None,
        }
    }
}

impl Drop for SeqInner {
    fn drop(&mut self) {
        let slots = self.own as usize + self.copied as usize;
        if slots > 0 {
            meter::note_free(slots);
        }
    }
}

#[derive(Clone)]
enum Items {
    Flat(Vec<Value>),
    Tree(Tree),
}

fn depth_of_items<'a>(items: impl IntoIterator<Item = &'a Value>) -> u32 {
    1 + items.into_iter().map(Value::depth).max().unwrap_or(0)
}

/// Dropping a deeply nested value recurses as deeply as it nests: every 16th level continues
/// where the stack can grow (see `value::nested`).
impl Drop for Seq {
    fn drop(&mut self) {
        if self.0.depth.is_multiple_of(16) && Arc::strong_count(&self.0) == 1 {
            static EMPTY: std::sync::OnceLock<Arc<SeqInner>> = std::sync::OnceLock::new();
            let empty = EMPTY
                .get_or_init(|| {
                    Arc::new(SeqInner {
                        depth: 1,
                        items: Items::Flat(Vec::new()),
                        own: 0,
                        copied: 0,
                        meta: None,
                    })
                })
                .clone();
            let inner = std::mem::replace(&mut self.0, empty);
            super::with_stack_room(move || drop(inner));
        }
    }
}

impl Seq {
    /// No items.
    pub fn new() -> Seq {
        Seq(Arc::new(SeqInner::new(1, Items::Flat(Vec::new()))))
    }

    pub(crate) fn depth(&self) -> u32 {
        self.0.depth
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        match &self.0.items {
            Items::Flat(v) => v.len(),
            Items::Tree(t) => t.len(),
        }
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The item at `index`.
    #[inline]
    pub fn get(&self, index: usize) -> Option<&Value> {
        match &self.0.items {
            Items::Flat(v) => v.get(index),
            Items::Tree(t) => t.get(index),
        }
    }

    /// The first item.
    pub fn first(&self) -> Option<&Value> {
        self.get(0)
    }

    /// The last item.
    pub fn last(&self) -> Option<&Value> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// The items, in order.
    pub fn iter(&self) -> SeqIter<'_> {
        SeqIter(match &self.0.items {
            Items::Flat(v) => SeqIterInner::Flat(v.iter()),
            Items::Tree(t) => SeqIterInner::Tree(t.iter()),
        })
    }

    /// The metadata attached with `with-meta`, if any.
    #[inline]
    pub fn meta(&self) -> Option<&Map> {
        self.0.meta.as_ref()
    }

    /// The same items carrying `meta` instead: a copy, as a change of a shared sequence is.
    pub(crate) fn with_meta(&self, meta: Option<Map>) -> Seq {
        let mut out = self.clone();
        if self.0.meta.is_some() || meta.is_some() {
            let inner = out.inner_mut();
            // The metadata is freed with the sequence, so it counts in its nesting depth.
            inner.depth = inner.depth.max(meta.as_ref().map_or(0, |m| 1 + m.depth()));
            inner.meta = meta;
        }
        out
    }

    /// The same items without metadata (what `vec` and `seq` of a vector give).
    pub(crate) fn without_meta(&self) -> Seq {
        self.with_meta(None)
    }

    /// Whether the two share one allocation (then they are equal without looking inside).
    pub fn ptr_eq(&self, other: &Seq) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// This sequence to change: in place when this is the only owner; otherwise a copy (short)
    /// or a persistent tree (long), so that repeated changes stay cheap. In a run the copy is
    /// charged to the memory budget, the tree's nodes are charged once as it is built, and the
    /// nodes a tree copies when it is changed while shared are charged as `items_mut` changes
    /// it (see `meter::charge_path_copy`).
    fn inner_mut(&mut self) -> &mut SeqInner {
        if Arc::strong_count(&self.0) > 1 {
            let depth = self.0.depth;
            let (items, copied) = match &self.0.items {
                Items::Flat(v) if v.len() > COPY_LIMIT => {
                    meter::note_copy(v.len());
                    (Items::Tree(v.iter().cloned().collect()), 0)
                }
                Items::Flat(v) => {
                    // Room for the item about to be added, so that the copy is not grown again.
                    let mut copy = Vec::with_capacity(v.len() + 1);
                    copy.extend_from_slice(v);
                    (Items::Flat(copy), meter::own_copy(v.len()))
                }
                Items::Tree(t) => (
                    Items::Tree(t.clone()),
                    meter::charge_path_copy(0, true, t.len(), TREE_SHAPE),
                ),
            };
            let mut inner = SeqInner::new(depth, items);
            inner.copied = copied;
            inner.meta = self.0.meta.clone();
            self.0 = Arc::new(inner);
        }
        Arc::get_mut(&mut self.0).expect("a sequence held once")
    }

    fn items_mut(&mut self) -> &mut Items {
        let fresh_copy = Arc::strong_count(&self.0) > 1;
        let inner = self.inner_mut();
        if let Items::Tree(t) = &inner.items
            && !fresh_copy
        {
            inner.copied = meter::charge_path_copy(inner.copied, false, t.len(), TREE_SHAPE);
        }
        &mut inner.items
    }

    fn note_depth(&mut self, item: &Value) {
        let depth = item.depth() + 1;
        if depth > self.0.depth {
            self.inner_mut().depth = depth;
        }
    }

    pub(crate) fn push_back(&mut self, item: Value) {
        self.note_depth(&item);
        match self.items_mut() {
            Items::Flat(v) => v.push(item),
            Items::Tree(t) => t.push_back(item),
        }
    }

    /// Remove the last item (`pop` of a vector, which keeps the metadata).
    pub(crate) fn pop_back(&mut self) {
        match self.items_mut() {
            Items::Flat(v) => {
                v.pop();
            }
            Items::Tree(t) => {
                t.pop_back();
            }
        }
    }

    pub(crate) fn push_front(&mut self, item: Value) {
        self.note_depth(&item);
        let items = self.items_mut();
        if let Items::Flat(v) = items
            && v.len() > COPY_LIMIT
        {
            *items = Items::Tree(std::mem::take(v).into_iter().collect());
        }
        match items {
            Items::Flat(v) => v.insert(0, item),
            Items::Tree(t) => t.push_front(item),
        }
    }

    pub(crate) fn set(&mut self, index: usize, item: Value) {
        self.note_depth(&item);
        match self.items_mut() {
            Items::Flat(v) => v[index] = item,
            Items::Tree(t) => {
                t.set(index, item);
            }
        }
    }

    /// Items `start..end` (clamped to the length), sharing structure with `self` when long.
    pub(crate) fn slice(&self, start: usize, end: usize) -> Seq {
        let len = self.len();
        let (start, end) = (start.min(len), end.min(len).max(start.min(len)));
        if start == 0 && end == len {
            return self.clone();
        }
        let mut copied = 0;
        let items = match &self.0.items {
            Items::Flat(v) if end - start <= COPY_LIMIT => {
                copied = meter::own_copy(end - start);
                Items::Flat(v[start..end].to_vec())
            }
            Items::Flat(v) => {
                // `rest` in a loop would copy on every step; a tree is sliced in O(log n).
                meter::note_copy(v.len());
                let mut tree: Tree = v.iter().cloned().collect();
                let mut tail = tree.split_off(start);
                tail.truncate(end - start);
                Items::Tree(tail)
            }
            Items::Tree(t) => {
                let mut tail = t.clone().split_off(start);
                tail.truncate(end - start);
                copied = meter::charge_path_copy(0, true, t.len(), TREE_SHAPE);
                Items::Tree(tail)
            }
        };
        let mut inner = SeqInner::new(self.0.depth, items);
        inner.copied = copied;
        Seq(Arc::new(inner))
    }
}

impl Default for Seq {
    fn default() -> Seq {
        Seq::new()
    }
}

impl std::ops::Index<usize> for Seq {
    type Output = Value;
    fn index(&self, index: usize) -> &Value {
        self.get(index).expect("index within the sequence")
    }
}

impl FromIterator<Value> for Seq {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Seq {
        Seq::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl From<Vec<Value>> for Seq {
    fn from(items: Vec<Value>) -> Seq {
        Seq(Arc::new(SeqInner::new(
            depth_of_items(&items),
            Items::Flat(items),
        )))
    }
}

impl Seq {
    /// A flat sequence of items picked from the collection `source` (what `filter` or
    /// `group-by` keeps). Its depth is taken from the source rather than found by looking at every
    /// item again: an upper bound, which is all that depth is used for (when nested work moves to
    /// a fresh stack, and whether a value nests too deeply, which the source already passed).
    pub(crate) fn picked_from(items: Vec<Value>, source: &Value) -> Seq {
        let depth = match source {
            _ if items.is_empty() => 1,
            Value::List(s) | Value::Vector(s) => s.depth(),
            Value::Set(s) => s.depth(),
            _ => return Seq::from(items),
        };
        Seq(Arc::new(SeqInner::new(depth, Items::Flat(items))))
    }
}

impl<'a> IntoIterator for &'a Seq {
    type Item = &'a Value;
    type IntoIter = SeqIter<'a>;
    fn into_iter(self) -> SeqIter<'a> {
        self.iter()
    }
}

/// Iterator over the items of a [`Seq`].
/// The items of a list or vector, in order.
pub struct SeqIter<'a>(SeqIterInner<'a>);

enum SeqIterInner<'a> {
    Flat(std::slice::Iter<'a, Value>),
    Tree(imbl::vector::Iter<'a, Value, imbl::shared_ptr::DefaultSharedPtr>),
}

impl<'a> Iterator for SeqIter<'a> {
    type Item = &'a Value;

    #[inline]
    fn next(&mut self) -> Option<&'a Value> {
        match &mut self.0 {
            SeqIterInner::Flat(it) => it.next(),
            SeqIterInner::Tree(it) => it.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            SeqIterInner::Flat(it) => it.size_hint(),
            SeqIterInner::Tree(it) => it.size_hint(),
        }
    }
}

impl DoubleEndedIterator for SeqIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            SeqIterInner::Flat(it) => it.next_back(),
            SeqIterInner::Tree(it) => it.next_back(),
        }
    }
}

impl ExactSizeIterator for SeqIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_tracks_nesting() {
        let flat: Seq = vec![Value::Int(1)].into();
        assert_eq!(flat.depth(), 1);
        let mut outer = Seq::new();
        outer.push_back(Value::Vector(flat.clone()));
        assert_eq!(outer.depth(), 2);
        assert_eq!(outer.slice(0, 1).len(), 1);
        assert_eq!(flat.slice(1, 5).len(), 0);
    }

    #[test]
    fn picked_items_are_bounded_by_their_sources_depth() {
        let source = Value::vector([Value::vector([Value::Int(1)]), Value::Int(2)]);
        assert_eq!(Seq::picked_from(vec![Value::Int(2)], &source).depth(), 2);
        assert_eq!(Seq::picked_from(Vec::new(), &source).depth(), 1);
        let entries = Value::Map(crate::value::Map::new());
        assert_eq!(Seq::picked_from(vec![Value::Int(2)], &entries).depth(), 1);
    }

    #[test]
    fn shared_sequences_are_never_changed() {
        let original: Seq = (0..100i64).map(Value::Int).collect();
        let mut changed = original.clone();
        changed.push_back(Value::Int(100));
        changed.set(0, Value::Nil);
        changed.push_front(Value::Int(-1));
        assert_eq!(original.len(), 100);
        assert_eq!(original.get(0), Some(&Value::Int(0)));
        assert_eq!(changed.len(), 102);
        assert_eq!(changed.get(1), Some(&Value::Nil));
        let rest = original.slice(1, 100);
        assert_eq!(rest.first(), Some(&Value::Int(1)));
        assert_eq!(rest.iter().next_back(), Some(&Value::Int(99)));
    }

    #[test]
    fn copies_of_short_shared_sequences_are_charged_until_dropped() {
        let ints = |n: i64| (0..n).map(Value::Int).collect::<Seq>();
        let before = meter::install(1 << 20, None, usize::MAX);
        let short = ints(10);
        assert_eq!(meter::settle().copied, INNER_SLOTS);
        let mut changed = short.clone();
        changed.push_back(Value::Nil);
        changed.push_back(Value::Nil);
        // One copy, of the ten items there were, made for the first change.
        assert_eq!(meter::settle().copied, INNER_SLOTS + 10);
        let sliced = short.slice(2, 5);
        assert_eq!(meter::settle().copied, INNER_SLOTS + 3);
        drop((changed, sliced));
        assert_eq!(meter::settle().freed, 2 * INNER_SLOTS + 13);
        // A long one becomes a tree, whose nodes are charged once and not given back.
        let long = ints(100);
        let mut grown = long.clone();
        grown.push_back(Value::Nil);
        assert_eq!(meter::settle().copied, 2 * INNER_SLOTS + 100);
        // Changing a shared tree copies the nodes on the path to the change: two levels of 64
        // for 101 items. Later changes of the copy are charged until the charges reach the
        // cost of the whole tree, which this first one already passes.
        let path = 2 * TREE_SHAPE.node_slots;
        let mut changed_tree = grown.clone();
        changed_tree.set(0, Value::Nil);
        changed_tree.set(1, Value::Nil);
        assert_eq!(meter::settle().copied, INNER_SLOTS + path);
        let rest = grown.slice(1, 101);
        assert_eq!(meter::settle().copied, INNER_SLOTS + path);
        drop((short, long, grown, changed_tree, rest));
        assert_eq!(meter::settle().freed, 5 * INNER_SLOTS + 2 * path);
        meter::restore(before);
    }
}
