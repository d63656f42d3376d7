//! What the requests of a `ptc run` cost: modelled under pricing profiles beside the full
//! history's, and as the provider reported them.

use ptc_agent::Agent;
use ptc_compression::{BillComparison, PricingKind, PricingProfile, RenderOptions, RequestCost};
use ptc_turn::{Step, TokenUsage};
use serde_json::json;

use crate::show;

/// A finished run's bill.
pub struct RunBill {
    /// The profile the run is billed under (see [`RunBill::new`]).
    pub profile: PricingProfile,
    /// The requests priced under each profile shown, `profile` among them.
    pub comparisons: Vec<BillComparison>,
    /// The provider's own token counts priced under `profile`, when it reported any cache
    /// reads or writes.
    pub reported: Option<RequestCost>,
}

impl RunBill {
    /// The bill of `step`, run by `agent`. The run is billed under `asked` when given, else
    /// under its provider's profile; a replayed run, whose provider is unknown, is billed under
    /// the profile its recorded cache figures point to (only Anthropic reports cache writes),
    /// else under Anthropic's, which the default strategy assumes too. `every_profile` prices
    /// the requests under all three named profiles as well.
    pub fn new(
        step: &Step,
        agent: &Agent,
        asked: Option<PricingProfile>,
        every_profile: bool,
    ) -> RunBill {
        let provider = agent.pricing();
        let tokens = &step.usage.tokens;
        let has_cache_figures = tokens.cache_read_tokens > 0 || tokens.cache_write_tokens > 0;
        let profile = asked.unwrap_or_else(|| {
            provider
                .unwrap_or(if has_cache_figures && tokens.cache_write_tokens == 0 {
                    PricingKind::OpenAi
                } else {
                    PricingKind::Anthropic
                })
                .profile()
        });
        let profiles = if every_profile && asked.is_none() {
            show::default_profiles()
        } else {
            vec![profile]
        };
        let config = agent.compression();
        let opts = RenderOptions::from_task(&step.task).with_limits(config.limits());
        let strategy = config.build_for(provider);
        RunBill {
            profile,
            comparisons: show::bills(&*strategy, &step.turns, &opts, false, &profiles),
            reported: has_cache_figures.then(|| reported_cost(tokens, &profile)),
        }
    }

    /// The closing summary's lines: the modelled bill under each profile, and what the
    /// provider reported.
    pub fn text(&self) -> String {
        let mut out = show::bill_lines(&self.comparisons);
        if let Some(reported) = &self.reported {
            out.push_str(&show::reported_line(reported, &self.profile));
        }
        out
    }

    /// The bill as `ptc run --json` reports it, under the run's profile.
    pub fn json(&self) -> serde_json::Value {
        let Some(comparison) = self
            .comparisons
            .iter()
            .find(|c| c.strategy.profile == self.profile)
        else {
            return serde_json::Value::Null;
        };
        let mut cost = cost_json(&comparison.strategy.total);
        cost["pricing"] = self.profile.to_string().into();
        cost["requests"] = comparison.strategy.requests.len().into();
        cost["full_history"] = cost_json(&comparison.full_history.total);
        cost["ratio"] = comparison.ratio().map(|r| round(r, 4)).into();
        cost["reported"] = self.reported.as_ref().map(cost_json).into();
        cost
    }
}

/// The provider's token counts priced under `profile`.
fn reported_cost(tokens: &TokenUsage, profile: &PricingProfile) -> RequestCost {
    RequestCost::priced(
        tokens.input_tokens,
        tokens.cache_read_tokens,
        tokens.cache_write_tokens,
        profile,
    )
}

fn cost_json(cost: &RequestCost) -> serde_json::Value {
    json!({
        "billed": round(cost.billed, 2),
        "input_tokens": cost.input_tokens,
        "cache_read_tokens": cost.cache_read_tokens,
        "cache_write_tokens": cost.cache_write_tokens,
    })
}

/// `value` to `places` decimals, so that a report does not carry the noise of float sums.
fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}
