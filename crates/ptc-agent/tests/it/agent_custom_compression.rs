//! Compression strategies written outside `ptc-compression`, given to an agent.

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, RunObserver, RunOptions, ScriptedLlm};
use ptc_compression::{
    Compression, CompressionOptions, CompressionStats, RenderLimits, RenderOptions, Rendered,
};
use ptc_lisp::{Definition, Value};
use ptc_turn::{Message, Turn};

/// The strategy named by the stats of each rendering of the history.
#[derive(Default)]
struct Strategies(Mutex<Vec<String>>);

impl RunObserver for Strategies {
    fn on_history_rendered(&self, _turn: u32, stats: &CompressionStats) {
        self.0.lock().unwrap().push(stats.strategy.clone());
    }
}

/// Sends the system prompt and one user message naming the turns so far and the println limit
/// it was given; notes each call.
#[derive(Default)]
struct Tally {
    calls: Mutex<Vec<usize>>,
}

impl Compression for Tally {
    fn name(&self) -> &str {
        "tally"
    }

    fn to_messages(
        &self,
        turns: &[Turn],
        memory: &[Definition],
        opts: &RenderOptions<'_>,
    ) -> Rendered {
        self.calls.lock().unwrap().push(turns.len());
        let names: Vec<&str> = memory.iter().map(|d| d.name.as_str()).collect();
        let messages = vec![
            Message::system(opts.system_prompt),
            Message::user(format!(
                "{} after {} turns; defined: {}; println_limit {}",
                opts.mission,
                turns.len(),
                names.join(" "),
                opts.limits.println_limit
            )),
        ];
        Rendered::measure(self.name(), messages, turns, opts)
    }
}

fn replies() -> ScriptedLlm {
    ScriptedLlm::new(["(def a 1)", "(def b 2)", "(return (+ a b))"])
}

/// The user messages sent on each turn after the first user message's position.
fn sent(step: &ptc_turn::Step) -> Vec<String> {
    step.turns
        .iter()
        .map(|t| t.messages().last().expect("a message").content.clone())
        .collect()
}

#[tokio::test]
async fn the_agent_sends_what_a_custom_strategy_renders() {
    let tally = Arc::new(Tally::default());
    let limits = RenderLimits {
        println_limit: 7,
        ..RenderLimits::default()
    };
    let agent = Agent::builder("Add")
        .llm(replies())
        .compression_strategy_with(
            tally.clone(),
            CompressionOptions {
                limits,
                ..CompressionOptions::default()
            },
        )
        .build()
        .expect("agent");
    assert!(format!("{agent:?}").contains("compression: \"tally (custom)\""));
    let strategies = Strategies::default();
    let options = RunOptions::default().with_observer(&strategies);
    let step = agent.run_with(options).await.expect("runs");
    assert_eq!(step.value(), Some(&Value::Int(3)));
    assert_eq!(
        sent(&step),
        vec![
            "Add after 0 turns; defined: ; println_limit 7",
            "Add after 1 turns; defined: a; println_limit 7",
            "Add after 2 turns; defined: a b; println_limit 7",
        ]
    );
    assert_eq!(*strategies.0.lock().unwrap(), vec!["tally"; 3]);
    assert_eq!(*tally.calls.lock().unwrap(), vec![0, 1, 2]);
}

#[tokio::test]
async fn an_activation_threshold_sends_the_full_history_until_crossed() {
    let agent = Agent::builder("Add")
        .llm(replies())
        .compression_strategy_with(
            Arc::new(Tally::default()),
            CompressionOptions {
                activate_after_turns: Some(2),
                ..CompressionOptions::default()
            },
        )
        .build()
        .expect("agent");
    let step = agent.run().await.expect("runs");
    let sent = sent(&step);
    // Below the threshold: the full history, whose last message is the feedback on turn 1.
    assert_eq!(sent[1], ";; Result: #'user/a\n\nTurns left: 4");
    assert_eq!(sent[2], "Add after 2 turns; defined: a b; println_limit 15");
}

#[tokio::test]
async fn sub_agents_inherit_it_and_a_built_in_strategy_set_later_replaces_it() {
    let parent = Agent::builder("Parent")
        .llm(replies())
        .compression_strategy(Tally::default())
        .build()
        .expect("agent");
    let child = parent
        .sub_agent("Add")
        .llm(replies())
        .build()
        .expect("child");
    assert!(format!("{child:?}").contains("compression: \"tally (custom)\""));
    let step = child.run().await.expect("runs");
    assert_eq!(
        sent(&step)[2],
        "Add after 2 turns; defined: a b; println_limit 15"
    );

    let replaced = parent
        .sub_agent("Add")
        .compression(false)
        .build()
        .expect("agent");
    assert!(
        format!("{replaced:?}").contains("compression: \"off\""),
        "{replaced:?}"
    );
}

#[tokio::test]
async fn a_single_shot_run_is_never_compressed() {
    let tally = Arc::new(Tally::default());
    let agent = Agent::builder("Add")
        .llm(ScriptedLlm::new(["(+ 1 2)"]))
        .max_turns(1)
        .compression_strategy_with(tally.clone(), CompressionOptions::default())
        .build()
        .expect("agent");
    let step = agent.run().await.expect("runs");
    assert_eq!(step.value(), Some(&Value::Int(3)));
    assert_eq!(
        sent(&step),
        vec!["Add\n\nFINAL TURN - you must call (return result) or (fail reason) now."]
    );
    assert!(tally.calls.lock().unwrap().is_empty());
}
