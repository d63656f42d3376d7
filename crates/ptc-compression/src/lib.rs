//! Rendering an agent's turn history as the messages the model sees next (compression
//! strategies), and keeping any chat history within message and token budgets.

pub mod history;
pub mod tokenizer;

pub use history::{
    HistoryError, HistoryManager, HistoryPolicy, Summarizer, SummarizerError, SummaryRequest,
    SummaryState, SummaryStrategy,
};
pub use tokenizer::{CachingTokenizer, HeuristicTokenizer, Tokenizer};
