//! The statistics of paired comparisons, kept simple enough to check by hand.
//!
//! The unit of comparison is the mission: for each mission both configurations ran, a metric
//! is averaged over that mission's runs in each configuration, and the two averages form a
//! pair. Runs of one mission are not independent samples of "missions in general", so
//! resampling is over missions, never over runs.
//!
//! - A **mean difference** (pass rate, turns) is the mean over missions of `b - a`.
//! - A **relative change** (tokens) is `sum(b) / sum(a) - 1` over missions: the change of the
//!   whole benchmark's cost, which big missions dominate as they do a bill.
//! - Both get a **95 % percentile bootstrap interval**: 10,000 resamples of the missions with
//!   replacement, from a fixed seed so that a report is reproducible; the interval is the
//!   2.5th and 97.5th percentile of the resampled statistic. With few missions the interval is
//!   wide (and with one it is a single point): that is the honest answer.
//! - The pass rate also gets an exact two-sided **sign test**: missions where `b` passed more
//!   often count as better, less often as worse, ties are dropped; the p-value is the chance
//!   of a split at least this uneven if better and worse were equally likely.

use serde::{Deserialize, Serialize};

/// Resamples for the bootstrap.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;
const SEED: u64 = 0x005e_ed0f_be4c_4a11;

/// SplitMix64: a tiny, well-mixed generator, so the intervals need no dependency and never
/// change between versions of one.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`); the modulo bias is below 2^-40 for any realistic `n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The 2.5th percentile.
    pub low: f64,
    /// The 97.5th percentile.
    pub high: f64,
}

/// The 95 % percentile bootstrap interval of `statistic` over resamples of `pairs`; `None`
/// when there are no pairs or the statistic is undefined on too many resamples to say.
pub fn bootstrap(
    pairs: &[(f64, f64)],
    statistic: impl Fn(&[(f64, f64)]) -> Option<f64>,
) -> Option<Interval> {
    if pairs.is_empty() {
        return None;
    }
    let mut rng = SplitMix(SEED);
    let mut sample = Vec::with_capacity(pairs.len());
    let mut values = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        sample.clear();
        sample.extend((0..pairs.len()).map(|_| pairs[rng.below(pairs.len())]));
        if let Some(v) = statistic(&sample) {
            values.push(v);
        }
    }
    // A statistic undefined on more than 1 % of resamples (a zero denominator) gives no
    // trustworthy interval.
    if values.len() * 100 < BOOTSTRAP_RESAMPLES * 99 {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let index = ((values.len() as f64 - 1.0) * q).round() as usize;
        values[index.min(values.len() - 1)]
    };
    Some(Interval {
        low: at(0.025),
        high: at(0.975),
    })
}

/// The mean of `b - a`.
pub fn mean_difference(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    Some(pairs.iter().map(|(a, b)| b - a).sum::<f64>() / pairs.len() as f64)
}

/// `sum(b) / sum(a) - 1`; `None` when `sum(a)` is 0.
pub fn relative_change(pairs: &[(f64, f64)]) -> Option<f64> {
    let a: f64 = pairs.iter().map(|p| p.0).sum();
    let b: f64 = pairs.iter().map(|p| p.1).sum();
    (a > 0.0).then(|| b / a - 1.0)
}

/// The exact two-sided sign test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SignTest {
    /// Pairs where `b > a`.
    pub better: usize,
    /// Pairs where `b < a`.
    pub worse: usize,
    /// Pairs where `b == a` (left out of the test).
    pub ties: usize,
    /// `min(1, 2 P(X <= min(better, worse)))` for `X ~ Binomial(better + worse, 1/2)`; 1 when
    /// every pair is a tie.
    pub p_value: f64,
}

/// The sign test of `pairs` `(a, b)`: how many pairs `b` beats, loses to and ties `a` in, and
/// how likely so lopsided a split is if neither side is better.
pub fn sign_test(pairs: &[(f64, f64)]) -> SignTest {
    let better = pairs.iter().filter(|(a, b)| b > a).count();
    let worse = pairs.iter().filter(|(a, b)| b < a).count();
    let ties = pairs.len() - better - worse;
    let n = better + worse;
    let k = better.min(worse);
    // Binomial probabilities in log space, so that n in the thousands cannot underflow.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0; // ln C(n, 0)
    let mut tail = 0.0;
    for i in 0..=k {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose + ln_half_n).exp();
    }
    SignTest {
        better,
        worse,
        ties,
        p_value: if n == 0 { 1.0 } else { (2.0 * tail).min(1.0) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn sign_test_matches_the_binomial_table() {
        // 9 better, 1 worse: 2 * (1 + 10) / 1024.
        let mut pairs = vec![(0.0, 1.0); 9];
        pairs.push((1.0, 0.0));
        pairs.push((0.5, 0.5));
        let test = sign_test(&pairs);
        assert_eq!((test.better, test.worse, test.ties), (9, 1, 1));
        assert!(
            (test.p_value - 22.0 / 1024.0).abs() < 1e-12,
            "{}",
            test.p_value
        );
        assert_eq!(sign_test(&[(1.0, 1.0)]).p_value, 1.0);
        assert_eq!(sign_test(&[(0.0, 1.0)]).p_value, 1.0);
        let even = sign_test(&[(0.0, 1.0), (1.0, 0.0)]);
        assert_eq!(even.p_value, 1.0);
        // Large n stays finite: 0 of 3000 worse.
        let p = sign_test(&vec![(0.0, 1.0); 3000]).p_value;
        assert!((0.0..1e-300).contains(&p), "{p}");
    }

    #[test]
    fn differences_and_changes() {
        let pairs = [(100.0, 40.0), (300.0, 120.0)];
        assert_eq!(relative_change(&pairs), Some(-0.6));
        assert_eq!(mean_difference(&pairs), Some(-120.0));
        assert_eq!(relative_change(&[(0.0, 5.0)]), None);
        assert_eq!(mean_difference(&[]), None);
    }

    #[test]
    fn bootstrap_of_identical_pairs_is_a_point_and_is_reproducible() {
        let pairs = vec![(100.0, 40.0); 5];
        assert_eq!(
            bootstrap(&pairs, relative_change),
            Some(Interval {
                low: -0.6,
                high: -0.6
            })
        );
        let mixed = [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (0.0, 0.0), (1.0, 0.0)];
        // Differences -1, 1, 0, 0, -1: a mean of -0.2, and resampled means in steps of 0.2.
        let interval = bootstrap(&mixed, mean_difference).unwrap();
        assert!(
            (interval.low + 0.8).abs() < 1e-12 && (interval.high - 0.4).abs() < 1e-12,
            "{interval:?}"
        );
        assert_eq!(bootstrap(&mixed, mean_difference), Some(interval));
        assert_eq!(bootstrap(&[], mean_difference), None);
        assert_eq!(bootstrap(&[(0.0, 1.0)], relative_change), None);
    }
}
