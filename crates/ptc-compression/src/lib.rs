//! Rendering an agent's turn history as the messages the model sees next (compression
//! strategies), and keeping any chat history within message and token budgets.

mod config;
pub mod history;
mod options;
mod render;
mod strategy;
pub mod tokenizer;
mod transcript;
mod vocabulary;

pub use config::{
    CompressionConfig, CompressionOptions, CompressionSetting, ConfigError, StrategyKind,
};
pub use history::{
    HistoryError, HistoryManager, HistoryPolicy, Summarizer, SummarizerError, SummaryRequest,
    SummaryState, SummaryStrategy,
};
pub use options::{RenderLimits, RenderOptions};
/// The stats every rendering returns (defined with the turn model, which records them).
pub use ptc_turn::CompressionStats;
pub use strategy::{
    Activated, Aggressive, Compression, FailedTurns, PerTurnSummary, Rendered, RollingWindow,
    SingleUserCoalesced, Uncompressed, cacheable_prefix_len,
};
pub use tokenizer::{CachingTokenizer, HeuristicTokenizer, Tokenizer};
pub use transcript::transcript;
pub use vocabulary::TypeVocabulary;
