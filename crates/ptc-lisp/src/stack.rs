//! The native stack: how much room deep work keeps free, where it continues when the stack it
//! runs on is low, and the stacks suspendable runs live on.
//!
//! Values, programs and calls may nest deeper than a thread's stack can hold in a debug build.
//! Every walker that recurses as deeply as its input nests (printing, hashing, comparing and
//! dropping values; analysing and evaluating programs) checks the stack every few levels and
//! continues on a new segment ([`grow`]) when fewer than [`STACK_RED_ZONE`] bytes are left.
//!
//! Work may run on three kinds of stack: a thread's own stack (whose end `stacker` finds from
//! the operating system), a segment made by [`grow`], or the stack of a suspendable run (a
//! fiber, see `context::fiber`). The end of the last two is known exactly and kept in a
//! thread-local value, [`current_limit`], which whoever switches stacks sets and restores. A
//! suspendable run may be resumed on another thread: the fiber hands this value over with the
//! rest of its thread-local state at every switch.

mod pool;

use std::alloc::{Layout, alloc, dealloc};
use std::cell::Cell;
use std::num::NonZeroUsize;

/// Native stack kept free before deeper work moves to a new stack segment.
pub(crate) const STACK_RED_ZONE: usize = 256 * 1024;
/// Size of each new stack segment.
pub(crate) const STACK_GROW_BY: usize = 2 * 1024 * 1024;
/// Size of the stack a suspendable run (or one item of its `pmap`) starts on: the red zone and
/// as much again, so ordinary programs never leave it. Pages the run does not touch are never
/// given memory by the operating system.
pub(crate) const FIBER_STACK: usize = 1024 * 1024;

/// A stack floor not looked up yet (on a fresh context or stack segment): no address is above
/// it, so the first [`stack_has_room`] looks it up.
pub(crate) const UNKNOWN_STACK_FLOOR: usize = usize::MAX;

thread_local! {
    /// The lowest usable address of the stack work runs on now, when that is a segment or a
    /// fiber's stack; 0 on the thread's own stack.
    static LIMIT: Cell<usize> = const { Cell::new(0) };
}

/// The end of the stack work runs on now (0: the thread's own), for a fiber to save when it
/// suspends.
pub(crate) fn current_limit() -> usize {
    LIMIT.with(Cell::get)
}

/// Set what [`current_limit`] returns; returns the value before.
pub(crate) fn set_current_limit(limit: usize) -> usize {
    LIMIT.with(|l| l.replace(limit))
}

#[inline(always)]
fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Bytes of stack left below the current frame.
fn remaining() -> Option<usize> {
    match current_limit() {
        0 => stacker::remaining_stack(),
        limit => Some(stack_address().saturating_sub(limit)),
    }
}

/// Whether the stack has [`STACK_RED_ZONE`] left. `floor` caches the lowest address work may
/// reach on the current segment (comparing with it is much cheaper than asking for the
/// stack's limit); whoever moves work to a new segment sets it to [`UNKNOWN_STACK_FLOOR`]
/// there and restores it after.
#[inline(always)]
pub(crate) fn stack_has_room(floor: &mut usize) -> bool {
    let here = stack_address();
    if here > *floor {
        return true;
    }
    match remaining() {
        Some(left) if left >= STACK_RED_ZONE => {
            *floor = here - (left - STACK_RED_ZONE);
            true
        }
        _ => false,
    }
}

/// Run `f` where the stack has room for the red zone, on a new segment if need be.
pub(crate) fn with_stack_room<R>(f: impl FnOnce() -> R) -> R {
    match remaining() {
        Some(left) if left >= STACK_RED_ZONE => f(),
        _ => grow(STACK_GROW_BY, f),
    }
}

/// Run `f` on a new stack segment of `size` bytes.
pub(crate) fn grow<R>(size: usize, f: impl FnOnce() -> R) -> R {
    let mut stack = HeapStack::new(size);
    let outer = set_current_limit(stack.bottom());
    let result = corosensei::on_stack(&mut stack, f);
    set_current_limit(outer);
    result
}

/// A stack taken from the heap (a fiber's from slabs of several stacks): the operating system
/// gives memory only to the pages that are touched.
///
/// It has no guard page: a guard page splits the process's memory map in two at every stack,
/// and ten thousand suspended runs (with their `pmap` items) would reach the kernel's limit of
/// mappings. Nothing runs close to its end: every deep walker checks [`stack_has_room`] and
/// moves to a new segment while [`STACK_RED_ZONE`] bytes are still left, and no builtin,
/// host tool or library call between two checks comes near that.
pub(crate) struct HeapStack {
    bottom: NonZeroUsize,
    size: usize,
    /// Taken from the pool of fiber stacks (see `pool`), and given back to it.
    pooled: bool,
}

/// Stacks start on a page boundary.
const STACK_ALIGN: usize = 4096;

impl HeapStack {
    /// A stack of `size` bytes (rounded up to whole pages).
    pub(crate) fn new(size: usize) -> HeapStack {
        let size = size.max(STACK_ALIGN).next_multiple_of(STACK_ALIGN);
        let layout = Layout::from_size_align(size, STACK_ALIGN).expect("a valid stack layout");
        // SAFETY: the layout has a non-zero size.
        let bottom = unsafe { alloc(layout) } as usize;
        let Some(bottom) = NonZeroUsize::new(bottom) else {
            std::alloc::handle_alloc_error(layout)
        };
        HeapStack {
            bottom,
            size,
            pooled: false,
        }
    }

    /// A stack of [`FIBER_STACK`] bytes for a suspendable run, from the pool of fiber stacks.
    pub(crate) fn fiber() -> HeapStack {
        HeapStack {
            bottom: pool::take(),
            size: FIBER_STACK,
            pooled: true,
        }
    }

    /// The lowest address of the stack.
    pub(crate) fn bottom(&self) -> usize {
        self.bottom.get()
    }
}

impl Drop for HeapStack {
    fn drop(&mut self) {
        if self.pooled {
            pool::give_back(self.bottom);
            return;
        }
        let layout = Layout::from_size_align(self.size, STACK_ALIGN).expect("a valid stack layout");
        // SAFETY: allocated in `new` with this layout, and nothing runs on it any more (the
        // coroutine or segment using it has finished or been unwound).
        unsafe { dealloc(self.bottom.get() as *mut u8, layout) }
    }
}

// SAFETY: base and limit are page-aligned (so aligned to `STACK_ALIGNMENT`) and the memory
// between them is owned by the stack for as long as it lives. The missing guard page is made up
// for by the red-zone checks described on the type.
unsafe impl corosensei::stack::Stack for HeapStack {
    fn base(&self) -> corosensei::stack::StackPointer {
        self.bottom.saturating_add(self.size)
    }

    fn limit(&self) -> corosensei::stack::StackPointer {
        self.bottom
    }

    #[cfg(windows)]
    fn teb_fields(&self) -> corosensei::stack::StackTebFields {
        corosensei::stack::StackTebFields {
            StackBase: self.base().get(),
            StackLimit: self.bottom.get(),
            DeallocationStack: self.bottom.get(),
            GuaranteedStackBytes: 0,
        }
    }

    #[cfg(windows)]
    fn update_teb_fields(&mut self, _stack_limit: usize, _guaranteed_stack_bytes: usize) {}
}
