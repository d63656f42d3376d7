//! `pmap` and `pcalls`: concurrent calls, mainly so that slow host tools overlap.
//!
//! Each item runs in its own worker context (`Ctx::fork_worker`) on one of at most
//! [`MAX_WORKERS`] threads; the calling thread is one of them. Items are handed out in order from
//! a shared counter, so a slow item does not hold up the others. When all are done, the worker
//! contexts are joined back in item order: the results, the printed output and the recorded tool
//! calls appear in the order of the items, whatever the threads' timing was. Limits hold for the
//! whole section: each item gets its share of the remaining steps and memory, all items draw
//! tool calls from one shared budget, and a thread's items together stay within the run's
//! remaining time.
//!
//! Every item runs even when another fails (so the set of tool calls made does not depend on
//! timing), and every item's tool calls are recorded, also when an item fails or taking an item
//! back goes over a limit (memory, output, tool calls, steps or time); the error of the first
//! failing item, in item order, is the result. An item's prints are kept while they fit in the
//! run's output limit: each item may print up to what the run has left, so together they may
//! not fit, and then the prints from the first one that does not fit on are dropped, as a run
//! stops printing at the limit (see `Ctx::join`).

use super::args::{AtLeastOne, Call, Callable};
use super::build::list_of;
use super::{Builtin, builtin};
use crate::context::fiber::{Fiber, FiberStep, Resume, Suspender};
use crate::context::tools::{ToolAnswer, ToolError, ToolRequest};
use crate::error::{Error, ErrorKind};
use crate::eval::{Ctx, EvalResult, Flow};
use crate::value::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("pmap", pmap, "(pmap f coll & colls)", "Like map, but runs up to 8 calls at a time on separate threads so slow tool calls overlap; results, output and tool calls stay in item order.", "(pmap inc [1 2 3])" => "(2 3 4)"),
    builtin!("pcalls", pcalls, "(pcalls & fns)", "Calls the functions (no arguments) concurrently, like pmap, and returns their results in order.", "(pcalls (fn [] 1) (fn [] (+ 1 1)))" => "(1 2)"),
];

/// Most threads one parallel section uses (the calling thread included).
pub const MAX_WORKERS: usize = 8;

fn pmap(ctx: &mut Ctx, call: Call, (f, colls): (Callable, AtLeastOne)) -> EvalResult {
    let f: &Value = &f;
    let calls: Vec<Vec<Value>> = if let [coll] = &*colls {
        call.collect(ctx, coll)?
            .into_iter()
            .map(|x| vec![x])
            .collect()
    } else {
        if colls.iter().all(Value::is_unbounded) {
            return Err(call.unbounded(colls.first()).into());
        }
        let mut iters = colls
            .iter()
            .map(|c| call.items(c))
            .collect::<Result<Vec<_>, _>>()?;
        let mut rows = Vec::new();
        'rows: loop {
            let mut row = Vec::with_capacity(iters.len());
            for it in iters.iter_mut() {
                match it.next(ctx)? {
                    Some(x) => row.push(x.into_owned()),
                    None => break 'rows,
                }
            }
            rows.push(row);
        }
        rows
    };
    let results = run_parallel(ctx, calls.len(), |child, i| child.apply(f, &calls[i]))?;
    list_of(ctx, results)
}

fn pcalls(ctx: &mut Ctx, call: Call, fs: &[Value]) -> EvalResult {
    for f in fs {
        call.arg::<Callable>(f)?;
    }
    let results = run_parallel(ctx, fs.len(), |child, i| child.apply(&fs[i], &[]))?;
    list_of(ctx, results)
}

/// One finished item: its worker context and its result.
type Finished = Option<(Ctx, EvalResult)>;

/// Run `call(worker_ctx, i)` for `i in 0..n` and join the workers back into `ctx` in item
/// order: on fibers, waiting for tools together, when the run can suspend; else on up to
/// [`MAX_WORKERS`] threads.
fn run_parallel(
    ctx: &mut Ctx,
    n: usize,
    call: impl Fn(&mut Ctx, usize) -> EvalResult + Sync,
) -> EvalResult<Vec<Value>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let budget = ctx.worker_tool_budget();
    let tool_time_before = ctx.tool_time();
    let started = Instant::now();
    let (done, busy, panicked) = match ctx.suspender {
        Some(suspender) => {
            let (done, busy) = on_fibers(ctx, suspender, n, &budget, &call);
            (done, busy, false)
        }
        None => on_threads(ctx, n, &budget, &call),
    };
    // The section's time counts before the workers are taken back: the budget checks of the
    // merge must not count its waits for tools.
    ctx.settle_parallel_time(tool_time_before, started.elapsed(), busy);
    let mut results = Vec::with_capacity(n);
    let mut first_failure: Option<Flow> = None;
    for finished in done {
        let Some((child, result)) = finished else {
            // Only a worker that panicked leaves an item unfinished.
            continue;
        };
        // Every worker is joined, also after a failure: its tool calls happened. A limit the
        // merge goes over counts as that item's failure, ahead of the item's own error (the
        // item's prints and memory came before the error that ended it).
        let merged = ctx.join(child);
        match (merged, result) {
            (Ok(()), Ok(v)) => results.push(v),
            (Err(e), _) => {
                first_failure.get_or_insert(e.into());
            }
            (Ok(()), Err(flow)) => {
                first_failure.get_or_insert(flow);
            }
        }
    }
    if let Some(flow) = first_failure {
        return Err(flow);
    }
    if panicked || results.len() != n {
        return Err(Error::new(
            ErrorKind::Tool,
            "a parallel worker stopped unexpectedly (a tool or function panicked); run the \
             calls with map to find the failing one",
        )
        .into());
    }
    Ok(results)
}

