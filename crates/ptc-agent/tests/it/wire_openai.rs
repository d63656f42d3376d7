use pretty_assertions::assert_eq;
use ptc_agent::wire::{WireError, openai};
use ptc_turn::{Message, MessageToolCall, Role};
use serde_json::json;

fn call(id: &str, name: &str, arguments: serde_json::Value) -> MessageToolCall {
    MessageToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
    }
}

/// A history exercising every role, tool calls with and without text, and two results.
fn history() -> Vec<Message> {
    vec![
        Message::system("You write PTC-Lisp."),
        Message::user("How many users?"),
        Message::assistant("Let me look.").with_tool_calls(vec![call(
            "call_1",
            "count_users",
            json!({"role": "admin", "active": true}),
        )]),
        Message::tool_result("call_1", "42"),
        Message::assistant("").with_tool_calls(vec![
            call("call_2", "fetch", json!({"ids": [1, 2]})),
            call("call_3", "noop", json!({})),
        ]),
        Message::tool_result("call_2", "[{\"id\":1}]"),
        Message::tool_result("call_3", ""),
        Message::assistant("There are 42."),
    ]
}

#[test]
fn history_has_the_exact_chat_completions_shape() {
    assert_eq!(
        openai::messages_to_json(&history()),
        vec![
            json!({"role": "system", "content": "You write PTC-Lisp."}),
            json!({"role": "user", "content": "How many users?"}),
            json!({
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [{
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "count_users", "arguments": "{\"active\":true,\"role\":\"admin\"}"}
                }]
            }),
            json!({"role": "tool", "tool_call_id": "call_1", "content": "42"}),
            json!({
                "role": "assistant",
                "content": null,
                "tool_calls": [
                    {"id": "call_2", "type": "function", "function": {"name": "fetch", "arguments": "{\"ids\":[1,2]}"}},
                    {"id": "call_3", "type": "function", "function": {"name": "noop", "arguments": "{}"}}
                ]
            }),
            json!({"role": "tool", "tool_call_id": "call_2", "content": "[{\"id\":1}]"}),
            json!({"role": "tool", "tool_call_id": "call_3", "content": ""}),
            json!({"role": "assistant", "content": "There are 42."}),
        ]
    );
}

#[test]
fn history_round_trips_losslessly() {
    let wire = openai::messages_to_json(&history());
    assert_eq!(openai::messages_from_json(&wire).unwrap(), history());
}

#[test]
fn round_trip_survives_serialising_the_json_to_text() {
    let text = serde_json::to_string(&openai::messages_to_json(&history())).unwrap();
    let parsed: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(openai::messages_from_json(&parsed).unwrap(), history());
}

#[test]
fn non_object_arguments_round_trip() {
    let messages = vec![Message::assistant("").with_tool_calls(vec![
        call("a", "f", json!("not an object")),
        call("b", "g", json!(null)),
        call("c", "h", json!([1, "x"])),
    ])];
    let wire = openai::messages_to_json(&messages);
    assert_eq!(openai::messages_from_json(&wire).unwrap(), messages);
}

#[test]
fn timestamps_travel_in_the_stamped_form_only() {
    let stamped = Message::user("hi").with_timestamp_ms(1_700_000_000_000);
    // A request may only hold the API's own fields.
    let request = openai::message_to_json(&stamped);
    assert_eq!(request, json!({"role": "user", "content": "hi"}));
    assert_eq!(
        openai::message_from_json(&request).unwrap(),
        Message::user("hi")
    );
    // The stamped form keeps it.
    let record = openai::message_to_json_stamped(&stamped);
    assert_eq!(
        record,
        json!({"role": "user", "content": "hi", "timestamp_ms": 1_700_000_000_000i64})
    );
    assert_eq!(openai::message_from_json(&record).unwrap(), stamped);
    let history: Vec<Message> = history()
        .into_iter()
        .enumerate()
        .map(|(i, m)| m.with_timestamp_ms(-5 + i as i64))
        .collect();
    let wire = openai::messages_to_json_stamped(&history);
    assert_eq!(wire[3]["timestamp_ms"], json!(-2));
    assert_eq!(openai::messages_from_json(&wire).unwrap(), history);
    // Messages without one are written as in a request.
    assert_eq!(
        openai::messages_to_json_stamped(&self::history()),
        openai::messages_to_json(&self::history())
    );
    assert_eq!(
        openai::message_from_json(&json!({"role": "user", "content": "x", "timestamp_ms": "now"})),
        Err(WireError::InvalidField {
            at: "message".into(),
            field: "timestamp_ms",
            expected: "an integer (milliseconds since the Unix epoch)",
        })
    );
}

#[test]
fn reads_a_real_response_message_with_tool_calls() {
    let response_message = json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{
            "id": "call_abc",
            "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}
        }],
        "refusal": null
    });
    assert_eq!(
        openai::message_from_json(&response_message).unwrap(),
        Message::assistant("").with_tool_calls(vec![call(
            "call_abc",
            "get_weather",
            json!({"city": "Oslo"})
        )])
    );
}

#[test]
fn reads_server_variants_leniently() {
    let message = json!({
        "role": "developer",
        "content": [
            {"type": "text", "text": "part one, "},
            {"type": "image_url", "image_url": {"url": "x"}},
            {"type": "text", "text": "part two"}
        ]
    });
    assert_eq!(
        openai::message_from_json(&message).unwrap(),
        Message::new(Role::System, "part one, part two")
    );

    let calls = json!({
        "role": "assistant",
        "tool_calls": [
            {"id": "1", "function": {"name": "a", "arguments": {"already": "an object"}}},
            {"id": "2", "function": {"name": "b", "arguments": ""}},
            {"id": "3", "function": {"name": "c", "arguments": "{broken"}}
        ]
    });
    assert_eq!(
        openai::message_from_json(&calls).unwrap(),
        Message::assistant("").with_tool_calls(vec![
            call("1", "a", json!({"already": "an object"})),
            call("2", "b", json!({})),
            call("3", "c", json!("{broken")),
        ])
    );
}

#[test]
fn malformed_messages_are_errors_that_say_where() {
    assert_eq!(
        openai::messages_from_json(&[json!({"role": "user", "content": "ok"}), json!("text")])
            .unwrap_err(),
        WireError::NotAnObject {
            at: "messages[1]".into()
        }
    );
    assert_eq!(
        openai::message_from_json(&json!({"content": "x"})).unwrap_err(),
        WireError::MissingField {
            at: "message".into(),
            field: "role"
        }
    );
    assert_eq!(
        openai::message_from_json(&json!({"role": "function", "content": "x"}))
            .unwrap_err()
            .to_string(),
        "message: unknown role `function`"
    );
    assert_eq!(
        openai::message_from_json(&json!({"role": "user", "content": 7}))
            .unwrap_err()
            .to_string(),
        "message: the field `content` must be a string, null or an array of content parts"
    );
    assert_eq!(
        openai::message_from_json(&json!({
            "role": "assistant",
            "tool_calls": [{"id": "1", "function": {"arguments": "{}"}}]
        }))
        .unwrap_err()
        .to_string(),
        "message.tool_calls[0].function: the required field `name` is missing"
    );
}
