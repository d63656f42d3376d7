//! The persistent vector behind lists and vectors, with its nesting depth.

use super::{Value, Vector};
use std::sync::Arc;

/// Items of a list or vector. Reads go through `Deref` to [`imbl::Vector`]; updates copy only the
/// path to the changed element when the items are shared.
#[derive(Clone)]
pub struct Seq(Arc<SeqInner>);

#[derive(Clone)]
struct SeqInner {
    depth: u32,
    items: Vector,
}

fn depth_of_items<'a>(items: impl IntoIterator<Item = &'a Value>) -> u32 {
    1 + items.into_iter().map(Value::depth).max().unwrap_or(0)
}

impl Seq {
    pub fn new() -> Seq {
        Seq(Arc::new(SeqInner {
            depth: 1,
            items: Vector::new(),
        }))
    }

    pub fn from_vector(items: Vector) -> Seq {
        let depth = depth_of_items(items.iter());
        Seq(Arc::new(SeqInner { depth, items }))
    }

    pub fn depth(&self) -> u32 {
        self.0.depth
    }

    pub fn items(&self) -> &Vector {
        &self.0.items
    }

    pub fn ptr_eq(&self, other: &Seq) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    pub fn push_back(&mut self, item: Value) {
        let inner = Arc::make_mut(&mut self.0);
        inner.depth = inner.depth.max(item.depth() + 1);
        inner.items.push_back(item);
    }

    pub fn push_front(&mut self, item: Value) {
        let inner = Arc::make_mut(&mut self.0);
        inner.depth = inner.depth.max(item.depth() + 1);
        inner.items.push_front(item);
    }

    pub fn set(&mut self, index: usize, item: Value) {
        let inner = Arc::make_mut(&mut self.0);
        inner.depth = inner.depth.max(item.depth() + 1);
        inner.items.set(index, item);
    }

    pub fn pop_back(&mut self) -> Option<Value> {
        Arc::make_mut(&mut self.0).items.pop_back()
    }

    pub fn pop_front(&mut self) -> Option<Value> {
        Arc::make_mut(&mut self.0).items.pop_front()
    }

    /// Items `start..end` (clamped to the length).
    pub fn slice(&self, start: usize, end: usize) -> Seq {
        let len = self.len();
        let (start, end) = (start.min(len), end.min(len).max(start.min(len)));
        if start == 0 && end == len {
            return self.clone();
        }
        let mut items = self.0.items.clone();
        let mut tail = items.split_off(start);
        tail.truncate(end - start);
        Seq(Arc::new(SeqInner {
            depth: self.0.depth,
            items: tail,
        }))
    }

    pub fn append(&mut self, other: &Seq) {
        let inner = Arc::make_mut(&mut self.0);
        inner.depth = inner.depth.max(other.depth());
        inner.items.append(other.0.items.clone());
    }
}

impl Default for Seq {
    fn default() -> Seq {
        Seq::new()
    }
}

impl std::ops::Deref for Seq {
    type Target = Vector;
    fn deref(&self) -> &Vector {
        &self.0.items
    }
}

impl FromIterator<Value> for Seq {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Seq {
        let mut depth = 1;
        let items: Vector = iter
            .into_iter()
            .inspect(|v| depth = depth.max(v.depth() + 1))
            .collect();
        Seq(Arc::new(SeqInner { depth, items }))
    }
}

impl From<Vec<Value>> for Seq {
    fn from(items: Vec<Value>) -> Seq {
        items.into_iter().collect()
    }
}

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
}
