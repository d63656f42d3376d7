//! A request as a provider receives it: the system prompt, the conversation, and the points a
//! client marks for the prompt cache.

use ptc_turn::{Message, Role};
use serde::{Deserialize, Serialize};

/// The end of a part of a prompt that the next request is expected to repeat byte for byte: the
/// first `byte_offset` bytes of the message at `message_index` (and every message before it).
/// A provider with explicit prompt caching marks such points; one with automatic caching finds
/// them on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CachePoint {
    /// Index of the message the point falls in.
    pub message_index: usize,
    /// Byte offset into that message's content, on a character boundary.
    pub byte_offset: usize,
}

impl CachePoint {
    /// The point `byte_offset` bytes into the message at `message_index`.
    pub fn new(message_index: usize, byte_offset: usize) -> CachePoint {
        CachePoint {
            message_index,
            byte_offset,
        }
    }
}

/// The most cache breakpoints the Anthropic Messages API accepts in one request.
pub const ANTHROPIC_MAX_BREAKPOINTS: usize = 4;

/// The breakpoints a client sends to Anthropic, besides the one on the system prompt: at most
/// three of `points` (those that fall inside a message, in order), keeping the first (the
/// stable `tool/` and `data/` prefix) and the last ones (the newest stable message), so that
/// with the system prompt no request carries more than [`ANTHROPIC_MAX_BREAKPOINTS`].
///
/// The Anthropic provider of `ptc-agent` marks exactly these, and the `anthropic` pricing
/// profile prices exactly these, so a modelled bill describes the requests really sent.
///
/// ```
/// use ptc_compression::{CachePoint, anthropic_breakpoints};
/// let points = [CachePoint::new(0, 40), CachePoint::new(0, 0), CachePoint::new(2, 9),
///               CachePoint::new(4, 12), CachePoint::new(6, 30)];
/// assert_eq!(
///     anthropic_breakpoints(&points),
///     vec![CachePoint::new(0, 40), CachePoint::new(4, 12), CachePoint::new(6, 30)]
/// );
/// ```
pub fn anthropic_breakpoints(points: &[CachePoint]) -> Vec<CachePoint> {
    let mut points: Vec<CachePoint> = points
        .iter()
        .copied()
        .filter(|p| p.byte_offset > 0)
        .collect();
    points.sort();
    points.dedup();
    let room = ANTHROPIC_MAX_BREAKPOINTS - 1;
    if points.len() > room {
        let newest = points.split_off(points.len() - (room - 1));
        points.truncate(1);
        points.extend(newest);
    }
    points
}

/// One model request as a provider receives it: the system prompt, the conversation, and the
/// points where stable parts end ([`CachePoint`]s into `messages`).
///
/// ```
/// use ptc_compression::{Compression, PromptRequest, RenderOptions, Uncompressed};
/// let opts = RenderOptions::new("Count the users", "Write PTC-Lisp.", 5);
/// let rendered = Uncompressed.to_messages(&[], &[], &opts);
/// let request = PromptRequest::from_rendered(&rendered.messages, &rendered.cache_points);
/// assert_eq!(request.system, "Write PTC-Lisp.");
/// assert_eq!(request.messages[0].content, "Count the users\n\nTurns left: 5");
/// // The mission is stable; the turn count is not.
/// assert_eq!(request.cache_points[0].byte_offset, "Count the users".len());
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PromptRequest {
    /// The system prompt: the leading system messages joined by a blank line.
    pub system: String,
    /// The conversation after the system prompt.
    pub messages: Vec<Message>,
    /// Where stable parts of `messages` end, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_points: Vec<CachePoint>,
}

impl PromptRequest {
    /// The request for rendered `messages` (system messages first) and the `points` of the
    /// rendering: the leading system messages become the system prompt and the points move
    /// with the messages (a point inside a system message is dropped: the system prompt is
    /// always cacheable on its own).
    pub fn from_rendered(messages: &[Message], points: &[CachePoint]) -> PromptRequest {
        let system_count = messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .count();
        let system = messages[..system_count]
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let rest = messages[system_count..].to_vec();
        let cache_points = points
            .iter()
            .filter(|p| p.message_index >= system_count)
            .map(|p| CachePoint::new(p.message_index - system_count, p.byte_offset))
            .filter(|p| {
                rest.get(p.message_index).is_some_and(|m| {
                    p.byte_offset <= m.content.len() && m.content.is_char_boundary(p.byte_offset)
                })
            })
            .collect();
        PromptRequest {
            system,
            messages: rest,
            cache_points,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn at_most_three_breakpoints_besides_the_system_prompt() {
        let p = CachePoint::new;
        assert_eq!(anthropic_breakpoints(&[]), vec![]);
        assert_eq!(anthropic_breakpoints(&[p(0, 0)]), vec![]);
        assert_eq!(
            anthropic_breakpoints(&[p(2, 5), p(0, 3), p(2, 5)]),
            vec![p(0, 3), p(2, 5)]
        );
        assert_eq!(
            anthropic_breakpoints(&[p(0, 1), p(1, 1), p(2, 1), p(3, 1)]),
            vec![p(0, 1), p(2, 1), p(3, 1)]
        );
    }

    #[test]
    fn points_move_with_the_messages_after_the_system_prompt() {
        let messages = vec![
            Message::system("a"),
            Message::system("b"),
            Message::user("héllo"),
        ];
        let points = [
            CachePoint::new(0, 1),
            CachePoint::new(2, 3),
            CachePoint::new(2, 2),
            CachePoint::new(2, 99),
        ];
        let request = PromptRequest::from_rendered(&messages, &points);
        assert_eq!(request.system, "a\n\nb");
        assert_eq!(request.messages, vec![Message::user("héllo")]);
        assert_eq!(request.cache_points, vec![CachePoint::new(0, 3)]);
    }
}
