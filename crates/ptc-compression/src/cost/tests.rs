//! The caching rules on small request sequences whose token counts are easy to follow: with
//! the heuristic tokenizer a message of `4n` characters is `n + 4` tokens (four for its framing).

use super::*;
use crate::HeuristicTokenizer;
use pretty_assertions::assert_eq;
use ptc_turn::Message;

/// A text of `tokens` heuristic tokens.
fn text(tokens: usize, fill: char) -> String {
    fill.to_string().repeat(tokens * 4)
}

fn request(system: &str, messages: &[&str], points: &[(usize, usize)]) -> PromptRequest {
    PromptRequest {
        system: system.to_string(),
        messages: messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                if i % 2 == 0 {
                    Message::user(*m)
                } else {
                    Message::assistant(*m)
                }
            })
            .collect(),
        cache_points: points.iter().map(|&(m, o)| CachePoint::new(m, o)).collect(),
    }
}

/// (input, read, write) per request.
fn split(bill: &Bill) -> Vec<(u64, u64, u64)> {
    bill.requests
        .iter()
        .map(|c| (c.input_tokens, c.cache_read_tokens, c.cache_write_tokens))
        .collect()
}

fn priced(requests: &[PromptRequest], profile: PricingProfile) -> Bill {
    price(requests, &profile, &HeuristicTokenizer)
}

/// A history that grows by one exchange a request, each request ending with a turn count that
/// the next one no longer has, and a cache point before it.
fn growing() -> Vec<PromptRequest> {
    let system = text(1_996, 's'); // 2,000 tokens with its framing
    let first = text(300, 'a');
    let reply = text(100, 'b');
    let feedback = text(200, 'c');
    let left = "\n\nTurns left: 3";
    let one = format!("{first}{left}");
    let two = format!("{feedback}{left}");
    vec![
        request(&system, &[&one], &[(0, first.len())]),
        request(
            &system,
            &[&first, &reply, &two],
            &[(0, first.len()), (2, feedback.len())],
        ),
    ]
}

#[test]
fn anthropic_reads_what_earlier_breakpoints_wrote() {
    let bill = priced(&growing(), PricingProfile::anthropic());
    // Request 1: the system prompt (2,000) and the first message up to its point (304) are
    // written; the turn count (4 tokens) is not cached.
    // Request 2: both read back; the reply (104) and the feedback (204) are written up to the
    // new point, the turn count again paid in full.
    assert_eq!(split(&bill), vec![(4, 0, 2_304), (4, 2_304, 308)]);
    assert_eq!(bill.requests[1].billed, 4.0 + 2_304.0 * 0.1 + 308.0 * 1.25);
    assert_eq!(bill.total.prompt_tokens(), 2_308 + 2_616);
}

#[test]
fn anthropic_caches_nothing_below_its_minimum() {
    let small = vec![
        request(&text(96, 's'), &["hello"], &[(0, 5)]),
        request(&text(96, 's'), &["hello", "hi", "again"], &[(0, 5)]),
    ];
    let bill = priced(&small, PricingProfile::anthropic());
    assert_eq!(split(&bill), vec![(106, 0, 0), (117, 0, 0)]);
    // Lower the minimum and the same requests are cached.
    let mut profile = PricingProfile::anthropic();
    profile.min_cached_tokens = 0;
    let bill = priced(&small, profile);
    assert_eq!(split(&bill), vec![(0, 0, 106), (11, 106, 0)]);
}

#[test]
fn anthropic_looks_back_at_most_twenty_blocks() {
    let system = text(1_996, 's');
    let mut long: Vec<String> = vec!["u".into()];
    for i in 0..24 {
        long.push(format!("m{i}"));
    }
    let long: Vec<&str> = long.iter().map(String::as_str).collect();
    // The first request marks only the system prompt; the second marks a message 25 blocks
    // past it, so it cannot find the cached system prompt from there, but its own system
    // block is marked too.
    let requests = vec![
        request(&system, &["u"], &[]),
        request(&system, &long, &[(24, 3)]),
    ];
    let bill = priced(&requests, PricingProfile::anthropic());
    assert_eq!(bill.requests[1].cache_read_tokens, 2_000);
    // Without the system prompt's own mark (no system prompt), a far breakpoint misses.
    let mut profile = PricingProfile::anthropic();
    profile.min_cached_tokens = 0;
    let first = request("", &long[..1], &[(0, 1)]);
    let far = request("", &long, &[(24, 3)]);
    let near = request("", &long[..20], &[(19, 3)]);
    let bill = priced(&[first.clone(), far], profile);
    assert_eq!(bill.requests[1].cache_read_tokens, 0);
    let bill = priced(&[first, near], profile);
    assert_eq!(bill.requests[1].cache_read_tokens, 5);
}

#[test]
fn a_rewritten_message_is_read_only_up_to_its_stable_prefix() {
    let system = text(1_996, 's');
    let prefix = text(400, 'p');
    let summary = |fill| format!("{prefix}{}", text(200, fill));
    let one = summary('a');
    let two = summary('b');
    let requests = vec![
        request(&system, &[&one], &[(0, prefix.len())]),
        request(&system, &[&two], &[(0, prefix.len())]),
    ];
    let bill = priced(&requests, PricingProfile::anthropic());
    assert_eq!(split(&bill), vec![(200, 0, 2_404), (200, 2_404, 0)]);
    // OpenAI finds the same prefix by itself, in steps of 128 tokens past 1,024.
    let bill = priced(&requests, PricingProfile::openai());
    assert_eq!(split(&bill), vec![(2_604, 0, 0), (2_604 - 2_304, 2_304, 0)]);
    // The ideal cache reads it to the token.
    let bill = priced(&requests, PricingProfile::ideal());
    assert_eq!(split(&bill), vec![(2_604, 0, 0), (200, 2_404, 0)]);
}

#[test]
fn openai_caches_from_its_minimum_in_steps() {
    let requests = growing();
    let bill = priced(&requests, PricingProfile::openai());
    // Request 2 shares 2,304 tokens with request 1: 1,024 + 10 × 128 = 2,304.
    assert_eq!(split(&bill), vec![(2_308, 0, 0), (2_616 - 2_304, 2_304, 0)]);
    assert_eq!(bill.requests[1].billed, 312.0 + 2_304.0 * 0.5);
    let cheaper = priced(
        &requests,
        PricingProfile::openai().with_read_multiplier(0.1),
    );
    assert_eq!(cheaper.requests[1].billed, 312.0 + 2_304.0 * 0.1);
    // Below 1,024 tokens nothing is cached.
    let small = vec![
        request("", &["hello"], &[]),
        request("", &["hello", "hi"], &[]),
    ];
    let bill = priced(&small, PricingProfile::openai());
    assert_eq!(bill.total.cache_read_tokens, 0);
}

#[test]
fn openai_finds_any_earlier_prefix_and_the_ideal_cache_only_the_previous_one() {
    let system = text(1_996, 's');
    let a = text(500, 'a');
    let b = text(500, 'b');
    let requests = vec![
        request(&system, &[&a], &[]),
        request(&system, &[&b], &[]),
        request(&system, &[&a], &[]),
    ];
    let openai = priced(&requests, PricingProfile::openai());
    assert_eq!(openai.requests[2].cache_read_tokens, 2_432);
    let ideal = priced(&requests, PricingProfile::ideal());
    assert_eq!(ideal.requests[2].cache_read_tokens, 2_000);
}
