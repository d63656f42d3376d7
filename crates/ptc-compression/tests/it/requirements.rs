//! Properties every rendering must have, checked across strategies and histories.

use crate::fixtures;

use fixtures::*;
use pretty_assertions::assert_eq;
use ptc_compression::{
    Aggressive, AppendCompact, Compression, CompressionConfig, CompressionOptions,
    CompressionSetting, FailedTurns, PerTurnSummary, RenderLimits, RenderOptions, RollingWindow,
    SingleUserCoalesced, StrategyKind, Uncompressed,
};
use ptc_lisp::{ToolSpec, Value, ValueShape};
use ptc_turn::{Message, Role, Turn, TurnError};
use std::collections::BTreeMap;

fn strategies() -> Vec<Box<dyn Compression>> {
    vec![
        Box::new(Uncompressed),
        Box::new(AppendCompact::default()),
        Box::new(SingleUserCoalesced::default()),
        Box::new(RollingWindow::default()),
        Box::new(PerTurnSummary::default()),
        Box::new(Aggressive::default()),
    ]
}

struct Fixture {
    tools: Vec<ToolSpec>,
    data: BTreeMap<String, Value>,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            tools: tools(),
            data: data(),
        }
    }

    fn opts(&self, max_turns: u32) -> RenderOptions<'_> {
        RenderOptions::new(MISSION, SYSTEM, max_turns)
            .with_tools(&self.tools)
            .with_data(&self.data)
    }
}

fn memory_of(turns: &[Turn]) -> &[ptc_lisp::Definition] {
    turns.last().map_or(&[][..], Turn::memory)
}

fn user_contents(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .collect()
}

// NS-012: tool/ and data/ never change between turns, so the first user message of turn N+1
// starts with the same bytes as that of turn N up to the end of the data section.
#[test]
fn tool_and_data_sections_form_a_stable_prefix() {
    let fixture = Fixture::new();
    let history = history();
    for strategy in strategies() {
        let firsts: Vec<String> = (0..=history.len())
            .map(|n| {
                let turns = &history[..n];
                let rendered = strategy.to_messages(turns, memory_of(turns), &fixture.opts(8));
                rendered.messages[1].content.clone()
            })
            .collect();
        let header = ";; === data/ ===";
        let start = firsts[0].find(header).expect("data section present");
        let end = start
            + firsts[0][start..]
                .find("\n\n")
                .expect("a part follows the data section");
        let prefix = &firsts[0][..end];
        assert!(prefix.starts_with(MISSION));
        for (n, first) in firsts.iter().enumerate() {
            assert!(
                first.starts_with(prefix),
                "{}: turn {} changed the stable prefix:\n{first}",
                strategy.name(),
                n + 1
            );
        }
    }
}

// ARC-003, ARC-004: every strategy, behind the one trait, renders purely: the same input gives
// the same bytes, every time.
#[test]
fn rendering_is_deterministic() {
    let fixture = Fixture::new();
    let history = history();
    for strategy in strategies() {
        let a = strategy.to_messages(&history, memory_of(&history), &fixture.opts(8));
        let b = strategy.to_messages(&history, memory_of(&history), &fixture.opts(8));
        assert_eq!(a, b, "{}", strategy.name());
    }
}

// MSG-003, MSG-006, MSG-007: the system prompt is sent unchanged first, and the mission starts
// the first user message under every strategy, however small the limits.
#[test]
fn system_prompt_and_mission_always_lead() {
    let fixture = Fixture::new();
    let history = history();
    let tiny = RenderLimits {
        println_limit: 0,
        tool_call_limit: 0,
        sample_limit: 0,
        sample_printable_limit: 0,
        arg_limit: 0,
        arg_printable_limit: 0,
        output_char_limit: 0,
        data_inline_chars: 0,
        tool_result_chars: 0,
    };
    for strategy in strategies() {
        for n in 0..=history.len() {
            for limits in [RenderLimits::default(), tiny] {
                let turns = &history[..n];
                let opts = fixture.opts(8).with_limits(limits);
                let rendered = strategy.to_messages(turns, memory_of(turns), &opts);
                assert_eq!(rendered.messages[0], Message::system(SYSTEM));
                assert_eq!(rendered.messages[1].role, Role::User);
                assert!(
                    rendered.messages[1]
                        .content
                        .starts_with(&format!("{MISSION}\n\n;; === tool/ ===")),
                    "{}",
                    strategy.name()
                );
            }
        }
    }
}

