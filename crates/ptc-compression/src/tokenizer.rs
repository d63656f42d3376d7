//! Token estimates for chat messages.
//!
//! History management needs to know how large a prompt is before it is sent. A [`Tokenizer`]
//! estimates that size per message; [`HeuristicTokenizer`] is the dependency-free default,
//! `TiktokenTokenizer` (cargo feature `tiktoken`) counts exactly for OpenAI encodings, and
//! [`CachingTokenizer`] remembers per-message counts so a growing history is not recounted
//! from scratch on every turn.
//!
//! # Message framing
//!
//! Every tokenizer here counts a message with the same framing, modelled on the OpenAI chat
//! format: [`MESSAGE_OVERHEAD`] tokens for the role and the message delimiters, plus the
//! content, plus for each tool call [`TOOL_CALL_OVERHEAD`] tokens and the call's id, name and
//! JSON arguments, plus the `tool_call_id` of a tool result. Only the way a piece of text is
//! turned into a number differs between tokenizers.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, PoisonError};

use ptc_turn::{Message, Role};
use rustc_hash::FxHasher;

/// Tokens charged per message for its role and the delimiters around it (three framing
/// tokens plus one role token in the OpenAI chat format).
pub const MESSAGE_OVERHEAD: usize = 4;

/// Tokens charged per tool call on top of its id, name and arguments.
pub const TOOL_CALL_OVERHEAD: usize = 3;

/// Estimates how many tokens text and messages take in a model's context.
///
/// Implementors provide [`count_text`](Tokenizer::count_text); the message framing (see the
/// [module docs](self)) is shared. Implementations must be cheap to call concurrently: history
/// management calls them for every message of every prompt.
pub trait Tokenizer: Send + Sync {
    /// Tokens in a piece of text.
    fn count_text(&self, text: &str) -> usize;

    /// Tokens in a JSON value (tool-call arguments) as it is sent: compact JSON text.
    fn count_json(&self, value: &serde_json::Value) -> usize {
        self.count_text(&value.to_string())
    }

    /// Tokens in one message, framing included.
    fn count_message(&self, message: &Message) -> usize {
        let mut total = MESSAGE_OVERHEAD + self.count_text(&message.content);
        for call in &message.tool_calls {
            total += TOOL_CALL_OVERHEAD
                + self.count_text(&call.id)
                + self.count_text(&call.name)
                + self.count_json(&call.arguments);
        }
        if let Some(id) = &message.tool_call_id {
            total += self.count_text(id);
        }
        total
    }

    /// Tokens in a whole list of messages: the sum of [`count_message`](Tokenizer::count_message).
    fn count_messages(&self, messages: &[Message]) -> usize {
        messages.iter().map(|m| self.count_message(m)).sum()
    }
}

/// The default estimate: one token per four characters, rounded up.
///
/// Four characters per token is the usual rule of thumb for English text and code with BPE
/// tokenizers; it overestimates slightly for plain English and underestimates for dense
/// non-Latin text. Characters are Unicode scalar values, not bytes. No dependencies, no setup.
///
/// ```
/// use ptc_compression::tokenizer::{HeuristicTokenizer, Tokenizer, MESSAGE_OVERHEAD};
/// use ptc_turn::Message;
///
/// let tokenizer = HeuristicTokenizer;
/// assert_eq!(tokenizer.count_text("hello"), 2); // 5 characters / 4, rounded up
/// assert_eq!(tokenizer.count_message(&Message::user("hello")), MESSAGE_OVERHEAD + 2);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeuristicTokenizer;

/// Characters per token assumed by [`HeuristicTokenizer`].
pub const CHARS_PER_TOKEN: usize = 4;

impl HeuristicTokenizer {
    /// Tokens for a text of `chars` characters (the one place the estimate is made).
    pub(crate) fn tokens_for_chars(chars: usize) -> usize {
        chars.div_ceil(CHARS_PER_TOKEN)
    }
}

impl Tokenizer for HeuristicTokenizer {
    fn count_text(&self, text: &str) -> usize {
        Self::tokens_for_chars(text.chars().count())
    }

    fn count_json(&self, value: &serde_json::Value) -> usize {
        // Stream the serialization into a counter rather than building the JSON string.
        let mut counter = CharCounter(0);
        // Writing a `Value` to an infallible writer cannot fail.
        let _ = serde_json::to_writer(&mut counter, value);
        Self::tokens_for_chars(counter.0)
    }
}

/// Counts the UTF-8 characters written to it (every byte that does not continue a character).
struct CharCounter(usize);

