//! The seed's last rows on the agent API: the `trace` option (which steps keep their turns),
//! the cap on the system prompt's size with its note, and what a run used beyond tokens
//! (system prompt, memory kept, compression).

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, PromptLimit, RunOptions, ScriptedLlm};
use ptc_compression::CompressionConfig;
use ptc_turn::TraceMode;

fn agent(replies: &[&str]) -> Agent {
    Agent::builder("Add up")
        .llm(ScriptedLlm::new(replies.to_vec()))
        .build()
        .expect("builds")
}

#[tokio::test]
async fn trace_keeps_the_turns_of_the_steps_it_names() {
    let returned = ["(def xs [1 2 3])", "(return (reduce + xs))"];
    let failed = ["(def xs [1 2 3])", "(fail \"no\")"];
    let mut kept = Vec::new();
    for mode in [TraceMode::Always, TraceMode::Never, TraceMode::OnError] {
        for replies in [&returned, &failed] {
            let step = agent(replies)
                .run_with(RunOptions::new().with_trace(mode))
                .await
                .expect("runs");
            kept.push((
                mode.as_str(),
                step.is_success(),
                step.turns.len(),
                step.usage.llm_requests,
            ));
        }
    }
    // The outcome and the usage stay whatever the mode.
    assert_eq!(
        kept,
        [
            ("always", true, 2, 2),
            ("always", false, 2, 2),
            ("never", true, 0, 2),
            ("never", false, 0, 2),
            ("on-error", true, 0, 2),
            ("on-error", false, 2, 2),
        ]
    );
}

#[test]
fn the_default_prompt_is_not_capped_and_a_limit_cuts_it_with_a_note() {
    let uncapped = agent(&[]);
    let generous = Agent::builder("Add up")
        .llm(ScriptedLlm::new(Vec::<String>::new()))
        .prompt_limit(PromptLimit { max_chars: 100_000 })
        .build()
        .expect("builds");
    assert_eq!(generous.system_prompt(), uncapped.system_prompt());

    let capped = Agent::builder("Add up")
        .llm(ScriptedLlm::new(Vec::<String>::new()))
        .prompt_limit(PromptLimit { max_chars: 60 })
        .build()
        .expect("builds");
    let total = uncapped.system_prompt().chars;
    assert_eq!(
        capped.system_prompt().text,
        format!(
            "You solve tasks by writing PTC-Lisp programs (Clojure, run i\n\n[System prompt cut \
             to its first 60 of {total} characters by its size limit; the rest was left out.]"
        )
    );
}

#[tokio::test]
async fn run_usage_gives_the_system_prompt_the_memory_kept_and_the_compression() {
    let agent = Agent::builder("Add up")
        .llm(ScriptedLlm::new([
            "(def xs [1 2 3])\n(println (count xs))",
            "(def total (reduce + xs))",
            "(return total)",
        ]))
        .compression_config(
            "single-user-coalesced"
                .parse::<CompressionConfig>()
                .expect("spec"),
        )
        .build()
        .expect("builds");
    let step = agent.run().await.expect("runs");
    let usage = agent.run_usage(&step);
    let prompt = agent.system_prompt();
    assert_eq!(
        (
            usage.system_prompt_chars,
            usage.system_prompt_tokens,
            usage.memory_kept_bytes,
            usage.definitions_kept,
        ),
        (prompt.chars, prompt.estimated_tokens, Some(80), Some(2))
    );
    let stats = usage.compression.expect("turns kept");
    assert_eq!(
        (
            stats.strategy.as_str(),
            stats.compressed,
            stats.turns,
            stats.turns_compressed,
            stats.prints_shown,
        ),
        ("single-user-coalesced", true, 2, 2, 1)
    );

    // A step without its turns has the prompt's size and nothing derived from turns.
    let bare = agent.run_usage(&TraceMode::Never.apply(step));
    assert_eq!(
        (
            bare.system_prompt_chars,
            bare.memory_kept_bytes,
            bare.definitions_kept,
            bare.compression
        ),
        (prompt.chars, None, None, None)
    );
}
