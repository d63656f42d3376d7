//! A budget for the work of walking values.
//!
//! Hashing, comparing, sizing and printing a value walk all of it, and none of them can return
//! an error. Values share structure, so a value built in a few dozen steps (`[v v]` repeated) can
//! be astronomically large when walked. While a run is in progress on a thread, every walker
//! spends from this per-thread budget, one unit per element it visits; once the budget (the
//! run's remaining steps, or its time) is gone, walkers stop early and give meaningless answers,
//! and the evaluator ends the run with a step or time limit error before any of those answers
//! can be seen: before the next builtin returns, before any tool call or print, and before the
//! run's result is handed back.
//!
//! Texts built while rendering values are bounded the same way: one rendering may not grow
//! past the run's memory budget.
//!
//! Outside a run the budget is unlimited, so host code that hashes or prints values is never
//! affected.

use std::cell::Cell;
use std::time::Instant;

/// Units spent between two looks at the clock.
const CLOCK_EVERY: u64 = 1 << 16;

/// Why the budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exhausted {
    Steps,
    Time,
    /// A text being built grew past the memory budget.
    Memory,
}

#[derive(Clone, Copy)]
pub(crate) struct State {
    /// Units left; `u64::MAX` means unmetered.
    left: u64,
    /// Look at the clock when `left` falls below this.
    clock_at: u64,
    deadline: Option<Instant>,
    /// Longest text one rendering may build.
    max_text: usize,
    /// Value slots copied behind the scenes (a shared flat vector turned into a tree before it
    /// is changed, a small map copied to change it, the nodes of a hash map) since the evaluator
    /// last took them, to be charged to the memory budget.
    copied: usize,
    /// Value slots of such copies dropped since the evaluator last took them, to be given back.
    freed: usize,
    exhausted: Option<Exhausted>,
}

const UNMETERED: State = State {
    left: u64::MAX,
    clock_at: 0,
    deadline: None,
    max_text: usize::MAX,
    copied: 0,
    freed: 0,
    exhausted: None,
};

thread_local! {
    static METER: Cell<State> = const { Cell::new(UNMETERED) };
}

/// Spend `units` of walking work. Returns false once the budget is gone; the caller should stop
/// walking and return any value.
#[inline]
pub(crate) fn spend(units: usize) -> bool {
    METER.with(|m| {
        let mut s = m.get();
        if s.left == u64::MAX {
            return true;
        }
        if s.exhausted.is_some() {
            return false;
        }
        s.left = s.left.saturating_sub(units as u64);
        if s.left == 0 {
            s.exhausted = Some(Exhausted::Steps);
        } else if s.left < s.clock_at {
            s.clock_at = s.left.saturating_sub(CLOCK_EVERY);
            if s.deadline.is_some_and(|d| Instant::now() > d) {
                s.exhausted = Some(Exhausted::Time);
            }
        }
        m.set(s);
        s.exhausted.is_none()
    })
}

/// Note that `slots` values were copied to change a shared collection: the work counts as
/// walking, and the copy is charged to the memory budget when the evaluator next settles.
/// Returns whether it was charged (a run meters this thread and its budget is not gone).
pub(crate) fn note_copy(slots: usize) -> bool {
    spend(slots)
        && METER.with(|m| {
            let mut s = m.get();
            if s.left == u64::MAX {
                return false;
            }
            s.copied = s.copied.saturating_add(slots);
            m.set(s);
            true
        })
}

/// Note that `slots` values' worth of memory was allocated behind the scenes without copying
/// (a collection's own `Arc`, the nodes of a hash map growing by one entry): charged to the
/// memory budget when the evaluator next settles, as copies are, but not counted as walking.
/// Returns whether it was charged.
pub(crate) fn note_alloc(slots: usize) -> bool {
    METER.with(|m| {
        let mut s = m.get();
        if s.left == u64::MAX || s.exhausted.is_some() {
            return false;
        }
        s.copied = s.copied.saturating_add(slots);
        m.set(s);
        true
    })
}

/// [`note_alloc`] for an allocation a value owns and gives back with [`note_free`] when it is
/// dropped: the slots charged, 0 when nothing was.
pub(crate) fn own(slots: usize) -> u32 {
    if note_alloc(slots) {
        u32::try_from(slots).unwrap_or(u32::MAX)
    } else {
        0
    }
}