// ARC-006, MSG-005: the last message always tells the turns really left (max_turns minus the
// turns recorded), however many messages the strategy produced.
#[test]
fn turns_left_comes_from_the_turns_taken() {
    let fixture = Fixture::new();
    let history = history();
    for strategy in strategies() {
        for max_turns in [5, 6, 9] {
            for n in 0..=history.len() {
                let turns = &history[..n];
                let rendered =
                    strategy.to_messages(turns, memory_of(turns), &fixture.opts(max_turns));
                let last = rendered.messages.last().expect("messages");
                assert_eq!(last.role, Role::User);
                let left = max_turns as usize - n;
                let expected = if left <= 1 {
                    "FINAL TURN - you must call (return result) or (fail reason) now.".to_string()
                } else {
                    format!("Turns left: {left}")
                };
                assert!(
                    last.content.ends_with(&format!("\n\n{expected}")),
                    "{} with {n} turns of {max_turns}: {}",
                    strategy.name(),
                    last.content
                );
            }
        }
    }
}

// SS-001: with max_turns 1 every strategy renders exactly the uncompressed history.
#[test]
fn single_shot_runs_are_never_compressed() {
    let fixture = Fixture::new();
    let turns = [turn1()];
    let full = Uncompressed.to_messages(&turns, memory_of(&turns), &fixture.opts(1));
    for strategy in strategies() {
        let rendered = strategy.to_messages(&turns, memory_of(&turns), &fixture.opts(1));
        assert_eq!(rendered.messages, full.messages, "{}", strategy.name());
        assert!(!rendered.stats.compressed);
        assert_eq!(rendered.stats.strategy, strategy.name());
    }
}

// NS-010: before any turn every strategy sends the same two messages, without a user/ section
// or an execution history.
#[test]
fn the_first_request_is_the_same_for_every_strategy() {
    let fixture = Fixture::new();
    let first = Uncompressed
        .to_messages(&[], &[], &fixture.opts(5))
        .messages;
    assert_eq!(first.len(), 2);
    assert!(!first[1].content.contains(";; === user/"));
    assert!(!first[1].content.contains(";; No tool calls made"));
    for strategy in strategies() {
        if strategy.name() == "aggressive" {
            continue; // shows no samples or descriptions
        }
        assert_eq!(
            strategy.to_messages(&[], &[], &fixture.opts(5)).messages,
            first
        );
    }
}

