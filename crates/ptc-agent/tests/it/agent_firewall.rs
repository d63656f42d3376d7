//! Firewalled inputs and outputs: `data/_key` and `_field` values reach programs and the host
//! but never a message to the model.

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, ScriptedLlm};
use ptc_lisp::Value;

fn clojure(code: &str) -> String {
    format!("```clojure\n{code}\n```")
}

#[tokio::test]
async fn a_firewalled_input_is_shown_by_name_and_type_and_programs_read_it() {
    let llm = ScriptedLlm::new([clojure("(return (count data/_api_key))")]);
    let agent = Agent::builder("Check the key")
        .llm(llm.clone())
        .data(&serde_json::json!({"_api_key": "sk-123456", "region": "north"}))
        .build()
        .expect("agent");
    let step = agent.run().await.expect("run");
    assert_eq!(step.value(), Some(&Value::Int(9)));
    let first = &llm.requests()[0].messages[0].content;
    assert_eq!(
        first,
        "Check the key\n\n;; === data/ ===\ndata/_api_key                 ; string, hidden\n\
         data/region                   ; string = \"north\"\n\nTurns left: 5"
    );
    assert!(!first.contains("sk-123456"), "{first}");
}

#[tokio::test]
async fn a_sub_agents_firewalled_output_reaches_the_parent_program_and_no_prompt() {
    let child_llm = ScriptedLlm::new([clojure(
        "(return {:status \"paid\" :_receipt \"rcpt-998877\"})",
    )]);
    let child = Agent::builder("Pay the invoice")
        .llm(child_llm)
        .signature("{status :string, _receipt :string}")
        .build()
        .expect("child");
    let llm = ScriptedLlm::new([
        clojure("(def paid (tool/pay))"),
        clojure("(println paid)"),
        clojure("(def _receipt (:_receipt paid))"),
        clojure("(return {:receipt _receipt})"),
    ]);
    let parent = Agent::builder("Pay and keep the receipt")
        .llm(llm.clone())
        .max_turns(4)
        .compression_config(
            ptc_compression::CompressionConfig::parse("single-user-coalesced").expect("spec"),
        )
        .tool(child.as_tool("pay", "Pays the invoice"))
        .build()
        .expect("parent");
    let step = parent.run().await.expect("run");
    // The program read the field and returned it to the host.
    assert_eq!(
        ptc_lisp::pr_str(step.value().expect("value")),
        "{:receipt \"rcpt-998877\"}"
    );
    assert_eq!(
        step.turns[1].prints(),
        ["{:status paid, :_receipt [hidden]}".to_string()]
    );
    // Every message the model got: the tool call's result, the definitions' samples and the
    // printed output show it hidden.
    let requests = llm.requests();
    assert_eq!(requests.len(), 4);
    for request in &requests {
        for message in &request.messages {
            assert!(
                !message.content.contains("rcpt-998877"),
                "{}",
                message.content
            );
        }
    }
    let last = |i: usize| {
        requests[i]
            .messages
            .last()
            .expect("a message")
            .content
            .clone()
    };
    let head = "Pay and keep the receipt\n\n;; === tool/ ===\n(tool/pay)                    ; \
                {status :string, _receipt :string} -- Pays the invoice\n\n";
    assert_eq!(
        last(1),
        format!(
            "{head};; === user/ (your prelude) ===\npaid                          ; = map[2], \
             sample: {{:status \"paid\" :_receipt \"[hidden]\"}}\n\n;; Tool calls made:\n;   \
             pay() -> {{:status \"paid\" :_receipt \"[hidden]\"}}\n\nTurns left: 3"
        )
    );
    assert!(
        last(2).ends_with(";; Output:\n{:status paid, :_receipt [hidden]}\n\nTurns left: 2"),
        "{}",
        last(2)
    );
    assert!(
        last(3).contains("\n_receipt                      ; = string, hidden\n"),
        "{}",
        last(3)
    );
}
