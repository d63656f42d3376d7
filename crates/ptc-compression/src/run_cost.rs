//! What a whole run costs under a strategy: the requests a strategy renders for the turns of a
//! run, priced beside the full history's ([`compare_with_full_history`]) and, for the default
//! strategy, beside the best compaction schedule in hindsight ([`compare_schedules`]). It sits
//! above the strategies and the cost model, which only prices the requests it is given.

use crate::append_compact::AppendCompact;
use crate::compression::Compression;
use crate::cost::{Bill, PricingProfile, PromptRequest, price};
use crate::render_options::RenderOptions;
use crate::strategy::Uncompressed;
use crate::tokenizer::Tokenizer;
use ptc_turn::Turn;
use serde::{Deserialize, Serialize};

/// The requests a run renders with `strategy`: one before each of `turns` (the first from no
/// turns, the last from all but the last turn), plus, when `and_next` is set, the one that
/// would follow the last turn. Each carries the strategy's cache points.
pub fn run_requests(
    strategy: &dyn Compression,
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    and_next: bool,
) -> Vec<PromptRequest> {
    let count = turns.len() + usize::from(and_next);
    (0..count)
        .map(|taken| {
            let before = &turns[..taken];
            let memory = before.last().map_or(&[][..], Turn::memory);
            let rendered = strategy.to_messages(before, memory, opts);
            PromptRequest::from_rendered(&rendered.messages, &rendered.cache_points)
        })
        .collect()
}

/// A strategy's bill for a run beside the full history's, under one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BillComparison {
    /// The strategy's requests.
    pub strategy: Bill,
    /// The full history's requests for the same turns.
    pub full_history: Bill,
}

impl BillComparison {
    /// The strategy's billed-equivalent input tokens as a multiple of the full history's
    /// (`None` when the full history costs nothing: a run without requests).
    pub fn ratio(&self) -> Option<f64> {
        let full = self.full_history.billed();
        (full > 0.0).then(|| self.strategy.billed() / full)
    }
}

/// Prices the requests `strategy` renders for `turns` and those of the full history for the
/// same turns (see [`run_requests`]) under `profile`.
///
/// ```
/// use ptc_compression::{
///     AppendCompact, HeuristicTokenizer, PricingProfile, RenderOptions, compare_with_full_history,
/// };
/// use ptc_lisp::Value;
/// use ptc_turn::Turn;
///
/// let system = "You write PTC-Lisp. ".repeat(300);
/// let opts = RenderOptions::new("Add up the orders", &system, 5);
/// let turns = [Turn::success(1, "(def total 3)", Value::Int(3))
///     .with_raw_response("I will add them up.\n```clojure\n(def total 3)\n```")];
/// let comparison = compare_with_full_history(
///     &AppendCompact::default(), &turns, &opts, false,
///     &PricingProfile::anthropic(), &HeuristicTokenizer,
/// );
/// // A single request: nothing to compress yet, so the same price.
/// assert_eq!(comparison.ratio(), Some(1.0));
/// ```
pub fn compare_with_full_history(
    strategy: &dyn Compression,
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    and_next: bool,
    profile: &PricingProfile,
    tokenizer: &dyn Tokenizer,
) -> BillComparison {
    BillComparison {
        strategy: price(
            &run_requests(strategy, turns, opts, and_next),
            profile,
            tokenizer,
        ),
        full_history: price(
            &run_requests(&Uncompressed, turns, opts, and_next),
            profile,
            tokenizer,
        ),
    }
}

/// The default strategy against the best compaction schedule in hindsight and the full
/// history, on one run, under one pricing profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduleComparison {
    /// How many turns each request of the default folded into its summary (the rule deciding
    /// with the caching rules of the profile's kind, as `on` does against that provider).
    pub default_schedule: Vec<usize>,
    /// The default's requests.
    pub default: Bill,
    /// How many turns each request folds in the cheapest schedule
    /// ([`AppendCompact::cheapest_schedule`]).
    pub best_schedule: Vec<usize>,
    /// The requests of the cheapest schedule.
    pub best: Bill,
    /// The full history's requests for the same turns.
    pub full_history: Bill,
}

