//! The evaluator: a tree-walking interpreter over the resolved program (`ir`).
//!
//! Locals live in one value stack (a call pushes a frame, a return truncates it), so calling a
//! closure allocates nothing. Every limit is a counter on [`Ctx`]; see [`crate::limits`].

pub(crate) mod ir;
mod items;

pub use items::{Cursor, Items, unbounded_error};

use crate::builtins::Builtin;
use crate::error::{Error, ErrorKind};
use crate::limits::Limits;
use crate::namespace::ValueShape;
use crate::span::Span;
use crate::tools::{Tool, ToolCallRecord, ToolOutcome};
use crate::value::{FnRepr, Function, Keyword, LazyKind, LazySeq, Map, Set, Value, meter};
use arcstr::ArcStr;
use ir::*;
use smallvec::SmallVec;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering as AtomicOrdering};
use std::time::{Duration, Instant};

/// Why evaluation stopped early: an error, or one of the program's own exits.
#[derive(Debug)]
pub enum Flow {
    Error(Box<Error>),
    /// `(return v)`: the program succeeded with `v`.
    Return(Value),
    /// `(fail reason)`: the program gave up with `reason`; the span is the `fail` form's.
    Fail(Box<(Value, Span)>),
    /// `recur`: jump back to the innermost loop or function head (never escapes a function).
    Recur,
}

impl From<Error> for Flow {
    fn from(e: Error) -> Flow {
        Flow::Error(Box::new(e))
    }
}

/// The result type of evaluation and of every builtin.
pub type EvalResult<T = Value> = Result<T, Flow>;

/// A `fn`/`defn` closure: its code and the values it captured.
pub struct Closure {
    pub(crate) lambda: Arc<Lambda>,
    pub(crate) captures: Arc<[Value]>,
    /// The `letfn` group the closure belongs to, so it can reach its siblings.
    pub(crate) group: Option<Arc<[Arc<Lambda>]>>,
    /// How deeply values nest inside the captured ones, plus one (see [`Value::depth`]):
    /// closures that capture closures nest like collections do.
    pub(crate) depth: u32,
    /// Slots charged to the memory budget of a run for the closure's own allocation (its `Arc`
    /// and the array of its captures), given back when it is dropped: a program keeping many
    /// closures pays for them, a loop making one closure per step does not pay for each.
    pub(crate) own: u32,
}

/// Slots of a closure's own allocation: its `Arc`, its fields and the header of its captures.
const CLOSURE_SLOTS: usize = (std::mem::size_of::<FnRepr>() + 32).div_ceil(16);

impl Drop for Closure {
    fn drop(&mut self) {
        if self.own > 0 {
            meter::note_free(self.own as usize);
        }
        // Captured values may hold closures holding closures ...: drop them where the stack
        // can grow.
        let captures = std::mem::replace(&mut self.captures, no_captures().clone());
        stacker::maybe_grow(STACK_RED_ZONE, STACK_GROW_BY, move || drop(captures));
    }
}

fn no_captures() -> &'static Arc<[Value]> {
    static NO_CAPTURES: std::sync::OnceLock<Arc<[Value]>> = std::sync::OnceLock::new();
    NO_CAPTURES.get_or_init(|| Arc::from(Vec::new()))
}

/// The nesting depth of a function holding `captured` values.
pub(crate) fn captured_depth<'a>(captured: impl IntoIterator<Item = &'a Value>) -> u32 {
    1 + captured.into_iter().map(Value::depth).max().unwrap_or(0)
}

impl Closure {
    pub fn name(&self) -> Option<&str> {
        self.lambda.name.as_deref()
    }

    /// Each arity's parameter vector as written (`["[x]", "[x y]"]`).
    pub fn params(&self) -> Vec<String> {
        self.lambda
            .arities
            .iter()
            .map(|a| a.params_text.clone())
            .collect()
    }

    /// The shape of the value this closure most recently returned.
    pub fn last_return(&self) -> Option<ValueShape> {
        unpack_shape(self.lambda.last_return.load(AtomicOrdering::Relaxed))
    }
}

/// The body of a function made by a builtin (`comp`, `partial`, ...).
pub type NativeBody = dyn Fn(&mut Ctx, &[Value]) -> EvalResult + Send + Sync;

pub struct NativeFn {
    pub name: ArcStr,
    pub f: Box<NativeBody>,
    /// Nesting depth of the values the body holds (see [`Value::depth`]).
    pub(crate) depth: u32,
}

impl Drop for NativeFn {
    fn drop(&mut self) {
        // The body may hold functions holding functions ... (a memoization cache, a `comp`
        // chain): drop it where the stack can grow.
        let body = std::mem::replace(
            &mut self.f,
            Box::new(|_: &mut Ctx, _: &[Value]| Ok(Value::Nil)),
        );
        stacker::maybe_grow(STACK_RED_ZONE, STACK_GROW_BY, move || drop(body));
    }
}

impl Function {
    /// A function value implemented in Rust that holds no values.
    pub fn native(
        name: &str,
        f: impl Fn(&mut Ctx, &[Value]) -> EvalResult + Send + Sync + 'static,
    ) -> Function {
        Function(Arc::new(FnRepr::Native(NativeFn {
            name: ArcStr::from(name),
            f: Box::new(f),
            depth: 0,
        })))
    }

    /// A function value implemented in Rust whose body holds the `captured` values, e.g. the
    /// result of `(partial f 1)` holds `f` and `1`. Naming them lets the evaluator bound how
    /// deeply functions nest inside functions, as it does for collections.
    pub fn native_capturing<'a>(
        name: &str,
        captured: impl IntoIterator<Item = &'a Value>,
        f: impl Fn(&mut Ctx, &[Value]) -> EvalResult + Send + Sync + 'static,
    ) -> Function {
        Function(Arc::new(FnRepr::Native(NativeFn {
            name: ArcStr::from(name),
            f: Box::new(f),
            depth: captured_depth(captured),
        })))
    }
}

/// One user definition slot.
#[derive(Clone)]
pub(crate) struct Binding {
    pub name: ArcStr,
    /// `None` while declared but not yet defined.
    pub value: Option<Value>,
    pub doc: Option<ArcStr>,
    pub params: Vec<String>,
    /// When the name was first defined (definition order, DEF-009).
    pub order: u64,
}

/// The state of one run: value stack, user definitions, limit counters and what the program
/// printed and which tools it called.
pub struct Ctx {
    stack: Vec<Value>,
    base: usize,
    pub(crate) globals: Arc<Vec<Binding>>,
    pub(crate) next_order: u64,
    limits: Arc<Limits>,
    steps: u64,
    next_check: u64,
    started: Instant,
    /// When the run began (reading and analysis included): the timeout counts from here.
    run_started: Instant,
    /// Time spent inside tools, which does not count against [`Limits::timeout`].
    tool_time: Duration,
    depth: usize,
    memory: usize,
    /// Stack segments in use by nested calls: they count against the memory budget while
    /// they are in use.
    stack_segments: usize,
    /// Lowest stack address evaluation may reach on the current stack segment before it
    /// continues on a new one, [`UNKNOWN_STACK_FLOOR`] until it is looked up (on a fresh
    /// context and segment): comparing with it is cheaper than asking for the stack's limit.
    stack_floor: usize,
    /// Where a keyword called as a function (`(map :price items)`) last found its key in a
    /// small map: builtins call the same keyword on many maps of one shape.
    keyword_hint: AtomicU8,
    output_bytes: usize,
    pub(crate) prints: Vec<String>,
    pub(crate) tool_calls: Vec<ToolCallRecord>,
    /// Set on `pmap`/`pcalls` workers, where `def` is refused.
    worker: bool,
    /// Tool calls left to the workers of a parallel section, shared between them so the run's
    /// limit holds while they call tools at the same time.
    tool_budget: Option<Arc<AtomicUsize>>,
}

const CLOCK_INTERVAL: u64 = 4096;

pub(crate) struct Env<'a> {
    /// The running closure's arguments, when its parameters are read in place (see
    /// [`ARG_SLOT`]).
    pub args: &'a [Value],
    pub captures: &'a Arc<[Value]>,
    pub self_fn: Option<&'a Function>,
    pub group: Option<&'a Arc<[Arc<Lambda>]>>,
}

