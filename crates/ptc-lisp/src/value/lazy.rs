//! Lazy sequences.
//!
//! Finite sequences are realized eagerly (a PTC-Lisp `map` over a vector returns a list at once).
//! Lazy are the sequences without an end and the ranges too long to hold in memory: a [`LazySeq`]
//! describes how to produce its elements and is consumed element by element by `take`,
//! `take-while`, `first`, `nth` and friends. Realizing all of an unbounded sequence (`count`,
//! `vec`, `reduce`, ...) stops with a clean limit error instead of running until a limit; a
//! bounded one is walked like any collection, within the step and memory budgets.

use super::{Seq, Value};
use std::any::Any;
use std::sync::Arc;

/// A lazy sequence: an unbounded one (`(range)`, `(iterate f x)`, ...) or a range too long to
/// realize at once, realized only as far as a program consumes it.
#[derive(Clone)]
pub struct LazySeq(Arc<LazyNode>);

/// A sequence's kind and how deeply values nest inside its sources (see [`Value::depth`]): a
/// sequence made from a sequence made from a sequence ... is walked recursively when realized,
/// so its nesting is bounded like a collection's.
struct LazyNode {
    kind: LazyKind,
    depth: u32,
    /// Whether the sequence ends (see [`LazySeq::is_bounded`]).
    bounded: bool,
}

/// How the elements of a lazy sequence are produced.
pub enum LazyKind {
    /// `(range)`: start, start+step, ... (numbers), without end; or a range with an end whose
    /// items are too many to realize at once (`(range 100000000000)`).
    Range {
        start: Value,
        step: Value,
        end: Option<RangeEnd>,
    },
    /// `(repeat x)`.
    Repeat(Value),
    /// `(repeat n x)` with more items than memory could hold: `n` copies of x, made as taken.
    RepeatCount(Value, u64),
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
    /// `(partition n step s)` (`all = false`: a short last part is left out) or
    /// `(partition-all n step s)`: lists of `n` items, starting every `step` items.
    Partition {
        n: usize,
        step: usize,
        all: bool,
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
    /// `(for [x s ...] ...)` over a lazy first sequence.
    For(ForSeq),
    /// A lazy sequence read back from its printed form `#lazy-seq[range]` (a value stored in a
    /// serialized step): it prints as it was printed and cannot produce items.
    Unrealized(arcstr::ArcStr),
}

/// A `for` over a lazy first sequence: the items of `source`, each run through the rest of the
/// `for`, whose clauses and environment the evaluator keeps in `state`.
#[derive(Clone)]
pub struct ForSeq {
    source: LazySeq,
    /// How deeply values nest inside the values `state` holds.
    held_depth: u32,
    state: Arc<dyn Any + Send + Sync>,
}

impl ForSeq {
    /// A `for` over `source` whose evaluator state is `state`, holding values nested
    /// `held_depth` deep.
    pub(crate) fn new(source: LazySeq, held_depth: u32, state: impl Any + Send + Sync) -> ForSeq {
        ForSeq {
            source,
            held_depth,
            state: Arc::new(state),
        }
    }

    /// The sequence the `for` walks.
    pub(crate) fn source(&self) -> &LazySeq {
        &self.source
    }

    /// The evaluator state, if it is a `T`.
    pub(crate) fn state<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.state.clone().downcast::<T>().ok()
    }
}

/// Where a lazy range with an end stops.
#[derive(Clone, Debug, PartialEq)]
pub enum RangeEnd {
    /// Integer ranges: exactly this many items, counted without overflow.
    Count(u64),
    /// Ranges of other numbers (floats, ratios, big numbers): up to, not including, this bound
    /// (below it for a positive step, above it for a negative one); items are accumulated by
    /// adding the step, as Clojure does.
    Below(Value),
}