impl std::io::Write for CharCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Feeds written bytes into a hasher, so JSON can be hashed without building its text.
struct HashWriter<'a, H: Hasher>(&'a mut H);

impl<H: Hasher> std::io::Write for HashWriter<'_, H> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A 64-bit hash of everything in a message that is sent to the model: role, content, tool
/// calls (id, name, arguments) and the id of the call a tool result answers. The timestamp is
/// not part of it (it is never sent, so it cannot change a token count).
///
/// The hash is deterministic within one build of the program; it is not meant to be stable
/// across versions of this crate or of its hashing dependency.
pub fn message_hash(message: &Message) -> u64 {
    let mut h = FxHasher::default();
    h.write_u8(match message.role {
        Role::System => 0,
        Role::User => 1,
        Role::Assistant => 2,
        Role::Tool => 3,
    });
    hash_str(&mut h, &message.content);
    h.write_usize(message.tool_calls.len());
    for call in &message.tool_calls {
        hash_str(&mut h, &call.id);
        hash_str(&mut h, &call.name);
        let _ = serde_json::to_writer(HashWriter(&mut h), &call.arguments);
        // Terminates the arguments so that adjacent calls cannot blur into each other.
        h.write_u8(0xFF);
    }
    match &message.tool_call_id {
        Some(id) => {
            h.write_u8(1);
            hash_str(&mut h, id);
        }
        None => h.write_u8(0),
    }
    h.finish()
}

fn hash_str(h: &mut FxHasher, s: &str) {
    // Length first, so that ("ab", "c") and ("a", "bc") hash differently.
    h.write_usize(s.len());
    h.write(s.as_bytes());
}

/// Entries a [`CachingTokenizer`] holds before it starts over (see [`CachingTokenizer::with_capacity`]).
pub const DEFAULT_CACHE_CAPACITY: usize = 16_384;

type CountCache = HashMap<u64, usize, BuildHasherDefault<FxHasher>>;

/// Wraps a tokenizer and remembers the count of every message it has seen.
///
/// Messages are keyed by [`message_hash`], so an unchanged message is never recounted, however
/// often the history around it is re-measured. This pays off for exact tokenizers, whose
/// per-message cost is far above a hash; for [`HeuristicTokenizer`] counting is about as cheap
/// as hashing and the cache gains little. A 64-bit hash collision between two different
/// messages would give one of them the other's count; with a few thousand distinct messages
/// per conversation the odds are negligible, and the effect is only a misjudged budget.
///
/// The cache is bounded: when it holds `capacity` entries it is cleared and refilled, which
/// keeps memory flat over very long conversations at the price of one recount.
///
/// ```
/// use ptc_compression::tokenizer::{CachingTokenizer, HeuristicTokenizer, Tokenizer};
/// use ptc_turn::Message;
///
/// let tokenizer = CachingTokenizer::new(HeuristicTokenizer);
/// let history = vec![Message::user("hello"), Message::assistant("hi there")];
/// assert_eq!(tokenizer.count_messages(&history), HeuristicTokenizer.count_messages(&history));
/// assert_eq!(tokenizer.cached_entries(), 2);
/// ```
#[derive(Debug)]
pub struct CachingTokenizer<T> {
    inner: T,
    capacity: usize,
    cache: Mutex<CountCache>,
}

impl<T: Tokenizer> CachingTokenizer<T> {
    /// Caches up to [`DEFAULT_CACHE_CAPACITY`] message counts.
    pub fn new(inner: T) -> CachingTokenizer<T> {
        CachingTokenizer::with_capacity(inner, DEFAULT_CACHE_CAPACITY)
    }

    /// Caches up to `capacity` message counts (at least one).
    pub fn with_capacity(inner: T, capacity: usize) -> CachingTokenizer<T> {
        CachingTokenizer {
            inner,
            capacity: capacity.max(1),
            cache: Mutex::new(CountCache::default()),
        }
    }

    /// The wrapped tokenizer.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// How many message counts are cached right now.
    pub fn cached_entries(&self) -> usize {
        self.lock().len()
    }

    /// Forgets every cached count.
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CountCache> {
        // A poisoned cache still holds valid counts: each entry is inserted whole.
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn count_cached(&self, cache: &mut CountCache, message: &Message) -> usize {
        let key = message_hash(message);
        if let Some(&count) = cache.get(&key) {
            return count;
        }
        let count = self.inner.count_message(message);
        if cache.len() >= self.capacity {
            cache.clear();
        }
        cache.insert(key, count);
        count
    }
}

impl<T: Tokenizer> Tokenizer for CachingTokenizer<T> {
    fn count_text(&self, text: &str) -> usize {
        self.inner.count_text(text)
    }

