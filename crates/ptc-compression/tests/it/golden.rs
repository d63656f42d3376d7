//! Golden tests: turn histories rendered by each strategy, compared with the expected messages
//! and stats in `tests/golden/*.txt`. Run with `UPDATE_GOLDEN=1` to rewrite the files after an intended
//! change, then review the diff.

use crate::fixtures;

use fixtures::*;
use pretty_assertions::assert_eq;
use ptc_compression::{
    Aggressive, AppendCompact, Compression, CompressionConfig, FailedTurns, PerTurnSummary,
    RenderLimits, RenderOptions, Rendered, RollingWindow, SingleUserCoalesced, Uncompressed,
    transcript,
};
use ptc_lisp::Definition;
use ptc_lisp::Value;
use ptc_turn::Turn;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The one comparison: the rendered messages and stats against `tests/golden/NAME.txt`.
fn check_golden(name: &str, rendered: &Rendered) {
    let mut actual = transcript(&rendered.messages);
    actual.push_str("\n=== cache points ===\n");
    for point in &rendered.cache_points {
        let text = &rendered.messages[point.message_index].content;
        let tail: String = text[..point.byte_offset]
            .chars()
            .rev()
            .take(24)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        actual.push_str(&format!(
            "message {}, byte {}: ...{tail:?}\n",
            point.message_index, point.byte_offset
        ));
    }
    actual.push_str("\n=== stats ===\n");
    actual.push_str(&serde_json::to_string_pretty(&rendered.stats).expect("stats serialize"));
    actual.push('\n');
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    assert_eq!(expected, actual, "golden file {name}.txt");
}

struct Case {
    tools: Vec<ptc_lisp::ToolSpec>,
    data: std::collections::BTreeMap<String, Value>,
    max_turns: u32,
    limits: RenderLimits,
}

impl Case {
    fn new() -> Case {
        Case {
            tools: tools(),
            data: data(),
            max_turns: 6,
            limits: RenderLimits::default(),
        }
    }

    fn render(&self, strategy: &dyn Compression, turns: &[Turn]) -> Rendered {
        let opts = RenderOptions::new(MISSION, SYSTEM, self.max_turns)
            .with_tools(&self.tools)
            .with_data(&self.data)
            .with_limits(self.limits);
        let memory = turns.last().map_or(&[][..], Turn::memory);
        strategy.to_messages(turns, memory, &opts)
    }
}

// NS-010 (no user/ section before any turn), MSG-003, MSG-004, MSG-006, FMT-001, FMT-002,
// FMT-004, FMT-005, NS-008, FMT-016: the first request. MSG-002: system, then one user message
// with the mission, the context and the turns left.
#[test]
fn before_the_first_turn() {
    check_golden(
        "coalesced_no_turns",
        &Case::new().render(&SingleUserCoalesced::default(), &[]),
    );
}

// SAM-001, TC-006, AMB-005: no turn printed, so values show samples and tool calls their
// results. FMT-003, FMT-009, FMT-011, FMT-012, TC-003, NS-011, SAM-003, TRN-001..TRN-005.
// TC-005: a tool result kept with `def` (`reviews`) shows on its line of `user/`. CMP-001: the
// successful turns are folded into the one summary.
#[test]
fn exploration_shows_samples_and_results() {
    check_golden(
        "coalesced_exploration",
        &Case::new().render(&SingleUserCoalesced::default(), &[turn1()]),
    );
}

// SAM-002, TC-004: a turn printed, so values show types only, tool calls no results, and the
// output is shown as printed. FMT-006, FMT-010, FMT-014, FMT-015, FMT-017, FMT-018, TRN-007,
// TRN-009, DEF-008, DEF-009, NS-011 (the prelude grows), AMB-007 (`get-inventory()`), TC-001,
// MSG-001.
#[test]
fn printing_shows_output_instead_of_samples() {
    check_golden(
        "coalesced_printed",
        &Case::new().render(&SingleUserCoalesced::default(), &[turn1(), turn2()]),
    );
}

// CMP-002, CMP-003, ERR-001, ERR-003: a failed turn is kept as its full program and its error.
#[test]
fn a_failed_turn_keeps_its_program_and_error() {
    check_golden(
        "coalesced_failed",
        &Case::new().render(
            &SingleUserCoalesced::default(),
            &[turn1(), turn2(), turn3()],
        ),
    );
}

