use pretty_assertions::assert_eq;
use ptc_agent::wire::{WireError, anthropic};
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
fn timestamps_travel_in_the_stamped_form_only() {
    let history = vec![
        Message::system("Be brief.").with_timestamp_ms(1),
        Message::system("Use tools."),
        Message::user("hi").with_timestamp_ms(2),
        Message::assistant("")
            .with_tool_calls(vec![
                call("toolu_1", "a", json!({})),
                call("toolu_2", "b", json!({})),
            ])
            .with_timestamp_ms(3),
        Message::tool_result("toolu_1", "1").with_timestamp_ms(4),
        Message::tool_result("toolu_2", "2"),
        Message::system("Now summarise.").with_timestamp_ms(5),
        Message::assistant("Done.").with_timestamp_ms(6),
    ];
    // A request may only hold the API's own fields.
    let request = anthropic::to_anthropic(&history).unwrap();
    assert!(request.system_timestamps.is_empty());
    assert_eq!(
        request.system_json(),
        json!([{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Use tools."}])
    );
    assert!(
        !serde_json::to_string(&request.messages)
            .unwrap()
            .contains("timestamp")
    );
    // The stamped form keeps every one, where its message went.
    let record = anthropic::to_anthropic_stamped(&history).unwrap();
    assert_eq!(record.system_timestamps, vec![Some(1), None]);
    assert_eq!(
        record.system_json(),
        json!([
            {"type": "text", "text": "Be brief.", "timestamp_ms": 1},
            {"type": "text", "text": "Use tools."}
        ])
    );
    assert_eq!(
        record.messages,
        vec![
            json!({"role": "user", "content": "hi", "timestamp_ms": 2}),
            json!({"role": "assistant", "timestamp_ms": 3, "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "a", "input": {}},
                {"type": "tool_use", "id": "toolu_2", "name": "b", "input": {}}
            ]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1", "timestamp_ms": 4},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "2"}
            ]}),
            json!({"role": "user", "content": "<system>\nNow summarise.\n</system>", "timestamp_ms": 5}),
            json!({"role": "assistant", "content": "Done.", "timestamp_ms": 6}),
        ]
    );
    assert_eq!(
        anthropic::from_anthropic(Some(&record.system_json()), &record.messages).unwrap(),
        history
    );
}

#[test]
fn a_system_message_inside_the_conversation_keeps_its_place_as_marked_user_text() {
    // As a history summarized section by section looks: each section opens with its system
    // message.
    let history = vec![
        Message::system("You are a support agent."),
        Message::user("My order is late."),
        Message::user("Summary: the order was found."),
        Message::system("From now on, answer in French."),
        Message::user("And the refund?"),
    ];
    let conversation = anthropic::to_anthropic(&history).unwrap();
    assert_eq!(
        conversation.system,
        vec!["You are a support agent.".to_string()]
    );
    assert_eq!(
        conversation.messages,
        vec![
            json!({"role": "user", "content": "My order is late."}),
            json!({"role": "user", "content": "Summary: the order was found."}),
            json!({"role": "user", "content": "<system>\nFrom now on, answer in French.\n</system>"}),
            json!({"role": "user", "content": "And the refund?"}),
        ]
    );
    assert_eq!(
        conversation.positions,
        vec![None, Some(0), Some(1), Some(2), Some(3)]
    );
    assert_eq!(
        anthropic::from_anthropic(Some(&conversation.system_json()), &conversation.messages)
            .unwrap(),
        history
    );
    // Read from text blocks too.
    assert_eq!(
        anthropic::message_from_json(&json!({"role": "user", "content": [
            {"type": "text", "text": "<system>\nBe formal."},
            {"type": "text", "text": "\n</system>"}
        ]}))
        .unwrap(),
        vec![Message::system("Be formal.")]
    );
    // Text that only starts like it stays user text.
    assert_eq!(
        anthropic::message_from_json(&json!({"role": "user", "content": "<system>\nno end"}))
            .unwrap(),
        vec![Message::user("<system>\nno end")]
    );
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