/// [`note_copy`] for a copy a value owns and gives back with [`note_free`] when it is dropped:
/// the slots charged, 0 when nothing was.
pub(crate) fn own_copy(slots: usize) -> u32 {
    if note_copy(slots) {
        u32::try_from(slots).unwrap_or(u32::MAX)
    } else {
        0
    }
}

/// The shape of a persistent tree (a hash trie, a B-tree, an RRB vector), for charging the
/// nodes it copies when it is changed while another value shares them.
#[derive(Clone, Copy)]
pub(crate) struct TreeShape {
    /// Children (or items) per node.
    pub(crate) fanout: usize,
    /// Slots one node takes.
    pub(crate) node_slots: usize,
    /// Slots per item of all the tree's nodes together: what copying the whole tree costs.
    pub(crate) item_slots: usize,
}

/// Charge the nodes that changing one item of a tree of `len` items copies: one node per level
/// on the path to the item. `charged` is what the value holding the tree has been charged so
/// far for such copies, and it is given back when that value is dropped.
///
/// A tree copied from one another value still holds (`fresh_copy`) shares all of its nodes, and
/// one changed since (`charged > 0`) may still share most of them, so each change is charged
/// until the charges reach the cost of the whole tree. A tree built from nothing by one owner
/// (`charged == 0` and not a fresh copy) shares no nodes and copies none: a `reduce` building a
/// map is charged for its entries only.
pub(crate) fn charge_path_copy(
    charged: u32,
    fresh_copy: bool,
    len: usize,
    shape: TreeShape,
) -> u32 {
    let charged = if fresh_copy { 0 } else { charged };
    if !fresh_copy && charged == 0 {
        return 0;
    }
    let whole = len.saturating_mul(shape.item_slots);
    if charged as usize >= whole.max(shape.node_slots) {
        return charged;
    }
    let mut levels = 1;
    let mut reach = shape.fanout;
    while reach < len {
        levels += 1;
        reach = reach.saturating_mul(shape.fanout);
    }
    charged.saturating_add(own(levels * shape.node_slots))
}

/// Note that a copy of `slots` values noted by [`note_copy`] was dropped: its memory is free
/// again and goes back to the budget when the evaluator next settles.
pub(crate) fn note_free(slots: usize) {
    METER.with(|m| {
        let mut s = m.get();
        if s.left != u64::MAX {
            s.freed = s.freed.saturating_add(slots);
            m.set(s);
        }
    })
}

/// What happened since the last call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settled {
    /// Slots copied, to charge.
    pub(crate) copied: usize,
    /// Slots of copies dropped, to give back.
    pub(crate) freed: usize,
    /// Whether (and why) the budget ran out.
    pub(crate) exhausted: Option<Exhausted>,
}

/// Take the slots copied and freed since the last call, and whether the budget ran out.
pub(crate) fn settle() -> Settled {
    METER.with(|m| {
        let mut s = m.get();
        let copied = std::mem::take(&mut s.copied);
        let freed = std::mem::take(&mut s.freed);
        if copied > 0 || freed > 0 {
            m.set(s);
        }
        Settled {
            copied,
            freed,
            exhausted: s.exhausted,
        }
    })
}

/// Whether a text of `len` bytes may be built. Once one may not, the budget is gone (as
/// [`Exhausted::Memory`]) and the caller should stop building.
#[inline]
pub(crate) fn text_fits(len: usize) -> bool {
    METER.with(|m| {
        let mut s = m.get();
        if len <= s.max_text {
            return true;
        }
        if s.exhausted.is_none() {
            s.exhausted = Some(Exhausted::Memory);
            m.set(s);
        }
        false
    })
}

/// Start metering this thread with `units`, an optional deadline and the longest text one
/// rendering may build; returns what was there before, for [`restore`].
pub(crate) fn install(units: u64, deadline: Option<Instant>, max_text: usize) -> State {
    let units = units.min(u64::MAX - 1);
    METER.with(|m| {
        m.replace(State {
            left: units,
            clock_at: units.saturating_sub(CLOCK_EVERY),
            deadline,
            max_text,
            copied: 0,
            freed: 0,
            exhausted: None,
        })
    })
}

/// Put back the state [`install`] returned.
pub(crate) fn restore(state: State) {
    METER.with(|m| m.set(state));
}

/// Put `state` in place of this thread's and return the one that was there: a suspendable run
/// hands its meter over this way when it moves between threads (see `context::fiber`).
pub(crate) fn swap(state: State) -> State {
    METER.with(|m| m.replace(state))
}