impl Ctx {
    /// A context whose evaluation starts now (`now`), in a run that began at `run_started`
    /// (when reading or analysis began), which the timeout counts from. The caller passes the
    /// clock reading it already has: reading the clock costs more than a small program's step.
    pub(crate) fn new(
        limits: Arc<Limits>,
        globals: Arc<Vec<Binding>>,
        next_order: u64,
        now: Instant,
        run_started: Instant,
    ) -> Ctx {
        let next_check = CLOCK_INTERVAL.min(limits.max_steps);
        Ctx {
            stack: Vec::with_capacity(32),
            base: 0,
            globals,
            next_order,
            limits,
            steps: 0,
            next_check,
            started: now,
            run_started,
            tool_time: Duration::ZERO,
            depth: 0,
            memory: 0,
            stack_segments: 0,
            stack_floor: UNKNOWN_STACK_FLOOR,
            keyword_hint: AtomicU8::new(0),
            output_bytes: 0,
            prints: Vec::new(),
            tool_calls: Vec::new(),
            worker: false,
            tool_budget: None,
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Bytes charged to the memory budget so far.
    pub fn memory_used(&self) -> usize {
        self.memory
    }

    /// Evaluation time so far, not counting time spent in tools.
    pub fn eval_time(&self) -> Duration {
        self.started.elapsed().saturating_sub(self.tool_time)
    }

    /// Time the run has used against [`Limits::timeout`]: since it began (reading and analysis
    /// included), not counting time spent in tools.
    fn run_time(&self) -> Duration {
        self.run_started.elapsed().saturating_sub(self.tool_time)
    }

    // -----------------------------------------------------------------------------------------
    // Limits
    // -----------------------------------------------------------------------------------------

    /// Count one evaluation step.
    #[inline]
    pub fn tick(&mut self) -> Result<(), Error> {
        self.steps += 1;
        if self.steps >= self.next_check {
            self.check_budget()?;
        }
        Ok(())
    }

    /// Count `n` steps of bulk work done by a builtin (sorting, copying, ...).
    #[inline]
    pub fn tick_n(&mut self, n: usize) -> Result<(), Error> {
        self.steps = self.steps.saturating_add(n as u64);
        if self.steps >= self.next_check {
            self.check_budget()?;
        }
        Ok(())
    }

    #[cold]
    fn check_budget(&mut self) -> Result<(), Error> {
        if self.steps >= self.limits.max_steps {
            let what = if self.worker {
                "a pmap/pcalls item took more than its share of the remaining budget,"
            } else {
                "the program took more than"
            };
            return Err(Error::new(
                ErrorKind::StepLimit,
                format!(
                    "step limit exceeded: {what} {} evaluation steps; look for an infinite loop \
                     or process less data per turn",
                    self.limits.max_steps
                ),
            ));
        }
        if self.run_time() > self.limits.timeout {
            return Err(self.timeout_error());
        }
        // Memory allocated behind the scenes is settled here too, not only when a builtin
        // returns: a builtin calling a function for each of a million items must not build
        // them all before the budget is looked at.
        self.settle_meter()?;
        self.next_check = (self.steps + CLOCK_INTERVAL).min(self.limits.max_steps.max(1));
        Ok(())
    }

    /// Meter the walking of values (hashing, comparing, printing) on this thread for as long
    /// as the guard lives: as many elements as the run has steps, until the run's deadline.
    /// See `value::meter`.
    pub(crate) fn meter_guard(&self) -> meter::Guard {
        let deadline = self
            .run_started
            .checked_add(self.limits.timeout)
            .and_then(|d| d.checked_add(self.tool_time));
        meter::Guard::new(
            self.limits.max_steps.saturating_sub(self.steps),
            deadline,
            self.limits.max_memory_bytes,
        )
    }

    /// Charge the copies made behind the scenes since the last call (giving back those already
    /// dropped), and end the run when walking values used up the budget (see `value::meter`).
    pub(crate) fn settle_meter(&mut self) -> Result<(), Error> {
        let meter::Settled {
            copied,
            freed,
            exhausted,
        } = meter::settle();
        if freed > 0 {
            self.memory = self
                .memory
                .saturating_sub(freed.saturating_mul(std::mem::size_of::<Value>()));
        }
        if copied > 0 {
            self.charge_items(copied)?;
        }
        match exhausted {
            None => Ok(()),
            Some(meter::Exhausted::Steps) => Err(Error::new(
                ErrorKind::StepLimit,
                format!(
                    "step limit exceeded: the program took more than {} evaluation steps \
                     (comparing, hashing and printing large values count too); look for an \
                     infinite loop or process less data per turn",
                    self.limits.max_steps
                ),
            )),
            Some(meter::Exhausted::Time) => Err(self.timeout_error()),
            Some(meter::Exhausted::Memory) => Err(self.memory_limit_error()),
        }
    }

    fn timeout_error(&self) -> Error {
        Error::new(
            ErrorKind::Timeout,
            format!(
                "timeout: the program ran longer than {} ms; look for an infinite loop or \
                 process less data per turn",
                self.limits.timeout.as_millis()
            ),
        )
    }

    /// Refuse to let `value` leave the sandbox (as a tool argument, a definition or the result)
    /// when writing it out in full would take more than the memory budget: a value whose shared
    /// parts repeat can be small in memory and astronomically large as JSON or text.
    pub(crate) fn check_export(&self, value: &Value, what: &str) -> Result<(), Error> {
        if value.estimated_size_within(self.limits.max_memory_bytes) {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::MemoryLimit,
            format!(
                "memory limit exceeded: {what} would take more than {} bytes written out in full \
                 (it repeats the same parts many times); pass a smaller or flatter value",
                self.limits.max_memory_bytes
            ),
        ))
    }

    /// Charge `bytes` to the memory budget.
    #[inline]
    pub fn charge(&mut self, bytes: usize) -> Result<(), Error> {
        self.memory = self.memory.saturating_add(bytes);
        if self.memory > self.limits.max_memory_bytes {
            return Err(Error::memory_limit(self.limits.max_memory_bytes));
        }
        Ok(())
    }

    /// Bytes the memory budget has left.
    pub fn memory_left(&self) -> usize {
        self.limits.max_memory_bytes.saturating_sub(self.memory)
    }

    /// The error for a value that would not fit in the memory budget.
    pub fn memory_limit_error(&self) -> Error {
        Error::memory_limit(self.limits.max_memory_bytes)
    }

    /// Charge for `n` new collection slots.
    #[inline]
    pub fn charge_items(&mut self, n: usize) -> Result<(), Error> {
        self.charge(n.saturating_mul(std::mem::size_of::<Value>()))
    }

    /// Refuse values nested deeper than [`Limits::max_value_depth`].
    #[inline]
    pub fn check_depth(&self, value: &Value) -> Result<(), Error> {
        self.check_nesting(value.depth() as usize)
    }

    /// Refuse to build a value nested `depth` levels deep when that is more than
    /// [`Limits::max_value_depth`].
    #[inline]
    pub fn check_nesting(&self, depth: usize) -> Result<(), Error> {
        if depth > self.limits.max_value_depth as usize {
            return Err(Error::new(
                ErrorKind::DepthLimit,
                format!(
                    "value nested deeper than {} levels; build flatter data",
                    self.limits.max_value_depth
                ),
            ));
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Output and tools
    // -----------------------------------------------------------------------------------------

    /// Record one `println` entry (cut at [`Limits::max_print_chars`], TRN-011).
    pub fn emit_print(&mut self, mut text: String) -> Result<(), Error> {
        self.settle_meter()?;
        let max = self.limits.max_print_chars;
        if let Some((cut, _)) = text.char_indices().nth(max) {
            text.truncate(cut);
            text.push_str("...");
        }
        self.keep_print(text)
    }

    /// Count `text` against [`Limits::max_output_bytes`] and keep it if it fits. Once the
    /// limit is passed nothing more is kept: the kept entries are always the first ones.
    fn keep_print(&mut self, text: String) -> Result<(), Error> {
        self.output_bytes = self.output_bytes.saturating_add(text.len());
        if self.output_bytes > self.limits.max_output_bytes {
            return Err(Error::new(
                ErrorKind::OutputLimit,
                format!(
                    "output limit exceeded: the program printed more than {} bytes; print \
                     samples or counts instead of whole collections",
                    self.limits.max_output_bytes
                ),
            ));
        }
        self.prints.push(text);
        Ok(())
    }

    /// Call host tool `name` and record the call.
    pub fn call_tool(
        &mut self,
        name: &ArcStr,
        tool: &Arc<dyn Tool>,
        args: Vec<Value>,
    ) -> EvalResult {
        let within_limit = match &self.tool_budget {
            // A parallel worker: its siblings draw from the same remaining calls.
            Some(budget) => budget
                .fetch_update(AtomicOrdering::SeqCst, AtomicOrdering::SeqCst, |n| {
                    n.checked_sub(1)
                })
                .is_ok(),
            None => self.tool_calls.len() < self.limits.max_tool_calls,
        };
        if !within_limit {
            let message = if self.tool_budget.is_some() {
                "tool call limit exceeded: the calls made before and inside pmap/pcalls used up \
                 the run's tool calls; batch the work or continue in the next turn"
                    .to_string()
            } else {
                format!(
                    "tool call limit exceeded: a program may call tools at most {} times; \
                     batch the work or continue in the next turn",
                    self.limits.max_tool_calls
                )
            };
            return Err(Error::new(ErrorKind::ToolCallLimit, message).into());
        }
        self.settle_meter()?;
        for arg in &args {
            self.check_export(arg, &format!("an argument of tool/{name}"))?;
        }
        let start = Instant::now();
        let outcome = invoke_tool(tool, &args, self.limits.tool_timeout);
        let elapsed = start.elapsed();
        self.tool_time += elapsed;
        meter::extend_deadline(elapsed);
        let duration_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        match outcome {
            Ok(value) => {
                // Recorded first: the call happened even if its result is too large to keep.
                self.tool_calls.push(ToolCallRecord {
                    name: name.to_string(),
                    args,
                    result: ToolOutcome::Ok(value.clone()),
                    duration_us,
                });
                self.charge(value.estimated_size())?;
                Ok(value)
            }
            Err(message) => {
                let err = Error::new(ErrorKind::Tool, format!("tool/{name} failed: {message}"));
                self.tool_calls.push(ToolCallRecord {
                    name: name.to_string(),
                    args,
                    result: ToolOutcome::Error(message),
                    duration_us,
                });
                Err(err.into())
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Parallel workers (pmap, pcalls)
    // -----------------------------------------------------------------------------------------

    /// A context for a worker thread: same definitions and limits; a `1/share` part of the
    /// remaining step and memory budgets, so workers together stay within the run's budget.
    pub fn fork(&self, share: usize) -> Ctx {
        let share = share.max(1) as u64;
        let mut limits = (*self.limits).clone();
        limits.max_steps = self.limits.max_steps.saturating_sub(self.steps) / share;
        limits.max_memory_bytes =
            self.limits.max_memory_bytes.saturating_sub(self.memory) / share as usize;
        limits.max_tool_calls = self
            .limits
            .max_tool_calls
            .saturating_sub(self.tool_calls.len());
        limits.max_output_bytes = self
            .limits
            .max_output_bytes
            .saturating_sub(self.output_bytes);
        limits.timeout = self.limits.timeout.saturating_sub(self.run_time());
        let now = Instant::now();
        let mut child = Ctx::new(
            Arc::new(limits),
            self.globals.clone(),
            self.next_order,
            now,
            now,
        );
        child.worker = true;
        // A worker may start with its time or steps already spent (the items before it on its
        // thread used them): look at the budget on its first step, not after thousands.
        child.next_check = 1;
        child.depth = self.depth;
        child.tool_budget = self.tool_budget.clone();
        child
    }

    /// The tool-call budget the workers of a parallel section share: the enclosing section's,
    /// or a new one holding what this run has left.
    pub(crate) fn worker_tool_budget(&self) -> Arc<AtomicUsize> {
        match &self.tool_budget {
            Some(budget) => budget.clone(),
            None => Arc::new(AtomicUsize::new(
                self.limits
                    .max_tool_calls
                    .saturating_sub(self.tool_calls.len()),
            )),
        }
    }

    /// A context for one item of a parallel section: as [`Ctx::fork`], drawing tool calls from
    /// `tool_budget` (shared with its siblings), and with the evaluation time its worker thread
    /// already spent on earlier items (`used`) taken off its timeout, so a thread that works
    /// through many items still stops at the run's deadline.
    pub(crate) fn fork_worker(
        &self,
        share: usize,
        tool_budget: &Arc<AtomicUsize>,
        used: Duration,
    ) -> Ctx {
        let mut child = self.fork(share);
        if !used.is_zero() {
            let mut limits = (*child.limits).clone();
            limits.timeout = limits.timeout.saturating_sub(used);
            child.limits = Arc::new(limits);
        }
        child.tool_budget = Some(tool_budget.clone());
        child
    }

    /// Time spent inside tools so far.
    pub(crate) fn tool_time(&self) -> Duration {
        self.tool_time
    }

    /// After a parallel section's workers joined: of the section's `wall` time, only `busy`
    /// (the busiest worker thread's evaluation time) counts as evaluation. `join` added up every
    /// worker's tool time, but those waits overlapped.
    pub(crate) fn settle_parallel_time(
        &mut self,
        tool_time_before: Duration,
        wall: Duration,
        busy: Duration,
    ) {
        self.tool_time = tool_time_before + wall.saturating_sub(busy);
    }

    /// Take back a finished worker's records and counters (call in a deterministic order, for
    /// every worker, even after one of them returned an error).
    ///
    /// The worker's tool calls are recorded first and always: they happened, so the run reports
    /// them whatever limit the merge hits. Its steps, tool time and memory are added up as well.
    /// Its prints are kept while they fit in this context's output limit; the first one that
    /// does not fit, and every print after it, is dropped (a run stops printing at the limit,
    /// so the kept prints are always the first ones). The `Err` is the first limit the merged
    /// counters went over: memory, output, tool calls, then steps and time.
    pub fn join(&mut self, child: Ctx) -> Result<(), Error> {
        self.tool_calls.extend(child.tool_calls);
        self.steps = self.steps.saturating_add(child.steps);
        self.tool_time += child.tool_time;
        let mut outcome = self.charge(child.memory);
        for text in child.prints {
            if let Err(e) = self.keep_print(text) {
                outcome = outcome.and(Err(e));
                break;
            }
        }
        if outcome.is_ok() && self.tool_calls.len() > self.limits.max_tool_calls {
            outcome = Err(Error::new(
                ErrorKind::ToolCallLimit,
                format!(
                    "tool call limit exceeded: a program may call tools at most {} times",
                    self.limits.max_tool_calls
                ),
            ));
        }
        outcome.and_then(|()| self.check_budget())
    }

    // -----------------------------------------------------------------------------------------
    // Calling
    // -----------------------------------------------------------------------------------------

    /// Call any callable value: a function, keyword, map, set, vector or var.
    pub fn apply(&mut self, f: &Value, args: &[Value]) -> EvalResult {
        match f {
            Value::Fn(func) => self.apply_fn(func, args),
            Value::Keyword(k) => match args {
                [m] => Ok(keyword_get_hinted(m, f, &self.keyword_hint).unwrap_or_default()),
                [m, default] => Ok(get_key(m, f).unwrap_or_else(|| default.clone())),
                _ => Err(arity_error(&format!(":{}", k.as_str()), args.len(), "1 or 2").into()),
            },
            Value::Map(m) => match args {
                [k] => Ok(lookup(m, k).cloned().unwrap_or_default()),
                [k, default] => Ok(lookup(m, k).cloned().unwrap_or_else(|| default.clone())),
                _ => Err(arity_error("a map", args.len(), "1 or 2").into()),
            },
            Value::Set(s) => match args {
                [x] => Ok(s.get(x).cloned().unwrap_or_default()),
                [x, default] => Ok(s.get(x).cloned().unwrap_or_else(|| default.clone())),
                _ => Err(arity_error("a set", args.len(), "1 or 2").into()),
            },
            Value::Vector(v) => match args {
                [Value::Int(i)] => usize::try_from(*i)
                    .ok()
                    .and_then(|i| v.get(i))
                    .cloned()
                    .ok_or_else(|| {
                        Error::index(format!(
                            "index {i} out of bounds for a vector of {} items",
                            v.len()
                        ))
                        .into()
                    }),
                [other] => Err(Error::type_error(format!(
                    "a vector called as a function needs an integer index, got {}",
                    other.type_name()
                ))
                .into()),
                _ => Err(arity_error("a vector", args.len(), "1").into()),
            },
            Value::Var(sym) => {
                let value = self
                    .globals
                    .iter()
                    .find(|b| b.name.as_str() == sym.name())
                    .and_then(|b| b.value.clone());
                match value {
                    Some(v) => self.apply(&v, args),
                    None => Err(Error::new(
                        ErrorKind::UndefinedSymbol,
                        format!("#'{} is not defined", sym.as_str()),
                    )
                    .into()),
                }
            }
            other => Err(Error::type_error(format!(
                "{} is not a function: {} cannot be called",
                pr_str_short(other),
                other.type_name()
            ))
            .into()),
        }
    }

    /// [`Ctx::apply`] to one argument, with a keyword (`(map :price rows)`, `(group-by
    /// :category rows)`) looked up without the general call.
    #[inline]
    pub fn apply1(&mut self, f: &Value, arg: &Value) -> EvalResult {
        match f {
            Value::Fn(func) => self.apply_fn(func, std::slice::from_ref(arg)),
            Value::Keyword(_) => {
                Ok(keyword_get_hinted(arg, f, &self.keyword_hint).unwrap_or_default())
            }
            _ => self.apply(f, std::slice::from_ref(arg)),
        }
    }

    /// What the keyword `f` finds in the map `target`, borrowed; `None` when `f` is not a
    /// keyword, `target` not a map, or the key absent. For callers that only look at the value
    /// (grouping by a field), so it need not be copied.
    #[inline]
    pub(crate) fn keyword_field<'v>(&self, f: &Value, target: &'v Value) -> Option<&'v Value> {
        match (f, target) {
            (Value::Keyword(_), Value::Map(m)) => map_field(m, f, &self.keyword_hint),
            _ => None,
        }
    }

    #[inline]
    pub fn apply_fn(&mut self, func: &Function, args: &[Value]) -> EvalResult {
        match func.repr() {
            FnRepr::Builtin(b) => self.call_builtin(b, args),
            FnRepr::Closure(c) => self.call_closure(func, c, args),
            FnRepr::Native(n) => {
                // Natives that wrap functions (`fnil`, `partial`, `comp`, ...) call them in
                // turn, so a chain of them recurses like nested calls do.
                self.tick()?;
                self.enter_call()?;
                let result = self.with_stack(|ctx| (n.f)(ctx, args));
                self.depth -= 1;
                let value = result?;
                self.check_depth(&value)?;
                Ok(value)
            }
            FnRepr::Opaque(text) => Err(Error::type_error(format!(
                "{text} was read back from a printed value and cannot be called"
            ))
            .into()),
        }
    }

    #[inline]
    pub(crate) fn call_builtin(&mut self, b: &'static Builtin, args: &[Value]) -> EvalResult {
        // The entry checks the arguments, counts the step, runs the builtin and settles what
        // it used (see `builtins::args::invoke`).
        (b.f)(self, b, args)
    }

    #[inline]
    fn call_closure(&mut self, func: &Function, c: &Closure, args: &[Value]) -> EvalResult {
        let Some(arity) = c.lambda.arity_for(args.len()) else {
            return Err(closure_arity_error(&c.lambda, args.len()).into());
        };
        self.check_call_depth()?;
        self.tick()?;
        self.with_stack(|ctx| ctx.run_closure(func, c, arity, args))
    }

    fn run_closure(
        &mut self,
        func: &Function,
        c: &Closure,
        arity: &ArityBody,
        args: &[Value],
    ) -> EvalResult {
        {
            let new_base = self.stack.len();
            if !arity.args_in_place {
                self.stack.extend_from_slice(&args[..arity.fixed]);
            }
            if arity.variadic {
                let rest = &args[arity.fixed..];
                self.stack.push(if rest.is_empty() {
                    Value::Nil
                } else {
                    Value::list(rest.iter().cloned())
                });
            }
            let frame_end = new_base + arity.frame_size as usize;
            if self.stack.len() < frame_end {
                self.stack.resize(frame_end, Value::Nil);
            }
            let saved_base = self.base;
            self.base = new_base;
            self.depth += 1;
            let env = Env {
                args: if arity.args_in_place {
                    &args[..arity.fixed]
                } else {
                    &[]
                },
                captures: &c.captures,
                self_fn: Some(func),
                group: c.group.as_ref(),
            };
            let result = self.run_body(&arity.body, &env);
            self.stack.truncate(new_base);
            self.base = saved_base;
            self.depth -= 1;
            if let Ok(v) = &result {
                c.lambda
                    .last_return
                    .store(pack_shape(ValueShape::of(v)), AtomicOrdering::Relaxed);
            }
            result
        }
    }

    fn check_call_depth(&self) -> Result<(), Error> {
        if self.depth >= self.limits.max_call_depth {
            return Err(Error::new(
                ErrorKind::DepthLimit,
                format!(
                    "recursion too deep: more than {} nested calls; use loop/recur or reduce \
                     instead of deep recursion",
                    self.limits.max_call_depth
                ),
            ));
        }
        Ok(())
    }

    /// Count one more nested call (undo with `self.depth -= 1`).
    fn enter_call(&mut self) -> Result<(), Error> {
        self.check_call_depth()?;
        self.depth += 1;
        Ok(())
    }

    /// Run `f`, on a new stack segment when the thread's stack runs low. Segments in use
    /// count against the memory budget, so deep recursion (when the call depth limit is set
    /// high) ends with a memory limit error rather than taking the host's memory.
    #[inline]
    pub(crate) fn with_stack<T>(
        &mut self,
        f: impl FnOnce(&mut Ctx) -> EvalResult<T>,
    ) -> EvalResult<T> {
        if stack_has_room(&mut self.stack_floor) {
            return f(self);
        }
        let in_use = (self.stack_segments + 1).saturating_mul(STACK_GROW_BY);
        if self.memory.saturating_add(in_use) > self.limits.max_memory_bytes {
            return Err(Error::new(
                ErrorKind::MemoryLimit,
                format!(
                    "memory limit exceeded: nested calls need more stack than the memory budget \
                     of {} bytes allows; use loop/recur or reduce instead of deep recursion",
                    self.limits.max_memory_bytes
                ),
            )
            .into());
        }
        self.stack_segments += 1;
        let floor = std::mem::replace(&mut self.stack_floor, UNKNOWN_STACK_FLOOR);
        let result = stacker::grow(STACK_GROW_BY, || f(self));
        self.stack_floor = floor;
        self.stack_segments -= 1;
        result
    }

    /// Run a function or loop body, jumping back to its head on `recur`.
    fn run_body(&mut self, body: &Expr, env: &Env) -> EvalResult {
        loop {
            let result = self.eval(body, env);
            if !matches!(result, Err(Flow::Recur)) {
                return result;
            }
            // `Flow::Recur` owns nothing: skip the out-of-line destructor of the result.
            std::mem::forget(result);
            self.tick()?;
        }
    }

    // -----------------------------------------------------------------------------------------
    // Evaluation
    // -----------------------------------------------------------------------------------------

    pub(crate) fn run_top(&mut self, body: &Expr, frame_size: u32) -> EvalResult {
        // The run may be on another thread than the context's last one.
        self.stack_floor = UNKNOWN_STACK_FLOOR;
        self.stack.clear();
        self.base = 0;
        self.stack.resize(frame_size as usize, Value::Nil);
        let env = Env {
            args: &[],
            captures: no_captures(),
            self_fn: None,
            group: None,
        };
        self.eval(body, &env)
    }

    /// The value of local `slot`: in the frame, or an argument read in place.
    #[inline(always)]
    fn local<'v>(&'v self, slot: Slot, env: &'v Env) -> &'v Value {
        if slot >= ARG_SLOT {
            &env.args[(slot - ARG_SLOT) as usize]
        } else {
            &self.stack[self.base + slot as usize]
        }
    }

    #[inline]
    fn slot(&mut self, slot: Slot) -> &mut Value {
        &mut self.stack[self.base + slot as usize]
    }

    /// `eval`, with locals and constants (most operands) read without a call, and numeric
    /// operations dispatched straight to their small functions.
    #[inline(always)]
    fn operand(&mut self, expr: &Expr, env: &Env) -> EvalResult {
        match expr {
            Expr::Local(s) => Ok(self.local(*s, env).clone()),
            Expr::Const(v) => Ok(v.clone()),
            Expr::Op2(o) => match self.op2_in_place(o, env) {
                Some(v) => Ok(v),
                None => self.eval_op2(o, env),
            },
            Expr::Op1(o) => match self.op1_in_place(o, env) {
                Some(v) => Ok(v),
                None => self.eval_op1(o, env),
            },
            _ => self.eval(expr, env),
        }
    }

    /// [`Ctx::operand`], with a field of a record held in a local (`(:price %)`) read without a
    /// call: the operands of comparisons and of `and`/`or` in predicates often are.
    #[inline(always)]
    fn field_operand(&mut self, expr: &Expr, env: &Env) -> EvalResult {
        match expr {
            Expr::KeywordGet(k) if k.default.is_none() => match &k.target {
                Expr::Local(s) => Ok(keyword_get(self.local(*s, env), k).unwrap_or_default()),
                _ => self.eval(expr, env),
            },
            _ => self.operand(expr, env),
        }
    }

    /// The integer a local, a captured local or a constant holds, read without evaluating.
    #[inline(always)]
    fn peek_int(&self, expr: &Expr, env: &Env) -> Option<i64> {
        let value = match expr {
            Expr::Local(s) => self.local(*s, env),
            Expr::Capture(i) => &env.captures[*i as usize],
            Expr::Const(v) => v,
            _ => return None,
        };
        match value {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// `(op a b)` on integer locals and constants (a loop counter against its bound), read in
    /// place: no copies to make and drop. `None` sends the operation down the general path,
    /// which may read the operands again since reading them has no effects.
    #[inline(always)]
    fn op2_in_place(&self, o: &Op2Expr, env: &Env) -> Option<Value> {
        let (x, y) = (self.peek_int(&o.left, env)?, self.peek_int(&o.right, env)?);
        match o.op {
            Op2::Add => x.checked_add(y).map(Value::Int),
            Op2::Sub => x.checked_sub(y).map(Value::Int),
            Op2::Mul => x.checked_mul(y).map(Value::Int),
            Op2::Lt => Some(Value::Bool(x < y)),
            Op2::Gt => Some(Value::Bool(x > y)),
            Op2::Le => Some(Value::Bool(x <= y)),
            Op2::Ge => Some(Value::Bool(x >= y)),
            Op2::Eq => Some(Value::Bool(x == y)),
        }
    }

    /// `(op a)` on an integer local or constant, read in place (see [`Ctx::op2_in_place`]).
    #[inline(always)]
    fn op1_in_place(&self, o: &Op1Expr, env: &Env) -> Option<Value> {
        let x = self.peek_int(&o.arg, env)?;
        match o.op {
            Op1::Inc => x.checked_add(1).map(Value::Int),
            Op1::Dec => x.checked_sub(1).map(Value::Int),
            Op1::Zero => Some(Value::Bool(x == 0)),
        }
    }

    /// A numeric operation: integers and floats inline, anything else through the builtin.
    #[inline(never)]
    fn eval_op1(&mut self, o: &Op1Expr, env: &Env) -> EvalResult {
        let v = self.operand(&o.arg, env)?;
        if let Value::Int(x) = v {
            let fast = match o.op {
                Op1::Inc => x.checked_add(1).map(Value::Int),
                Op1::Dec => x.checked_sub(1).map(Value::Int),
                Op1::Zero => Some(Value::Bool(x == 0)),
            };
            if let Some(result) = fast {
                v.drop_fast();
                return Ok(result);
            }
        }
        self.call_builtin(o.builtin, &[v])
            .map_err(|f| with_span(f, o.span))
    }

    /// A numeric operation: integers and floats inline, anything else through the builtin.
    #[inline(never)]
    fn eval_op2(&mut self, o: &Op2Expr, env: &Env) -> EvalResult {
        let a = self.field_operand(&o.left, env)?;
        let b = self.field_operand(&o.right, env)?;
        let fast = match (&a, &b) {
            (Value::Int(x), Value::Int(y)) => match o.op {
                Op2::Add => x.checked_add(*y).map(Value::Int),
                Op2::Sub => x.checked_sub(*y).map(Value::Int),
                Op2::Mul => x.checked_mul(*y).map(Value::Int),
                Op2::Lt => Some(Value::Bool(x < y)),
                Op2::Gt => Some(Value::Bool(x > y)),
                Op2::Le => Some(Value::Bool(x <= y)),
                Op2::Ge => Some(Value::Bool(x >= y)),
                Op2::Eq => Some(Value::Bool(x == y)),
            },
            (Value::Float(_) | Value::Int(_), Value::Float(_) | Value::Int(_)) => {
                // At least one float: the same arithmetic the builtins do.
                let (x, y) = (float_of(&a), float_of(&b));
                match o.op {
                    Op2::Add => Some(Value::Float(x + y)),
                    Op2::Sub => Some(Value::Float(x - y)),
                    Op2::Mul => Some(Value::Float(x * y)),
                    Op2::Lt => Some(Value::Bool(x < y)),
                    Op2::Gt => Some(Value::Bool(x > y)),
                    Op2::Le => Some(Value::Bool(x <= y)),
                    Op2::Ge => Some(Value::Bool(x >= y)),
                    // (= 1 1.0) is false: only two floats compare by value here.
                    Op2::Eq => None,
                }
            }
            _ => None,
        };
        if let Some(result) = fast {
            a.drop_fast();
            b.drop_fast();
            return Ok(result);
        }
        self.call_builtin(o.builtin, &[a, b])
            .map_err(|f| with_span(f, o.span))
    }

    pub(crate) fn eval(&mut self, expr: &Expr, env: &Env) -> EvalResult {
        // Expressions in tail position (the branches of `if`, the last of `do`, the body of
        // `let`) are evaluated by this loop rather than by a nested call.
        let mut expr = expr;
        loop {
            return match expr {
                Expr::Const(v) => Ok(v.clone()),
                Expr::Local(s) => Ok(self.local(*s, env).clone()),
                Expr::Capture(i) => Ok(env.captures[*i as usize].clone()),
                Expr::Global {
                    slot,
                    name,
                    fallback,
                    span,
                } => match &self.globals[*slot as usize].value {
                    Some(v) => Ok(v.clone()),
                    None => match fallback {
                        Some(e) => self.eval(e, env),
                        None => Err(Error::at(
                            ErrorKind::UndefinedSymbol,
                            *span,
                            format!(
                                "{name} is declared but has no value yet: define it with def \
                             before using it"
                            ),
                        )
                        .into()),
                    },
                },
                Expr::If(b) => {
                    let truthy = self.operand(&b.0, env)?.into_truthy();
                    expr = if truthy { &b.1 } else { &b.2 };
                    continue;
                }
                Expr::Do(exprs) => {
                    let (last, init) = exprs.split_last().expect("do bodies are never empty");
                    for e in init {
                        self.eval(e, env)?;
                    }
                    expr = last;
                    continue;
                }
                Expr::Let(bindings, body) => {
                    for (slot, e) in bindings.iter() {
                        let v = self.field_operand(e, env)?;
                        Value::store_fast(self.slot(*slot), v);
                    }
                    expr = body;
                    continue;
                }
                Expr::Recur(args, slots) => {
                    // All arguments are evaluated before any slot is assigned.
                    match (&args[..], &slots[..]) {
                        ([a], [sa]) => {
                            let a = self.operand(a, env)?;
                            Value::store_fast(self.slot(*sa), a);
                        }
                        ([a, b], [sa, sb]) => {
                            let a = self.operand(a, env)?;
                            let b = self.operand(b, env)?;
                            Value::store_fast(self.slot(*sa), a);
                            Value::store_fast(self.slot(*sb), b);
                        }
                        _ => {
                            let mut values: SmallVec<[Value; 4]> =
                                SmallVec::with_capacity(args.len());
                            for e in args.iter() {
                                values.push(self.operand(e, env)?);
                            }
                            for (slot, v) in slots.iter().zip(values) {
                                Value::store_fast(self.slot(*slot), v);
                            }
                        }
                    }
                    Err(Flow::Recur)
                }
                Expr::CallBuiltin(c) => {
                    let args = self.eval_args(&c.args, env)?;
                    self.call_builtin(c.builtin, &args)
                        .map_err(|f| with_span(f, c.span))
                }
                Expr::Op1(o) => match self.op1_in_place(o, env) {
                    Some(v) => Ok(v),
                    None => self.eval_op1(o, env),
                },
                Expr::Op2(o) => match self.op2_in_place(o, env) {
                    Some(v) => Ok(v),
                    None => self.eval_op2(o, env),
                },
                Expr::Call(c) => {
                    let f = self.eval(&c.callee, env)?;
                    let args = self.eval_args(&c.args, env)?;
                    self.apply(&f, &args).map_err(|f| with_span(f, c.span))
                }
                Expr::KeywordGet(k) => {
                    // A local or captured map is looked into where it is, not copied out first.
                    let found = match &k.target {
                        Expr::Local(s) => keyword_get(self.local(*s, env), k),
                        Expr::Capture(i) => keyword_get(&env.captures[*i as usize], k),
                        target => {
                            let target = self.operand(target, env)?;
                            keyword_get(&target, k)
                        }
                    };
                    match (found, &k.default) {
                        (Some(v), _) => Ok(v),
                        (None, Some(d)) => self.eval(d, env).map_err(|f| with_span(f, k.span)),
                        (None, None) => Ok(Value::Nil),
                    }
                }
                Expr::And(exprs) => {
                    let mut last = Value::Bool(true);
                    for e in exprs.iter() {
                        std::mem::replace(&mut last, self.field_operand(e, env)?).drop_fast();
                        if !last.truthy() {
                            return Ok(last);
                        }
                    }
                    Ok(last)
                }
                Expr::Or(exprs) => {
                    let mut last = Value::Nil;
                    for e in exprs.iter() {
                        std::mem::replace(&mut last, self.field_operand(e, env)?).drop_fast();
                        if last.truthy() {
                            return Ok(last);
                        }
                    }
                    Ok(last)
                }
                _ => self.eval_cold(expr, env),
            };
        }
    }

    /// The forms that are rarely in a hot loop, kept out of `eval` so its frame stays small.
    #[inline(never)]
    fn eval_cold(&mut self, expr: &Expr, env: &Env) -> EvalResult {
        match expr {
            Expr::SelfFn => Ok(env
                .self_fn
                .map(|f| Value::Fn(f.clone()))
                .unwrap_or_default()),
            Expr::LetfnSibling(j) => Ok(sibling(env, *j)),
            Expr::Raise(err) => Err(Flow::Error(err.clone())),
            Expr::Loop(l) => {
                for (slot, e) in l.slots.iter().zip(l.inits.iter()) {
                    let v = self.eval(e, env)?;
                    *self.slot(*slot) = v;
                }
                self.run_body(&l.body, env)
                    .map_err(|f| with_span(f, l.span))
            }
            Expr::MakeFn(lambda) => {
                let captures = self.capture(&lambda.captures, env);
                self.charge_items(captures.len())?;
                let depth = captured_depth(captures.iter());
                self.check_nesting(depth as usize)?;
                Ok(Value::Fn(Function(Arc::new(FnRepr::Closure(Closure {
                    lambda: lambda.clone(),
                    captures,
                    group: None,
                    depth,
                    own: meter::own(CLOSURE_SLOTS),
                })))))
            }
            Expr::Letfn(l) => {
                let captures = self.capture(&l.captures, env);
                let depth = captured_depth(captures.iter());
                self.check_nesting(depth as usize)?;
                for (j, slot) in l.slots.iter().enumerate() {
                    let f = Value::Fn(Function(Arc::new(FnRepr::Closure(Closure {
                        lambda: l.lambdas[j].clone(),
                        captures: captures.clone(),
                        group: Some(l.lambdas.clone()),
                        depth,
                        own: meter::own(CLOSURE_SLOTS),
                    }))));
                    *self.slot(*slot) = f;
                }
                self.eval(&l.body, env)
            }
            Expr::Def(d) => self.eval_def(d, env),
            Expr::Deep(d) => self.with_stack(|ctx| ctx.eval(&d.0, env)),
            Expr::Try(t) => self.eval_try(t, env),
            Expr::Throw(e, span) => {
                let v = self.eval(e, env)?;
                Err(throw_value(v).or_span(*span).into())
            }
            Expr::Return(e) => {
                let v = self.eval(e, env)?;
                Err(Flow::Return(v))
            }
            Expr::Fail(e, span) => {
                let v = self.eval(e, env)?;
                Err(Flow::Fail(Box::new((v, *span))))
            }
            Expr::Case(c) => {
                let subject = self.eval(&c.subject, env)?;
                match c.table.get(&subject) {
                    Some(&i) => self.eval(&c.branches[i], env),
                    None => match &c.default {
                        Some(d) => self.eval(d, env),
                        None => Err(Error::at(
                            ErrorKind::Argument,
                            c.span,
                            // Clojure's message (the value as str shows it), which a program
                            // may catch and compare.
                            format!(
                                "No matching clause: {}",
                                crate::format::render_within(
                                    &subject,
                                    crate::format::Rendering::Str,
                                    400
                                )
                                .unwrap_or_else(|prefix| prefix + "...")
                            ),
                        )
                        .into()),
                    },
                }
            }
            Expr::Vector(items) => {
                self.charge_items(items.len())?;
                let mut out = crate::value::Seq::new();
                for e in items.iter() {
                    out.push_back(self.eval(e, env)?);
                }
                let v = Value::Vector(out);
                self.check_depth(&v)?;
                Ok(v)
            }
            Expr::Map(pairs) => {
                self.charge_items(pairs.len() * 2)?;
                let mut out = Map::new();
                for (k, v) in pairs.iter() {
                    let k = self.eval(k, env)?;
                    let v = self.eval(v, env)?;
                    out.assoc_mut(k, v);
                }
                let v = Value::Map(out);
                self.check_depth(&v)?;
                Ok(v)
            }
            Expr::Set(items) => {
                self.charge_items(items.len())?;
                let mut out = Set::new();
                for e in items.iter() {
                    out.insert_mut(self.eval(e, env)?);
                }
                let v = Value::Set(out);
                self.check_depth(&v)?;
                Ok(v)
            }
            Expr::For(f) => {
                let mut out = Vec::new();
                match f.clauses.first() {
                    // `(for [x (range) ...] ...)`: an unbounded sequence, produced on demand.
                    Some(ForClause::Each { coll, .. }) if f.collect && f.lazy_over_first() => {
                        let coll = self.eval(coll, env)?;
                        if let Value::Lazy(source) = coll {
                            return Ok(Value::Lazy(LazySeq::new(LazyKind::For(Arc::new(
                                LazyFor {
                                    expr: f.clone(),
                                    frame: self.stack[self.base..].to_vec(),
                                    args: env.args.to_vec(),
                                    captures: env.captures.clone(),
                                    self_fn: env.self_fn.cloned(),
                                    group: env.group.cloned(),
                                    source,
                                },
                            )))));
                        }
                        self.for_each_item(f, 0, &coll, env, &mut out)?;
                    }
                    _ => {
                        self.eval_for(f, 0, env, &mut out)?;
                    }
                }
                if f.collect {
                    let v = Value::list(out);
                    self.check_depth(&v)?;
                    Ok(v)
                } else {
                    Ok(Value::Nil)
                }
            }
            _ => unreachable!("eval handles every other expression"),
        }
    }

    #[inline]
    fn eval_args(&mut self, args: &[Expr], env: &Env) -> EvalResult<SmallVec<[Value; 4]>> {
        let mut values = SmallVec::with_capacity(args.len());
        for e in args {
            values.push(self.operand(e, env)?);
        }
        Ok(values)
    }

    fn capture(&self, from: &[CaptureFrom], env: &Env) -> Arc<[Value]> {
        from.iter()
            .map(|c| match c {
                CaptureFrom::Local(s) => self.local(*s, env).clone(),
                CaptureFrom::Capture(i) => env.captures[*i as usize].clone(),
                CaptureFrom::SelfFn => env
                    .self_fn
                    .map(|f| Value::Fn(f.clone()))
                    .unwrap_or_default(),
                CaptureFrom::LetfnSibling(j) => sibling(env, *j),
            })
            .collect()
    }

    fn eval_def(&mut self, d: &DefExpr, env: &Env) -> EvalResult {
        if self.worker {
            return Err(Error::unsupported(format!(
                "def of {} inside pmap/pcalls is not supported: define it before the parallel \
                 call",
                d.name
            ))
            .into());
        }
        let value = match &d.value {
            Some(e) => Some(self.eval(e, env)?),
            None => None,
        };
        if let Some(v) = &value {
            // Definitions are shown to the model in later turns.
            self.check_export(v, &format!("the value of {}", d.name))?;
        }
        let globals = Arc::make_mut(&mut self.globals);
        let binding = &mut globals[d.slot as usize];
        if binding.order == u64::MAX && value.is_some() {
            binding.order = self.next_order;
            self.next_order += 1;
        }
        if value.is_some() || binding.value.is_none() {
            binding.doc = d.doc.clone();
            binding.params = d.params.clone();
        }
        if let Some(v) = value {
            binding.value = Some(v);
        }
        Ok(Value::Var(crate::value::Symbol::new(&d.name)))
    }

    fn eval_try(&mut self, t: &TryExpr, env: &Env) -> EvalResult {
        // Calls restore the stack, base and depth as they unwind, so the frame is intact here.
        let mut result = self.eval(&t.body, env);
        if let Err(Flow::Error(err)) = &result
            && is_catchable(err)
            && let Some(c) = t.catches.iter().find(|c| catch_matches(&c.filter, err))
        {
            let exception = exception_value(err);
            *self.slot(c.slot) = exception;
            result = self.eval(&c.body, env);
        }
        if let Some(finally) = &t.finally {
            self.eval(finally, env)?;
        }
        result
    }

    /// Run the `for` clauses after binding clause `i` (an `Each`) to each item of `coll`.
    fn for_each_item(
        &mut self,
        f: &ForExpr,
        i: usize,
        coll: &Value,
        env: &Env,
        out: &mut Vec<Value>,
    ) -> EvalResult<()> {
        let mut items = Items::new(coll)?;
        while let Some(item) = items.next(self)? {
            self.bind_for_item(f, i, item.into_owned(), env)?;
            if !self.eval_for(f, i + 1, env, out)? {
                break;
            }
        }
        Ok(())
    }

    /// Bind the slot (and destructured names) of `Each` clause `i` to `item`.
    fn bind_for_item(&mut self, f: &ForExpr, i: usize, item: Value, env: &Env) -> EvalResult<()> {
        if let Some(ForClause::Each {
            slot, destructure, ..
        }) = f.clauses.get(i)
        {
            *self.slot(*slot) = item;
            for (s, e) in destructure.iter() {
                let v = self.eval(e, env)?;
                *self.slot(*s) = v;
            }
        }
        Ok(())
    }

    /// The values one item of an unbounded `for` produces: its first binding set to `item`,
    /// the rest of the clauses run in a copy of the frame the `for` was evaluated in.
    pub(crate) fn for_item(
        &mut self,
        lazy: &LazyFor,
        item: Value,
        out: &mut Vec<Value>,
    ) -> EvalResult<()> {
        let saved_base = self.base;
        let new_base = self.stack.len();
        self.stack.extend_from_slice(&lazy.frame);
        self.base = new_base;
        let env = Env {
            args: &lazy.args,
            captures: &lazy.captures,
            self_fn: lazy.self_fn.as_ref(),
            group: lazy.group.as_ref(),
        };
        let result = match self.bind_for_item(&lazy.expr, 0, item, &env) {
            Ok(()) => self.eval_for(&lazy.expr, 1, &env, out).map(|_| ()),
            Err(e) => Err(e),
        };
        self.stack.truncate(new_base);
        self.base = saved_base;
        result
    }

    fn eval_for(
        &mut self,
        f: &ForExpr,
        i: usize,
        env: &Env,
        out: &mut Vec<Value>,
    ) -> EvalResult<bool> {
        // Returns false when a `:while` clause stopped the enclosing binding.
        let Some(clause) = f.clauses.get(i) else {
            self.tick()?;
            let v = self.eval(&f.body, env)?;
            if f.collect {
                // Charged as it grows: a long `for` must not collect past the budget.
                self.charge_items(1)?;
                out.push(v);
            }
            return Ok(true);
        };
        match clause {
            ForClause::Each { coll, .. } => {
                let coll = self.eval(coll, env)?;
                self.for_each_item(f, i, &coll, env, out)?;
                Ok(true)
            }
            ForClause::Let(bindings) => {
                for (s, e) in bindings.iter() {
                    let v = self.eval(e, env)?;
                    *self.slot(*s) = v;
                }
                self.eval_for(f, i + 1, env, out)
            }
            ForClause::When(test) => {
                if self.eval(test, env)?.truthy() {
                    self.eval_for(f, i + 1, env, out)
                } else {
                    Ok(true)
                }
            }
            ForClause::While(test) => {
                if self.eval(test, env)?.truthy() {
                    self.eval_for(f, i + 1, env, out)
                } else {
                    Ok(false)
                }
            }
        }
    }
}

/// A `for` over an unbounded first sequence, with what it needs to produce items later: the
/// frame and closure environment it was evaluated in.
pub struct LazyFor {
    pub(crate) expr: Arc<ForExpr>,
    pub(crate) frame: Vec<Value>,
    pub(crate) args: Vec<Value>,
    pub(crate) captures: Arc<[Value]>,
    pub(crate) self_fn: Option<Function>,
    pub(crate) group: Option<Arc<[Arc<Lambda>]>>,
    pub(crate) source: crate::value::LazySeq,
}

#[inline]
fn float_of(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

/// Sibling `j` of the running closure's letfn group, as a function value.
fn sibling(env: &Env, j: u32) -> Value {
    match env.group {
        Some(group) => Value::Fn(Function(Arc::new(FnRepr::Closure(Closure {
            lambda: group[j as usize].clone(),
            captures: env.captures.clone(),
            group: Some(group.clone()),
            depth: captured_depth(env.captures.iter()),
            own: meter::own(CLOSURE_SLOTS),
        })))),
        None => Value::Nil,
    }
}

fn with_span(flow: Flow, span: Span) -> Flow {
    match flow {
        Flow::Error(mut e) => {
            if e.span.is_none() {
                e.span = Some(span);
            }
            Flow::Error(e)
        }
        other => other,
    }
}

/// Run a tool, turning panics and (when a timeout is set) hangs into error messages.
fn invoke_tool(
    tool: &Arc<dyn Tool>,
    args: &[Value],
    timeout: Option<Duration>,
) -> Result<Value, String> {
    fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        format!("the tool panicked: {text}")
    }
    let Some(timeout) = timeout else {
        return match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool.call(args))) {
            Ok(result) => result.map_err(|e| e.message),
            Err(payload) => Err(panic_message(payload)),
        };
    };
    let (sender, receiver) = std::sync::mpsc::sync_channel(1);
    let tool = tool.clone();
    let owned_args = args.to_vec();
    let spawned = std::thread::Builder::new()
        .name("ptc-tool".into())
        .spawn(move || {
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool.call(&owned_args)));
            let _ = sender.send(result);
        });
    if let Err(e) = spawned {
        return Err(format!("could not start the tool call: {e}"));
    }
    match receiver.recv_timeout(timeout) {
        Ok(Ok(result)) => result.map_err(|e| e.message),
        Ok(Err(payload)) => Err(panic_message(payload)),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(format!(
            "no answer within {} ms (the call was abandoned)",
            timeout.as_millis()
        )),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err("the tool stopped without an answer".to_string())
        }
    }
}

/// Limits end the run: a program cannot catch them.
fn is_catchable(err: &Error) -> bool {
    !err.kind.is_limit()
}

fn catch_matches(filter: &CatchFilter, err: &Error) -> bool {
    match filter {
        CatchFilter::Any => true,
        CatchFilter::ExInfo => err.kind == ErrorKind::Thrown && err.data.is_some(),
        CatchFilter::Kinds(kinds) => kinds.contains(&err.kind),
    }
}

/// The value a `catch` binds: a map with `:message`, `:kind` and, for `ex-info`, `:data`.
pub(crate) fn exception_value(err: &Error) -> Value {
    let mut m = Map::new();
    m.assoc_mut(Value::keyword("message"), Value::string(&err.message));
    m.assoc_mut(Value::keyword("kind"), Value::keyword(err.kind.as_str()));
    if let Some(data) = &err.data {
        m.assoc_mut(Value::keyword("data"), data.clone());
    }
    m.assoc_mut(Value::keyword(EXCEPTION_MARKER), Value::Bool(true));
    Value::Map(m)
}

/// Key marking a map as a caught exception (so `throw` can rethrow it as it was).
pub(crate) const EXCEPTION_MARKER: &str = "ptc/exception";

/// The error a `(throw v)` raises.
pub(crate) fn throw_value(v: Value) -> Error {
    if let Value::Map(m) = &v
        && m.contains_key(&Value::keyword(EXCEPTION_MARKER))
    {
        let message = m
            .get(&Value::keyword("message"))
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let data = m.get(&Value::keyword("data")).cloned();
        let kind = m
            .get(&Value::keyword("kind"))
            .and_then(|k| match k {
                Value::Keyword(k) => ErrorKind::from_name(k.as_str()).filter(|k| !k.is_limit()),
                _ => None,
            })
            .unwrap_or(ErrorKind::Thrown);
        let mut err = Error::new(kind, message);
        err.data = data;
        return err;
    }
    Error::new(
        ErrorKind::Type,
        format!(
            "throw needs an exception made with (ex-info \"message\" {{...}}), got {}",
            v.type_name()
        ),
    )
}

/// `get` with the key leniency JSON data needs: a keyword also finds the string key of the same
/// name, and a string finds the keyword.
#[inline]
pub fn lookup<'a>(m: &'a Map, key: &Value) -> Option<&'a Value> {
    if let Some(v) = m.get(key) {
        return Some(v);
    }
    match key {
        Value::Keyword(k) => m.get(&Value::string(k.as_str())),
        Value::Str(s) => m.get(&Value::Keyword(Keyword::new(s))),
        _ => None,
    }
}