// A failed turn the next one recovered from is not kept as a pair (the request must not end
// with an error already fixed): the summary names it. FMT-008 (an uncalled function without a
// docstring), a caught tool error.
#[test]
fn a_recovered_failure_is_named_in_the_summary() {
    check_golden(
        "coalesced_recovered",
        &Case::new().render(&SingleUserCoalesced::default(), &history()),
    );
}

#[test]
fn recovered_failures_can_be_dropped() {
    let strategy = SingleUserCoalesced {
        failed_turns: FailedTurns::Unrecovered,
    };
    check_golden(
        "coalesced_unrecovered",
        &Case::new().render(&strategy, &history()),
    );
}

// MSG-005: the request for the last turn ends with the final warning.
#[test]
fn the_last_turn_is_announced() {
    let case = Case {
        max_turns: 3,
        ..Case::new()
    };
    check_golden(
        "coalesced_final_turn",
        &case.render(&SingleUserCoalesced::default(), &[turn1(), turn2()]),
    );
}

// TC-002, TC-007, TRN-006, TRN-010, FMT-013: limits keep the newest entries; a turn without
// tool calls says so.
#[test]
fn limits_keep_the_newest_calls_and_prints() {
    let case = Case {
        max_turns: 10,
        limits: RenderLimits {
            println_limit: 3,
            tool_call_limit: 2,
            ..RenderLimits::default()
        },
        ..Case::new()
    };
    let turns = vec![
        ok(1, "(println \"a\")", Value::Nil).with_prints(vec!["a".into()]),
        ok(2, "...", Value::Nil)
            .with_tool_calls(vec![
                call("search-reviews", vec![s("A")], s("r1")),
                call("search-reviews", vec![s("B")], s("r2")),
            ])
            .with_prints(vec!["b\nb2".into(), "c".into()]),
        ok(3, "...", Value::Nil)
            .with_tool_calls(vec![call("get-inventory", vec![], s("inv"))])
            .with_prints(vec!["d".into()]),
    ];
    check_golden(
        "coalesced_limits",
        &case.render(&SingleUserCoalesced::default(), &turns),
    );
    let quiet =
        vec![ok(1, "(def x 1)", Value::Int(1)).with_memory(vec![value_def("x", Value::Int(1))])];
    check_golden(
        "coalesced_no_tool_calls",
        &case.render(&SingleUserCoalesced::default(), &quiet),
    );
}

// SS-001: a single-shot run is never compressed.
#[test]
fn single_shot_is_rendered_in_full() {
    let case = Case {
        max_turns: 1,
        ..Case::new()
    };
    check_golden(
        "single_shot",
        &case.render(&SingleUserCoalesced::default(), &[turn1()]),
    );
}

#[test]
fn uncompressed_history() {
    check_golden(
        "uncompressed",
        &Case::new().render(&Uncompressed, &history()),
    );
}

#[test]
fn rolling_window_history() {
    let strategy = RollingWindow {
        window: 2,
        failed_turns: FailedTurns::All,
    };
    check_golden("rolling_window", &Case::new().render(&strategy, &history()));
}

#[test]
fn per_turn_summary_history() {
    check_golden(
        "per_turn_summary",
        &Case::new().render(&PerTurnSummary::default(), &history()),
    );
}

#[test]
fn aggressive_history() {
    check_golden(
        "aggressive",
        &Case::new().render(&Aggressive::default(), &history()),
    );
}

#[test]
fn activation_thresholds() {
    let config = CompressionConfig::parse("single-user-coalesced?activate_after_turns=3")
        .expect("valid spec");
    let strategy = config.build();
    check_golden(
        "activation_below",
        &Case::new().render(&strategy, &[turn1(), turn2()]),
    );
    check_golden(
        "activation_above",
        &Case::new().render(&strategy, &[turn1(), turn2(), turn3()]),
    );
}

// The default strategy before any compaction: programs and short feedback, appended.
#[test]
fn append_compact_appends() {
    check_golden(
        "append_compact",
        &Case::new().render(&AppendCompact::default(), &history()),
    );
}

// A token budget forces a compaction: the turns up to the last successful one become the
// summary, with every tool call; the failed turn 3 was recovered, so its calls would be marked.
#[test]
fn append_compact_compacts_under_a_budget() {
    let strategy = AppendCompact {
        compact_above_tokens: Some(100),
        ..AppendCompact::default()
    };
    check_golden(
        "append_compact_compacted",
        &Case::new().render(&strategy, &history()),
    );
}

