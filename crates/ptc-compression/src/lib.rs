#![deny(missing_docs)]

//! Rendering an agent's turn history as the messages the model sees next (compression
//! strategies), pricing the requests a run sends under providers' prompt-caching rules
//! ([`cost`]), and keeping any chat history within message and token budgets.

mod advice;
mod append_compact;
mod config;
pub mod cost;
pub mod history;
mod options;
mod render;
mod stats;
mod strategy;
pub mod tokenizer;
mod transcript;
mod vocabulary;

pub use append_compact::AppendCompact;
pub use config::{
    CompressionConfig, CompressionOptions, CompressionSetting, ConfigError, StrategyKind,
};
pub use cost::{
    Bill, BillComparison, CachePoint, PricingError, PricingKind, PricingProfile, PromptRequest,
    RequestCost, anthropic_breakpoints, compare_with_full_history, price, run_requests,
};
pub use history::{
    HistoryError, HistoryManager, HistoryPolicy, Summarizer, SummarizerError, SummaryRequest,
    SummaryState, SummaryStrategy,
};
pub use options::{RenderLimits, RenderOptions};
pub use stats::CompressionStats;
pub use strategy::{
    Activated, Aggressive, Compression, FailedTurns, PerTurnSummary, Rendered, RollingWindow,
    SingleUserCoalesced, Uncompressed, cacheable_prefix_len,
};
pub use tokenizer::{CachingTokenizer, HeuristicTokenizer, Tokenizer};
pub use transcript::transcript;
pub use vocabulary::TypeVocabulary;
