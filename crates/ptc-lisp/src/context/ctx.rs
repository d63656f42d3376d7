//! The state of one run: the value stack, the user definitions, the limit counters, and what
//! the program printed and which tools it called.
//!
//! Every limit is a counter here, checked where the work happens (see [`crate::context::limits`]).

use super::fiber::Suspender;
use super::interrupt::Interrupt;
use super::limits::Limits;
use super::tools::ToolCallRecord;
use crate::error::{Error, ErrorKind};
use crate::span::Span;
use crate::stack::{STACK_GROW_BY, UNKNOWN_STACK_FLOOR, stack_has_room};
use crate::value::{Value, meter};
use arcstr::ArcStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize};
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

/// One user definition slot.
#[derive(Clone)]
pub(crate) struct Binding {
    pub name: ArcStr,
    /// `None` while declared but not yet defined.
    pub value: Option<Value>,
    pub doc: Option<ArcStr>,
    pub params: Vec<String>,
    /// When the name was first defined (definition order).
    pub order: u64,
}

/// The state of one run: value stack, user definitions, limit counters and what the program
/// printed and which tools it called.
pub struct Ctx {
    pub(crate) stack: Vec<Value>,
    pub(crate) base: usize,
    pub(crate) globals: Arc<Vec<Binding>>,
    pub(crate) next_order: u64,
    pub(crate) limits: Arc<Limits>,
    pub(crate) steps: u64,
    pub(crate) next_check: u64,
    pub(crate) started: Instant,
    /// When the run began (reading and analysis included): the timeout counts from here.
    pub(crate) run_started: Instant,
    /// Time spent inside tools, which does not count against [`Limits::timeout`].
    pub(crate) tool_time: Duration,
    pub(crate) depth: usize,
    pub(crate) memory: usize,
    /// Stack segments in use by nested calls: they count against the memory budget while
    /// they are in use.
    pub(crate) stack_segments: usize,
    /// Lowest stack address evaluation may reach on the current stack segment before it
    /// continues on a new one, [`UNKNOWN_STACK_FLOOR`] until it is looked up (on a fresh
    /// context and segment): comparing with it is cheaper than asking for the stack's limit.
    pub(crate) stack_floor: usize,
    /// Where a keyword called as a function (`(map :price items)`) last found its key in a
    /// small map: builtins call the same keyword on many maps of one shape.
    pub(crate) keyword_hint: AtomicU8,
    pub(crate) output_bytes: usize,
    pub(crate) prints: Vec<String>,
    /// The text printed while `with-out-str` captures it (innermost capture), instead of
    /// output entries.
    pub(crate) captured: Option<String>,
    pub(crate) tool_calls: Vec<ToolCallRecord>,
    /// Set on `pmap`/`pcalls` workers, where `def` is refused.
    pub(crate) worker: bool,
    /// Tool calls left to the workers of a parallel section, shared between them so the run's
    /// limit holds while they call tools at the same time.
    pub(crate) tool_budget: Option<Arc<AtomicUsize>>,
    /// Whether printed output shows firewalled map entries as `"[hidden]"`.
    pub(crate) firewall: bool,
    /// Set when evaluation runs on a fiber: host-answered tool calls stop it here.
    pub(crate) suspender: Option<Suspender>,
    /// The host's check, made with each look at the clock, that may end the run.
    pub(crate) interrupt: Option<Interrupt>,
}

const CLOCK_INTERVAL: u64 = 4096;

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
            captured: None,
            tool_calls: Vec::new(),
            worker: false,
            tool_budget: None,
            firewall: false,
            suspender: None,
            interrupt: None,
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
    pub(crate) fn run_time(&self) -> Duration {
        self.run_started.elapsed().saturating_sub(self.tool_time)
    }

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
    pub(crate) fn check_budget(&mut self) -> Result<(), Error> {
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
        if let Some(error) = self.interrupt.as_ref().and_then(Interrupt::check) {
            return Err(error);
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

    pub(crate) fn timeout_error(&self) -> Error {
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

    pub(crate) fn check_call_depth(&self) -> Result<(), Error> {
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
    pub(crate) fn enter_call(&mut self) -> Result<(), Error> {
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
        let result = crate::stack::grow(STACK_GROW_BY, || f(self));
        self.stack_floor = floor;
        self.stack_segments -= 1;
        result
    }
}
