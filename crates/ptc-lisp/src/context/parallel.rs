//! Contexts for the workers of `pmap` and `pcalls`: each gets a share of the remaining budgets,
//! and their records and counters are merged back in a fixed order.

use super::Ctx;
use crate::error::{Error, ErrorKind};
use crate::value::meter;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

impl Ctx {
    /// A context for a worker: same definitions and limits; a `1/share` part of the remaining
    /// step and memory budgets, so workers together stay within the run's budget; and what is
    /// left of the run's time once `spent` is used.
    fn fork(&self, share: usize, spent: Duration) -> Ctx {
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
        limits.timeout = self.limits.timeout.saturating_sub(spent);
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
        child.firewall = self.firewall;
        child.interrupt = self.interrupt.clone();
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
    /// `tool_budget` (shared with its siblings). `section_start` is the run's time when the
    /// section began ([`Ctx::run_time`]) and `used` the evaluation time the section's items
    /// already spent on the thread this one will run on: both come off its timeout, so a thread
    /// that works through many items still stops at the run's deadline, while time the section
    /// spent waiting for tools does not count.
    pub(crate) fn fork_worker(
        &self,
        share: usize,
        tool_budget: &Arc<AtomicUsize>,
        section_start: Duration,
        used: Duration,
    ) -> Ctx {
        let mut child = self.fork(share, section_start.saturating_add(used));
        child.tool_budget = Some(tool_budget.clone());
        child
    }

    /// Time spent inside tools so far.
    pub(crate) fn tool_time(&self) -> Duration {
        self.tool_time
    }

    /// After a parallel section's workers finished, before they are joined: of the section's
    /// `wall` time, only `busy` (the evaluation time of the busiest worker thread, or of all the
    /// items on fibers, which share one thread) counts as evaluation; the rest was spent waiting
    /// for tools, in overlapping waits.
    pub(crate) fn settle_parallel_time(
        &mut self,
        tool_time_before: Duration,
        wall: Duration,
        busy: Duration,
    ) {
        let waited = wall.saturating_sub(busy);
        self.tool_time = tool_time_before + waited;
        // The walking meter's deadline moves as the time limit does.
        meter::extend_deadline(waited);
    }

    /// Take back a finished worker's records and counters (call in a deterministic order, for
    /// every worker, even after one of them returned an error).
    ///
    /// The worker's tool calls are recorded first and always: they happened, so the run reports
    /// them whatever limit the merge hits. Its steps and memory are added up as well (its time is
    /// settled for the whole section, see [`Ctx::settle_parallel_time`]).
    /// Its prints are kept while they fit in this context's output limit; the first one that
    /// does not fit, and every print after it, is dropped (a run stops printing at the limit,
    /// so the kept prints are always the first ones). The `Err` is the first limit the merged
    /// counters went over: memory, output, tool calls, then steps and time.
    pub fn join(&mut self, child: Ctx) -> Result<(), Error> {
        self.tool_calls.extend(child.tool_calls);
        self.steps = self.steps.saturating_add(child.steps);
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
}
