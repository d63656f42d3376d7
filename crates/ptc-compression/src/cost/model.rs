//! The three caching rules, applied to a sequence of requests.

use std::collections::HashSet;
use std::hash::Hasher;

use ptc_turn::{Message, Role};
use rustc_hash::FxHasher;

use super::profile::{ANTHROPIC_LOOKBACK_BLOCKS, OPENAI_CACHE_STEP, PricingKind, PricingProfile};
use super::request::{PromptRequest, anthropic_breakpoints};
use crate::tokenizer::{MESSAGE_OVERHEAD, Tokenizer, message_hash};

/// How one request's prompt tokens are billed.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RequestCost {
    /// Tokens billed at the full input price (neither read from nor written to the cache).
    pub input_tokens: u64,
    /// Tokens read from the prompt cache.
    pub cache_read_tokens: u64,
    /// Tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    /// What the prompt costs in input tokens at the full price: input + read × the read
    /// multiplier + write × the write multiplier.
    pub billed: f64,
}

impl RequestCost {
    /// The whole prompt: input, read and written tokens.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    /// The cost of a prompt split this way under `profile`.
    pub fn priced(
        input_tokens: u64,
        cache_read_tokens: u64,
        cache_write_tokens: u64,
        profile: &PricingProfile,
    ) -> RequestCost {
        RequestCost {
            input_tokens,
            cache_read_tokens,
            cache_write_tokens,
            billed: input_tokens as f64
                + cache_read_tokens as f64 * profile.read_multiplier
                + cache_write_tokens as f64 * profile.write_multiplier,
        }
    }
}

impl std::ops::AddAssign for RequestCost {
    fn add_assign(&mut self, other: RequestCost) {
        self.input_tokens += other.input_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.billed += other.billed;
    }
}

/// A request's messages as the cache rules see them: the system prompt as the first message,
/// then the conversation, each with its token count.
struct Flat<'r> {
    messages: Vec<FlatMessage<'r>>,
}

struct FlatMessage<'r> {
    role: Role,
    content: &'r str,
    /// Everything sent besides role and content (tool calls, the id a result answers).
    extra: u64,
    tokens: usize,
}

