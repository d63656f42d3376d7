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
use super::seq::list_of;
use super::{Builtin, builtin};
use crate::error::{Error, ErrorKind};
use crate::eval::{Ctx, EvalResult, Flow};
use crate::value::Value;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
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
type Done = Mutex<Option<(Ctx, EvalResult)>>;

/// Run `call(worker_ctx, i)` for `i in 0..n` on up to [`MAX_WORKERS`] threads and join the
/// workers back into `ctx` in item order.
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
    let next = AtomicUsize::new(0);
    let done: Vec<Done> = (0..n).map(|_| Mutex::new(None)).collect();
    let parent: &Ctx = ctx;
    // One worker: take the next item until none is left; returns its evaluation time.
    let work = || {
        let mut used = Duration::ZERO;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return used;
            }
            let mut child = parent.fork_worker(n, &budget, used);
            let result = {
                // Walking values on this thread spends the worker's budget (see value::meter).
                let _meter = child.meter_guard();
                let result = call(&mut child, i);
                match child.settle_meter() {
                    Err(e) => Err(e.into()),
                    Ok(()) => result,
                }
            };
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
    let wall = started.elapsed();
    let mut results = Vec::with_capacity(n);
    let mut first_failure: Option<Flow> = None;
    for slot in done {
        let finished = slot
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
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
    ctx.settle_parallel_time(tool_time_before, wall, busy);
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