    fn count_json(&self, value: &serde_json::Value) -> usize {
        self.inner.count_json(value)
    }

    fn count_message(&self, message: &Message) -> usize {
        let mut cache = self.lock();
        self.count_cached(&mut cache, message)
    }

    fn count_messages(&self, messages: &[Message]) -> usize {
        // One lock for the whole list instead of one per message.
        let mut cache = self.lock();
        messages
            .iter()
            .map(|m| self.count_cached(&mut cache, m))
            .sum()
    }
}

impl<T: Tokenizer + ?Sized> Tokenizer for &T {
    fn count_text(&self, text: &str) -> usize {
        (**self).count_text(text)
    }

    fn count_json(&self, value: &serde_json::Value) -> usize {
        (**self).count_json(value)
    }

    fn count_message(&self, message: &Message) -> usize {
        (**self).count_message(message)
    }

    fn count_messages(&self, messages: &[Message]) -> usize {
        (**self).count_messages(messages)
    }
}

impl<T: Tokenizer + ?Sized> Tokenizer for std::sync::Arc<T> {
    fn count_text(&self, text: &str) -> usize {
        (**self).count_text(text)
    }

    fn count_json(&self, value: &serde_json::Value) -> usize {
        (**self).count_json(value)
    }

    fn count_message(&self, message: &Message) -> usize {
        (**self).count_message(message)
    }

    fn count_messages(&self, messages: &[Message]) -> usize {
        (**self).count_messages(messages)
    }
}

#[cfg(feature = "tiktoken")]
pub use tiktoken::{OpenAiEncoding, TiktokenTokenizer};

#[cfg(feature = "tiktoken")]
mod tiktoken {
    use std::sync::OnceLock;

    use tiktoken_rs::CoreBPE;

    use super::{HeuristicTokenizer, Tokenizer};

    /// The OpenAI encodings [`TiktokenTokenizer`] can count with.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum OpenAiEncoding {
        /// GPT-4 and GPT-3.5 chat models.
        Cl100kBase,
        /// GPT-4o, GPT-4.1, GPT-5 and the `o` series.
        O200kBase,
    }

    /// Exact token counts for OpenAI models (cargo feature `tiktoken`).
    ///
    /// An encoding's tables are built the first time it is used, once per process, and shared
    /// by every `TiktokenTokenizer` afterwards; constructing the tokenizer itself is free. Text
    /// is encoded as ordinary text: special-token markers inside a message are counted as the
    /// characters they are, which is how chat APIs treat message content.
    ///
    /// ```
    /// use ptc_compression::tokenizer::{OpenAiEncoding, TiktokenTokenizer, Tokenizer};
    ///
    /// let tokenizer = TiktokenTokenizer::new(OpenAiEncoding::O200kBase);
    /// assert_eq!(tokenizer.count_text("hello world"), 2);
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct TiktokenTokenizer {
        encoding: OpenAiEncoding,
    }

    impl TiktokenTokenizer {
        /// A tokenizer counting with `encoding`.
        pub fn new(encoding: OpenAiEncoding) -> TiktokenTokenizer {
            TiktokenTokenizer { encoding }
        }

        /// The tokenizer for an OpenAI model name (e.g. `gpt-4o`, `gpt-4-turbo`, `o3-mini`),
        /// or `None` when the model uses neither supported encoding or is unknown.
        pub fn for_model(model: &str) -> Option<TiktokenTokenizer> {
            use tiktoken_rs::tokenizer::{Tokenizer as Encoding, get_tokenizer};
            match get_tokenizer(model)? {
                Encoding::Cl100kBase => Some(TiktokenTokenizer::new(OpenAiEncoding::Cl100kBase)),
                Encoding::O200kBase => Some(TiktokenTokenizer::new(OpenAiEncoding::O200kBase)),
                _ => None,
            }
        }

        /// The encoding it counts with.
        pub fn encoding(&self) -> OpenAiEncoding {
            self.encoding
        }

