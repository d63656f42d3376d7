//! Against `@modelcontextprotocol/server-everything` (pinned, from npm) over stdio: listing,
//! calls with named and positional arguments, structured and text results, errors of the
//! server, a long-running tool with progress, and cancellation at the call's deadline.

use crate::support;

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ptc_agent::AsyncTool;
use support::Session;

#[test]
fn every_tool_is_listed_with_a_signature_from_its_schemas() {
    let session = Session::start(vec![support::everything()]);
    let listed: Vec<(String, Option<String>)> = session
        .servers
        .mcp_tools()
        .iter()
        .map(|t| (t.name().to_string(), t.signature().map(str::to_string)))
        .collect();
    let expected: Vec<(&str, Option<&str>)> = vec![
        ("echo", Some("(message :string) -> :any")),
        (
            "get-annotated-message",
            Some("(messageType :string, includeImage :bool?) -> :any"),
        ),
        ("get-env", Some("() -> :any")),
        ("get-resource-links", Some("(count :float?) -> :any")),
        (
            "get-resource-reference",
            Some("(resourceType :string?, resourceId :float?) -> :any"),
        ),
        (
            "get-structured-content",
            Some("(location :string) -> {temperature :float, conditions :string, humidity :float}"),
        ),
        ("get-sum", Some("(a :float, b :float) -> :any")),
        ("get-tiny-image", Some("() -> :any")),
        (
            "gzip-file-as-resource",
            Some("(name :string?, data :string?, outputType :string?) -> :any"),
        ),
        ("toggle-simulated-logging", Some("() -> :any")),
        ("toggle-subscriber-updates", Some("() -> :any")),
        (
            "trigger-long-running-operation",
            Some("(duration :float?, steps :float?) -> :any"),
        ),
        (
            "simulate-research-query",
            Some("(topic :string, ambiguous :bool?) -> :any"),
        ),
    ];
    let expected: Vec<(String, Option<String>)> = expected
        .into_iter()
        .map(|(n, s)| (n.to_string(), s.map(str::to_string)))
        .collect();
    assert_eq!(listed, expected);
    let weather = session.servers.tool("get-structured-content").unwrap();
    assert_eq!(
        weather.description(),
        "Returns structured content along with an output schema for client data validation \
         (allowed values: location: \"New York\" | \"Chicago\" | \"Los Angeles\")"
    );
    assert_eq!(session.servers.renamed(), Vec::<&ptc_mcp::ToolName>::new());
    session.close();
}

#[test]
fn calls_take_named_or_positional_arguments_and_results_follow_the_rules() {
    let session = Session::start(vec![support::everything()]);
    session.check(&[
        (r#"(tool/echo "hi")"#, Ok(r#""Echo: hi""#)),
        (r#"(tool/echo {:message "named"})"#, Ok(r#""Echo: named""#)),
        ("(tool/get-sum 1 2)", Ok(r#""The sum of 1 and 2 is 3.""#)),
        ("(tool/get-sum {:a 2.5 :b -1})", Ok(r#""The sum of 2.5 and -1 is 1.5.""#)),
        // structuredContent is the value, keys as keywords.
        (
            r#"(tool/get-structured-content "Chicago")"#,
            Ok(r#"{:conditions "Light rain / drizzle", :humidity 82, :temperature 36}"#),
        ),
        (
            r#"(:temperature (tool/get-structured-content {:location "Los Angeles"}))"#,
            Ok("73"),
        ),
        // Several blocks are a vector; the image is summarized, not passed on.
        (
            "(tool/get-tiny-image)",
            Ok(r#"["Here's the image you requested:" {:type "image", :mime-type "image/png", :bytes 4033} "The image above is the MCP logo."]"#),
        ),
        // An embedded text resource keeps its text (which names the time it was made).
        (
            r#"(let [r (second (tool/get-resource-reference "Text" 1))]
                 [(:type r) (:uri r) (:mime-type r) (str/starts-with? (:text r) "Resource 1: ")])"#,
            Ok(r#"["resource" "demo://resource/dynamic/text/1" "text/plain" true]"#),
        ),
        (
            r#"(count (tool/get-resource-links 3))"#,
            Ok("4"),
        ),
    ]);
    session.close();
}

#[test]
fn bad_arguments_fail_before_the_call_and_server_errors_are_tool_errors() {
    let session = Session::start(vec![support::everything()]);
    session.check(&[
        (
            r#"(tool/get-structured-content "Paris")"#,
            Err(r#"tool/get-structured-content failed: tool/get-structured-content: location: expected one of "New York", "Chicago", "Los Angeles", got "Paris"; call it as (tool/get-structured-content {:location ...}) or (tool/get-structured-content location), with (location :string) -> {temperature :float, conditions :string, humidity :float}"#),
        ),
        (
            r#"(tool/get-sum 1 "two")"#,
            Err(r#"tool/get-sum failed: tool/get-sum: b: expected float, got string "two"; call it as (tool/get-sum {:a ... :b ...}) or (tool/get-sum a b), with (a :float, b :float) -> :any"#),
        ),
        (
            "(tool/get-sum 1)",
            Err("tool/get-sum failed: tool/get-sum: missing argument b (:float); call it as (tool/get-sum {:a ... :b ...}) or (tool/get-sum a b), with (a :float, b :float) -> :any"),
        ),
        // The schema allows it; the server's own check refuses it (isError).
        (
            r#"(tool/get-resource-reference "Text" 0)"#,
            Err("tool/get-resource-reference failed: Invalid resourceId: 0. Must be a finite positive integer."),
        ),
        // A server error can be caught like any tool error.
        (
            r#"(try (tool/get-resource-reference "Text" -1) (catch Exception e "caught"))"#,
            Ok(r#""caught""#),
        ),
    ]);
    session.close();
}

#[test]
fn a_long_running_tool_reports_progress_and_a_late_call_is_cancelled() {
    let session = Session::start(vec![
        support::everything().with_timeout(Duration::from_secs(4)),
    ]);
    session.check(&[(
        "(tool/trigger-long-running-operation {:duration 1 :steps 4})",
        Ok(r#""Long running operation completed. Duration: 1 seconds, Steps: 4.""#),
    )]);
    let server = &session.servers.servers()[0];
    assert!(
        support::eventually(|| server.stats().progress == 4),
        "{:?}",
        server.stats()
    );

    let started = Instant::now();
    session.check(&[(
        "(tool/trigger-long-running-operation 30 3)",
        Err("tool/trigger-long-running-operation failed: no answer within 4 s; the call was cancelled"),
    )]);
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(8), "waited {waited:?}");
    // The server is still there and answers the next call.
    session.check(&[(r#"(tool/echo "still here")"#, Ok(r#""Echo: still here""#))]);
    session.close();
}

#[test]
fn logging_notifications_are_counted_and_harmless() {
    let session = Session::start(vec![support::everything()]);
    session.check(&[(
        r#"(str/starts-with? (tool/toggle-simulated-logging) "Started simulated, random-leveled logging")"#,
        Ok("true"),
    )]);
    let deadline = Instant::now() + Duration::from_secs(15);
    while session.servers.servers()[0].stats().log_messages == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(session.servers.servers()[0].stats().log_messages > 0);
    session.check(&[(r#"(tool/echo "after")"#, Ok(r#""Echo: after""#))]);
    session.close();
}