// ERR-002, CMP-003: several failed turns each keep their program/error pair, in order, and the
// failed_turns option chooses which.
#[test]
fn failed_turn_options() {
    let fixture = Fixture::new();
    let bad =
        |n: u32, program: &str| failed(n, program, TurnError::new("type", format!("bad {n}")));
    let turns = vec![
        turn1(),
        bad(2, "(a)"),
        bad(3, "(b)"),
        turn2().with_memory(memory2()),
        bad(5, "(c)"),
    ];
    // Turn 4 is turn2's content renumbered.
    let turns: Vec<Turn> = turns
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            if i == 3 {
                ok(4, t.program(), Value::Nil)
                    .with_prints(t.prints().to_vec())
                    .with_tool_calls(t.tool_calls().to_vec())
                    .with_memory(t.memory().to_vec())
            } else {
                t
            }
        })
        .collect();
    let render = |turns: &[Turn], failed_turns| {
        let rendered = SingleUserCoalesced { failed_turns }.to_messages(
            turns,
            memory_of(turns),
            &fixture.opts(9),
        );
        let tail: Vec<(Role, String)> = rendered.messages[2..]
            .iter()
            .map(|m| (m.role, m.content.clone()))
            .collect();
        (rendered.messages[1].content.clone(), tail, rendered.stats)
    };
    let fence = |p: &str| format!("```clojure\n{p}\n```");
    let fixed = ";; Failed turns, fixed since:\n;   turn 2: bad 2\n;   turn 3: bad 3";
    // Turns 2 and 3 were recovered from: only turn 5 keeps its pair, and the request ends
    // with it.
    let (summary, all, stats) = render(&turns, FailedTurns::All);
    assert_eq!(
        all,
        vec![
            (Role::Assistant, fence("(c)")),
            (Role::User, "Error: bad 5\n\nTurns left: 4".into()),
        ]
    );
    assert!(summary.ends_with(&format!("4.5\n\n{fixed}")), "{summary}");
    assert_eq!(
        (stats.failed_turns_shown, stats.failed_turns_collapsed),
        (1, 2)
    );
    let (summary, unrecovered, _) = render(&turns, FailedTurns::Unrecovered);
    assert_eq!(unrecovered, all);
    assert!(!summary.contains(";; Failed turns"), "{summary}");
    // CMP-002, CMP-003, ERR-001, ERR-002 as the seed has them: every failed turn keeps its
    // pair, recovered or not, in order after the summary.
    let (summary, kept, stats) = render(&turns, FailedTurns::Kept);
    assert_eq!(
        kept,
        vec![
            (Role::Assistant, fence("(a)")),
            (Role::User, "Error: bad 2".into()),
            (Role::Assistant, fence("(b)")),
            (Role::User, "Error: bad 3".into()),
            (Role::Assistant, fence("(c)")),
            (Role::User, "Error: bad 5\n\nTurns left: 4".into()),
        ]
    );
    assert!(!summary.contains(";; Failed turns"), "{summary}");
    assert!(!summary.contains("[failed turn"), "{summary}");
    assert_eq!(
        (stats.failed_turns_shown, stats.failed_turns_collapsed),
        (3, 0)
    );
    // Two failures in a row, none recovered: both keep their pairs unless only the last is
    // asked for.
    let trailing = &turns[..3];
    let (_, both, _) = render(trailing, FailedTurns::Unrecovered);
    assert_eq!(
        both,
        vec![
            (Role::Assistant, fence("(a)")),
            (Role::User, "Error: bad 2".into()),
            (Role::Assistant, fence("(b)")),
            (Role::User, "Error: bad 3\n\nTurns left: 6".into()),
        ]
    );
    assert_eq!(render(trailing, FailedTurns::All).1, both);
    let (_, last, stats) = render(trailing, FailedTurns::Last);
    assert_eq!(last, both[2..].to_vec());
    assert_eq!(
        (stats.failed_turns_shown, stats.failed_turns_collapsed),
        (1, 1)
    );
}

// FMT-006: a function's return type comes from its most recent return in any turn, and a
// redefinition does not inherit it.
#[test]
fn return_types_are_found_in_earlier_turns() {
    let fixture = Fixture::new();
    let called = fn_def("total", &["[xs]"], Some(ValueShape::Integer));
    let later = fn_def("total", &["[xs]"], None);
    let redefined = fn_def("total", &["[xs ys]"], None);
    let turns = vec![
        ok(1, "(defn total [xs] ...) (total [1])", Value::Int(1)).with_memory(vec![called]),
        ok(2, "(def y 2)", Value::Int(2)).with_memory(vec![later.clone()]),
    ];
    let render = |memory: &[ptc_lisp::Definition]| {
        SingleUserCoalesced::default()
            .to_messages(&turns, memory, &fixture.opts(5))
            .messages[1]
            .content
            .clone()
    };
    assert!(render(&[later]).contains(&format!("(total [xs]){}; -> integer\n", " ".repeat(18))));
    let text = render(&[redefined]);
    assert!(text.contains("\n(total [xs ys])\n"), "{text}");
}

/// The lines of the `user/` section the default strategy renders for `memory`.
fn user_section(fixture: &Fixture, memory: Vec<ptc_lisp::Definition>) -> Vec<String> {
    let turns = vec![ok(1, "...", Value::Nil).with_memory(memory.clone())];
    let text = SingleUserCoalesced::default()
        .to_messages(&turns, &memory, &fixture.opts(5))
        .messages[1]
        .content
        .clone();
    text.split("\n\n")
        .find(|part| part.starts_with(";; === user/"))
        .expect("user section")
        .lines()
        .map(str::to_string)
        .collect()
}