impl LazyKind {
    fn depth(&self) -> u32 {
        let values: Vec<&Value> = match self {
            LazyKind::Range { start, step, .. } => vec![start, step],
            LazyKind::Repeat(x) | LazyKind::RepeatCount(x, _) => vec![x],
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
            LazyKind::Drop { .. }
            | LazyKind::For(_)
            | LazyKind::Unrealized(_)
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
            | LazyKind::RepeatCount(..)
            | LazyKind::Cycle(_)
            | LazyKind::Iterate { .. }
            | LazyKind::Unrealized(_) => Vec::new(),
        };
        let prefix = match self {
            LazyKind::Cycle(items) | LazyKind::Concat { prefix: items, .. } => items.depth(),
            LazyKind::For(lazy) => lazy.held_depth,
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

    /// Whether the sequence ends: a range with an end, and what is made from one (a `map` over
    /// several sources ends with the shortest).
    fn bounded(&self) -> bool {
        match self {
            LazyKind::Range { end, .. } => end.is_some(),
            LazyKind::RepeatCount(..) => true,
            LazyKind::Repeat(_)
            | LazyKind::Cycle(_)
            | LazyKind::Iterate { .. }
            | LazyKind::Unrealized(_) => false,
            LazyKind::Map { sources, .. } | LazyKind::Interleave(sources) => {
                sources.iter().any(LazySeq::is_bounded)
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
            | LazyKind::Interpose { source, .. }
            | LazyKind::Distinct(source)
            | LazyKind::Dedupe(source) => source.is_bounded(),
            LazyKind::For(lazy) => lazy.source.is_bounded(),
        }
    }
}

impl LazySeq {
    pub(crate) fn new(kind: LazyKind) -> LazySeq {
        let depth = kind.depth();
        let bounded = kind.bounded();
        LazySeq(Arc::new(LazyNode {
            kind,
            depth,
            bounded,
        }))
    }

    /// Whether the sequence has an end: a range too long to realize at once, or a sequence
    /// made from one. Unbounded sequences (`(range)`, `iterate`, `repeat`, `cycle`) never end,
    /// so whatever must see all their items refuses them.
    pub fn is_bounded(&self) -> bool {
        self.0.bounded
    }

    /// Whether every item asked for comes (unless producing it fails): an unbounded sequence
    /// that neither skips items (`filter`, `keep`, `distinct`, ...) nor may stop (`reductions`
    /// on a `reduced`). `(take n s)` of such a sequence has exactly n items.
    pub(crate) fn is_endless(&self) -> bool {
        match &self.0.kind {
            LazyKind::Range { end, .. } => end.is_none(),
            LazyKind::Repeat(_) | LazyKind::Cycle(_) | LazyKind::Iterate { .. } => true,
            LazyKind::Map { sources, .. } | LazyKind::Interleave(sources) => {
                sources.iter().all(LazySeq::is_endless)
            }
            LazyKind::MapIndexed { source, .. }
            | LazyKind::Drop { source, .. }
            | LazyKind::Concat { source, .. }
            | LazyKind::Interpose { source, .. } => source.is_endless(),
            _ => false,
        }
    }

    /// The number of items, when known without walking them (a range's).
    pub(crate) fn known_count(&self) -> Option<u64> {
        match &self.0.kind {
            LazyKind::Range {
                end: Some(RangeEnd::Count(n)),
                ..
            }
            | LazyKind::RepeatCount(_, n) => Some(*n),
            _ => None,
        }
    }

    /// For a long range of integers, the range without its first `n` items, found without
    /// walking them (`(drop 99999999990 (range 100000000000))`).
    pub(crate) fn drop_from_range(&self, n: usize) -> Option<LazySeq> {
        let LazyKind::Range {
            start: Value::Int(start),
            step: Value::Int(step),
            end: Some(RangeEnd::Count(count)),
        } = &self.0.kind
        else {
            return None;
        };
        let n = (n as u64).min(*count);
        // Within the range, so within 64 bits (the last item is start + (count - 1) * step).
        let first = i128::from(*start) + i128::from(n) * i128::from(*step);
        let start = if n == *count {
            *start
        } else {
            i64::try_from(first).ok()?
        };
        Some(LazySeq::new(LazyKind::Range {
            start: Value::Int(start),
            step: Value::Int(*step),
            end: Some(RangeEnd::Count(*count - n)),
        }))
    }

    /// Whether this is a sequence read back from its printed form, which cannot produce items.
    pub fn is_unrealized(&self) -> bool {
        matches!(self.0.kind, LazyKind::Unrealized(_))
    }

    /// Whether one of the two was read back from a stored step (`#lazy-seq[range]`) and both
    /// print the same: the read-back value stands for the sequence that was printed.
    pub(crate) fn same_as_read_back(&self, other: &LazySeq) -> bool {
        (self.is_unrealized() || other.is_unrealized()) && self.describe() == other.describe()
    }

    /// How deeply values nest inside the sequence's sources and functions, plus one.
    pub(crate) fn depth(&self) -> u32 {
        self.0.depth
    }

    pub(crate) fn kind(&self) -> &LazyKind {
        &self.0.kind
    }

    pub(crate) fn ptr_eq(&self, other: &LazySeq) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    pub(crate) fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as *const () as usize
    }

    /// How the sequence was made, for printing (`(range)`, `(iterate ...)`).
    pub fn describe(&self) -> &str {
        match &self.0.kind {
            LazyKind::Unrealized(text) => text,
            LazyKind::Range { .. } => "range",
            LazyKind::Repeat(_) | LazyKind::RepeatCount(..) => "repeat",
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
