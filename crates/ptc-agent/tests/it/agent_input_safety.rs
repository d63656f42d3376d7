//! Inputs that could be misread: a tool and an input with one name, and typographic
//! characters in the model's program.

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, AgentBuilder, BuildError, RunError, RunOptions, ScriptedLlm, value_tool};
use ptc_lisp::Value;

fn with_users_tool(replies: &[&str]) -> AgentBuilder {
    Agent::builder("List the users")
        .llm(ScriptedLlm::new(replies.to_vec()))
        .tool(value_tool("users", "All users", |_| Ok(Value::vector([]))))
        .tool(value_tool("groups", "All groups", |_| {
            Ok(Value::vector([]))
        }))
}

#[test]
fn a_tool_and_a_data_key_with_one_name_are_a_build_error() {
    let error = with_users_tool(&[])
        .data(&serde_json::json!({"users": [], "limit": 3}))
        .build()
        .expect_err("clash");
    assert_eq!(error, BuildError::NameClash(vec!["users".into()]));
    assert_eq!(
        error.to_string(),
        "`users` is both a tool and an input; a program (and the model reading the first \
         message) could mistake one for the other, so rename the tool or the input"
    );
}

#[test]
fn a_signature_parameter_named_like_a_tool_is_a_build_error() {
    let error = with_users_tool(&[])
        .data(&serde_json::json!({"groups": []}))
        .signature("(users [:map]) -> :int")
        .build()
        .expect_err("clash");
    assert_eq!(
        error.to_string(),
        "`groups` and `users` are both a tool and an input; a program (and the model reading \
         the first message) could mistake one for the other, so rename the tool or the input"
    );
}

#[tokio::test]
async fn input_given_for_a_run_is_checked_too() {
    let agent = with_users_tool(&["(return 1)"]).build().expect("agent");
    let error = agent
        .run_with(RunOptions::new().with_data_value("users", Value::Int(1)))
        .await
        .expect_err("clash");
    assert_eq!(
        error.to_string(),
        "`users` is both a tool and an input of this run; rename the input"
    );
    assert!(matches!(error, RunError::NameClash(_)));
}

#[tokio::test]
async fn curly_quotes_and_zero_width_characters_in_a_reply_are_read_as_meant() {
    let reply =
        "```clojure\n(def\u{200B} greeting “hello”)\n(return (str greeting \" it’s “me”\"))\n```";
    let agent = Agent::builder("Greet")
        .llm(ScriptedLlm::new([reply]))
        .build()
        .expect("agent");
    let step = agent.run().await.expect("runs");
    assert_eq!(step.value(), Some(&Value::string("hello it’s “me”")));
    // The turn keeps the program that ran; the raw reply keeps what the model wrote.
    assert_eq!(
        step.turns[0].program(),
        "(def greeting \"hello\")\n(return (str greeting \" it’s “me”\"))"
    );
    assert_eq!(step.turns[0].raw_response(), reply);
}