// FMT-006, FMT-007, FMT-008, FMT-009, FMT-010, DEF-003, DEF-004, DEF-005, TYP-011: function and
// value lines.
#[test]
fn value_lines() {
    let fixture = Fixture::new();
    let memory = vec![
        value_def("nothing", Value::Nil),
        value_def("empty", Value::vector([])),
        value_def("count", Value::Int(42)),
        documented(value_def("status", kw("active")), "Current\nstatus"),
        value_def("f", function("inc")),
        fn_def("multi", &["[x]", "[x & more]"], None),
        documented(fn_def("pick", &["[xs]"], None), "Pick the best"),
        documented(
            fn_def("rank", &["[xs]"], Some(ValueShape::List(3))),
            "Rank them",
        ),
        fn_def("half", &["[n]"], Some(ValueShape::Float)),
    ];
    let section = user_section(&fixture, memory);
    let pad = |name: &str| format!("{name}{}; ", " ".repeat(30 - name.len()));
    assert_eq!(
        section,
        vec![
            ";; === user/ (your prelude) ===".to_string(),
            format!("{}= nil", pad("nothing")),
            format!("{}= list[0]", pad("empty")),
            format!("{}= integer, sample: 42", pad("count")),
            format!(
                "{}\"Current status\" = keyword, sample: :active",
                pad("status")
            ),
            format!("{}= #fn[...]", pad("f")),
            "(multi [x] [x & more])".to_string(),
            format!("{}\"Pick the best\"", pad("(pick [xs])")),
            format!("{}\"Rank them\" -> list[3]", pad("(rank [xs])")),
            format!("{}-> float", pad("(half [n])")),
        ]
    );
}

// DEF-007: a docstring is shown without its `;`, which would break the comment its line is; a
// docstring of nothing but `;` shows as no docstring.
// DEF-006: the docstring shown is the one the run read when it made the definition.
#[test]
fn docstrings_lose_every_semicolon_on_summary_lines() {
    let fixture = Fixture::new();
    let memory = vec![
        documented(value_def("rate", Value::Float(0.2)), "Tax; as a; fraction"),
        documented(fn_def("pick", &["[xs]"], None), "Best;; first"),
        documented(fn_def("skip", &["[xs]"], None), ";"),
    ];
    let section = user_section(&fixture, memory);
    let pad = |name: &str| format!("{name}{}; ", " ".repeat(30 - name.len()));
    assert_eq!(
        section,
        vec![
            ";; === user/ (your prelude) ===".to_string(),
            format!("{}\"Tax as a fraction\" = float, sample: 0.2", pad("rate")),
            format!("{}\"Best first\"", pad("(pick [xs])")),
            "(skip [xs])".to_string(),
        ]
    );
}

// TRN-003, TC-003, AMB-007: tool-call arguments are space separated and truncated with the
// argument limits; calls without arguments still show their parentheses.
#[test]
fn tool_call_arguments_are_truncated() {
    let fixture = Fixture::new();
    let long = "x".repeat(70);
    let turns = vec![
        ok(1, "...", Value::Nil)
            .with_tool_calls(vec![
                call("search", vec![s(&long), ints(1..=5)], Value::Nil),
                call("ping", vec![], Value::Bool(true)),
            ])
            .with_prints(vec!["done".into()]),
    ];
    let text = SingleUserCoalesced::default()
        .to_messages(&turns, &[], &fixture.opts(5))
        .messages[1]
        .content
        .clone();
    let expected = format!(
        ";; Tool calls made:\n;   search(\"{}...\" [1 2 3 ...] (5 items, showing first 3))\n;   ping()",
        "x".repeat(60)
    );
    assert!(text.contains(&expected), "{text}");
}

// TC-006, AMB-005: results are shown, truncated like samples, while no turn printed.
#[test]
fn tool_call_results_are_samples() {
    let fixture = Fixture::new();
    let turns =
        vec![ok(1, "...", Value::Nil).with_tool_calls(vec![call("list", vec![], ints(1..=10))])];
    let text = SingleUserCoalesced::default()
        .to_messages(&turns, &[], &fixture.opts(5))
        .messages[1]
        .content
        .clone();
    assert!(
        text.contains(";   list() -> [1 2 3 ...] (10 items, showing first 3)\n"),
        "{text}"
    );
}