/// The state of a thread outside any run: nothing metered.
pub(crate) const fn unmetered() -> State {
    UNMETERED
}

/// Move this thread's deadline (if any) `by` later: time spent in host tools does not count.
pub(crate) fn extend_deadline(by: std::time::Duration) {
    METER.with(|m| {
        let mut s = m.get();
        if let Some(d) = s.deadline {
            s.deadline = d.checked_add(by);
            m.set(s);
        }
    })
}

/// Meters this thread while it lives; puts back what was there before when dropped.
pub(crate) struct Guard(State);

impl Guard {
    pub(crate) fn new(units: u64, deadline: Option<Instant>, max_text: usize) -> Guard {
        Guard(install(units, deadline, max_text))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore(self.0);
    }
}

/// Whether walking stopped early since the budget was installed.
#[cfg(test)]
fn exhausted() -> Option<Exhausted> {
    METER.with(|m| m.get().exhausted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmetered_threads_never_run_out() {
        assert!(spend(usize::MAX));
        assert_eq!(exhausted(), None);
    }

    #[test]
    fn a_metered_thread_runs_out_and_restores() {
        let before = install(10, None, usize::MAX);
        assert!(spend(9));
        assert!(!spend(1));
        assert_eq!(exhausted(), Some(Exhausted::Steps));
        assert!(!spend(0));
        restore(before);
        assert!(spend(100));
        assert_eq!(exhausted(), None);
    }

    #[test]
    fn a_text_past_the_cap_ends_the_budget() {
        let before = install(100, None, 10);
        assert!(text_fits(10));
        assert!(!text_fits(11));
        assert_eq!(exhausted(), Some(Exhausted::Memory));
        assert!(!spend(1));
        restore(before);
        assert!(text_fits(usize::MAX));
    }

    fn settled(copied: usize, freed: usize, exhausted: Option<Exhausted>) -> Settled {
        Settled {
            copied,
            freed,
            exhausted,
        }
    }

    #[test]
    fn copies_are_counted_until_settled() {
        let before = install(100, None, usize::MAX);
        note_copy(40);
        note_copy(2);
        note_free(7);
        assert_eq!(settle(), settled(42, 7, None));
        assert_eq!(settle(), settled(0, 0, None));
        note_copy(100);
        assert_eq!(settle(), settled(0, 0, Some(Exhausted::Steps)));
        restore(before);
        note_copy(5);
        note_free(5);
        assert_eq!(settle(), settled(0, 0, None));
    }

    #[test]
    fn path_copies_are_charged_per_level_until_the_whole_tree_is() {
        let shape = TreeShape {
            fanout: 32,
            node_slots: 10,
            item_slots: 2,
        };
        let before = install(1 << 20, None, usize::MAX);
        // A tree built by its only owner shares nothing.
        assert_eq!(charge_path_copy(0, false, 1_000, shape), 0);
        // One level up to 32 items, two up to 1,024, three beyond.
        assert_eq!(charge_path_copy(0, true, 32, shape), 10);
        assert_eq!(charge_path_copy(0, true, 1_000, shape), 20);
        assert_eq!(charge_path_copy(0, true, 1_025, shape), 30);
        // A fresh copy forgets what the value it was copied from was charged.
        assert_eq!(charge_path_copy(500, true, 1_000, shape), 20);
        // A copy changed again still shares nodes, up to the cost of the whole tree (2,000).
        assert_eq!(charge_path_copy(20, false, 1_000, shape), 40);
        assert_eq!(charge_path_copy(1_990, false, 1_000, shape), 2_010);
        assert_eq!(charge_path_copy(2_010, false, 1_000, shape), 2_010);
        assert_eq!(settle().copied, 10 + 20 + 30 + 20 + 20 + 20);
        restore(before);
        // Outside a run nothing is charged.
        assert_eq!(charge_path_copy(0, true, 1_000, shape), 0);
    }

    #[test]
    fn a_passed_deadline_ends_the_budget() {
        let before = install(u64::MAX / 2, Some(Instant::now()), usize::MAX);
        std::thread::sleep(std::time::Duration::from_millis(2));
        // The clock is read once CLOCK_EVERY units have been spent.
        assert!(!spend(CLOCK_EVERY as usize + 1));
        assert_eq!(exhausted(), Some(Exhausted::Time));
        restore(before);
    }
}