impl<'r> Flat<'r> {
    fn new(request: &'r PromptRequest, tokenizer: &dyn Tokenizer) -> Flat<'r> {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !request.system.is_empty() {
            messages.push(FlatMessage {
                role: Role::System,
                content: &request.system,
                extra: 0,
                tokens: MESSAGE_OVERHEAD + tokenizer.count_text(&request.system),
            });
        }
        for message in &request.messages {
            messages.push(FlatMessage {
                role: message.role,
                content: &message.content,
                extra: extra_hash(message),
                tokens: tokenizer.count_message(message),
            });
        }
        Flat { messages }
    }

    fn system_offset(request: &PromptRequest) -> usize {
        usize::from(!request.system.is_empty())
    }

    fn total(&self) -> usize {
        self.messages.iter().map(|m| m.tokens).sum()
    }

    /// Tokens of message `index` up to byte `offset` of its content (framing included).
    fn partial_tokens(&self, index: usize, offset: usize, tokenizer: &dyn Tokenizer) -> usize {
        let message = &self.messages[index];
        if offset >= message.content.len() {
            message.tokens
        } else {
            MESSAGE_OVERHEAD + tokenizer.count_text(&message.content[..offset])
        }
    }

    /// Tokens of the longest prefix this request shares with `other`.
    fn common_prefix_tokens(&self, other: &Flat<'_>, tokenizer: &dyn Tokenizer) -> usize {
        let mut tokens = 0;
        for (i, (a, b)) in self.messages.iter().zip(&other.messages).enumerate() {
            if a.role != b.role {
                break;
            }
            if a.content == b.content && a.extra == b.extra {
                tokens += a.tokens;
                continue;
            }
            let common = common_prefix_len(a.content, b.content);
            if common > 0 {
                tokens += self.partial_tokens(i, common, tokenizer);
            }
            break;
        }
        tokens
    }
}

fn extra_hash(message: &Message) -> u64 {
    if message.tool_calls.is_empty() && message.tool_call_id.is_none() {
        return 0;
    }
    let bare = Message {
        content: String::new(),
        timestamp_ms: None,
        ..message.clone()
    };
    message_hash(&bare)
}

/// Bytes two texts share from their start, on a character boundary.
fn common_prefix_len(a: &str, b: &str) -> usize {
    let mut len = a
        .as_bytes()
        .iter()
        .zip(b.as_bytes())
        .take_while(|(x, y)| x == y)
        .count();
    while !a.is_char_boundary(len) {
        len -= 1;
    }
    len
}

/// Prices `requests`, sent in this order, under `profile`.
pub(super) fn price_requests(
    requests: &[PromptRequest],
    profile: &PricingProfile,
    tokenizer: &dyn Tokenizer,
) -> Vec<RequestCost> {
    match profile.kind {
        PricingKind::Anthropic => anthropic(requests, profile, tokenizer),
        PricingKind::OpenAi | PricingKind::Ideal => automatic(requests, profile, tokenizer),
    }
}

/// Automatic prefix caching: OpenAI (any earlier request, in steps past a minimum) and the ideal
/// cache (the previous request, to the token).
fn automatic(
    requests: &[PromptRequest],
    profile: &PricingProfile,
    tokenizer: &dyn Tokenizer,
) -> Vec<RequestCost> {
    let flats: Vec<Flat<'_>> = requests.iter().map(|r| Flat::new(r, tokenizer)).collect();
    let mut costs = Vec::with_capacity(flats.len());
    for (i, flat) in flats.iter().enumerate() {
        let total = flat.total();
        let earlier: &[Flat<'_>] = match profile.kind {
            PricingKind::Ideal => &flats[i.saturating_sub(1)..i],
            _ => &flats[..i],
        };
        let common = earlier
            .iter()
            .map(|e| flat.common_prefix_tokens(e, tokenizer))
            .max()
            .unwrap_or(0)
            .min(total);
        let cached = match profile.kind {
            PricingKind::Ideal => common,
            _ if common < profile.min_cached_tokens || total < profile.min_cached_tokens => 0,
            _ => {
                let min = profile.min_cached_tokens;
                min + (common - min) / OPENAI_CACHE_STEP * OPENAI_CACHE_STEP
            }
        };
        costs.push(RequestCost::priced(
            (total - cached) as u64,
            cached as u64,
            0,
            profile,
        ));
    }
    costs
}

/// A stretch of a request between two places the cache can be looked up: the end of a message
/// or a breakpoint inside one.
struct Block {
    /// A hash of everything from the start of the request to the end of this block.
    key: u64,
    /// Tokens from the start of the request to the end of this block.
    tokens: usize,
    /// Whether the client marked the end of this block as a breakpoint.
    marked: bool,
}

/// Anthropic's explicit caching: prefixes are written at the breakpoints the provider marks
/// (the system prompt and [`anthropic_breakpoints`]) and read back by a later request that has
/// a breakpoint at most [`ANTHROPIC_LOOKBACK_BLOCKS`] blocks after the same prefix.
fn anthropic(
    requests: &[PromptRequest],
    profile: &PricingProfile,
    tokenizer: &dyn Tokenizer,
) -> Vec<RequestCost> {
    let mut cache: HashSet<u64> = HashSet::new();
    let mut costs = Vec::with_capacity(requests.len());
    for request in requests {
        let blocks = anthropic_blocks(request, tokenizer);
        let total = blocks.last().map_or(0, |b| b.tokens);
        let cacheable = |b: &Block| b.tokens >= profile.min_cached_tokens && b.tokens > 0;
        let marks: Vec<usize> = (0..blocks.len())
            .filter(|&i| blocks[i].marked && cacheable(&blocks[i]))
            .collect();
        let read = marks
            .iter()
            .flat_map(|&m| (m.saturating_sub(ANTHROPIC_LOOKBACK_BLOCKS)..=m).rev())
            .filter(|&j| cache.contains(&blocks[j].key))
            .map(|j| blocks[j].tokens)
            .max()
            .unwrap_or(0);
        let written_to = marks.last().map_or(0, |&m| blocks[m].tokens);
        let write = written_to.saturating_sub(read);
        for &m in &marks {
            cache.insert(blocks[m].key);
        }
        costs.push(RequestCost::priced(
            (total - read - write) as u64,
            read as u64,
            write as u64,
            profile,
        ));
    }
    costs
}

fn anthropic_blocks(request: &PromptRequest, tokenizer: &dyn Tokenizer) -> Vec<Block> {
    let flat = Flat::new(request, tokenizer);
    let offset = Flat::system_offset(request);
    let breakpoints = anthropic_breakpoints(&request.cache_points);
    let mut blocks = Vec::new();
    let mut key = FxHasher::default();
    let mut before = 0;
    for (index, message) in flat.messages.iter().enumerate() {
        let mut cuts: Vec<usize> = breakpoints
            .iter()
            .filter(|p| p.message_index + offset == index)
            .map(|p| p.byte_offset)
            .filter(|&o| o < message.content.len())
            .collect();
        cuts.push(message.content.len());
        let whole_marked = index < offset
            || breakpoints.iter().any(|p| {
                p.message_index + offset == index && p.byte_offset >= message.content.len()
            });
        let mut start = 0;
        for (k, &end) in cuts.iter().enumerate() {
            let last = k + 1 == cuts.len();
            key.write_u8(match message.role {
                Role::System => 0,
                Role::User => 1,
                Role::Assistant => 2,
                Role::Tool => 3,
            });
            key.write_u8(u8::from(start == 0));
            key.write_usize(end - start);
            key.write(&message.content.as_bytes()[start..end]);
            // A message whose whole content is an earlier request's first block (the turn
            // count since removed) is the same prefix.
            if last && message.extra != 0 {
                key.write_u64(message.extra);
            }
            let tokens = before + flat.partial_tokens(index, end, tokenizer);
            blocks.push(Block {
                key: key.finish(),
                tokens,
                marked: if last { whole_marked } else { true },
            });
            start = end;
        }
        before += message.tokens;
    }
    blocks
}
