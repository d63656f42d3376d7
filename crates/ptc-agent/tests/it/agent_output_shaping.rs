//! Output shaping: floats of the returned value rounded, printed output capped per message.

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, ScriptedLlm};
use ptc_compression::CompressionConfig;
use ptc_lisp::pr_str;

#[tokio::test]
async fn float_precision_rounds_the_returned_floats_after_the_signature_check() {
    let agent = Agent::builder("Average")
        .llm(ScriptedLlm::new([
            "(return {:mean (/ 10.0 3) :parts [0.125 1] :label \"x\"})",
        ]))
        .signature("{mean :float, parts [:float]}")
        .float_precision(2)
        .build()
        .expect("agent");
    let step = agent.run().await.expect("run");
    assert_eq!(
        pr_str(step.value().expect("value")),
        "{:mean 3.33, :parts [0.13 1], :label \"x\"}"
    );
}

#[tokio::test]
async fn without_float_precision_the_value_is_kept_as_computed() {
    let agent = Agent::builder("Average")
        .llm(ScriptedLlm::new(["(return (/ 10.0 3))"]))
        .build()
        .expect("agent");
    let step = agent.run().await.expect("run");
    assert_eq!(pr_str(step.value().expect("value")), "3.3333333333333335");
}

#[tokio::test]
async fn printed_output_past_the_cap_is_left_out_with_a_note() {
    let llm = ScriptedLlm::new([
        "(println (apply str (repeat 30 \"a\"))) (println \"second\")",
        "(return 1)",
    ]);
    let agent = Agent::builder("Print")
        .llm(llm.clone())
        .compression_config(
            CompressionConfig::parse("uncompressed?output_char_limit=20").expect("spec"),
        )
        .build()
        .expect("agent");
    agent.run().await.expect("run");
    let requests = llm.requests();
    let feedback = &requests[1].messages.last().expect("feedback").content;
    assert_eq!(
        feedback,
        ";; Output:\naaaaaaaaaa\n;; ... 17 characters of output left out here (at most 20 are \
         shown: the first and the last 10); print less: counts, a few items, the fields you \
         need\naaa\nsecond\n\n;; Result: nil\n\nTurns left: 4"
    );
}