/// Run the items on up to [`MAX_WORKERS`] threads (the calling one included); returns each
/// item's worker and result, the busiest thread's evaluation time, and whether a thread
/// panicked.
fn on_threads(
    parent: &Ctx,
    n: usize,
    budget: &Arc<AtomicUsize>,
    call: &(impl Fn(&mut Ctx, usize) -> EvalResult + Sync),
) -> (Vec<Finished>, Duration, bool) {
    let section_start = parent.run_time();
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Finished>> = (0..n).map(|_| Mutex::new(None)).collect();
    // One worker: take the next item until none is left; returns its evaluation time.
    let work = || {
        let mut used = Duration::ZERO;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return used;
            }
            let mut child = parent.fork_worker(n, budget, section_start, used);
            let result = run_item(&mut child, i, call);
            used += child.eval_time();
            *done[i]
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some((child, result));
        }
    };
    let (busy, panicked) = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..n.min(MAX_WORKERS))
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("ptc-parallel".into())
                    .spawn_scoped(scope, work)
                    .ok()
            })
            .collect();
        // The calling thread works too, so the items are done even if no thread could start.
        let mut busy = work();
        let mut panicked = false;
        for helper in helpers {
            match helper.join() {
                Ok(used) => busy = busy.max(used),
                Err(_) => panicked = true,
            }
        }
        (busy, panicked)
    });
    let done = done
        .into_iter()
        .map(|slot| slot.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect();
    (done, busy, panicked)
}

/// Evaluate item `i` in its worker context, metering the walking of values on this thread
/// against the worker's budget (see value::meter).
fn run_item(
    child: &mut Ctx,
    i: usize,
    call: &(impl Fn(&mut Ctx, usize) -> EvalResult + Sync),
) -> EvalResult {
    let _meter = child.meter_guard();
    let result = call(child, i);
    match child.settle_meter() {
        Err(e) => Err(e.into()),
        Ok(()) => result,
    }
}

/// An item evaluating on a fiber of its own.
struct Live<'a> {
    item: usize,
    fiber: Fiber<'a, (Ctx, EvalResult)>,
    /// How to go on: set when the item can run (new, or its calls were answered).
    input: Option<Resume>,
    /// The calls it waits for.
    waiting: Vec<ToolRequest>,
}

/// Run the items on fibers, up to [`MAX_WORKERS`] at a time, one after the other on this
/// thread: whenever every running item waits for tools, the run suspends with all their calls
/// at once, so the host makes them concurrently. Returns each item's worker and result, and the
/// items' evaluation time (their sum: they share this thread).
fn on_fibers(
    parent: &Ctx,
    suspender: Suspender,
    n: usize,
    budget: &Arc<AtomicUsize>,
    call: &(impl Fn(&mut Ctx, usize) -> EvalResult + Sync),
) -> (Vec<Finished>, Duration) {
    // The evaluation time the section may use; the items' own limits end any one of them
    // there, and items still waiting when the section used it up are stopped.
    let section_start = parent.run_time();
    let time_left = parent.limits.timeout.saturating_sub(section_start);
    let mut done: Vec<Finished> = (0..n).map(|_| None).collect();
    let mut live: Vec<Live<'_>> = Vec::with_capacity(n.min(MAX_WORKERS));
    let mut next = 0;
    let mut busy = Duration::ZERO;
    loop {
        while live.len() < MAX_WORKERS && next < n {
            let mut child = parent.fork_worker(n, budget, section_start, busy);
            let item = next;
            next += 1;
            let fiber = Fiber::new(move |suspender| {
                child.suspender = Some(suspender);
                let result = run_item(&mut child, item, call);
                (child, result)
            });
            live.push(Live {
                item,
                fiber,
                input: Some(Resume::Answers(Vec::new())),
                waiting: Vec::new(),
            });
        }
        if live.is_empty() {
            return (done, busy);
        }
        let mut k = 0;
        while k < live.len() {
            let Some(mut input) = live[k].input.take() else {
                k += 1;
                continue;
            };
            if busy > time_left && matches!(input, Resume::Answers(ref a) if !a.is_empty()) {
                input = Resume::Stop(parent.timeout_error());
            }
            let segment = Instant::now();
            let step = live[k].fiber.resume(input);
            busy += segment.elapsed();
            match step {
                FiberStep::Done(finished) => {
                    done[live[k].item] = Some(finished);
                    live.remove(k);
                }
                FiberStep::Suspended(requests) => {
                    live[k].waiting = requests;
                    k += 1;
                }
            }
        }
        if live.len() < MAX_WORKERS && next < n {
            // Start the next items first, so that their calls are made with these.
            continue;
        }
        if live.is_empty() {
            continue;
        }
        let counts: Vec<usize> = live.iter().map(|l| l.waiting.len()).collect();
        let batch: Vec<ToolRequest> = live
            .iter_mut()
            .flat_map(|l| std::mem::take(&mut l.waiting))
            .collect();
        match suspender.suspend(batch) {
            Resume::Answers(answers) => {
                let mut answers = answers.into_iter();
                for (l, count) in live.iter_mut().zip(counts) {
                    let mut mine: Vec<ToolAnswer> = answers.by_ref().take(count).collect();
                    while mine.len() < count {
                        mine.push(ToolAnswer::new(
                            Err(ToolError::new("the host gave no answer")),
                            Duration::ZERO,
                        ));
                    }
                    l.input = Some(Resume::Answers(mine));
                }
            }
            Resume::Stop(error) => {
                for l in &mut live {
                    l.input = Some(Resume::Stop(error.clone()));
                }
            }
        }
    }
}
