//! The waits between attempts to reach a store that does not answer.

use std::hash::BuildHasher;
use std::time::{Duration, Instant};

/// The waits between attempts to reach a store that does not answer: from 100 ms, doubling up
/// to 2 s, each a random part between half and all of it, so that workers that lost the store
/// together do not come back in step.
pub(crate) struct Backoff {
    next: Duration,
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(100);
    const CAP: Duration = Duration::from_secs(2);

    pub(crate) fn new() -> Backoff {
        Backoff {
            next: Backoff::FIRST,
        }
    }

    pub(crate) fn next_wait(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(Backoff::CAP);
        // A fresh `RandomState` is seeded anew each time: a random number, without a crate.
        let random = std::collections::hash_map::RandomState::new().hash_one(Instant::now());
        let part = (random % 1_000) as u32;
        wait / 2 + wait / 2 * part / 1_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_waits_for_a_store_that_does_not_answer_double_up_to_two_seconds_with_jitter() {
        let mut backoff = Backoff::new();
        let nominal = [100, 200, 400, 800, 1_600, 2_000, 2_000, 2_000];
        let mut waits = Vec::new();
        for millis in nominal {
            let wait = backoff.next_wait();
            let full = Duration::from_millis(millis);
            assert!(
                wait >= full / 2 && wait <= full,
                "{wait:?} is not between half and all of {full:?}"
            );
            waits.push(wait);
        }
        // Jittered: the waits at the cap are not all the same.
        waits.dedup();
        assert!(waits.len() > 5, "{waits:?}");
    }
}