        fn bpe(&self) -> Option<&'static CoreBPE> {
            static CL100K: OnceLock<Option<CoreBPE>> = OnceLock::new();
            static O200K: OnceLock<Option<CoreBPE>> = OnceLock::new();
            match self.encoding {
                OpenAiEncoding::Cl100kBase => {
                    CL100K.get_or_init(|| tiktoken_rs::cl100k_base().ok())
                }
                OpenAiEncoding::O200kBase => O200K.get_or_init(|| tiktoken_rs::o200k_base().ok()),
            }
            .as_ref()
        }
    }

    impl Tokenizer for TiktokenTokenizer {
        fn count_text(&self, text: &str) -> usize {
            match self.bpe() {
                Some(bpe) => bpe.count_ordinary(text),
                // The tables are compiled into the binary, so building them does not fail in
                // practice; an estimate is still better than no answer if it ever does.
                None => HeuristicTokenizer.count_text(text),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ptc_turn::MessageToolCall;
    use serde_json::json;

    #[test]
    fn heuristic_rounds_characters_up_to_whole_tokens() {
        let t = HeuristicTokenizer;
        assert_eq!(t.count_text(""), 0);
        assert_eq!(t.count_text("a"), 1);
        assert_eq!(t.count_text("abcd"), 1);
        assert_eq!(t.count_text("abcde"), 2);
        // Characters, not bytes: four 3-byte characters are one token.
        assert_eq!(t.count_text("日本語字"), 1);
    }

    #[test]
    fn heuristic_counts_json_as_compact_text() {
        let value = json!({"path": "é/x", "n": [1, 2]});
        let text = value.to_string();
        assert_eq!(text, r#"{"n":[1,2],"path":"é/x"}"#);
        assert_eq!(
            HeuristicTokenizer.count_json(&value),
            HeuristicTokenizer.count_text(&text)
        );
    }

    #[test]
    fn message_framing_covers_tool_calls_and_results() {
        let t = HeuristicTokenizer;
        let call = Message::assistant("").with_tool_calls(vec![MessageToolCall {
            id: "c1".into(),
            name: "search".into(),
            arguments: json!({"q": "rust"}),
        }]);
        // 4 + 0 content + (3 + "c1"=1 + "search"=2 + {"q":"rust"}=3)
        assert_eq!(t.count_message(&call), 4 + 3 + 1 + 2 + 3);
        let result = Message::tool_result("c1", "found 3");
        // 4 + "found 3"=2 + "c1"=1
        assert_eq!(t.count_message(&result), 7);
        assert_eq!(t.count_messages(&[call, result]), 13 + 7);
    }

    #[test]
    fn message_hash_ignores_timestamps_but_not_content_role_or_calls() {
        let base = Message::user("hi");
        assert_eq!(
            message_hash(&base),
            message_hash(&base.clone().with_timestamp_ms(5))
        );
        assert_ne!(message_hash(&base), message_hash(&Message::assistant("hi")));
        assert_ne!(message_hash(&base), message_hash(&Message::user("hi!")));
        let with_call = |args| {
            Message::assistant("").with_tool_calls(vec![MessageToolCall {
                id: "1".into(),
                name: "f".into(),
                arguments: args,
            }])
        };
        assert_ne!(
            message_hash(&with_call(json!({"a": 1}))),
            message_hash(&with_call(json!({"a": 2})))
        );
        assert_ne!(
            message_hash(&Message::tool_result("a", "x")),
            message_hash(&Message::tool_result("b", "x"))
        );
    }

    /// Counts how often the inner tokenizer is asked about a message.
    #[derive(Default)]
    struct CountingTokenizer(std::sync::atomic::AtomicUsize);

    impl Tokenizer for CountingTokenizer {
        fn count_text(&self, text: &str) -> usize {
            HeuristicTokenizer.count_text(text)
        }

        fn count_message(&self, message: &Message) -> usize {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            HeuristicTokenizer.count_message(message)
        }
    }

    #[test]
    fn caching_tokenizer_counts_each_distinct_message_once() {
        let cached = CachingTokenizer::new(CountingTokenizer::default());
        let history = vec![
            Message::system("be brief"),
            Message::user("hello"),
            Message::assistant("hi"),
        ];
        let expected = HeuristicTokenizer.count_messages(&history);
        assert_eq!(cached.count_messages(&history), expected);
        assert_eq!(cached.count_messages(&history), expected);
        assert_eq!(cached.count_message(&history[1]), 6);
        assert_eq!(
            cached.inner().0.load(std::sync::atomic::Ordering::Relaxed),
            3
        );
        assert_eq!(cached.cached_entries(), 3);
        cached.clear();
        assert_eq!(cached.cached_entries(), 0);
    }

    #[test]
    fn caching_tokenizer_starts_over_when_full() {
        let cached = CachingTokenizer::with_capacity(HeuristicTokenizer, 2);
        let msgs = [Message::user("a"), Message::user("b"), Message::user("c")];
        assert_eq!(cached.count_messages(&msgs), 15);
        // Cleared when the third entry arrived, then refilled with it.
        assert_eq!(cached.cached_entries(), 1);
    }
}
