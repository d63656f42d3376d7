//! Walking the items of any sequential value, including unbounded lazy sequences.

use super::{Ctx, EvalResult};
use crate::error::Error;
use crate::format::pr_str;
use crate::value::{LazyKind, LazySeq, MapIter, Seq, Value};
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
    Lazy(Box<Cursor>),
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
            Value::Lazy(l) => Items::Lazy(Box::new(Cursor::new(l))),
            other => {
                return Err(Error::type_error(format!(
                    "expected a collection, got {} {}",
                    other.type_name(),
                    super::pr_str_short(other)
                )));
            }
        })
    }

    /// Whether the items never end (a lazy sequence).
    pub fn is_unbounded(&self) -> bool {
        matches!(self, Items::Lazy(_))
    }

    /// The next item, if any.
    #[inline]
    pub fn next(&mut self, ctx: &mut Ctx) -> EvalResult<Option<Cow<'a, Value>>> {
        ctx.tick()?;
        Ok(match self {
            Items::Seq(it) => it.next().map(Cow::Borrowed),
            Items::Map(it) => it
                .next()
                .map(|(k, v)| Cow::Owned(Value::vector([k.clone(), v.clone()]))),
            Items::Set(it) => it.next().map(Cow::Borrowed),
            Items::Str(it) => it.next().map(|c| Cow::Owned(Value::Char(c))),
            Items::Lazy(cursor) => Some(Cow::Owned(cursor.next(ctx)?)),
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
        let mut out = Vec::with_capacity(value.count().unwrap_or(0));
        ctx.charge_items(value.count().unwrap_or(0))?;
        while let Some(item) = items.next(ctx)? {
            out.push(item.into_owned());
        }
        Ok(out)
    }
}

/// The error for realizing an unbounded sequence in full.
pub fn unbounded_error(what: &str, value: &Value) -> Error {
    Error::argument(format!(
        "{what} cannot realize the unbounded sequence {}; take a finite part first, e.g. \
         (take 10 ...)",
        pr_str(value)
    ))
}

/// Position in an unbounded sequence.
pub enum Cursor {
    Range {
        next: Value,
        step: Value,
    },
    Repeat(Value),
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
        turn: usize,
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
        source: Box<Cursor>,
        window: VecDeque<Value>,
        skip: usize,
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
    },
    Interpose {
        sep: Value,
        source: Box<Cursor>,
        pending: Option<Value>,
        started: bool,
    },
    For {
        lazy: std::sync::Arc<crate::eval::LazyFor>,
        source: Box<Cursor>,
        pending: VecDeque<Value>,
    },
}

impl Cursor {
    pub fn new(seq: &LazySeq) -> Cursor {
        // One cursor per source, as deep as the sequence nests (at most the value depth
        // limit): build them where the stack can grow.
        stacker::maybe_grow(super::ir::STACK_RED_ZONE, super::ir::STACK_GROW_BY, || {
            Cursor::build(seq)
        })
    }