impl ScheduleComparison {
    /// The default's billed-equivalent input tokens as a multiple of the best schedule's
    /// (`None` when the best costs nothing: a run without requests).
    pub fn default_over_best(&self) -> Option<f64> {
        let best = self.best.billed();
        (best > 0.0).then(|| self.default.billed() / best)
    }
}

/// Prices the default strategy's requests for `turns` (deciding with the caching rules of
/// `profile`'s kind), those of the best compaction schedule in hindsight, and those of the full
/// history, under `profile` (see [`run_requests`] for `and_next`).
///
/// ```
/// use ptc_compression::{HeuristicTokenizer, PricingProfile, RenderOptions, compare_schedules};
/// use ptc_lisp::Value;
/// use ptc_turn::Turn;
///
/// let system = "You write PTC-Lisp. ".repeat(300);
/// let opts = RenderOptions::new("Add up the orders", &system, 5);
/// let turns = [Turn::success(1, "(def total 3)", Value::Int(3))];
/// let comparison = compare_schedules(
///     &turns, &opts, true, &PricingProfile::openai(), &HeuristicTokenizer,
/// );
/// // One turn: nothing can be folded yet, so the rule follows the best schedule.
/// assert_eq!(comparison.default_schedule, vec![0, 0]);
/// assert_eq!(comparison.best_schedule, vec![0, 0]);
/// assert_eq!(comparison.default_over_best(), Some(1.0));
/// ```
pub fn compare_schedules(
    turns: &[Turn],
    opts: &RenderOptions<'_>,
    and_next: bool,
    profile: &PricingProfile,
    tokenizer: &dyn Tokenizer,
) -> ScheduleComparison {
    let rule = AppendCompact {
        pricing: profile.kind,
        compact_above_tokens: None,
    };
    let mut default_schedule = rule.schedule(turns, opts);
    default_schedule.truncate(turns.len() + usize::from(and_next));
    let (best_schedule, best) = rule.cheapest_schedule(turns, opts, and_next, profile, tokenizer);
    ScheduleComparison {
        default_schedule,
        default: price(
            &run_requests(&rule, turns, opts, and_next),
            profile,
            tokenizer,
        ),
        best_schedule,
        best,
        full_history: price(
            &run_requests(&Uncompressed, turns, opts, and_next),
            profile,
            tokenizer,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::HeuristicTokenizer;
    use ptc_lisp::Value;

    #[test]
    fn the_full_history_and_a_strategy_are_priced_on_the_same_turns() {
        let system: String = std::iter::repeat_n('s', 1_996 * 4).collect();
        let opts = RenderOptions::new("Add up the orders", &system, 5);
        let turns: Vec<Turn> = (1..=3)
            .map(|n| {
                let program = format!("(def x{n} {n})");
                Turn::success(n, program.as_str(), Value::Int(n.into())).with_raw_response(format!(
                    "{}\n```clojure\n{program}\n```",
                    "Some thinking about what to do next. ".repeat(10)
                ))
            })
            .collect();
        for profile in [
            PricingProfile::anthropic(),
            PricingProfile::openai(),
            PricingProfile::ideal(),
        ] {
            let comparison = compare_with_full_history(
                &AppendCompact::default(),
                &turns,
                &opts,
                true,
                &profile,
                &HeuristicTokenizer,
            );
            assert_eq!(comparison.strategy.requests.len(), 4);
            assert_eq!(comparison.full_history.requests.len(), 4);
            // The same first request; then the default drops the prose around each program.
            assert_eq!(
                comparison.strategy.requests[0],
                comparison.full_history.requests[0]
            );
            let ratio = comparison.ratio().expect("requests were priced");
            assert!(ratio < 1.0, "{}: {ratio}", profile.name());
        }
    }
}
