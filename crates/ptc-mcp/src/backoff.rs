//! The waits between failed starts of a server that died: doubling from a first wait up to a
//! cap, each drawn at random from its upper half, so that a server that keeps failing is
//! tried a bounded number of times a minute and the workers of a fleet do not try together.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// The wait after the `failures`-th failed start in a row (from 1): `first × 2^(failures−1)`,
/// at most `cap`, of which a random part of the upper half: between half of it and all of it.
pub(crate) fn wait_after(failures: u32, first: Duration, cap: Duration) -> Duration {
    let full = ceiling(failures, first, cap);
    let half = full / 2;
    half + half.mul_f64(unit_random())
}

/// The longest wait after the `failures`-th failed start: `first × 2^(failures−1)`, at most
/// `cap`. The wait drawn lies between half of it and all of it.
pub(crate) fn ceiling(failures: u32, first: Duration, cap: Duration) -> Duration {
    let doublings = failures.saturating_sub(1).min(30);
    first.saturating_mul(1 << doublings).min(cap)
}

/// A number in [0, 1) from the standard library's per-process random keys.
fn unit_random() -> f64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(0);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const FIRST: Duration = Duration::from_millis(500);
    const CAP: Duration = Duration::from_secs(30);

    #[test]
    fn the_ceiling_doubles_up_to_the_cap() {
        let ceilings: Vec<u128> = (1..=9)
            .map(|n| ceiling(n, FIRST, CAP).as_millis())
            .collect();
        assert_eq!(
            ceilings,
            vec![500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]
        );
        assert_eq!(ceiling(u32::MAX, FIRST, CAP), CAP);
    }

    #[test]
    fn every_wait_lies_in_the_upper_half_of_its_ceiling_and_they_differ() {
        let mut seen = std::collections::BTreeSet::new();
        for n in 1..=8 {
            for _ in 0..50 {
                let wait = wait_after(n, FIRST, CAP);
                let top = ceiling(n, FIRST, CAP);
                assert!(wait >= top / 2 && wait <= top, "{n}: {wait:?} of {top:?}");
                seen.insert(wait);
            }
        }
        assert!(seen.len() > 300, "only {} distinct waits", seen.len());
    }
}