    fn build(seq: &LazySeq) -> Cursor {
        match seq.kind() {
            LazyKind::Range { start, step } => Cursor::Range {
                next: start.clone(),
                step: step.clone(),
            },
            LazyKind::Repeat(x) => Cursor::Repeat(x.clone()),
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
                sources: sources.iter().map(Cursor::new).collect(),
            },
            LazyKind::Filter { pred, source, keep } => Cursor::Filter {
                pred: pred.clone(),
                source: Box::new(Cursor::new(source)),
                keep: *keep,
            },
            LazyKind::Keep { f, source } => Cursor::Keep {
                f: f.clone(),
                source: Box::new(Cursor::new(source)),
            },
            LazyKind::MapIndexed { f, source } => Cursor::MapIndexed {
                f: f.clone(),
                source: Box::new(Cursor::new(source)),
                index: 0,
            },
            LazyKind::Drop { n, source } => Cursor::Drop {
                remaining: *n,
                source: Box::new(Cursor::new(source)),
            },
            LazyKind::Concat { prefix, source } => Cursor::Concat {
                prefix: prefix.clone(),
                index: 0,
                source: Box::new(Cursor::new(source)),
            },
            LazyKind::Interleave(sources) => Cursor::Interleave {
                sources: sources.iter().map(Cursor::new).collect(),
                turn: 0,
            },
            LazyKind::MapCat { f, source } => Cursor::MapCat {
                f: f.clone(),
                source: Box::new(Cursor::new(source)),
                pending: Vec::new().into_iter(),
            },
            LazyKind::KeepIndexed { f, source } => Cursor::KeepIndexed {
                f: f.clone(),
                source: Box::new(Cursor::new(source)),
                index: 0,
            },
            LazyKind::TakeNth { n, source } => Cursor::TakeNth {
                n: *n,
                source: Box::new(Cursor::new(source)),
                started: false,
            },
            LazyKind::DropWhile { pred, source } => Cursor::DropWhile {
                pred: pred.clone(),
                source: Box::new(Cursor::new(source)),
                dropping: true,
            },
            LazyKind::Partition { n, step, source } => Cursor::Partition {
                n: *n,
                step: *step,
                source: Box::new(Cursor::new(source)),
                window: VecDeque::new(),
                skip: 0,
            },
            LazyKind::Distinct(source) => Cursor::Distinct {
                source: Box::new(Cursor::new(source)),
                seen: FxHashSet::default(),
            },
            LazyKind::Dedupe(source) => Cursor::Dedupe {
                source: Box::new(Cursor::new(source)),
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
                        source: Box::new(Cursor::new(source)),
                    },
                    None => Cursor::new(source),
                }),
            },
            LazyKind::For(lazy) => Cursor::For {
                lazy: lazy.clone(),
                source: Box::new(Cursor::new(&lazy.source)),
                pending: VecDeque::new(),
            },
            LazyKind::Interpose { sep, source } => Cursor::Interpose {
                sep: sep.clone(),
                source: Box::new(Cursor::new(source)),
                pending: None,
                started: false,
            },
        }
    }

    /// The next item (there always is one).
    pub fn next(&mut self, ctx: &mut Ctx) -> EvalResult<Value> {
        ctx.tick()?;
        // A cursor asks its source for items, which asks its source ...: as deep as the
        // sequence nests.
        ctx.with_stack(|ctx| self.step(ctx))
    }

    fn step(&mut self, ctx: &mut Ctx) -> EvalResult<Value> {
        match self {
            Cursor::Range { next, step } => {
                let current = next.clone();
                *next = crate::builtins::number::add(&current, step)?;
                Ok(current)
            }
            Cursor::Repeat(x) => Ok(x.clone()),
            Cursor::Cycle { items, index } => {
                let item = items[*index % items.len()].clone();
                *index = (*index + 1) % items.len();
                Ok(item)
            }
            Cursor::Iterate { f, next, current } => {
                let value = match next.take() {
                    Some(seed) => seed,
                    None => ctx.apply(f, std::slice::from_ref(current))?,
                };
                *current = value.clone();
                Ok(value)
            }
            Cursor::Map { f, sources } => {
                let mut args = Vec::with_capacity(sources.len());
                for source in sources.iter_mut() {
                    args.push(source.next(ctx)?);
                }
                ctx.apply(f, &args)
            }
            Cursor::Filter { pred, source, keep } => loop {
                let item = source.next(ctx)?;
                if ctx.apply(pred, std::slice::from_ref(&item))?.truthy() == *keep {
                    return Ok(item);
                }
            },
            Cursor::Keep { f, source } => loop {
                let item = source.next(ctx)?;
                let result = ctx.apply(f, std::slice::from_ref(&item))?;
                if !result.is_nil() {
                    return Ok(result);
                }
            },
            Cursor::MapIndexed { f, source, index } => {
                let item = source.next(ctx)?;
                let i = *index;
                *index += 1;
                ctx.apply(f, &[Value::Int(i), item])
            }
            Cursor::Drop { remaining, source } => {
                while *remaining > 0 {
                    source.next(ctx)?;
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
                    return Ok(item.clone());
                }
                source.next(ctx)
            }
            Cursor::Interleave { sources, turn } => {
                let i = *turn % sources.len();
                *turn += 1;
                sources[i].next(ctx)
            }
            Cursor::MapCat { f, source, pending } => loop {
                if let Some(item) = pending.next() {
                    return Ok(item);
                }
                let item = source.next(ctx)?;
                let coll = ctx.apply(f, std::slice::from_ref(&item))?;
                *pending = Items::collect_all(&coll, ctx, "mapcat")?.into_iter();
            },
            Cursor::KeepIndexed { f, source, index } => loop {
                let item = source.next(ctx)?;
                let i = *index;
                *index += 1;
                let result = ctx.apply(f, &[Value::Int(i), item])?;
                if !result.is_nil() {
                    return Ok(result);
                }
            },
            Cursor::TakeNth { n, source, started } => {
                if *started {
                    for _ in 1..*n {
                        source.next(ctx)?;
                    }
                }
                *started = true;
                source.next(ctx)
            }
            Cursor::DropWhile {
                pred,
                source,
                dropping,
            } => loop {
                let item = source.next(ctx)?;
                if !*dropping || !ctx.apply(pred, std::slice::from_ref(&item))?.truthy() {
                    *dropping = false;
                    return Ok(item);
                }
            },
            Cursor::Partition {
                n,
                step,
                source,
                window,
                skip,
            } => {
                while *skip > 0 {
                    source.next(ctx)?;
                    *skip -= 1;
                }
                while window.len() < *n {
                    window.push_back(source.next(ctx)?);
                }
                ctx.charge_items(*n)?;
                let part = Value::List(window.iter().cloned().collect());
                if *step <= *n {
                    window.drain(..*step);
                } else {
                    window.clear();
                    *skip = *step - *n;
                }
                Ok(part)
            }
            Cursor::Distinct { source, seen } => loop {
                let item = source.next(ctx)?;
                if !seen.contains(&item) {
                    ctx.charge_items(1)?;
                    seen.insert(item.clone());
                    return Ok(item);
                }
            },
            Cursor::Dedupe { source, last } => loop {
                let item = source.next(ctx)?;
                if last.as_ref() != Some(&item) {
                    *last = Some(item.clone());
                    return Ok(item);
                }
            },
            Cursor::Reductions { f, acc, source } => {
                let item = source.next(ctx)?;
                let next = match acc.take() {
                    None => item,
                    Some(previous) => ctx.apply(f, &[previous, item])?,
                };
                if crate::builtins::transduce::as_reduced(&next).is_some() {
                    return Err(Error::argument(
                        "reductions over an unbounded sequence cannot stop with reduced; take \
                         a finite part of the sequence first, e.g. (take 100 ...)",
                    )
                    .into());
                }
                *acc = Some(next.clone());
                Ok(next)
            }
            Cursor::Interpose {
                sep,
                source,
                pending,
                started,
            } => {
                if let Some(item) = pending.take() {
                    return Ok(item);
                }
                if *started {
                    *pending = Some(source.next(ctx)?);
                    return Ok(sep.clone());
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
                    return Ok(item);
                }
                let item = source.next(ctx)?;
                let mut out = Vec::new();
                ctx.for_item(lazy, item, &mut out)?;
                ctx.charge_items(out.len())?;
                pending.extend(out);
            },
        }
    }
}
