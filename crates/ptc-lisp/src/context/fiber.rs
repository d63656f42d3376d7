//! Fibers: evaluation that can stop at a host tool call and go on when the answer arrives.
//!
//! A suspendable run (and each item of its `pmap`/`pcalls`) evaluates on a stack of its own, a
//! stackful coroutine (`corosensei`). A call of a host-answered tool switches back to whoever
//! resumed the fiber, handing it the calls to make; the host makes them however it likes (an
//! agent awaits them on its async runtime) and resumes the fiber with the answers. Nothing of
//! the evaluator had to be rewritten for this: its frames simply wait on the fiber's stack.
//!
//! A fiber may be resumed on another thread than the one it last ran on, so the thread-local
//! state evaluation relies on moves with it: the walking meter (`value::meter`) and the end of
//! the stack it runs on (`stack::current_limit`). Both are swapped in when the fiber is resumed
//! (or unwound) and swapped out when it stops; nothing else thread-local is held across a
//! switch.

use super::tools::{ToolAnswer, ToolRequest};
use crate::error::Error;
use crate::stack::{HeapStack, set_current_limit};
use crate::value::meter;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::marker::PhantomData;

/// What resumes a fiber stopped at tool calls.
pub(crate) enum Resume {
    /// The answers, one for each call asked for, in order.
    Answers(Vec<ToolAnswer>),
    /// The calls end with this error (a limit the run went over while it waited): the host will
    /// not answer them.
    Stop(Error),
}

/// Where a fiber stopped.
pub(crate) enum FiberStep<R> {
    /// At these tool calls.
    Suspended(Vec<ToolRequest>),
    /// For good, with this result.
    Done(R),
}

type Inner<R> = Coroutine<Resume, Vec<ToolRequest>, R, HeapStack>;

/// Evaluation on a stack of its own, returning `R`; it may borrow what lives for `'a`.
pub(crate) struct Fiber<'a, R> {
    coroutine: Inner<R>,
    /// The fiber's own thread-local state while it is not running.
    meter: meter::State,
    stack_limit: usize,
    borrows: PhantomData<&'a ()>,
}

// SAFETY: a coroutine is not `Send` only because code on it could keep a reference to a
// thread-local value across a switch. The closure is `Send` (checked in `Fiber::new`); the
// thread-local state evaluation keeps across a switch (the meter, the stack limit) is handed
// over at every switch; and the evaluator holds no other thread-local reference, lock guard
// or `!Send` value over a tool call, the only place a fiber stops.
unsafe impl<R: Send> Send for Fiber<'_, R> {}

impl<'a, R> Fiber<'a, R> {
    /// A fiber that will run `body` (on its first [`Fiber::resume`]), handing it the
    /// [`Suspender`] through which it stops at tool calls.
    pub(crate) fn new(body: impl FnOnce(Suspender) -> R + Send + 'a) -> Fiber<'a, R> {
        let stack = HeapStack::fiber();
        let stack_limit = stack.bottom();
        let start = move |yielder: &Yielder<Resume, Vec<ToolRequest>>, _first: Resume| {
            body(Suspender(yielder as *const _))
        };
        // SAFETY: what `body` borrows lives for `'a`, and so does the fiber, which either
        // finishes or is unwound when it is dropped (see `Drop`), before `'a` ends.
        let coroutine = unsafe { Coroutine::with_stack_unchecked(stack, start) };
        Fiber {
            coroutine,
            meter: meter::unmetered(),
            stack_limit,
            borrows: PhantomData,
        }
    }

    /// Run the fiber until it stops at tool calls or finishes. The first call starts it (its
    /// `input` is ignored). A panic inside the fiber goes on in the caller.
    pub(crate) fn resume(&mut self, input: Resume) -> FiberStep<R> {
        let switched = self.switch_in();
        match switched.fiber.coroutine.resume(input) {
            CoroutineResult::Yield(requests) => FiberStep::Suspended(requests),
            CoroutineResult::Return(result) => FiberStep::Done(result),
        }
    }

    /// Put the fiber's thread-local state in place of the caller's until the guard drops.
    fn switch_in(&mut self) -> SwitchedIn<'_, 'a, R> {
        let outer_meter = meter::swap(self.meter);
        let outer_stack_limit = set_current_limit(self.stack_limit);
        SwitchedIn {
            fiber: self,
            outer_meter,
            outer_stack_limit,
        }
    }
}

/// The fiber's thread-local state is in place: dropping this takes it back out (also when the
/// fiber panicked).
struct SwitchedIn<'f, 'a, R> {
    fiber: &'f mut Fiber<'a, R>,
    outer_meter: meter::State,
    outer_stack_limit: usize,
}

impl<R> Drop for SwitchedIn<'_, '_, R> {
    fn drop(&mut self) {
        self.fiber.meter = meter::swap(self.outer_meter);
        self.fiber.stack_limit = set_current_limit(self.outer_stack_limit);
    }
}

impl<R> Drop for Fiber<'_, R> {
    fn drop(&mut self) {
        // A fiber dropped while stopped at a tool call is unwound, dropping what its frames
        // hold, with its own thread-local state in place.
        if self.coroutine.started() && !self.coroutine.done() {
            let switched = self.switch_in();
            switched.fiber.coroutine.force_unwind();
        }
    }
}

/// The handle through which evaluation on a fiber stops at tool calls.
///
/// It is only given to the contexts that evaluate on the fiber whose yielder it points to,
/// which live on that fiber's stack, so the yielder outlives every use.
#[derive(Clone, Copy)]
pub(crate) struct Suspender(*const Yielder<Resume, Vec<ToolRequest>>);

// SAFETY: the pointer is only followed on the fiber it belongs to (see the type's doc), which
// moves between threads as a whole.
unsafe impl Send for Suspender {}
// SAFETY: as for `Send`; sharing a context between `pmap` worker threads never follows it
// (workers on threads get no suspender).
unsafe impl Sync for Suspender {}

impl Suspender {
    /// Stop the fiber, asking its host to make `requests`; returns how the host resumed it.
    pub(crate) fn suspend(&self, requests: Vec<ToolRequest>) -> Resume {
        // SAFETY: see the type's doc: the yielder lives as long as the fiber, and this runs on
        // it.
        unsafe { (*self.0).suspend(requests) }
    }
}
