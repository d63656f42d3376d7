//! What a run's requests cost once a provider's prompt cache has had its say.
//!
//! Providers bill a prompt by how much of it they could read from their prompt cache, so the
//! size of a rendering says little about its price: a history that only grows is read from the
//! cache at a tenth of the price, while a summary rewritten every turn is paid in full (and, at
//! Anthropic, written to the cache at a premium). [`price`] applies a [`PricingProfile`]'s rules
//! to an exact sequence of requests and returns the [`Bill`]: per request, the tokens billed at
//! full price, read from and written to the cache, and their *billed-equivalent* total (what
//! the prompt costs in input tokens at the full price). [`compare_with_full_history`] prices a
//! strategy's requests for a run beside the full history's.
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

use crate::options::RenderOptions;
use crate::strategy::{Compression, Uncompressed};
use crate::tokenizer::Tokenizer;
use ptc_turn::Turn;
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
    let digits = (rounded.abs() as u64).to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if rounded < 0.0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
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

#[cfg(test)]
mod tests;
