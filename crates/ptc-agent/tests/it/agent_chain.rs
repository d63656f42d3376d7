//! Chaining runs (a finished step as the next agent's input) and the descriptions of output
//! fields and inputs.

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, BuildError, RunError, RunOptions, ScriptedLlm};
use ptc_lisp::Value;
use ptc_turn::{FailureKind, Step, StepOutcome};

fn agent(mission: &str, replies: &[&str], signature: &str) -> Agent {
    Agent::builder(mission)
        .llm(ScriptedLlm::new(replies.to_vec()))
        .signature(signature)
        .build()
        .expect("agent")
}

async fn finder() -> Step {
    Agent::builder("Find the open tickets")
        .llm(ScriptedLlm::new([
            "(return {:ids [3 5 8] :oldest \"2024-01-02\"})",
        ]))
        .signature("{ids [:int], oldest :string}")
        .field_descriptions([
            ("oldest", "Opening date of the oldest, ISO 8601"),
            ("ids", "Ids of the open tickets,\n oldest first"),
        ])
        .build()
        .expect("agent")
        .run()
        .await
        .expect("runs")
}

/// The first user message of the only request of a run.
fn first_message(step: &Step) -> String {
    step.turns[0].messages()[1].content.clone()
}

#[tokio::test]
async fn the_returned_map_becomes_data_with_its_field_descriptions() {
    let found = finder().await;
    let counter = agent(
        "Count the tickets",
        &["(return (count data/ids))"],
        "(ids [:int]) -> :int",
    );
    let counted = counter.run_after(&found).await.expect("runs");
    assert_eq!(counted.value(), Some(&Value::Int(3)));
    assert_eq!(
        first_message(&counted),
        "Count the tickets\n\n\
         ;; === data/ ===\n\
         data/ids                      ; list[3], whole: [3 5 8] -- Ids of the open tickets, oldest first\n\
         data/oldest                   ; string = \"2024-01-02\" -- Opening date of the oldest, ISO 8601\n\n\
         Turns left: 5"
    );
}

#[tokio::test]
async fn the_next_agents_own_descriptions_and_data_win() {
    let found = finder().await;
    let counter = Agent::builder("Count the tickets")
        .llm(ScriptedLlm::new(["(return (count data/ids))"]))
        .context_descriptions([("ids", "The tickets to count")])
        .build()
        .expect("agent");
    let counted = counter
        .run_with(
            RunOptions::new()
                .with_previous(&found)
                .with_data_value("ids", Value::vector([Value::Int(1)])),
        )
        .await
        .expect("runs");
    assert_eq!(counted.value(), Some(&Value::Int(1)));
    assert_eq!(
        counted.task.data_descriptions,
        [
            ("ids".to_string(), "The tickets to count".to_string()),
            (
                "oldest".to_string(),
                "Opening date of the oldest, ISO 8601".to_string()
            ),
        ]
        .into()
    );
}

#[tokio::test]
async fn a_failed_step_fails_the_next_run_without_a_request() {
    let failed = agent("Find", &["(fail \"no database\")"], ":map")
        .run()
        .await
        .expect("runs");
    // A model with no replies would fail the run with llm_error if it were asked.
    let next = agent("Count {{what}}", &[], "(what :string, ids [:int]) -> :int");
    let step = next
        .run_with(
            RunOptions::new()
                .with_previous(&failed)
                .with_data_value("what", Value::string("tickets")),
        )
        .await
        .expect("a failed run, not an error");
    assert_eq!(
        step.outcome,
        StepOutcome::Failed {
            kind: FailureKind::ChainedFailure,
            reason: "the step this run was chained onto failed (failed): no database".into(),
            value: None,
            llm_errors: Vec::new(),
        }
    );
    assert_eq!(step.task.mission, "Count tickets");
    assert_eq!(step.turns.len(), 0);
    assert_eq!(step.usage.llm_requests, 0);
}

#[tokio::test]
async fn a_missing_key_is_a_chain_mismatch_naming_what_is_needed() {
    let found = finder().await;
    let next = agent("Mail them", &[], "(emails [:string], ids [:int]) -> :int");
    let error = next.run_after(&found).await.expect_err("mismatch");
    assert_eq!(
        error.to_string(),
        "chain mismatch: the previous step returned data/ids, data/oldest but this agent's \
         signature needs: data/emails: expected list, got nothing (it is missing from the input \
         data)"
    );
    assert!(matches!(error, RunError::ChainMismatch { .. }));
}

#[tokio::test]
async fn a_key_of_another_type_is_a_chain_mismatch() {
    let found = finder().await;
    let next = agent("Count", &[], "(ids :int) -> :int");
    assert_eq!(
        next.run_after(&found)
            .await
            .expect_err("mismatch")
            .to_string(),
        "chain mismatch: the previous step returned data/ids, data/oldest but this agent's \
         signature needs: data/ids: expected int, got vector [3 5 8]"
    );
}

#[tokio::test]
async fn a_value_that_is_not_a_map_cannot_be_chained() {
    let counted = agent("Count", &["(return 3)"], ":int")
        .run()
        .await
        .expect("runs");
    let next = agent("Double it", &[], ":int");
    assert_eq!(
        next.run_after(&counted).await.expect_err("not a map"),
        RunError::ChainNotMap {
            returned: "3".into()
        }
    );
}

#[test]
fn field_descriptions_are_listed_under_the_expected_output_in_signature_order() {
    let agent = Agent::builder("Sum up")
        .llm(ScriptedLlm::new(Vec::<String>::new()))
        .signature("{total :float, count :int, _raw :any}")
        .field_descriptions([("count", "How many invoices"), ("total", "In euros")])
        .build()
        .expect("agent");
    let text = &agent.system_prompt().text;
    let start = text.find("## Expected output").expect("section");
    let end = text[start..]
        .find("\n\n## ")
        .map_or(text.len(), |i| start + i);
    assert_eq!(
        &text[start..end],
        "## Expected output\n\n\
         Call `(return value)` with a value of this shape:\n\n    \
         {total :float, count :int, _raw :any}\n\n\
         The fields:\n\
         - `total`: In euros\n\
         - `count`: How many invoices\n\n\
         - `{field T}` is a map with keyword keys, e.g. `{:total 12.5}`; extra keys are fine.\n\
         - `:float` accepts any number, integers included.\n\
         - Fields starting with `_` go to the caller only: fill them in, but they are hidden \
         from you in later messages."
    );
}

#[test]
fn describing_a_field_the_signature_lacks_is_a_build_error() {
    let error = Agent::builder("Sum up")
        .llm(ScriptedLlm::new(Vec::<String>::new()))
        .signature("{total :float}")
        .field_descriptions([("totl", "In euros")])
        .build()
        .expect_err("unknown field");
    assert_eq!(
        error.to_string(),
        "field descriptions name totl but the output signature `{total :float}` has no such \
         field; describe only the fields of the signature's output map"
    );
    let without = Agent::builder("Sum up")
        .llm(ScriptedLlm::new(Vec::<String>::new()))
        .field_descriptions([("total", "In euros")])
        .build()
        .expect_err("no signature");
    assert_eq!(
        without,
        BuildError::UnknownField {
            fields: vec!["total".into()],
            signature: None
        }
    );
}
