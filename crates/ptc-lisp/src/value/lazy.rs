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
pub struct LazySeq(Arc<LazyNode>);

/// A sequence's kind and how deeply values nest inside its sources (see [`Value::depth`]): a
/// sequence made from a sequence made from a sequence ... is walked recursively when realized,
/// so its nesting is bounded like a collection's.
struct LazyNode {
    kind: LazyKind,
    depth: u32,
}

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

impl LazyKind {
    fn depth(&self) -> u32 {
        let values: Vec<&Value> = match self {
            LazyKind::Range { start, step } => vec![start, step],
            LazyKind::Repeat(x) => vec![x],
            LazyKind::Cycle(_) => Vec::new(),
            LazyKind::Iterate { f, seed } => vec![f, seed],
            LazyKind::Map { f, .. }
            | LazyKind::Keep { f, .. }
            | LazyKind::MapIndexed { f, .. }
            | LazyKind::MapCat { f, .. }
            | LazyKind::KeepIndexed { f, .. } => vec![f],
            LazyKind::Filter { pred, .. } | LazyKind::DropWhile { pred, .. } => vec![pred],
            LazyKind::Reductions { f, init, .. } => std::iter::once(f).chain(init).collect(),
            LazyKind::Interpose { sep, .. } => vec![sep],
            LazyKind::For(lazy) => lazy.frame.iter().chain(lazy.captures.iter()).collect(),
            LazyKind::Drop { .. }
            | LazyKind::Concat { .. }
            | LazyKind::Interleave(_)
            | LazyKind::TakeNth { .. }
            | LazyKind::Partition { .. }
            | LazyKind::Distinct(_)
            | LazyKind::Dedupe(_) => Vec::new(),
        };
        let sources: Vec<&LazySeq> = match self {
            LazyKind::Map { sources, .. } | LazyKind::Interleave(sources) => {
                sources.iter().collect()
            }
            LazyKind::Filter { source, .. }
            | LazyKind::Keep { source, .. }
            | LazyKind::MapIndexed { source, .. }
            | LazyKind::Drop { source, .. }
            | LazyKind::Concat { source, .. }
            | LazyKind::MapCat { source, .. }
            | LazyKind::KeepIndexed { source, .. }
            | LazyKind::TakeNth { source, .. }
            | LazyKind::DropWhile { source, .. }
            | LazyKind::Partition { source, .. }
            | LazyKind::Reductions { source, .. }
            | LazyKind::Interpose { source, .. } => vec![source],
            LazyKind::Distinct(source) | LazyKind::Dedupe(source) => vec![source],
            LazyKind::For(lazy) => vec![&lazy.source],
            LazyKind::Range { .. }
            | LazyKind::Repeat(_)
            | LazyKind::Cycle(_)
            | LazyKind::Iterate { .. } => Vec::new(),
        };
        let prefix = match self {
            LazyKind::Cycle(items) | LazyKind::Concat { prefix: items, .. } => items.depth(),
            _ => 0,
        };
        1 + values
            .into_iter()
            .map(Value::depth)
            .chain(sources.into_iter().map(LazySeq::depth))
            .chain(std::iter::once(prefix))
            .max()
            .unwrap_or(0)
    }
}

impl LazySeq {
    pub fn new(kind: LazyKind) -> LazySeq {
        let depth = kind.depth();
        LazySeq(Arc::new(LazyNode { kind, depth }))
    }

    /// How deeply values nest inside the sequence's sources and functions, plus one.
    pub fn depth(&self) -> u32 {
        self.0.depth
    }

    pub fn kind(&self) -> &LazyKind {
        &self.0.kind
    }

    pub fn ptr_eq(&self, other: &LazySeq) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    pub(crate) fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as *const () as usize
    }

    /// How the sequence was made, for printing (`(range)`, `(iterate ...)`).
    pub fn describe(&self) -> &'static str {
        match &self.0.kind {
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
