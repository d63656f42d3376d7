//! The native stack: how much room deep work keeps free, and where it continues when the
//! thread's stack runs low.
//!
//! Values, programs and calls may nest deeper than a thread's stack can hold in a debug build.
//! Every walker that recurses as deeply as its input nests (printing, hashing, comparing and
//! dropping values; analysing and evaluating programs) checks the stack every few levels and
//! continues on a new segment (`stacker`) when fewer than [`STACK_RED_ZONE`] bytes are left.

/// Native stack kept free before deeper work moves to a new stack segment.
pub(crate) const STACK_RED_ZONE: usize = 256 * 1024;
/// Size of each new stack segment.
pub(crate) const STACK_GROW_BY: usize = 2 * 1024 * 1024;

/// A stack floor not looked up yet (on a fresh context or stack segment): no address is above
/// it, so the first [`stack_has_room`] looks it up.
pub(crate) const UNKNOWN_STACK_FLOOR: usize = usize::MAX;

/// Whether the stack has [`STACK_RED_ZONE`] left. `floor` caches the lowest address work may
/// reach on the current segment (comparing with it is much cheaper than asking for the
/// stack's limit); whoever moves work to a new segment sets it to [`UNKNOWN_STACK_FLOOR`]
/// there and restores it after.
#[inline(always)]
pub(crate) fn stack_has_room(floor: &mut usize) -> bool {
    let marker = 0u8;
    let here = std::hint::black_box(&marker) as *const u8 as usize;
    if here > *floor {
        return true;
    }
    match stacker::remaining_stack() {
        Some(left) if left >= STACK_RED_ZONE => {
            *floor = here - (left - STACK_RED_ZONE);
            true
        }
        _ => false,
    }
}

/// Run `f` where the stack has room for the red zone, on a new segment if need be.
pub(crate) fn with_stack_room<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_GROW_BY, f)
}
