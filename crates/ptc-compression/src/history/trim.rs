//! Dropping the oldest messages to meet a token or message budget.

use ptc_turn::{Message, Role};

use super::HistoryError;
use super::pairs::unsafe_cuts;
use crate::tokenizer::Tokenizer;

/// Text of the user message that stands in for trimmed messages when the first kept message
/// would otherwise be an assistant message (see [`trim_to_tokens`]).
pub const TRIM_NOTICE: &str =
    "[Earlier messages of this conversation were removed to fit the context budget.]";

/// The user message that [`trim_to_tokens`] and [`trim_to_messages`] insert in front of the
/// kept messages when those would otherwise start with an assistant message.
pub fn trim_notice() -> Message {
    Message::user(TRIM_NOTICE)
}

/// Estimated tokens of the system messages in `history`.
pub fn system_tokens(history: &[Message], tokenizer: &dyn Tokenizer) -> usize {
    history
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| tokenizer.count_message(m))
        .sum()
}

/// Fails with [`HistoryError::InvalidTokenLimit`] if `max_tokens` cannot hold the system
/// messages of `history`.
pub fn check_token_limit(
    history: &[Message],
    max_tokens: usize,
    tokenizer: &dyn Tokenizer,
) -> Result<(), HistoryError> {
    let system_prompt_tokens = system_tokens(history, tokenizer);
    if system_prompt_tokens > max_tokens {
        return Err(HistoryError::InvalidTokenLimit {
            system_prompt_tokens,
            max_tokens,
        });
    }
    Ok(())
}

/// Drops the oldest non-system messages until the estimated size of the history is at most
/// `max_tokens`.
///
/// System messages always stay, in place. Messages are dropped as a prefix of the non-system
/// messages, and only at points that keep every tool call together with its results. If the
/// first kept non-system message is not a user message, a [`trim_notice`] user message is put
/// in front of it (and counted), because providers reject a conversation whose first message
/// after the system prompt comes from the assistant. When not even the newest messages fit,
/// only the system messages remain.
///
/// Fails with [`HistoryError::InvalidTokenLimit`] when the system messages alone exceed
/// `max_tokens`.
///
/// ```
/// use ptc_compression::history::trim_to_tokens;
/// use ptc_compression::tokenizer::HeuristicTokenizer;
/// use ptc_turn::Message;
///
/// let history = vec![
///     Message::system("Answer briefly."),   // 4 + 4 tokens
///     Message::user("What is 2 + 2?"),      // 4 + 4
///     Message::assistant("4"),              // 4 + 1
///     Message::user("And 3 + 3?"),          // 4 + 3
/// ];
/// let kept = trim_to_tokens(&history, 20, &HeuristicTokenizer).unwrap();
/// assert_eq!(kept, vec![history[0].clone(), history[3].clone()]);
/// ```
pub fn trim_to_tokens(
    history: &[Message],
    max_tokens: usize,
    tokenizer: &dyn Tokenizer,
) -> Result<Vec<Message>, HistoryError> {
    let costs: Vec<usize> = history.iter().map(|m| tokenizer.count_message(m)).collect();
    let system_prompt_tokens: usize = history
        .iter()
        .zip(&costs)
        .filter(|(m, _)| m.role == Role::System)
        .map(|(_, cost)| cost)
        .sum();
    if system_prompt_tokens > max_tokens {
        return Err(HistoryError::InvalidTokenLimit {
            system_prompt_tokens,
            max_tokens,
        });
    }
    let total: usize = costs.iter().sum();
    if total <= max_tokens {
        return Ok(history.to_vec());
    }
    let notice_cost = tokenizer.count_message(&trim_notice());
    Ok(trim_front(history, &costs, notice_cost, max_tokens))
}

/// Keeps the newest messages so that at most `max_messages` remain, or only the system
/// messages if those alone are more.
///
/// Same rules as [`trim_to_tokens`]: system messages stay, tool calls and their results stay
/// together (so fewer messages than the limit may remain), and a [`trim_notice`] (counted as
/// one message) stands in front of a kept history that would start with an assistant message.
///
/// Fails with [`HistoryError::InsufficientHistory`] when `max_messages` is 0.
pub fn trim_to_messages(
    history: &[Message],
    max_messages: usize,
) -> Result<Vec<Message>, HistoryError> {
    if max_messages == 0 {
        return Err(HistoryError::InsufficientHistory {
            message_count: 0,
            minimum: 1,
        });
    }
    if history.len() <= max_messages {
        return Ok(history.to_vec());
    }
    let system_count = history.iter().filter(|m| m.role == Role::System).count();
    let costs = vec![1; history.len()];
    Ok(trim_front(
        history,
        &costs,
        1,
        max_messages.max(system_count),
    ))
}