// FMT-013: "No tool calls made" only when no turn made one; a failed turn's calls make it false.
#[test]
fn no_tool_calls_is_only_said_when_true() {
    let fixture = Fixture::new();
    let render = |turns: &[Turn]| {
        SingleUserCoalesced::default()
            .to_messages(turns, &[], &fixture.opts(5))
            .messages[1]
            .content
            .clone()
    };
    let quiet_fail = failed(1, "(x)", TurnError::new("k", "m"));
    assert!(render(&[quiet_fail]).contains(";; No tool calls made"));
    let calling_fail = failed(1, "(x)", TurnError::new("k", "m")).with_tool_calls(vec![call(
        "send-email",
        vec![s("hi")],
        Value::Nil,
    )]);
    let text = render(&[calling_fail]);
    assert!(!text.contains("No tool calls made"), "{text}");
    assert!(!text.contains("Tool calls made"), "{text}");
}

// TRN-006, TRN-009, TRN-010: the limit counts println calls (a multi-line entry is one), and the
// oldest entries go first.
#[test]
fn println_limit_counts_calls_not_lines() {
    let fixture = Fixture::new();
    let turns = vec![
        ok(1, "...", Value::Nil).with_prints(vec!["one".into(), "two\nlines".into()]),
        ok(2, "...", Value::Nil).with_prints(vec!["three".into()]),
    ];
    let opts = fixture.opts(5).with_limits(RenderLimits {
        println_limit: 2,
        ..RenderLimits::default()
    });
    let rendered = SingleUserCoalesced::default().to_messages(&turns, &[], &opts);
    assert!(
        rendered.messages[1]
            .content
            .contains(";; Output:\ntwo\nlines\nthree\n\n"),
        "{}",
        rendered.messages[1].content
    );
    assert_eq!(
        (
            rendered.stats.prints_total,
            rendered.stats.prints_shown,
            rendered.stats.prints_dropped
        ),
        (3, 2, 1)
    );
}

#[test]
fn rolling_window_wider_than_the_history_is_the_full_history() {
    let fixture = Fixture::new();
    let history = history();
    let full = Uncompressed.to_messages(&history, memory_of(&history), &fixture.opts(8));
    let wide = RollingWindow {
        window: 10,
        failed_turns: FailedTurns::All,
    }
    .to_messages(&history, memory_of(&history), &fixture.opts(8));
    assert_eq!(wide.messages, full.messages);
    assert_eq!(wide.stats.turns_compressed, 0);
}

#[test]
fn activation_by_size() {
    let fixture = Fixture::new();
    let history = history();
    let full = Uncompressed.to_messages(&history, memory_of(&history), &fixture.opts(8));
    let tokens = full.stats.estimated_tokens;
    for (threshold, compressed) in [(tokens, false), (tokens - 1, true)] {
        let config = CompressionConfig::parse(&format!(
            "single-user-coalesced?activate_above_tokens={threshold}"
        ))
        .expect("valid");
        let rendered = config
            .build()
            .to_messages(&history, memory_of(&history), &fixture.opts(8));
        assert_eq!(
            rendered.stats.compressed, compressed,
            "threshold {threshold}"
        );
        assert_eq!(rendered.stats.uncompressed_estimated_tokens, tokens);
    }
}

// Stats compare against the uncompressed rendering of the same turns.
#[test]
fn stats_measure_against_the_full_history() {
    let fixture = Fixture::new();
    let history = history();
    let full = Uncompressed.to_messages(&history, memory_of(&history), &fixture.opts(8));
    let chars: usize = full
        .messages
        .iter()
        .map(|m| m.content.chars().count())
        .sum();
    assert_eq!(full.stats.chars, chars);
    assert_eq!(full.stats.uncompressed_chars, chars);
    for strategy in strategies() {
        let rendered = strategy.to_messages(&history, memory_of(&history), &fixture.opts(8));
        let stats = &rendered.stats;
        assert_eq!(stats.uncompressed_chars, chars, "{}", strategy.name());
        assert_eq!(stats.messages, rendered.messages.len());
        assert_eq!(stats.turns, history.len());
        assert_eq!(stats.tool_calls_total, 3);
        assert_eq!(stats.prints_total, 2);
        assert_eq!(
            stats.tool_calls_shown + stats.tool_calls_dropped,
            stats.tool_calls_total
        );
        assert_eq!(stats.failed_turns_shown + stats.failed_turns_collapsed, 1);
    }
}