// Turn 1 sent two emails and printed before failing; the request for turn 3 shows both emails
// and the output under every rendering: nothing that happened is hidden.
#[test]
fn a_failed_turn_shows_what_it_did() {
    let turns = [emailing_then_failing(), noting_the_emails()];
    check_golden(
        "side_effects_full_history",
        &Case::new().render(&Uncompressed, &turns),
    );
    check_golden(
        "side_effects_append_compact",
        &Case::new().render(&AppendCompact::default(), &turns),
    );
    check_golden(
        "side_effects_coalesced",
        &Case::new().render(&SingleUserCoalesced::default(), &turns),
    );
    // Not yet recovered: the failed turn is the last word, with what it did.
    check_golden(
        "side_effects_unrecovered",
        &Case::new().render(&SingleUserCoalesced::default(), &turns[..1]),
    );
}

// A sample of records shows every key of the first record, so the model knows the fields
// without spending a turn printing one.
#[test]
fn samples_show_every_key_of_the_first_record() {
    let case = Case {
        data: std::collections::BTreeMap::from([("orders".to_string(), orders())]),
        ..Case::new()
    };
    check_golden(
        "record_samples",
        &case.render(&AppendCompact::default(), &[]),
    );
}

// What the default strategy's summary keeps of earlier output: a document printed in the
// second turn and needed in the last is pointed to by the definition that holds it, a log line
// printed every turn is counted, and nothing is left out without a word.

/// A policy long enough that printing it is worth a pointer.
fn policy() -> String {
    let mut text = String::from("REFUND POLICY\n");
    for section in 1..=6 {
        text.push_str(&format!(
            "{section}. Section {section} says what to do in case {section}, at some length.\n"
        ));
    }
    text.push_str("7. The report is a map with :audit-id \"RA-1\" and :signed-off-by \"desk\".");
    text
}

/// Turn 1 lists the customers, turn 2 defines and prints the policy, then one customer per
/// turn, each logged with a line of the same kind; `customers` turns in all after the first
/// two.
fn audit(customers: u32) -> Vec<Turn> {
    let policy_def = documented(
        value_def("policy", Value::string(policy())),
        "The refund policy",
    );
    let mut turns = vec![
        ok(1, "(println (count data/customers) \"customers\")", Value::Nil)
            .with_prints(vec![format!("{customers} customers")]),
        ok(
            2,
            "(def policy \"The refund policy\" (tool/search-docs \"refund policy\"))\n(println policy)",
            Value::Nil,
        )
        .with_tool_calls(vec![call(
            "search-docs",
            vec![s("refund policy")],
            Value::string(policy()),
        )])
        .with_prints(vec![policy()])
        .with_memory(vec![policy_def.clone()]),
    ];
    let mut audited = Vec::new();
    for n in 1..=customers {
        let id = format!("c-{n:02}");
        audited.push(s(&id));
        let memory = vec![
            policy_def.clone(),
            value_def("audited", Value::vector(audited.clone())),
        ];
        turns.push(
            ok(
                n + 2,
                &format!("(def audited (conj audited \"{id}\"))\n(println \"audited\" \"{id}\")"),
                Value::Nil,
            )
            .with_prints(vec![format!("audited {id}")])
            .with_memory(memory),
        );
    }
    turns
}

fn options(max_turns: u32) -> RenderOptions<'static> {
    RenderOptions::new("Audit the refunds.", "You write PTC-Lisp.", max_turns)
}

/// The default strategy, compacting whenever it may.
fn compacting() -> AppendCompact {
    AppendCompact {
        compact_above_tokens: Some(1),
        ..AppendCompact::default()
    }
}

fn last_request(strategy: &dyn Compression, turns: &[Turn], opts: &RenderOptions<'_>) -> String {
    let memory = turns.last().map_or(&[][..], Turn::memory);
    transcript(&strategy.to_messages(turns, memory, opts).messages)
}

// The whole request after 20 customers, compacted: the policy printed in turn 2 is pointed to
// by name with its size, the one-off count of turn 1 is kept as printed, the log lines older
// than the newest fifteen are counted and named, and the newest fifteen are shown as printed.
#[test]
fn a_compacted_summary_points_to_the_policy_and_counts_the_log() {
    let turns = audit(20);
    let text = last_request(&compacting(), &turns, &options(30));
    check_golden(
        "append_compact_printed",
        &compacting().to_messages(&turns, turns[turns.len() - 1].memory(), &options(30)),
    );
    assert!(
        text.contains(
            ";; turn 2 printed policy in full (a string of 421 characters); (println policy) \
             shows it again"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            ";; 4 earlier printed entries left out (turns 3 to 6): 4 like \"audited ...\""
        ),
        "{text}"
    );
}

