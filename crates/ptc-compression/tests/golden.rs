//! Golden tests: turn histories rendered by each strategy, compared with the expected messages
//! and stats in `tests/golden/*.txt`. Run with `UPDATE_GOLDEN=1` to rewrite the files after an intended
//! change, then review the diff.

mod fixtures;

use fixtures::*;
use pretty_assertions::assert_eq;
use ptc_compression::{
    Aggressive, AppendCompact, Compression, CompressionConfig, FailedTurns, PerTurnSummary,
    RenderLimits, RenderOptions, Rendered, RollingWindow, SingleUserCoalesced, Uncompressed,
    transcript,
};
use ptc_lisp::Value;
use ptc_turn::Turn;
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
// FMT-004, FMT-005, NS-008, FMT-016: the first request.
#[test]
fn before_the_first_turn() {
    check_golden(
        "coalesced_no_turns",
        &Case::new().render(&SingleUserCoalesced::default(), &[]),
    );
}

// SAM-001, TC-006, AMB-005: no turn printed, so values show samples and tool calls their
// results. FMT-003, FMT-009, FMT-011, FMT-012, TC-003, NS-011, SAM-003, TRN-001..TRN-005.
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
