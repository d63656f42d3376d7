//! Walking the items of any sequential value, including unbounded lazy sequences.

use super::{Ctx, EvalResult};
use crate::error::{Error, ErrorKind};
use crate::format::pr_str;
use crate::value::{LazyKind, LazySeq, MapIter, RangeEnd, Seq, Value};
use rustc_hash::FxHashSet;
use std::borrow::Cow;
use std::collections::VecDeque;

/// The items of a collection, string (its characters), map (its `[k v]` entries), nil (none) or
/// lazy sequence (produced on demand). Each item taken counts as one evaluation step, so even an
/// unbounded sequence consumed by mistake stops at the step limit.
pub enum Items<'a> {
    Seq(crate::value::SeqIter<'a>),
    Map(MapIter<'a>),
    Set(crate::value::SetIter<'a>),
    Str(std::str::Chars<'a>),
    Lazy { cursor: Box<Cursor>, bounded: bool },
    Empty,
}

impl<'a> Items<'a> {
    pub fn new(value: &'a Value) -> Result<Items<'a>, Error> {
        Ok(match value {
            Value::Nil => Items::Empty,
            Value::List(s) | Value::Vector(s) => Items::Seq(s.iter()),
            Value::Map(m) => Items::Map(m.iter()),
            Value::Set(s) => Items::Set(s.iter()),
            Value::Str(s) => Items::Str(s.chars()),
            Value::Lazy(l) => Items::Lazy {
                cursor: Box::new(Cursor::new(l)?),
                bounded: l.is_bounded(),
            },
            other => {
                return Err(Error::type_error(format!(
                    "expected a collection, got {} {}",
                    other.type_name(),
                    super::pr_str_short(other)
                )));
            }
        })
    }

    /// Whether the items never end (an unbounded lazy sequence).
    pub fn is_unbounded(&self) -> bool {
        matches!(self, Items::Lazy { bounded: false, .. })
    }

    /// The next item, if any.
    #[inline(always)]
    pub fn next(&mut self, ctx: &mut Ctx) -> EvalResult<Option<Cow<'a, Value>>> {
        // Lists and vectors, most of what builtins walk, without a call.
        if let Items::Seq(it) = self {
            ctx.tick()?;
            return Ok(it.next().map(Cow::Borrowed));
        }
        self.next_other(ctx)
    }

    #[inline(never)]
    fn next_other(&mut self, ctx: &mut Ctx) -> EvalResult<Option<Cow<'a, Value>>> {
        ctx.tick()?;
        Ok(match self {
            Items::Seq(it) => it.next().map(Cow::Borrowed),
            Items::Map(it) => it
                .next()
                .map(|(k, v)| Cow::Owned(Value::vector([k.clone(), v.clone()]))),
            Items::Set(it) => it.next().map(Cow::Borrowed),
            Items::Str(it) => it.next().map(|c| Cow::Owned(Value::Char(c))),
            Items::Lazy { cursor, .. } => cursor.next(ctx)?.map(Cow::Owned),
            Items::Empty => None,
        })
    }

    /// Every item, refusing unbounded sequences with a clear error instead of running until a
    /// limit. `what` names the operation for the message.
    pub fn collect_all(value: &'a Value, ctx: &mut Ctx, what: &str) -> EvalResult<Vec<Value>> {
        let mut items = Items::new(value)?;
        if items.is_unbounded() {
            return Err(unbounded_error(what, value).into());
        }
        if let Value::Lazy(l) = value {
            // A long range: refuse at once what cannot fit, otherwise count the items as they
            // come (how many there will be is unknown).
            let known = l
                .known_count()
                .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
            ctx.charge_items(known)?;
            let mut out = Vec::new();
            while let Some(item) = items.next(ctx)? {
                if known == 0 {
                    ctx.charge_items(1)?;
                }
                out.push(item.into_owned());
            }
            return Ok(out);
        }
        let mut out = Vec::with_capacity(value.count().unwrap_or(0));
        ctx.charge_items(value.count().unwrap_or(0))?;
        while let Some(item) = items.next(ctx)? {
            out.push(item.into_owned());
        }
        Ok(out)
    }
}

/// The error for realizing an unbounded sequence in full: a memory limit, since realizing
/// all of a sequence that never ends would need unbounded memory (Clojure runs out of it, or
/// never returns).
pub fn unbounded_error(what: &str, value: &Value) -> Error {
    Error::new(
        ErrorKind::MemoryLimit,
        format!(
            "{what} cannot realize {}: the sequence is infinite, so realizing all of it would \
             exceed any memory limit; take a finite part first, e.g. (take 10 ...), or stop \
             with take-while",
            pr_str(value)
        ),
    )
}

/// Position in a lazy sequence.
pub enum Cursor {
    Range {
        next: Value,
        step: Value,
        end: Option<RangeEnd>,
    },
    Repeat(Value),
    RepeatCount(Value, u64),
    Cycle {
        items: Seq,
        index: usize,
    },
    Iterate {
        f: Value,
        next: Option<Value>,
        current: Value,
    },
    Map {
        f: Value,
        sources: Vec<Cursor>,
    },
    Filter {
        pred: Value,
        source: Box<Cursor>,
        keep: bool,
    },
    Keep {
        f: Value,
        source: Box<Cursor>,
    },
    MapIndexed {
        f: Value,
        source: Box<Cursor>,
        index: i64,
    },
    Drop {
        remaining: usize,
        source: Box<Cursor>,
    },
    Concat {
        prefix: Seq,
        index: usize,
        source: Box<Cursor>,
    },
    Interleave {
        sources: Vec<Cursor>,
        pending: VecDeque<Value>,
    },
    MapCat {
        f: Value,
        source: Box<Cursor>,
        pending: std::vec::IntoIter<Value>,
    },
    KeepIndexed {
        f: Value,
        source: Box<Cursor>,
        index: i64,
    },
    TakeNth {
        n: usize,
        source: Box<Cursor>,
        started: bool,
    },
    DropWhile {
        pred: Value,
        source: Box<Cursor>,
        dropping: bool,
    },
    Partition {
        n: usize,
        step: usize,
        all: bool,
        source: Box<Cursor>,
        window: VecDeque<Value>,
        skip: usize,
        done: bool,
    },
    Distinct {
        source: Box<Cursor>,
        seen: FxHashSet<Value>,
    },
    Dedupe {
        source: Box<Cursor>,
        last: Option<Value>,
    },
    Reductions {
        f: Value,
        acc: Option<Value>,
        source: Box<Cursor>,
        done: bool,
    },
    Interpose {
        sep: Value,
        source: Box<Cursor>,
        pending: Option<Value>,
        started: bool,
    },
    For {
        lazy: std::sync::Arc<super::ForState>,
        source: Box<Cursor>,
        pending: VecDeque<Value>,
    },
}

impl Cursor {
    /// A cursor at the start of `seq`; an error for a sequence read back from its printed form.
    pub fn new(seq: &LazySeq) -> Result<Cursor, Error> {
        // One cursor per source, as deep as the sequence nests (at most the value depth
        // limit): build them where the stack can grow.
        crate::stack::with_stack_room(|| Cursor::build(seq))
    }

    fn build(seq: &LazySeq) -> Result<Cursor, Error> {
        let boxed = |source: &LazySeq| Cursor::new(source).map(Box::new);
        Ok(match seq.kind() {
            LazyKind::Unrealized(_) => {
                return Err(Error::argument(format!(
                    "{} was read back from a stored step and cannot produce items; compute the \
                     sequence again",
                    pr_str(&Value::Lazy(seq.clone()))
                )));
            }
            LazyKind::Range { start, step, end } => Cursor::Range {
                next: start.clone(),
                step: step.clone(),
                end: end.clone(),
            },
            LazyKind::Repeat(x) => Cursor::Repeat(x.clone()),
            LazyKind::RepeatCount(x, n) => Cursor::RepeatCount(x.clone(), *n),
            LazyKind::Cycle(items) => Cursor::Cycle {
                items: items.clone(),
                index: 0,
            },
            LazyKind::Iterate { f, seed } => Cursor::Iterate {
                f: f.clone(),
                next: Some(seed.clone()),
                current: Value::Nil,
            },
            LazyKind::Map { f, sources } => Cursor::Map {
                f: f.clone(),
                sources: sources.iter().map(Cursor::new).collect::<Result<_, _>>()?,
            },
            LazyKind::Filter { pred, source, keep } => Cursor::Filter {
                pred: pred.clone(),
                source: boxed(source)?,
                keep: *keep,
            },
            LazyKind::Keep { f, source } => Cursor::Keep {
                f: f.clone(),
                source: boxed(source)?,
            },
            LazyKind::MapIndexed { f, source } => Cursor::MapIndexed {
                f: f.clone(),
                source: boxed(source)?,
                index: 0,
            },
            LazyKind::Drop { n, source } => Cursor::Drop {
                remaining: *n,
                source: boxed(source)?,
            },
            LazyKind::Concat { prefix, source } => Cursor::Concat {
                prefix: prefix.clone(),
                index: 0,
                source: boxed(source)?,
            },
            LazyKind::Interleave(sources) => Cursor::Interleave {
                sources: sources.iter().map(Cursor::new).collect::<Result<_, _>>()?,
                pending: VecDeque::new(),
            },
            LazyKind::MapCat { f, source } => Cursor::MapCat {
                f: f.clone(),
                source: boxed(source)?,
                pending: Vec::new().into_iter(),
            },
            LazyKind::KeepIndexed { f, source } => Cursor::KeepIndexed {
                f: f.clone(),
                source: boxed(source)?,
                index: 0,
            },
            LazyKind::TakeNth { n, source } => Cursor::TakeNth {
                n: *n,
                source: boxed(source)?,
                started: false,
            },
            LazyKind::DropWhile { pred, source } => Cursor::DropWhile {
                pred: pred.clone(),
                source: boxed(source)?,
                dropping: true,
            },
            LazyKind::Partition {
                n,
                step,
                all,
                source,
            } => Cursor::Partition {
                n: *n,
                step: *step,
                all: *all,
                source: boxed(source)?,
                window: VecDeque::new(),
                skip: 0,
                done: false,
            },
            LazyKind::Distinct(source) => Cursor::Distinct {
                source: boxed(source)?,
                seen: FxHashSet::default(),
            },
            LazyKind::Dedupe(source) => Cursor::Dedupe {
                source: boxed(source)?,
                last: None,
            },
            LazyKind::Reductions { f, init, source } => Cursor::Reductions {
                f: f.clone(),
                acc: None,
                source: Box::new(match init {
                    // The initial value comes first, then the source.
                    Some(init) => Cursor::Concat {
                        prefix: Seq::from(vec![init.clone()]),
                        index: 0,
                        source: boxed(source)?,
                    },
                    None => Cursor::new(source)?,
                }),
                done: false,
            },
            LazyKind::For(lazy) => Cursor::For {
                lazy: lazy.state::<super::ForState>().ok_or_else(|| {
                    Error::type_error("this for sequence was not made by the evaluator")
                })?,
                source: boxed(lazy.source())?,
                pending: VecDeque::new(),
            },
            LazyKind::Interpose { sep, source } => Cursor::Interpose {
                sep: sep.clone(),
                source: boxed(source)?,
                pending: None,
                started: false,
            },
        })
    }

    /// The next item, or `None` at the end of a bounded sequence.
    pub fn next(&mut self, ctx: &mut Ctx) -> EvalResult<Option<Value>> {
        ctx.tick()?;
        // A cursor asks its source for items, which asks its source ...: as deep as the
        // sequence nests.
        ctx.with_stack(|ctx| self.step(ctx))
    }

    fn step(&mut self, ctx: &mut Ctx) -> EvalResult<Option<Value>> {
        match self {
            Cursor::Range { next, step, end } => {
                match end {
                    None => {}
                    Some(RangeEnd::Count(0)) => return Ok(None),
                    Some(RangeEnd::Count(left)) => {
                        *left -= 1;
                        if *left == 0 {
                            // The last item: the one after it may not even be representable.
                            return Ok(Some(next.clone()));
                        }
                    }
                    Some(RangeEnd::Below(bound))
                        if !super::numbers::range_continues(next, step, bound)? =>
                    {
                        return Ok(None);
                    }
                    Some(RangeEnd::Below(_)) => {}
                }
                let current = next.clone();
                *next = super::numbers::promoting(super::numbers::Op::Add, &current, step)?;
                Ok(Some(current))
            }
            Cursor::Repeat(x) => Ok(Some(x.clone())),
            Cursor::RepeatCount(_, 0) => Ok(None),
            Cursor::RepeatCount(x, left) => {
                *left -= 1;
                Ok(Some(x.clone()))
            }
            Cursor::Cycle { items, index } => {
                let item = items[*index % items.len()].clone();
                *index = (*index + 1) % items.len();
                Ok(Some(item))
            }
            Cursor::Iterate { f, next, current } => {
                let value = match next.take() {
                    Some(seed) => seed,
                    None => ctx.apply1(f, current)?,
                };
                *current = value.clone();
                Ok(Some(value))
            }
            Cursor::Map { f, sources } => {
                let mut args = Vec::with_capacity(sources.len());
                for source in sources.iter_mut() {
                    match source.next(ctx)? {
                        Some(item) => args.push(item),
                        None => return Ok(None),
                    }
                }
                ctx.apply(f, &args).map(Some)
            }
            Cursor::Filter { pred, source, keep } => {
                while let Some(item) = source.next(ctx)? {
                    if ctx.apply1(pred, &item)?.truthy() == *keep {
                        return Ok(Some(item));
                    }
                }
                Ok(None)
            }
            Cursor::Keep { f, source } => {
                while let Some(item) = source.next(ctx)? {
                    let result = ctx.apply1(f, &item)?;
                    if !result.is_nil() {
                        return Ok(Some(result));
                    }
                }
                Ok(None)
            }
            Cursor::MapIndexed { f, source, index } => {
                let Some(item) = source.next(ctx)? else {
                    return Ok(None);
                };
                let i = *index;
                *index += 1;
                ctx.apply(f, &[Value::Int(i), item]).map(Some)
            }
            Cursor::Drop { remaining, source } => {
                while *remaining > 0 {
                    if source.next(ctx)?.is_none() {
                        *remaining = 0;
                        return Ok(None);
                    }
                    *remaining -= 1;
                }
                source.next(ctx)
            }
            Cursor::Concat {
                prefix,
                index,
                source,
            } => {
                if let Some(item) = prefix.get(*index) {
                    *index += 1;
                    return Ok(Some(item.clone()));
                }
                source.next(ctx)
            }
            Cursor::Interleave { sources, pending } => {
                // A round takes one item of every source, and none is left over when one ends.
                if pending.is_empty() {
                    for source in sources.iter_mut() {
                        match source.next(ctx)? {
                            Some(item) => pending.push_back(item),
                            None => {
                                pending.clear();
                                return Ok(None);
                            }
                        }
                    }
                }
                Ok(pending.pop_front())
            }
            Cursor::MapCat { f, source, pending } => loop {
                if let Some(item) = pending.next() {
                    return Ok(Some(item));
                }
                let Some(item) = source.next(ctx)? else {
                    return Ok(None);
                };
                let coll = ctx.apply1(f, &item)?;
                *pending = Items::collect_all(&coll, ctx, "mapcat")?.into_iter();
            },
            Cursor::KeepIndexed { f, source, index } => {
                while let Some(item) = source.next(ctx)? {
                    let i = *index;
                    *index += 1;
                    let result = ctx.apply(f, &[Value::Int(i), item])?;
                    if !result.is_nil() {
                        return Ok(Some(result));
                    }
                }
                Ok(None)
            }
            Cursor::TakeNth { n, source, started } => {
                if *started {
                    for _ in 1..*n {
                        if source.next(ctx)?.is_none() {
                            return Ok(None);
                        }
                    }
                }
                *started = true;
                source.next(ctx)
            }
            Cursor::DropWhile {
                pred,
                source,
                dropping,
            } => {
                while let Some(item) = source.next(ctx)? {
                    if !*dropping || !ctx.apply1(pred, &item)?.truthy() {
                        *dropping = false;
                        return Ok(Some(item));
                    }
                }
                Ok(None)
            }
            Cursor::Partition {
                n,
                step,
                all,
                source,
                window,
                skip,
                done,
            } => {
                if *done {
                    return Ok(None);
                }
                while *skip > 0 {
                    if source.next(ctx)?.is_none() {
                        *done = true;
                        return Ok(None);
                    }
                    *skip -= 1;
                }
                while window.len() < *n {
                    match source.next(ctx)? {
                        Some(item) => window.push_back(item),
                        None => {
                            // The source ended: partition-all keeps the short last part.
                            *done = true;
                            if *all && !window.is_empty() {
                                ctx.charge_items(window.len())?;
                                return Ok(Some(Value::List(window.drain(..).collect())));
                            }
                            return Ok(None);
                        }
                    }
                }
                ctx.charge_items(*n)?;
                let part = Value::List(window.iter().cloned().collect());
                if *step <= *n {
                    window.drain(..*step);
                } else {
                    window.clear();
                    *skip = *step - *n;
                }
                Ok(Some(part))
            }
            Cursor::Distinct { source, seen } => {
                while let Some(item) = source.next(ctx)? {
                    if !seen.contains(&item) {
                        ctx.charge_items(1)?;
                        seen.insert(item.clone());
                        return Ok(Some(item));
                    }
                }
                Ok(None)
            }
            Cursor::Dedupe { source, last } => {
                while let Some(item) = source.next(ctx)? {
                    if last.as_ref() != Some(&item) {
                        *last = Some(item.clone());
                        return Ok(Some(item));
                    }
                }
                Ok(None)
            }
            Cursor::Reductions {
                f,
                acc,
                source,
                done,
            } => {
                if *done {
                    return Ok(None);
                }
                let Some(item) = source.next(ctx)? else {
                    *done = true;
                    return Ok(None);
                };
                let next = match acc.take() {
                    None => item,
                    Some(previous) => ctx.apply(f, &[previous, item])?,
                };
                // As in Clojure, a (reduced x) ends the reductions with x.
                if let Some(value) = super::reduced::as_reduced(&next) {
                    *done = true;
                    return Ok(Some(value.clone()));
                }
                *acc = Some(next.clone());
                Ok(Some(next))
            }
            Cursor::Interpose {
                sep,
                source,
                pending,
                started,
            } => {
                if let Some(item) = pending.take() {
                    return Ok(Some(item));
                }
                if *started {
                    return Ok(match source.next(ctx)? {
                        Some(item) => {
                            *pending = Some(item);
                            Some(sep.clone())
                        }
                        None => None,
                    });
                }
                *started = true;
                source.next(ctx)
            }
            Cursor::For {
                lazy,
                source,
                pending,
            } => loop {
                if let Some(item) = pending.pop_front() {
                    return Ok(Some(item));
                }
                let Some(item) = source.next(ctx)? else {
                    return Ok(None);
                };
                let mut out = Vec::new();
                ctx.for_item(lazy, item, &mut out)?;
                ctx.charge_items(out.len())?;
                pending.extend(out);
            },
        }
    }
}
