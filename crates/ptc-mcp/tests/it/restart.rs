//! A server killed in the middle of a call: that call fails saying so, and the server, started
//! again at once, answers the next call, within the same run.

use crate::support;

use std::time::Duration;

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, ScriptedLlm};
use ptc_lisp::{ToolOutcome, Value, pr_str};

fn reply(program: &str) -> String {
    format!("```clojure\n{program}\n```")
}

#[test]
fn a_server_killed_mid_call_is_started_again_for_the_next_call() {
    let runtime = support::runtime();
    let servers = runtime.block_on(support::connect(vec![support::everything()]));
    let server = servers.servers()[0].clone();
    let first = server.process_id().expect("a process id");
    let llm = ScriptedLlm::new([
        reply("(tool/trigger-long-running-operation {:duration 20 :steps 2})"),
        reply(r#"(tool/echo "after the restart")"#),
        reply(r#"(return (tool/get-sum 1 2))"#),
    ]);
    let agent = support::agent_with(
        Agent::builder("Exercise the server").llm(llm).max_turns(3),
        &servers,
    );
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        let status = std::process::Command::new("kill")
            .args(["-KILL", &first.to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    });
    let step = runtime.block_on(agent.run()).expect("run");
    killer.join().expect("killer");
    let calls: Vec<Vec<(String, Result<String, String>)>> = step
        .turns
        .as_slice()
        .iter()
        .map(|turn| {
            turn.tool_calls()
                .iter()
                .map(|c| {
                    let result = match &c.result {
                        ToolOutcome::Ok(v) => Ok(pr_str(v)),
                        ToolOutcome::Error(e) => Err(e.clone()),
                    };
                    (c.name.clone(), result)
                })
                .collect()
        })
        .collect();
    let killed = "the MCP server everything is not running: it was killed by signal 9; its \
                  last words on stderr: Starting default (STDIO) server...; it is being started \
                  again";
    assert_eq!(
        calls,
        vec![
            vec![(
                "trigger-long-running-operation".to_string(),
                Err(killed.to_string())
            )],
            vec![(
                "echo".to_string(),
                Ok(r#""Echo: after the restart""#.to_string())
            )],
            vec![(
                "get-sum".to_string(),
                Ok(r#""The sum of 1 and 2 is 3.""#.to_string())
            )],
        ]
    );
    assert_eq!(
        step.turns.as_slice()[0]
            .error()
            .map(|e| (e.kind.as_str(), e.message.clone())),
        Some((
            "tool",
            format!("tool/trigger-long-running-operation failed: {killed}")
        ))
    );
    assert_eq!(
        step.value(),
        Some(&Value::string("The sum of 1 and 2 is 3."))
    );
    assert_eq!(server.restarts(), 1);
    let second = server.process_id().expect("a process id");
    assert_ne!(second, first);
    runtime.block_on(servers.close());
    assert_eq!(server.process_id(), None);
}