// A print is pointed to only while its definition still holds what was printed: once the
// policy is redefined, the old print is an entry of its own kind again, shown by its size and
// how it began.
#[test]
fn a_redefined_value_is_not_pointed_to() {
    let mut turns = audit(20);
    let changed = documented(
        value_def("policy", Value::string("REVISED")),
        "The refund policy",
    );
    let last = turns.pop().expect("turns");
    let mut memory: Vec<Definition> = last.memory().to_vec();
    memory[0] = changed;
    turns.push(
        ok(last.number(), last.program(), Value::Nil)
            .with_prints(last.prints().to_vec())
            .with_memory(memory.clone()),
    );
    turns.push(ok(last.number() + 1, "(+ 1 2)", Value::Int(3)).with_memory(memory));
    let text = last_request(&compacting(), &turns, &options(30));
    assert!(!text.contains("printed policy in full"), "{text}");
    assert!(
        text.contains(";; turn 2 printed 421 characters, not kept, beginning: REFUND POLICY..."),
        "{text}"
    );
}

// An input printed whole is pointed to as `data/NAME`: inputs never change.
#[test]
fn a_printed_input_is_pointed_to() {
    let data = BTreeMap::from([("policy".to_string(), Value::string(policy()))]);
    let opts = options(30).with_data(&data).with_limits(RenderLimits {
        println_limit: 2,
        ..RenderLimits::default()
    });
    let mut turns = vec![
        ok(1, "(println \"policy:\" data/policy)", Value::Nil)
            .with_prints(vec![format!("policy: {}", policy())]),
    ];
    for n in 2..=4 {
        turns.push(ok(n, "(println (+ 1 2))", Value::Nil).with_prints(vec!["3".into()]));
    }
    let text = last_request(&compacting(), &turns, &opts);
    assert!(
        text.contains(
            ";; turn 1 printed data/policy in full (a string of 421 characters); \
             (println data/policy) shows it again"
        ),
        "{text}"
    );
}

// The older part of `rolling-window` forgets nothing silently either; the seed's
// `single-user-coalesced` keeps its newest fifteen entries only, as its requirements say.
#[test]
fn rolling_window_summaries_account_for_every_print() {
    let turns = audit(20);
    let opts = options(30);
    let text = last_request(&RollingWindow::default(), &turns, &opts);
    assert!(text.contains("printed policy in full"), "{text}");
    assert!(text.contains("earlier printed entries left out"), "{text}");
}

// However long the run, the output part of the summary stays the same size but for its numbers:
// the newest entries, one pointer, at most `println_limit` one-offs and one line of counts.
#[test]
fn the_output_of_a_summary_stays_bounded() {
    let opts = options(500);
    let outputs: Vec<String> = [40, 400]
        .into_iter()
        .map(|customers| {
            let turns = audit(customers);
            let text = last_request(&compacting(), &turns, &opts);
            let summary = text.split("=== assistant ===").next().unwrap_or("");
            let output = summary.split(";; Output:").nth(1).unwrap_or("");
            output.replace(|c: char| c.is_ascii_digit(), "")
        })
        .collect();
    assert_eq!(outputs[0], outputs[1]);
    assert!(
        outputs[0].contains("earlier printed entries left out"),
        "{}",
        outputs[0]
    );
}

// A turn that printed shows the results it has not seen as samples while `tool_result_chars`
// lasts (the first call of each tool always), then by type, and says so.
#[test]
fn unseen_results_are_shown_while_the_budget_lasts() {
    let page = |n: i64, names: &[&str]| {
        let users: Vec<Value> = names
            .iter()
            .map(|name| map(&[("email", s(&format!("{name}@corp.example")))]))
            .collect();
        map(&[("page", Value::Int(n)), ("users", Value::vector(users))])
    };
    let turns = vec![
        ok(
            1,
            "(def pages (mapv tool/list-users [1 2 3])) (println (count pages))",
            Value::Nil,
        )
        .with_tool_calls(vec![
            call("list-users", vec![Value::Int(1)], page(1, &["ann", "bo"])),
            call("list-users", vec![Value::Int(2)], page(2, &["cy", "di"])),
            call("list-users", vec![Value::Int(3)], page(3, &["gus", "hal"])),
        ])
        .with_prints(vec!["3".into()]),
    ];
    let case = Case {
        limits: RenderLimits {
            tool_result_chars: 80,
            ..RenderLimits::default()
        },
        ..Case::new()
    };
    check_golden(
        "unseen_results_budget",
        &case.render(&AppendCompact::default(), &turns),
    );
}
