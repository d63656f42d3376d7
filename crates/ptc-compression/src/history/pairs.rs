//! Where a history can be cut without separating a tool call from its results.

use std::collections::HashMap;

use ptc_turn::{Message, Role};

/// For every cut position `c` in `0..=history.len()` (cutting before message `c`), whether the
/// cut would put a tool call on one side and one of its results on the other.
///
/// A result is paired with the nearest preceding assistant message that made a call with its
/// id. Results without such a call and calls without results pair with nothing, so they never
/// make a cut unsafe (they were unpaired before we touched the history).
pub(crate) fn unsafe_cuts(history: &[Message]) -> Vec<bool> {
    let n = history.len();
    // Difference array over cut positions: a pair (call at i, result at j) covers i < c <= j.
    let mut diff = vec![0i64; n + 2];
    let mut last_call: HashMap<&str, usize> = HashMap::new();
    for (j, message) in history.iter().enumerate() {
        if message.role == Role::Tool
            && let Some(id) = &message.tool_call_id
            && let Some(&i) = last_call.get(id.as_str())
        {
            diff[i + 1] += 1;
            diff[j + 1] -= 1;
        }
        if message.role == Role::Assistant {
            for call in &message.tool_calls {
                last_call.insert(call.id.as_str(), j);
            }
        }
    }
    let mut depth = 0i64;
    (0..=n)
        .map(|c| {
            depth += diff[c];
            depth > 0
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn cuts_inside_a_call_and_its_results_are_unsafe() {
        let history = vec![
            Message::user("q"),
            Message::assistant("").with_tool_calls(vec![call("a"), call("b")]),
            Message::tool_result("a", "1"),
            Message::tool_result("b", "2"),
            Message::assistant("done"),
            Message::tool_result("zzz", "orphan"),
            Message::assistant("").with_tool_calls(vec![call("pending")]),
        ];
        assert_eq!(
            unsafe_cuts(&history),
            vec![false, false, true, true, false, false, false, false]
        );
    }
}
