//! Unbounded sequences.
//!
//! Finite sequences are always realized eagerly (a PTC-Lisp `map` over a vector returns a list at
//! once). Only sequences without an end are lazy: a [`LazySeq`] describes how to produce its
//! elements and is consumed element by element by `take`, `take-while`, `first`, `nth` and
//! friends. Anything that would realize all of it (`count`, `vec`, `reduce`, printing in full)
//! stops with a clean error instead of running until a limit.

use super::{Seq, Value};
use std::sync::Arc;

#[derive(Clone)]
pub struct LazySeq(pub Arc<LazyKind>);

/// How the elements of an unbounded sequence are produced.
pub enum LazyKind {
    /// `(range)`, `(range start)`: start, start+step, ... (numbers).
    Range { start: Value, step: Value },
    /// `(repeat x)`.
    Repeat(Value),
    /// `(cycle coll)` over a non-empty finite collection.
    Cycle(Seq),
    /// `(iterate f x)`: x, (f x), (f (f x)), ...
    Iterate { f: Value, seed: Value },
    /// `(map f s1 s2 ...)` where every source is unbounded.
    Map { f: Value, sources: Vec<LazySeq> },
    /// `(filter pred s)` (`keep = true`) or `(remove pred s)` (`keep = false`).
    Filter {
        pred: Value,
        source: LazySeq,
        keep: bool,
    },
    /// `(keep f s)`: the non-nil results of `f`.
    Keep { f: Value, source: LazySeq },
    /// `(map-indexed f s)`.
    MapIndexed { f: Value, source: LazySeq },
    /// `(drop n s)`.
    Drop { n: usize, source: LazySeq },
    /// `(concat finite... s)`: the items of `prefix`, then `source`.
    Concat { prefix: Seq, source: LazySeq },
    /// `(interleave s1 s2 ...)`.
    Interleave(Vec<LazySeq>),
    /// `(mapcat f s)`: the items of each (finite) collection `f` returns.
    MapCat { f: Value, source: LazySeq },
    /// `(keep-indexed f s)`.
    KeepIndexed { f: Value, source: LazySeq },
    /// `(take-nth n s)`.
    TakeNth { n: usize, source: LazySeq },
    /// `(drop-while pred s)`.
    DropWhile { pred: Value, source: LazySeq },
    /// `(partition n step s)` or `(partition-all n step s)` (alike: an unbounded source never
    /// leaves a short last part): lists of `n` items, starting every `step` items.
    Partition {
        n: usize,
        step: usize,
        source: LazySeq,
    },
    /// `(distinct s)`.
    Distinct(LazySeq),
    /// `(dedupe s)`.
    Dedupe(LazySeq),
    /// `(reductions f s)` or `(reductions f init s)`.
    Reductions {
        f: Value,
        init: Option<Value>,
        source: LazySeq,
    },
    /// `(interpose sep s)`.
    Interpose { sep: Value, source: LazySeq },
    /// `(for [x s ...] ...)` over an unbounded first sequence.
    For(Arc<crate::eval::LazyFor>),
}

impl LazySeq {
    pub fn new(kind: LazyKind) -> LazySeq {
        LazySeq(Arc::new(kind))
    }

    pub fn kind(&self) -> &LazyKind {
        &self.0
    }

    pub fn ptr_eq(&self, other: &LazySeq) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    pub(crate) fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as *const () as usize
    }

    /// How the sequence was made, for printing (`(range)`, `(iterate ...)`).
    pub fn describe(&self) -> &'static str {
        match &*self.0 {
            LazyKind::Range { .. } => "range",
            LazyKind::Repeat(_) => "repeat",
            LazyKind::Cycle(_) => "cycle",
            LazyKind::Iterate { .. } => "iterate",
            LazyKind::Map { .. } => "map",
            LazyKind::Filter { keep: true, .. } => "filter",
            LazyKind::Filter { keep: false, .. } => "remove",
            LazyKind::Keep { .. } => "keep",
            LazyKind::MapIndexed { .. } => "map-indexed",
            LazyKind::Drop { .. } => "drop",
            LazyKind::Concat { .. } => "concat",
            LazyKind::Interleave(_) => "interleave",
            LazyKind::MapCat { .. } => "mapcat",
            LazyKind::KeepIndexed { .. } => "keep-indexed",
            LazyKind::TakeNth { .. } => "take-nth",
            LazyKind::DropWhile { .. } => "drop-while",
            LazyKind::Partition { .. } => "partition",
            LazyKind::Distinct(_) => "distinct",
            LazyKind::Dedupe(_) => "dedupe",
            LazyKind::Reductions { .. } => "reductions",
            LazyKind::Interpose { .. } => "interpose",
            LazyKind::For(_) => "for",
        }
    }
}