/// `(:key target)` at a call site that remembers where the key was last found.
#[inline(always)]
fn keyword_get(target: &Value, k: &KeywordGet) -> Option<Value> {
    keyword_get_hinted(target, &k.key, &k.hint)
}

/// `(key target)` for a keyword `key`, looked for first where `hint` says it was last found.
#[inline(always)]
fn keyword_get_hinted(target: &Value, key: &Value, hint: &AtomicU8) -> Option<Value> {
    if let Value::Map(m) = target
        && let Some(v) = m.get_at_hint(key, hint)
    {
        return Some(v.clone_fast());
    }
    keyword_get_unhinted(target, key, hint)
}

/// What the keyword `key` finds in `m`, looked for first where `hint` says, then as any key,
/// then as the same text in a string-keyed map ([`lookup`]).
#[inline(always)]
fn map_field<'m>(m: &'m Map, key: &Value, hint: &AtomicU8) -> Option<&'m Value> {
    m.get_hinted(key, hint).or_else(|| lookup(m, key))
}

/// [`keyword_get_hinted`] where the hint did not point at the key; updates the hint.
#[inline(never)]
fn keyword_get_unhinted(target: &Value, key: &Value, hint: &AtomicU8) -> Option<Value> {
    match target {
        Value::Map(m) => map_field(m, key, hint).map(Value::clone_fast),
        other => get_key(other, key),
    }
}