// API-001, API-002, API-003, API-006, ARC-005 (the default strategy): every accepted form
// normalizes to a strategy and options.
#[test]
fn compression_settings_normalize() {
    let off = CompressionConfig::normalize(None);
    assert_eq!(off.strategy, None);
    assert_eq!(off.options, CompressionOptions::default());
    assert_eq!(CompressionConfig::normalize(Some(false.into())), off);
    let on = CompressionConfig::normalize(Some(true.into()));
    assert_eq!(on.strategy, Some(StrategyKind::AppendCompact));
    assert_eq!(on.options, CompressionOptions::default());
    let kind = CompressionConfig::normalize(Some(StrategyKind::RollingWindow.into()));
    assert_eq!(kind.strategy, Some(StrategyKind::RollingWindow));
    assert_eq!(kind.options.window, 2);
    let options = CompressionOptions {
        limits: RenderLimits {
            println_limit: 10,
            ..RenderLimits::default()
        },
        ..CompressionOptions::default()
    };
    let custom = CompressionConfig::normalize(Some(CompressionSetting::from((
        StrategyKind::SingleUserCoalesced,
        options,
    ))));
    assert_eq!(custom.options.limits.println_limit, 10);
    assert_eq!(custom.options.limits.tool_call_limit, 20);
    assert_eq!(CompressionConfig::default(), off);
    assert_eq!(off.build().name(), "uncompressed");
    assert_eq!(on.build().name(), "append-compact");
}

#[test]
fn compression_specs_parse_and_print_back() {
    let cases = [
        ("", "off"),
        ("off", "off"),
        ("false", "off"),
        ("none", "off"),
        ("true", "append-compact"),
        ("on", "append-compact"),
        (
            "append-compact?pricing=anthropic",
            "append-compact?pricing=anthropic",
        ),
        (
            "append-compact?compact_above_tokens=8000&pricing=openai&println_limit=5",
            "append-compact?println_limit=5&pricing=openai&compact_above_tokens=8000",
        ),
        ("aggressive", "aggressive"),
        (
            "single-user-coalesced?println_limit=10",
            "single-user-coalesced?println_limit=10",
        ),
        (
            " rolling-window?failed_turns=last&window=3&tool_call_limit=5 ",
            "rolling-window?tool_call_limit=5&failed_turns=last&window=3",
        ),
        ("rolling-window?window=2", "rolling-window"),
        (
            "per-turn-summary?activate_after_turns=3&activate_above_tokens=2000",
            "per-turn-summary?activate_after_turns=3&activate_above_tokens=2000",
        ),
    ];
    for (spec, canonical) in cases {
        let config = CompressionConfig::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(config.to_string(), canonical, "{spec}");
        assert_eq!(CompressionConfig::parse(canonical), Ok(config));
    }
    let config = CompressionConfig::parse("rolling-window?window=3&failed_turns=unrecovered")
        .expect("valid");
    assert_eq!(config.options.window, 3);
    assert_eq!(config.options.failed_turns, Some(FailedTurns::Unrecovered));
}

#[test]
fn bad_compression_specs_say_what_is_accepted() {
    let cases = [
        (
            "fast",
            "unknown compression strategy `fast`: expected off, on, or one of uncompressed, \
             append-compact, single-user-coalesced, rolling-window, per-turn-summary, aggressive",
        ),
        (
            "append-compact?failed_turns=last",
            "option `failed_turns` does not apply to append-compact, which keeps every failed \
             turn until it is folded into a summary",
        ),
        (
            "single-user-coalesced?pricing=openai",
            "option `pricing` applies only to append-compact, not single-user-coalesced",
        ),
        (
            "append-compact?pricing=cheap",
            "option `pricing` must be anthropic, openai or ideal, got `cheap`",
        ),
        (
            "aggressive?colour=red",
            "unknown option `colour` for aggressive: expected one of println_limit, \
             tool_call_limit, sample_limit, sample_printable_limit, arg_limit, \
             arg_printable_limit, output_char_limit, data_inline_chars, tool_result_chars, failed_turns, \
             activate_after_turns, \
             activate_above_tokens",
        ),
        (
            "single-user-coalesced?window=2",
            "option `window` applies only to rolling-window, not single-user-coalesced",
        ),
        (
            "uncompressed?failed_turns=last",
            "option `failed_turns` does not apply to uncompressed, which never compresses",
        ),
        (
            "aggressive?println_limit=ten",
            "option `println_limit` must be a whole number, got `ten`",
        ),
        (
            "aggressive?failed_turns=some",
            "option `failed_turns` must be all, unrecovered, last or kept, got `some`",
        ),
        (
            "aggressive?println_limit=1&println_limit=2",
            "option `println_limit` is given twice",
        ),
        (
            "aggressive?println_limit",
            "expected key=value in compression spec, got `println_limit`",
        ),
        (
            "on?println_limit=3",
            "`on` takes no options: name a strategy to set options, e.g. \
             `append-compact?println_limit=10`",
        ),
    ];
    for (spec, message) in cases {
        assert_eq!(
            CompressionConfig::parse(spec).map_err(|e| e.to_string()),
            Err(message.to_string()),
            "{spec}"
        );
    }
}

