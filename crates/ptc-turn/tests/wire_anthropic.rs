use pretty_assertions::assert_eq;
use ptc_turn::wire::{WireError, anthropic};
use ptc_turn::{Message, MessageToolCall};
use serde_json::json;

fn call(id: &str, name: &str, arguments: serde_json::Value) -> MessageToolCall {
    MessageToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
    }
}

fn history() -> Vec<Message> {
    vec![
        Message::system("You write PTC-Lisp."),
        Message::system("Answer in one program."),
        Message::user("How many users?"),
        Message::assistant("Let me look.").with_tool_calls(vec![call(
            "toolu_1",
            "count_users",
            json!({"role": "admin"}),
        )]),
        Message::tool_result("toolu_1", "42"),
        Message::assistant("").with_tool_calls(vec![
            call("toolu_2", "fetch", json!({"ids": [1, 2]})),
            call("toolu_3", "noop", json!({})),
        ]),
        Message::tool_result("toolu_2", "[{\"id\":1}]"),
        Message::tool_result("toolu_3", ""),
        Message::user("Now summarise."),
        Message::assistant("There are 42."),
    ]
}

#[test]
fn history_has_the_exact_messages_api_shape() {
    let conversation = anthropic::to_anthropic(&history()).unwrap();
    assert_eq!(
        conversation.system,
        vec![
            "You write PTC-Lisp.".to_string(),
            "Answer in one program.".to_string()
        ]
    );
    assert_eq!(
        conversation.messages,
        vec![
            json!({"role": "user", "content": "How many users?"}),
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "count_users", "input": {"role": "admin"}}
            ]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"}
            ]}),
            // No empty text block in front of the calls: the API rejects those.
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_2", "name": "fetch", "input": {"ids": [1, 2]}},
                {"type": "tool_use", "id": "toolu_3", "name": "noop", "input": {}}
            ]}),
            // Consecutive results merged into one user message.
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "[{\"id\":1}]"},
                {"type": "tool_result", "tool_use_id": "toolu_3", "content": ""}
            ]}),
            json!({"role": "user", "content": "Now summarise."}),
            json!({"role": "assistant", "content": "There are 42."}),
        ]
    );
    assert_eq!(
        conversation.positions,
        vec![
            None,
            None,
            Some(0),
            Some(1),
            Some(2),
            Some(3),
            Some(4),
            Some(4),
            Some(5),
            Some(6)
        ]
    );
    assert_eq!(
        anthropic::system_to_json(&conversation.system),
        json!([
            {"type": "text", "text": "You write PTC-Lisp."},
            {"type": "text", "text": "Answer in one program."}
        ])
    );
}

#[test]
fn history_round_trips_losslessly() {
    let conversation = anthropic::to_anthropic(&history()).unwrap();
    let system = anthropic::system_to_json(&conversation.system);
    assert_eq!(
        anthropic::from_anthropic(Some(&system), &conversation.messages).unwrap(),
        history()
    );
}

#[test]
fn a_history_without_system_messages_round_trips() {
    let messages = vec![
        Message::user("a"),
        Message::assistant("b"),
        Message::user(""),
    ];
    let conversation = anthropic::to_anthropic(&messages).unwrap();
    assert_eq!(conversation.system, Vec::<String>::new());
    assert_eq!(
        anthropic::from_anthropic(None, &conversation.messages).unwrap(),
        messages
    );
}

#[test]
fn timestamps_are_not_part_of_the_wire_format() {
    let conversation =
        anthropic::to_anthropic(&[Message::user("hi").with_timestamp_ms(1_700_000_000_000)])
            .unwrap();
    assert_eq!(
        conversation.messages,
        vec![json!({"role": "user", "content": "hi"})]
    );
    assert_eq!(
        anthropic::from_anthropic(None, &conversation.messages).unwrap(),
        vec![Message::user("hi")]
    );
}

#[test]
fn a_system_message_inside_the_conversation_is_rejected() {
    let err = anthropic::to_anthropic(&[Message::user("a"), Message::system("late")]).unwrap_err();
    assert_eq!(err, WireError::SystemMessageInConversation { index: 1 });
}

#[test]
fn a_tool_result_without_call_id_is_rejected() {
    let mut result = Message::tool_result("x", "out");
    result.tool_call_id = None;
    let err = anthropic::to_anthropic(&[Message::user("a"), result]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "message 1 is a tool result without a tool_call_id; set it to the id of the tool call \
         it answers"
    );
}

#[test]
fn reads_a_real_response_with_text_thinking_and_tool_use() {
    let response_message = json!({
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Oslo"}}
        ]
    });
    assert_eq!(
        anthropic::message_from_json(&response_message).unwrap(),
        vec![Message::assistant("Checking.").with_tool_calls(vec![call(
            "toolu_01A",
            "get_weather",
            json!({"city": "Oslo"})
        )])]
    );
}

#[test]
fn split_text_blocks_and_mixed_user_content_read_back_in_order() {
    // A user message split around a cache breakpoint reads back as one text.
    let split = json!({"role": "user", "content": [
        {"type": "text", "text": ";; === tool/ ===\n", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": ";; === user/ ==="}
    ]});
    assert_eq!(
        anthropic::message_from_json(&split).unwrap(),
        vec![Message::user(";; === tool/ ===\n;; === user/ ===")]
    );
    // Results then text, as clients commonly send: tool messages first, then the text.
    let mixed = json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "ok"}]},
        {"type": "tool_result", "tool_use_id": "t2", "content": "fine", "is_error": true},
        {"type": "text", "text": "go on"}
    ]});
    assert_eq!(
        anthropic::message_from_json(&mixed).unwrap(),
        vec![
            Message::tool_result("t1", "ok"),
            Message::tool_result("t2", "fine"),
            Message::user("go on"),
        ]
    );
}

#[test]
fn a_string_system_prompt_reads_as_one_system_message() {
    assert_eq!(
        anthropic::from_anthropic(
            Some(&json!("Be brief.")),
            &[json!({"role": "user", "content": "hi"})]
        )
        .unwrap(),
        vec![Message::system("Be brief."), Message::user("hi")]
    );
}

#[test]
fn malformed_messages_are_errors_that_say_where() {
    assert_eq!(
        anthropic::from_anthropic(None, &[json!({"role": "tool", "content": "x"})])
            .unwrap_err()
            .to_string(),
        "messages[0]: unknown role `tool`"
    );
    assert_eq!(
        anthropic::from_anthropic(
            None,
            &[json!({"role": "assistant", "content": [{"type": "tool_use", "name": "f"}]})]
        )
        .unwrap_err()
        .to_string(),
        "messages[0].content[0]: the required field `id` is missing"
    );
    assert_eq!(
        anthropic::from_anthropic(Some(&json!(5)), &[]).unwrap_err(),
        WireError::InvalidField {
            at: "request".into(),
            field: "system",
            expected: "a string or an array of text blocks"
        }
    );
}