/// `(get coll key)` for any collection (nil for everything else, as in Clojure).
#[inline]
pub fn get_key(coll: &Value, key: &Value) -> Option<Value> {
    match coll {
        Value::Map(m) => lookup(m, key).cloned(),
        Value::Set(s) => s.get(key).cloned(),
        Value::Vector(v) => match key {
            Value::Int(i) => usize::try_from(*i).ok().and_then(|i| v.get(i)).cloned(),
            _ => None,
        },
        Value::Str(s) => match key {
            Value::Int(i) => usize::try_from(*i)
                .ok()
                .and_then(|i| s.chars().nth(i))
                .map(Value::Char),
            _ => None,
        },
        _ => None,
    }
}

pub(crate) fn arity_error(name: &str, got: usize, expected: &str) -> Error {
    Error::arity(format!(
        "{name} called with {got} argument{}, expects {expected}",
        if got == 1 { "" } else { "s" }
    ))
}

fn closure_arity_error(lambda: &Lambda, got: usize) -> Error {
    let name = lambda.name.as_deref().unwrap_or("fn");
    Error::arity(format!(
        "{name} called with {got} argument{}; its parameter list{} {}",
        if got == 1 { "" } else { "s" },
        if lambda.arities.len() == 1 {
            " is"
        } else {
            "s are"
        },
        lambda.describe_arities()
    ))
}

