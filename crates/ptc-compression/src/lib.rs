#![deny(missing_docs)]

//! Rendering an agent's turn history as the messages the model sees next (compression
//! strategies), pricing the requests a run sends under providers' prompt-caching rules
//! ([`cost`]), and keeping any chat history within message and token budgets.

// The modules, in layer order: each may use only the modules declared above it (`cargo xtask
// layers`, part of `cargo xtask ci`, checks it). Each has a comment line of its own, so that
// formatting keeps the order.

// What the last message says about the last turn.
mod advice;
// What a rendering needs besides the turns.
mod render_options;
// What one rendering did against the full history.
mod stats;
// Token estimates.
pub mod tokenizer;
// Keeping any chat history within budgets.
pub mod history;
// Messages as plain text.
mod transcript;
// Type labels and sizes.
mod vocabulary;
// Pricing requests under providers' caching rules.
pub mod cost;
// Output sections, and the lines that stand for entries left out.
mod output;
// What a summary keeps of earlier output.
mod printed;
// The shape of a large input over all of its items.
mod schema;
// The text of every part of a rendering.
mod render;
// The `Compression` trait, and how every strategy ends and measures its request.
mod compression;
// The strategies of the seed design.
mod strategy;
// The default strategy.
mod append_compact;
// Compression specs.
mod compression_config;
// What a whole run costs under a strategy, and against the best schedule.
mod run_cost;

pub use append_compact::AppendCompact;
pub use compression::{Compression, Rendered, cacheable_prefix_len, prefix_point};
pub use compression_config::{
    CompressionConfig, CompressionOptions, CompressionSetting, ConfigError, StrategyKind,
};
pub use cost::{
    Bill, CachePoint, PricingError, PricingKind, PricingProfile, PromptRequest, RequestCost,
    anthropic_breakpoints, price, price_after,
};
pub use history::{
    HistoryError, HistoryManager, HistoryPolicy, Summarizer, SummarizerError, SummaryFuture,
    SummaryRequest, SummaryState, SummaryStrategy,
};
pub use render_options::{RenderLimits, RenderOptions};
pub use run_cost::{
    BillComparison, ScheduleComparison, compare_schedules, compare_with_full_history, run_requests,
};
pub use stats::CompressionStats;
pub use strategy::{
    Activated, Aggressive, FailedTurns, PerTurnSummary, RollingWindow, SingleUserCoalesced,
    Uncompressed,
};
pub use tokenizer::{CachingTokenizer, HeuristicTokenizer, Tokenizer};
pub use transcript::transcript;
pub use vocabulary::TypeVocabulary;
