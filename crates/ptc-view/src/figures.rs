//! The numbers a run page shows, computed once from the step: each request's recorded tokens,
//! its modelled bill under each pricing profile beside the full history's, and whether the
//! returned value matches the signature. The page writes these and nothing else, so a test can
//! hold the page against them and them against the step.

use ptc_agent::Signature;
use ptc_compression::{
    BillComparison, CompressionConfig, CompressionStats, HeuristicTokenizer, PricingProfile,
    PromptRequest, RenderOptions, Uncompressed, price, run_requests,
};
use ptc_turn::{Message, Step, TokenUsage, Turn};

/// What a run page shows, in numbers.
#[derive(Debug, Clone)]
pub struct RunFigures {
    /// One per turn, in order: the request that produced the turn.
    pub requests: Vec<RequestFigures>,
    /// The run's requests priced under each profile, beside the full history's.
    pub bills: Vec<BillComparison>,
    /// The returned value held against the task's signature.
    pub signature: SignatureCheck,
}

/// One model request: what it recorded and what the strategy renders for it.
#[derive(Debug, Clone)]
pub struct RequestFigures {
    /// The turn the request produced.
    pub turn: u32,
    /// The tokens the provider reported for it (zero when it reported none).
    pub tokens: TokenUsage,
    /// The messages the strategy renders before this turn, when the step recorded none.
    pub rendered: Option<Vec<Message>>,
    /// What the strategy showed and dropped of the turns before, and its size against the full
    /// history's.
    pub stats: CompressionStats,
}

/// The returned value against the task's signature.
#[derive(Debug, Clone, PartialEq)]
pub enum SignatureCheck {
    /// The task has no signature.
    None,
    /// The run returned no value to check.
    NoValue,
    /// The value matches.
    Passed,
    /// The value does not match: one line per mismatch.
    Failed(Vec<String>),
    /// The signature does not parse.
    Invalid(String),
}

impl RunFigures {
    /// The figures of `step`, its bill modelled with `compression` under each of `profiles`.
    pub fn new(
        step: &Step,
        compression: &CompressionConfig,
        profiles: &[PricingProfile],
    ) -> RunFigures {
        let turns = step.turns.as_slice();
        let opts = RenderOptions::from_task(&step.task).with_limits(compression.limits());
        let strategy = compression.build();
        // Each request is rendered once and priced under every profile: the rendering does not
        // depend on the profile that prices it (as `compare_with_full_history` renders it).
        let mut prompts = Vec::with_capacity(turns.len());
        let requests = turns
            .iter()
            .enumerate()
            .map(|(i, turn)| {
                let before = &turns[..i];
                let memory = before.last().map_or(&[][..], Turn::memory);
                let rendered = strategy.to_messages(before, memory, &opts);
                prompts.push(PromptRequest::from_rendered(
                    &rendered.messages,
                    &rendered.cache_points,
                ));
                RequestFigures {
                    turn: turn.number(),
                    tokens: turn.usage().tokens,
                    rendered: turn.messages().is_empty().then_some(rendered.messages),
                    stats: rendered.stats,
                }
            })
            .collect();
        let full_history = run_requests(&Uncompressed, turns, &opts, false);
        let bills = profiles
            .iter()
            .map(|profile| BillComparison {
                strategy: price(&prompts, profile, &HeuristicTokenizer),
                full_history: price(&full_history, profile, &HeuristicTokenizer),
            })
            .collect();
        RunFigures {
            requests,
            bills,
            signature: SignatureCheck::of(step),
        }
    }
}

impl SignatureCheck {
    /// `step`'s returned value held against its task's signature.
    pub fn of(step: &Step) -> SignatureCheck {
        let Some(text) = step.task.signature.as_deref() else {
            return SignatureCheck::None;
        };
        let signature = match Signature::parse(text) {
            Ok(signature) => signature,
            Err(e) => {
                return SignatureCheck::Invalid(format!(
                    "line {}, column {}: {}",
                    e.line, e.col, e.message
                ));
            }
        };
        match step.value() {
            None => SignatureCheck::NoValue,
            Some(value) => match signature.validate(value) {
                Ok(()) => SignatureCheck::Passed,
                Err(mismatches) => {
                    SignatureCheck::Failed(mismatches.iter().map(ToString::to_string).collect())
                }
            },
        }
    }
}