/// A value shown in an error message, cut to a readable length.
pub(crate) fn pr_str_short(v: &Value) -> String {
    crate::format::to_clojure_within(v, Some(5), Some(40), 400)
}

/// Pack a shape into a word for an atomic store (0 means "none").
pub(crate) fn pack_shape(shape: ValueShape) -> u64 {
    let (tag, len): (u64, usize) = match shape {
        ValueShape::Nil => (1, 0),
        ValueShape::Boolean => (2, 0),
        ValueShape::Integer => (3, 0),
        ValueShape::Float => (4, 0),
        ValueShape::String => (5, 0),
        ValueShape::Char => (6, 0),
        ValueShape::Keyword => (7, 0),
        ValueShape::Symbol => (8, 0),
        ValueShape::List(n) => (9, n),
        ValueShape::Map(n) => (10, n),
        ValueShape::Set(n) => (11, n),
        ValueShape::Function => (12, 0),
        ValueShape::Regex => (13, 0),
        ValueShape::Var => (14, 0),
        ValueShape::LazySeq => (15, 0),
        ValueShape::Date => (16, 0),
    };
    (tag << 56) | (len as u64 & ((1 << 56) - 1))
}

pub(crate) fn unpack_shape(word: u64) -> Option<ValueShape> {
    let len = (word & ((1 << 56) - 1)) as usize;
    Some(match word >> 56 {
        1 => ValueShape::Nil,
        2 => ValueShape::Boolean,
        3 => ValueShape::Integer,
        4 => ValueShape::Float,
        5 => ValueShape::String,
        6 => ValueShape::Char,
        7 => ValueShape::Keyword,
        8 => ValueShape::Symbol,
        9 => ValueShape::List(len),
        10 => ValueShape::Map(len),
        11 => ValueShape::Set(len),
        12 => ValueShape::Function,
        13 => ValueShape::Regex,
        14 => ValueShape::Var,
        15 => ValueShape::LazySeq,
        16 => ValueShape::Date,
        _ => return None,
    })
}
