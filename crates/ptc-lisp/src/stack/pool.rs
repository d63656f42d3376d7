//! Fiber stacks come from slabs of [`SLAB_STACKS`] stacks each. A stack per suspendable run (and
//! per item of its `pmap`) taken from the allocator one by one costs a memory mapping each:
//! with thousands of runs at once, mapping and unmapping them (and the page faults of fresh
//! stacks) took most of the process's time, and every unmapping stalls the other threads of the
//! process. From slabs, ten thousand runs map a few thousand times fewer, and a stack freed by a
//! finished run is reused, its pages already present, by the next one.
//!
//! A slab is given back when all its stacks are free, except one such slab kept as a spare, so
//! that runs ending and starting one after another do not map and unmap a slab each. A slab
//! where one stack is still in use keeps its other stacks' touched pages: at most
//! `SLAB_STACKS - 1` freed stacks per long-lived run.

use std::alloc::{Layout, alloc, dealloc};
use std::collections::{BTreeMap, BTreeSet};
use std::num::NonZeroUsize;
use std::sync::{Mutex, MutexGuard};

use super::{FIBER_STACK, STACK_ALIGN};

/// Stacks per slab.
const SLAB_STACKS: u32 = 16;
/// The free mask of a slab none of whose stacks is in use.
const ALL_FREE: u32 = (1 << SLAB_STACKS) - 1;

struct Pool {
    /// Each slab's lowest address → one bit per stack, set while the stack is free.
    slabs: BTreeMap<usize, u32>,
    /// The slabs with some stacks free and some in use; stacks are taken from the lowest first,
    /// so that the others empty and can be given back.
    partial: BTreeSet<usize>,
    /// A slab with every stack free, kept instead of given back.
    spare: Option<usize>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool::new());

fn pool() -> MutexGuard<'static, Pool> {
    // Nothing panics while the lock is held (a failed allocation aborts), so a poisoned lock
    // still guards consistent state.
    POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The lowest address of a free stack of [`FIBER_STACK`] bytes, now in use.
pub(super) fn take() -> NonZeroUsize {
    pool().take()
}

/// Give back the stack at `bottom`, which [`take`] returned and nothing runs on any more.
pub(super) fn give_back(bottom: NonZeroUsize) {
    pool().give_back(bottom)
}

fn slab_layout() -> Layout {
    Layout::from_size_align(FIBER_STACK * SLAB_STACKS as usize, STACK_ALIGN)
        .expect("a valid slab layout")
}

impl Pool {
    const fn new() -> Pool {
        Pool {
            slabs: BTreeMap::new(),
            partial: BTreeSet::new(),
            spare: None,
        }
    }

    fn take(&mut self) -> NonZeroUsize {
        let base = match self.partial.first().copied().or_else(|| self.spare.take()) {
            Some(base) => base,
            None => {
                let layout = slab_layout();
                // SAFETY: the layout has a non-zero size.
                let base = unsafe { alloc(layout) } as usize;
                if base == 0 {
                    std::alloc::handle_alloc_error(layout)
                }
                self.slabs.insert(base, ALL_FREE);
                base
            }
        };
        let free = self
            .slabs
            .get_mut(&base)
            .expect("every listed slab is known");
        let index = free.trailing_zeros();
        *free &= !(1 << index);
        if *free == 0 {
            self.partial.remove(&base);
        } else {
            self.partial.insert(base);
        }
        NonZeroUsize::new(base + index as usize * FIBER_STACK)
            .expect("a slab is never at address 0")
    }

    fn give_back(&mut self, bottom: NonZeroUsize) {
        let bottom = bottom.get();
        let (&base, free) = self
            .slabs
            .range_mut(..=bottom)
            .next_back()
            .expect("a stack of the pool lies in one of its slabs");
        let index = (bottom - base) / FIBER_STACK;
        let was_full = *free == 0;
        *free |= 1 << index;
        if *free == ALL_FREE {
            self.partial.remove(&base);
            if self.spare.is_none() {
                self.spare = Some(base);
            } else {
                self.slabs.remove(&base);
                // SAFETY: allocated in `take` with this layout, and none of its stacks is in use.
                unsafe { dealloc(base as *mut u8, slab_layout()) }
            }
        } else if was_full {
            self.partial.insert(base);
        }
    }
}

/// Only a pool whose stacks are all given back is dropped (the process's own pool never is).
impl Drop for Pool {
    fn drop(&mut self) {
        for &base in self.slabs.keys() {
            // SAFETY: allocated in `take` with this layout; no stack of a dropped pool is in use.
            unsafe { dealloc(base as *mut u8, slab_layout()) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_are_reused_and_empty_slabs_given_back_but_one() {
        let mut pool = Pool::new();
        let stacks: Vec<NonZeroUsize> = (0..SLAB_STACKS * 3).map(|_| pool.take()).collect();
        let distinct: BTreeSet<usize> = stacks.iter().map(|s| s.get()).collect();
        assert_eq!(distinct.len(), stacks.len());
        assert!(stacks.iter().all(|s| s.get() % STACK_ALIGN == 0));
        assert_eq!(pool.slabs.len(), 3);
        assert!(pool.partial.is_empty());

        let reused = stacks[SLAB_STACKS as usize + 5];
        pool.give_back(reused);
        assert_eq!(pool.partial.len(), 1);
        assert_eq!(pool.take(), reused);

        for &stack in &stacks[..SLAB_STACKS as usize] {
            pool.give_back(stack);
        }
        assert_eq!((pool.slabs.len(), pool.spare.is_some()), (3, true));
        for &stack in &stacks[SLAB_STACKS as usize..] {
            pool.give_back(stack);
        }
        assert_eq!((pool.slabs.len(), pool.spare.is_some()), (1, true));
        assert!(pool.partial.is_empty());

        // The spare slab serves the next stack.
        let spare = pool.spare.expect("a spare slab");
        assert_eq!(pool.take().get(), spare);
        assert_eq!(pool.slabs.len(), 1);
    }
}
