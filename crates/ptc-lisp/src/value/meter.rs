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
}

#[derive(Clone, Copy)]
pub(crate) struct State {
    /// Units left; `u64::MAX` means unmetered.
    left: u64,
    /// Look at the clock when `left` falls below this.
    clock_at: u64,
    deadline: Option<Instant>,
    exhausted: Option<Exhausted>,
}

const UNMETERED: State = State {
    left: u64::MAX,
    clock_at: 0,
    deadline: None,
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

/// Start metering this thread with `units` and an optional deadline; returns what was there
/// before, for [`restore`].
pub(crate) fn install(units: u64, deadline: Option<Instant>) -> State {
    let units = units.min(u64::MAX - 1);
    METER.with(|m| {
        m.replace(State {
            left: units,
            clock_at: units.saturating_sub(CLOCK_EVERY),
            deadline,
            exhausted: None,
        })
    })
}

/// Put back the state [`install`] returned.
pub(crate) fn restore(state: State) {
    METER.with(|m| m.set(state));
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
    pub(crate) fn new(units: u64, deadline: Option<Instant>) -> Guard {
        Guard(install(units, deadline))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore(self.0);
    }
}

/// Whether walking stopped early since the budget was installed.
#[inline]
pub(crate) fn exhausted() -> Option<Exhausted> {
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
        let before = install(10, None);
        assert!(spend(9));
        assert!(!spend(1));
        assert_eq!(exhausted(), Some(Exhausted::Steps));
        assert!(!spend(0));
        restore(before);
        assert!(spend(100));
        assert_eq!(exhausted(), None);
    }

    #[test]
    fn a_passed_deadline_ends_the_budget() {
        let before = install(u64::MAX / 2, Some(Instant::now()));
        std::thread::sleep(std::time::Duration::from_millis(2));
        // The clock is read once CLOCK_EVERY units have been spent.
        assert!(!spend(CLOCK_EVERY as usize + 1));
        assert_eq!(exhausted(), Some(Exhausted::Time));
        restore(before);
    }
}
