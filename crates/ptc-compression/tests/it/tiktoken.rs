//! Exact OpenAI token counts (cargo feature `tiktoken`).
#![cfg(feature = "tiktoken")]

use pretty_assertions::assert_eq;
use ptc_compression::history::{HistoryManager, HistoryPolicy};
use ptc_compression::tokenizer::{
    CachingTokenizer, MESSAGE_OVERHEAD, OpenAiEncoding, TiktokenTokenizer, Tokenizer,
};
use ptc_turn::Message;

#[test]
fn counts_match_the_openai_encodings() {
    let cl100k = TiktokenTokenizer::new(OpenAiEncoding::Cl100kBase);
    let o200k = TiktokenTokenizer::new(OpenAiEncoding::O200kBase);
    assert_eq!(cl100k.count_text("hello world"), 2);
    assert_eq!(o200k.count_text("hello world"), 2);
    assert_eq!(cl100k.count_text(""), 0);
    // "tiktoken is great!" is 6 tokens in cl100k_base (the library's own example).
    assert_eq!(cl100k.count_text("tiktoken is great!"), 6);
    assert_eq!(
        o200k.count_message(&Message::user("hello world")),
        MESSAGE_OVERHEAD + 2
    );
}

#[test]
fn models_map_to_their_encoding() {
    assert_eq!(
        TiktokenTokenizer::for_model("gpt-4o").map(|t| t.encoding()),
        Some(OpenAiEncoding::O200kBase)
    );
    assert_eq!(
        TiktokenTokenizer::for_model("gpt-4").map(|t| t.encoding()),
        Some(OpenAiEncoding::Cl100kBase)
    );
    assert_eq!(TiktokenTokenizer::for_model("claude-sonnet-4"), None);
}

#[test]
fn cached_exact_counts_equal_uncached_ones() {
    let exact = TiktokenTokenizer::new(OpenAiEncoding::O200kBase);
    let cached = CachingTokenizer::new(exact);
    let history = vec![
        Message::system("You are a precise assistant."),
        Message::user("Count the words in: the quick brown fox"),
        Message::assistant("There are four words."),
    ];
    assert_eq!(
        cached.count_messages(&history),
        exact.count_messages(&history)
    );
    assert_eq!(
        cached.count_messages(&history),
        exact.count_messages(&history)
    );
    assert_eq!(cached.cached_entries(), 3);
}

#[test]
fn a_manager_trims_by_exact_counts() {
    let exact = TiktokenTokenizer::new(OpenAiEncoding::Cl100kBase);
    let history = vec![
        Message::system("Be brief."),
        Message::user("first question"),
        Message::assistant("first answer"),
        Message::user("second question"),
    ];
    let budget = exact.count_messages(&[history[0].clone(), history[3].clone()]);
    let manager =
        HistoryManager::with_tokenizer(HistoryPolicy::default().with_max_tokens(budget), exact);
    assert_eq!(
        manager.apply_limits(&history).unwrap(),
        vec![history[0].clone(), history[3].clone()]
    );
}