/// Drops the shortest safe prefix of non-system messages whose removal brings the total cost
/// within `budget`. `budget` must hold the system messages (callers check); if nothing else
/// fits, only they remain.
fn trim_front(
    history: &[Message],
    costs: &[usize],
    notice_cost: usize,
    budget: usize,
) -> Vec<Message> {
    let n = history.len();
    let is_system = |i: usize| history[i].role == Role::System;
    let system_cost: usize = (0..n).filter(|&i| is_system(i)).map(|i| costs[i]).sum();

    // Suffix sums of non-system costs and, per cut, the first non-system message at or after it.
    let mut suffix = vec![0usize; n + 1];
    let mut first_kept = vec![None; n + 1];
    for i in (0..n).rev() {
        if is_system(i) {
            suffix[i] = suffix[i + 1];
            first_kept[i] = first_kept[i + 1];
        } else {
            suffix[i] = suffix[i + 1] + costs[i];
            first_kept[i] = Some(i);
        }
    }
    let unsafe_cut = unsafe_cuts(history);

    let mut dropped_any = false;
    let mut chosen = n;
    for c in 0..=n {
        if c > 0 && !is_system(c - 1) {
            dropped_any = true;
        }
        if unsafe_cut[c] {
            continue;
        }
        let needs_notice =
            dropped_any && first_kept[c].is_some_and(|i| history[i].role != Role::User);
        let cost = system_cost + suffix[c] + if needs_notice { notice_cost } else { 0 };
        if cost <= budget {
            chosen = c;
            break;
        }
    }

    let dropped_any = (0..chosen).any(|i| !is_system(i));
    let mut out = Vec::with_capacity(n - chosen + 8);
    let mut notice_pending = dropped_any;
    for (i, message) in history.iter().enumerate() {
        if is_system(i) {
            out.push(message.clone());
        } else if i >= chosen {
            if notice_pending {
                if message.role != Role::User {
                    out.push(trim_notice());
                }
                notice_pending = false;
            }
            out.push(message.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::HeuristicTokenizer;
    use pretty_assertions::assert_eq;
    use ptc_turn::MessageToolCall;

    fn call(id: &str) -> MessageToolCall {
        MessageToolCall {
            id: id.into(),
            name: "f".into(),
            arguments: serde_json::json!({}),
        }
    }

    #[test]
    fn message_budget_counts_the_notice_and_keeps_pairs() {
        let history = vec![
            Message::system("s"),
            Message::user("u1"),
            Message::assistant("a1"),
            Message::assistant("").with_tool_calls(vec![call("x")]),
            Message::tool_result("x", "r"),
            Message::assistant("a2"),
        ];
        // Four slots: system + notice + the call/result pair would need five, so the cut
        // moves past the pair to the last assistant message.
        let kept = trim_to_messages(&history, 4).unwrap();
        assert_eq!(
            kept,
            vec![Message::system("s"), trim_notice(), history[5].clone()]
        );
        let kept = trim_to_messages(&history, 5).unwrap();
        assert_eq!(
            kept,
            vec![
                Message::system("s"),
                trim_notice(),
                history[3].clone(),
                history[4].clone(),
                history[5].clone(),
            ]
        );
    }

    #[test]
    fn system_messages_alone_can_exceed_the_message_limit() {
        let history = vec![
            Message::system("a"),
            Message::system("b"),
            Message::user("u"),
        ];
        assert_eq!(
            trim_to_messages(&history, 1).unwrap(),
            vec![Message::system("a"), Message::system("b")]
        );
    }

    #[test]
    fn token_trim_keeps_system_messages_in_place() {
        let history = vec![
            Message::system("first"),
            Message::user("old question"),
            Message::system("second"),
            Message::user("new"),
        ];
        // system 4+2 each = 12, "new" = 5: 17 fits, adding "old question" (7) would not.
        assert_eq!(
            trim_to_tokens(&history, 17, &HeuristicTokenizer).unwrap(),
            vec![
                Message::system("first"),
                Message::system("second"),
                Message::user("new")
            ]
        );
    }
}
