//! What a run's requests cost once a provider's prompt cache has had its say.
//!
//! Providers bill a prompt by how much of it they could read from their prompt cache, so the
//! size of a rendering says little about its price: a history that only grows is read from the
//! cache at a tenth of the price, while a summary rewritten every turn is paid in full (and, at
//! Anthropic, written to the cache at a premium). [`price`] applies a [`PricingProfile`]'s rules
//! to an exact sequence of requests and returns the [`Bill`]: per request, the tokens billed at
//! full price, read from and written to the cache, and their *billed-equivalent* total (what
//! the prompt costs in input tokens at the full price). What a whole run costs under a
//! strategy, beside the full history, is [`compare_with_full_history`](crate::compare_with_full_history).
//!
//! Token counts come from a [`Tokenizer`]: the [`HeuristicTokenizer`](crate::HeuristicTokenizer)
//! (four characters a token) unless you pass an exact one, so the figures are estimates, good
//! for comparing strategies and within a few percent of a provider's counts.

mod model;
mod profile;
mod request;

pub use model::RequestCost;
pub use profile::{
    ANTHROPIC_LOOKBACK_BLOCKS, OPENAI_CACHE_STEP, PricingError, PricingKind, PricingProfile,
};
pub use request::{ANTHROPIC_MAX_BREAKPOINTS, CachePoint, PromptRequest, anthropic_breakpoints};

use crate::tokenizer::Tokenizer;
use serde::{Deserialize, Serialize};

/// What a sequence of requests costs under one pricing profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bill {
    /// The profile that priced the requests.
    pub profile: PricingProfile,
    /// Each request's cost, in the order sent.
    pub requests: Vec<RequestCost>,
    /// The sum over the requests.
    pub total: RequestCost,
}

impl Bill {
    /// The billed-equivalent input tokens of all the requests.
    pub fn billed(&self) -> f64 {
        self.total.billed
    }
}

/// A number of tokens as bills are written: rounded to a whole number, with thousands
/// separators (`n/a` when it is not a number).
///
/// ```
/// use ptc_compression::cost::token_count_text;
/// assert_eq!(token_count_text(1_234_567.5), "1,234,568");
/// assert_eq!(token_count_text(-950.0), "-950");
/// assert_eq!(token_count_text(f64::NAN), "n/a");
/// ```
pub fn token_count_text(value: f64) -> String {
    let rounded = value.round();
    if !rounded.is_finite() {
        return "n/a".into();
    }
    let digits = crate::vocabulary::TypeVocabulary::grouped(rounded.abs() as u64);
    if rounded < 0.0 {
        format!("-{digits}")
    } else {
        digits
    }
}

/// Prices `requests`, sent one after the other, under `profile`, counting tokens with
/// `tokenizer`.
///
/// ```
/// use ptc_compression::{HeuristicTokenizer, PricingProfile, PromptRequest, price};
/// use ptc_turn::Message;
///
/// let system = "x".repeat(8_000); // 2,000 tokens
/// let first = PromptRequest {
///     system: system.clone(),
///     messages: vec![Message::user("Count the users")],
///     cache_points: vec![],
/// };
/// let second = PromptRequest {
///     messages: vec![Message::user("Count the users"), Message::assistant("(count data/users)"),
///                    Message::user(";; Result: 3")],
///     ..first.clone()
/// };
/// let bill = price(&[first, second], &PricingProfile::anthropic(), &HeuristicTokenizer);
/// // The system prompt is written to the cache by the first request and read by the second.
/// assert_eq!(bill.requests[0].cache_write_tokens, 2_004);
/// assert_eq!(bill.requests[1].cache_read_tokens, 2_004);
/// assert_eq!(bill.requests[1].input_tokens, 8 + 9 + 7);
/// ```
pub fn price(
    requests: &[PromptRequest],
    profile: &PricingProfile,
    tokenizer: &dyn Tokenizer,
) -> Bill {
    let costs = model::price_requests(requests, profile, tokenizer);
    let mut total = RequestCost::default();
    for cost in &costs {
        total += *cost;
    }
    Bill {
        profile: *profile,
        requests: costs,
        total,
    }
}

/// Prices `requests` as [`price`] does, but with the prompt cache as `earlier` requests left
/// it: the steady state of a service whose previous run's prompts are still cached. Only the
/// costs of `requests` are returned; what `earlier` cost was paid before.
///
/// ```
/// use ptc_compression::{HeuristicTokenizer, PricingProfile, PromptRequest, price, price_after};
/// use ptc_turn::Message;
///
/// let request = |task: &str| PromptRequest {
///     system: "x".repeat(8_000), // 2,000 tokens, the same for every task
///     messages: vec![Message::user(task)],
///     cache_points: vec![],
/// };
/// let profile = PricingProfile::anthropic();
/// let cold = price(&[request("Count the users")], &profile, &HeuristicTokenizer);
/// let warm = price_after(&[request("Sum the orders")], &[request("Count the users")], &profile,
///                        &HeuristicTokenizer);
/// assert_eq!(cold.requests[0].cache_write_tokens, 2_004);
/// assert_eq!(warm.requests[0].cache_read_tokens, 2_004);
/// assert!(warm.billed() < cold.billed() / 5.0);
/// ```
pub fn price_after(
    requests: &[PromptRequest],
    earlier: &[PromptRequest],
    profile: &PricingProfile,
    tokenizer: &dyn Tokenizer,
) -> Bill {
    let all: Vec<PromptRequest> = earlier.iter().chain(requests).cloned().collect();
    let costs = model::price_requests(&all, profile, tokenizer);
    let mut total = RequestCost::default();
    let costs: Vec<RequestCost> = costs.into_iter().skip(earlier.len()).collect();
    for cost in &costs {
        total += *cost;
    }
    Bill {
        profile: *profile,
        requests: costs,
        total,
    }
}

#[cfg(test)]
mod tests;