#[test]
fn compression_configs_read_from_json_in_every_form() {
    let read = |json: &str| serde_json::from_str::<CompressionConfig>(json);
    assert_eq!(read("null").unwrap(), CompressionConfig::default());
    assert_eq!(read("false").unwrap(), CompressionConfig::default());
    assert_eq!(
        read("true").unwrap().strategy,
        Some(StrategyKind::AppendCompact)
    );
    let table =
        read(r#"{"strategy": "rolling-window", "window": 4, "failed_turns": "last"}"#).unwrap();
    assert_eq!(
        table.to_string(),
        "rolling-window?failed_turns=last&window=4"
    );
    assert_eq!(
        read(r#""aggressive?println_limit=3""#).unwrap(),
        CompressionConfig::parse("aggressive?println_limit=3").unwrap()
    );
    assert!(
        read(r#"{"strategy": "aggressive", "window": 4}"#)
            .unwrap_err()
            .to_string()
            .contains("option `window` applies only to rolling-window")
    );
    // Written back as `false` or the spec string, and read back the same.
    for config in [table, CompressionConfig::default()] {
        let json = serde_json::to_string(&config).unwrap();
        assert_eq!(read(&json).unwrap(), config, "{json}");
    }
    assert_eq!(
        serde_json::to_string(&CompressionConfig::default()).unwrap(),
        "false"
    );
}

// ERR-003: the error arrives in the user message right after the failed program.
#[test]
fn errors_follow_their_program() {
    let fixture = Fixture::new();
    let turns = [turn1(), turn2(), turn3()];
    for strategy in strategies() {
        let rendered = strategy.to_messages(&turns, memory_of(&turns), &fixture.opts(8));
        let at = rendered
            .messages
            .iter()
            .position(|m| m.role == Role::Assistant && m.content.contains("in-stock? electronics"))
            .unwrap_or_else(|| panic!("{} dropped the failed program", strategy.name()));
        let reply = &rendered.messages[at + 1];
        assert_eq!(reply.role, Role::User);
        assert!(
            reply
                .content
                .starts_with("Error: 1:26: in-stock? is not defined")
        );
        // Roles alternate after the system message, as chat APIs require.
        let roles: Vec<Role> = rendered.messages[1..].iter().map(|m| m.role).collect();
        for (i, role) in roles.iter().enumerate() {
            let expected = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            assert_eq!(*role, expected, "{}", strategy.name());
        }
        assert_eq!(
            user_contents(&rendered.messages).len(),
            rendered.messages.len() / 2
        );
    }
}

/// A long run with side effects in every turn and a failure every fifth turn, the failures
/// after a tool call.
fn long_run(turns: u32) -> Vec<Turn> {
    (1..=turns)
        .map(|n| {
            let calls = vec![
                call(
                    "get-customer",
                    vec![s(&format!("c-{n:02}"))],
                    map(&[("id", s("x"))]),
                ),
                call(
                    "send-email",
                    vec![s(&format!("c-{n:02}@example.com")), s("Refund")],
                    map(&[("status", s("queued"))]),
                ),
            ];
            let prints = vec![format!("customer {n} done")];
            if n % 5 == 0 {
                failed(
                    n,
                    "(tool/send-email ...) (/ 1 0)",
                    TurnError::new("arithmetic", "division by zero"),
                )
                .with_tool_calls(calls)
                .with_prints(prints)
            } else {
                ok(n, "(tool/send-email ...)", Value::Nil)
                    .with_tool_calls(calls)
                    .with_prints(prints)
                    .with_memory(vec![value_def(&format!("done-{n}"), Value::Int(n.into()))])
            }
        })
        .collect()
}

// Side effects are never hidden: every tool call of every earlier turn, failed turns included,
// is listed with its arguments in every later request of the default strategy, however long
// the run, however often it compacts and however small the limits.
#[test]
fn the_default_strategy_never_forgets_a_tool_call() {
    let fixture = Fixture::new();
    let run = long_run(40);
    let tiny = RenderLimits {
        println_limit: 1,
        tool_call_limit: 1,
        ..RenderLimits::default()
    };
    for strategy in [
        AppendCompact::default(),
        AppendCompact {
            compact_above_tokens: Some(1),
            ..AppendCompact::default()
        },
    ] {
        for limits in [RenderLimits::default(), tiny] {
            for n in 0..=run.len() {
                let turns = &run[..n];
                let opts = fixture.opts(60).with_limits(limits);
                let rendered = strategy.to_messages(turns, memory_of(turns), &opts);
                let text: String = rendered
                    .messages
                    .iter()
                    .map(|m| m.content.as_str())
                    .collect();
                for turn in turns {
                    let number = turn.number();
                    let email = format!("send-email(\"c-{number:02}@example.com\" \"Refund\")");
                    assert!(
                        text.contains(&email),
                        "{strategy:?} after {n} turns lost {email}:\n{text}"
                    );
                }
                assert_eq!(rendered.stats.tool_calls_dropped, 0);
            }
        }
    }
}

// One last word: every request of every strategy has exactly one turn count, at its end, and
// never ends with an error a later turn recovered from.
#[test]
fn one_turn_count_and_no_stale_error() {
    let fixture = Fixture::new();
    let run = long_run(12);
    for strategy in strategies() {
        for n in 0..=run.len() {
            let turns = &run[..n];
            let rendered = strategy.to_messages(turns, memory_of(turns), &fixture.opts(20));
            let counts: usize = rendered
                .messages
                .iter()
                .map(|m| m.content.matches("Turns left: ").count())
                .sum();
            assert_eq!(counts, 1, "{} after {n} turns", strategy.name());
            let last = &rendered.messages.last().expect("messages").content;
            assert!(last.ends_with(&format!("Turns left: {}", 20 - n)), "{last}");
            let ends_with_error = last.starts_with("Error: ");
            let last_failed = turns.last().is_some_and(|t| !t.is_success());
            assert!(
                !ends_with_error || last_failed,
                "{} after {n} turns ends with an old error:\n{last}",
                strategy.name()
            );
        }
    }
}

// The full history and the default strategy between compactions only grow: everything before
// a request's last cache point is sent again, unchanged, by the next request.
#[test]
fn growing_renderings_repeat_their_stable_part() {
    let fixture = Fixture::new();
    let run = long_run(10);
    for strategy in [
        Box::new(Uncompressed) as Box<dyn Compression>,
        Box::new(AppendCompact::default()),
        Box::new(PerTurnSummary::default()),
    ] {
        let requests: Vec<_> = (0..=run.len())
            .map(|n| {
                let turns = &run[..n];
                strategy.to_messages(turns, memory_of(turns), &fixture.opts(20))
            })
            .collect();
        for pair in requests.windows(2) {
            let (before, after) = (&pair[0], &pair[1]);
            if after.messages.len() != before.messages.len() + 2 {
                assert_eq!(strategy.name(), "append-compact");
                continue; // a compaction rewrites the summary once
            }
            let point = before.cache_points.last().expect("a stable part");
            for i in 0..point.message_index {
                assert_eq!(before.messages[i], after.messages[i], "{}", strategy.name());
            }
            let stable = &before.messages[point.message_index].content[..point.byte_offset];
            assert_eq!(
                &after.messages[point.message_index].content[..point.byte_offset],
                stable,
                "{}",
                strategy.name()
            );
        }
    }
}
