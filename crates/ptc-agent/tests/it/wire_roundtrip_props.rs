//! Any well-formed history survives a trip through either wire format unchanged: exactly in the
//! stamped form, and but for the timestamps in the request form.

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use ptc_agent::wire::{anthropic, openai};
use ptc_turn::{Message, MessageToolCall, Role};
use serde_json::Value;

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        // Finite floats only: JSON has no NaN or infinity.
        (-1e12f64..1e12).prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn tool_call() -> impl Strategy<Value = MessageToolCall> {
    ("[a-zA-Z0-9_]{1,12}", "[a-z_]{1,10}", json_value()).prop_map(|(id, name, arguments)| {
        MessageToolCall {
            id,
            name,
            arguments,
        }
    })
}

/// A message as the agent builds them: tool calls only on assistant messages, a call id on
/// every tool message; system messages may come anywhere (history summaries put one at the
/// start of each section).
fn conversation_message() -> impl Strategy<Value = Message> {
    prop_oneof![
        4 => "\\PC{0,20}".prop_map(Message::user),
        4 => ("\\PC{0,20}", prop::collection::vec(tool_call(), 0..3))
            .prop_map(|(text, calls)| Message::assistant(text).with_tool_calls(calls)),
        4 => ("[a-zA-Z0-9_]{1,12}", "\\PC{0,20}").prop_map(|(id, text)| Message::tool_result(id, text)),
        1 => "\\PC{0,20}".prop_map(Message::system),
    ]
}

/// Some messages get a timestamp, any 64-bit number of milliseconds.
fn stamped(message: impl Strategy<Value = Message>) -> impl Strategy<Value = Message> {
    (message, prop::option::of(any::<i64>())).prop_map(|(message, timestamp)| match timestamp {
        Some(t) => message.with_timestamp_ms(t),
        None => message,
    })
}

fn history() -> impl Strategy<Value = Vec<Message>> {
    (
        prop::collection::vec(stamped("\\PC{0,20}".prop_map(Message::system)), 0..3),
        prop::collection::vec(stamped(conversation_message()), 0..10),
    )
        .prop_map(|(mut system, rest)| {
            system.extend(rest);
            system
        })
}

fn without_timestamps(history: &[Message]) -> Vec<Message> {
    history
        .iter()
        .map(|m| Message {
            timestamp_ms: None,
            ..m.clone()
        })
        .collect()
}

proptest! {
    #[test]
    fn openai_round_trip(history in history()) {
        let wire = openai::messages_to_json_stamped(&history);
        // Through text too, as the messages travel.
        let text = serde_json::to_string(&wire).unwrap();
        let parsed: Vec<Value> = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(openai::messages_from_json(&parsed).unwrap(), history.clone());
        // The request form is the same but for the timestamps.
        let request = openai::messages_to_json(&history);
        prop_assert_eq!(
            openai::messages_from_json(&request).unwrap(),
            without_timestamps(&history)
        );
        prop_assert!(request.iter().all(|m| m.get("timestamp_ms").is_none()));
    }

    #[test]
    fn anthropic_round_trip(history in history()) {
        let conversation = anthropic::to_anthropic_stamped(&history).unwrap();
        let system = conversation.system_json();
        let text = serde_json::to_string(&conversation.messages).unwrap();
        let parsed: Vec<Value> = serde_json::from_str(&text).unwrap();
        let back = anthropic::from_anthropic(Some(&system), &parsed).unwrap();
        prop_assert_eq!(back, history.clone());
        // The request form is the same but for the timestamps.
        let request = anthropic::to_anthropic(&history).unwrap();
        prop_assert_eq!(
            anthropic::from_anthropic(Some(&request.system_json()), &request.messages).unwrap(),
            without_timestamps(&history)
        );
        prop_assert!(!serde_json::to_string(&request.messages).unwrap().contains("timestamp_ms"));
        prop_assert!(!request.system_json().to_string().contains("timestamp_ms"));
        // Only the leading system messages are in the system field; every later message
        // (system ones included) is in the conversation.
        let leading = history.iter().take_while(|m| m.role == Role::System).count();
        prop_assert_eq!(conversation.system.len(), leading);
        // Every run of tool results became one user message.
        let runs = history
            .windows(2)
            .filter(|w| w[1].role == Role::Tool && w[0].role != Role::Tool)
            .count()
            + usize::from(history.first().is_some_and(|m| m.role == Role::Tool));
        let result_messages = conversation
            .messages
            .iter()
            .filter(|m| m["content"].as_array().is_some_and(|blocks| {
                blocks.first().is_some_and(|b| b["type"] == "tool_result")
            }))
            .count();
        prop_assert_eq!(result_messages, runs);
    }
}

/// Found by `openai_round_trip`: without serde_json's exact float parsing this number came back
/// one unit in the last place off.
#[test]
fn a_float_argument_survives_the_openai_text_encoding() {
    let call = MessageToolCall {
        id: "c".into(),
        name: "f".into(),
        arguments: serde_json::json!({"x": 517547533729.17804, "y": 0.1, "z": 1e-7}),
    };
    let history = vec![Message::assistant("").with_tool_calls(vec![call])];
    let wire = openai::messages_to_json(&history);
    assert_eq!(openai::messages_from_json(&wire).unwrap(), history);
}
