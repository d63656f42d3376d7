//! Customising the system prompt: prefix, extra text, sections of one's own, a whole prompt,
//! a function of the generated one.

use pretty_assertions::assert_eq;
use ptc_agent::{
    Agent, AgentBuilder, ScriptedLlm, default_language_reference, default_reply_format,
};

fn builder() -> AgentBuilder {
    Agent::builder("Go").llm(ScriptedLlm::new(["(return 1)"]))
}

fn prompt(builder: AgentBuilder) -> String {
    builder.build().expect("agent").system_prompt().text.clone()
}

/// The `## ` headings of a prompt, in order.
fn headings(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("## ")).collect()
}

#[test]
fn the_prefix_and_the_extra_text_wrap_the_generated_prompt() {
    let generated = prompt(builder());
    let text = prompt(
        builder()
            .system_prompt_prefix("You work for ACME.\n")
            .system_prompt_extra("Answer in English."),
    );
    assert_eq!(
        text,
        format!("You work for ACME.\n\n{generated}\n\nAnswer in English.")
    );
}

#[test]
fn the_two_sections_can_be_replaced_or_left_out() {
    let text = prompt(
        builder()
            .reply_format_section("## Your reply\n\nOnly code, no prose.")
            .language_reference_section(""),
    );
    assert_eq!(headings(&text), vec!["## Your reply"]);
    assert!(text.contains("## Your reply\n\nOnly code, no prose.\n\n- `(tool/NAME arg ...)`"));
    assert!(!text.contains("Everything is as in Clojure"));
    assert!(!text.contains("Reply with the program in a ```clojure block"));

    let default = prompt(builder());
    assert!(default.contains(&default_reply_format()));
    // The reference comes last, after the rules of turns and before anything task-specific.
    assert!(default.ends_with(&format!(
        "(`;; turn 2 printed x in full`: `(println x)` shows it again).\n\n{}",
        default_language_reference()
    )));
}

#[test]
fn a_whole_prompt_replaces_everything_but_the_function() {
    let text = prompt(
        builder()
            .system_prompt_prefix("ignored")
            .system_prompt_extra("ignored")
            .language_reference_section("ignored")
            .replace_system_prompt("Write PTC-Lisp. Call (return v).")
            .map_system_prompt(|text| text.replace("PTC-Lisp", "Clojure")),
    );
    assert_eq!(text, "Write Clojure. Call (return v).");
}

#[test]
fn a_function_maps_the_prompt_built_from_the_other_settings() {
    let agent = builder()
        .system_prompt_extra("Be brief.")
        .map_system_prompt(|text| format!("{}|{}", text.len(), &text[text.len() - 9..]))
        .build()
        .expect("agent");
    let expected_len = prompt(builder()).len() + "\n\nBe brief.".len();
    assert_eq!(
        agent.system_prompt().text,
        format!("{expected_len}|Be brief.")
    );
    assert_eq!(
        agent.system_prompt().chars,
        agent.system_prompt().text.chars().count()
    );
}

#[tokio::test]
async fn sub_agents_inherit_the_customisation_and_runs_send_it() {
    let parent = builder()
        .system_prompt_prefix("You work for ACME.")
        .build()
        .expect("agent");
    let child = parent
        .sub_agent("Child")
        .llm(ScriptedLlm::new(["(return 2)"]))
        .build()
        .expect("child");
    assert!(
        child
            .system_prompt()
            .text
            .starts_with("You work for ACME.\n\nYou solve tasks")
    );
    let step = child.run().await.expect("runs");
    assert_eq!(
        step.turns[0].messages()[0].content,
        child.system_prompt().text
    );
    assert_eq!(step.task.system_prompt, child.system_prompt().text);
}
