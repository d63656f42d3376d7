//! What the default compression strategy costs against the full history and against the best
//! compaction schedule in hindsight, over the committed replays (`benchmarks/transcripts/`,
//! `benchmarks/transcripts-*/` recorded from real models, and the refund audit of `tests/fixtures/`), and what
//! its last request still shows of what the final turn needs. The figures
//! `docs/compression.md` gives for the 24-turn missions are the ones computed here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pretty_assertions::assert_eq;
use ptc_agent::ReplayLlm;
use ptc_bench::mission::Mission;
use ptc_bench::tools::CallLog;
use ptc_bench::{EvalOptions, RunRecord, evaluate};
use ptc_compression::cost::token_count_text;
use ptc_compression::{
    AppendCompact, Compression, CompressionConfig, HeuristicTokenizer, PricingKind, RenderOptions,
    Uncompressed, compare_schedules, compare_with_full_history, run_requests, transcript,
};
use ptc_turn::{Step, Turn};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A committed run: the directory of its mission, the mission, and its transcript.
struct Replay {
    missions: PathBuf,
    mission: String,
    file: PathBuf,
}

/// The committed runs under `transcripts` (laid out as `CONFIG/MISSION/RUN.jsonl`) of the
/// missions in `missions`.
fn replays_in(missions: PathBuf, transcripts: PathBuf) -> Vec<Replay> {
    let mut found = Vec::new();
    let dirs = |dir: &Path| -> Vec<std::fs::DirEntry> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        entries
    };
    for config in dirs(&transcripts) {
        for mission in dirs(&config.path()) {
            let mut runs: Vec<PathBuf> = std::fs::read_dir(mission.path())
                .unwrap()
                .filter_map(Result::ok)
                .map(|e| e.path())
                .collect();
            runs.sort();
            for file in runs {
                found.push(Replay {
                    missions: missions.clone(),
                    mission: mission.file_name().to_string_lossy().into_owned(),
                    file,
                });
            }
        }
    }
    found
}

/// The hand-written runs: those of the benchmark and the fixtures' refund audit.
fn transcripts() -> Vec<Replay> {
    let mut found = replays_in(
        repo().join("benchmarks/missions"),
        repo().join("benchmarks/transcripts"),
    );
    found.extend(replays_in(
        fixtures().join("missions"),
        fixtures().join("transcripts"),
    ));
    found
}

/// Every committed run: the hand-written ones and those recorded from a real model.
fn every_replay() -> Vec<Replay> {
    let mut found = transcripts();
    for recorded in [
        "transcripts-smollm2-135m",
        "transcripts-qwen2.5-coder-1.5b-q4_k_m",
    ] {
        found.extend(replays_in(
            repo().join("benchmarks/missions"),
            repo().join("benchmarks").join(recorded),
        ));
    }
    found
}

/// The run replayed under the full history, the default, and the default as against OpenAI.
fn replay(run: &Replay, out: &Path) -> [RunRecord; 3] {
    let report = evaluate(&EvalOptions {
        missions_dir: run.missions.clone(),
        missions: vec![run.mission.clone()],
        compression: vec![
            "off".into(),
            "on".into(),
            "append-compact?pricing=openai".into(),
        ],
        out_dir: out.to_path_buf(),
        ..EvalOptions::new(format!("replay:{}", run.file.display()))
    })
    .unwrap();
    let [off, on, openai] = <[RunRecord; 3]>::try_from(report.runs).unwrap();
    [off, on, openai]
}

// On every committed run of two turns or more, the default strategy bills no more than the full
// history: deciding as it does when the provider is unknown (with anthropic's pricing), under
// every profile; deciding as it does against OpenAI, under the
// openai profile. The replies replayed under it get the same verdict.
#[test]
fn the_default_never_costs_more_than_the_full_history() {
    let out = std::env::temp_dir().join(format!("ptc-bench-billing-{}", std::process::id()));
    let mut checked = 0;
    for run in transcripts() {
        let [off, on, openai] = replay(&run, &out);
        let name = run.file.display().to_string();
        assert_eq!(
            (on.passed, openai.passed),
            (off.passed, off.passed),
            "{name}"
        );
        if run.mission == "refund-audit" {
            assert!(off.passed, "{name}: {:?}", off.reasons);
        }
        assert_eq!((on.turns, openai.turns), (off.turns, off.turns), "{name}");
        if off.turns < 2 {
            continue;
        }
        checked += 1;
        for (variant, profile) in [
            (&on, PricingKind::Anthropic),
            (&on, PricingKind::OpenAi),
            (&on, PricingKind::Ideal),
            (&openai, PricingKind::OpenAi),
        ] {
            assert!(
                variant.billed(profile) <= off.billed(profile),
                "{name}: {} bills {} under {profile}, the full history {}",
                variant.config,
                variant.billed(profile),
                off.billed(profile)
            );
        }
    }
    assert_eq!(checked, 28, "runs of two turns or more");
    let _ = std::fs::remove_dir_all(out);
}

/// A committed run replayed without compression: the same replies whatever the strategy, so
/// every strategy can be priced on the same turns.
fn replay_step(missions: &Path, mission: &str, file: &Path) -> Step {
    let mission = Mission::load(&missions.join(mission)).unwrap();
    let llm = ReplayLlm::from_file(file).unwrap();
    let log = CallLog::new();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let mcp = mission.start_mcp(&log, "billing/1").await.unwrap();
        let mut builder = mission.builder(Arc::new(llm), &log);
        if let Some(mcp) = &mcp {
            for tool in &mcp.tools {
                builder = builder.tool_arc(tool.clone());
            }
        }
        let step = builder.build().unwrap().run().await.unwrap();
        if let Some(mcp) = mcp {
            mcp.servers.close().await;
        }
        step
    })
}

/// The 24-turn mission of the benchmark, replayed.
fn long_mission() -> ptc_turn::Step {
    let step = replay_step(
        &repo().join("benchmarks/missions"),
        "refund-queue",
        &repo().join("benchmarks/transcripts/off/refund-queue/1.jsonl"),
    );
    assert!(step.is_success());
    assert_eq!(step.turns.len(), 24);
    step
}

/// The 24-turn refund audit of the fixtures, replayed: the policy it prints in turn 2 fixes the
/// report it returns in turn 24.
fn refund_audit() -> Step {
    let step = replay_step(
        &fixtures().join("missions"),
        "refund-audit",
        &fixtures().join("transcripts/off/refund-audit/1.jsonl"),
    );
    assert!(step.is_success(), "{:?}", step.outcome);
    assert_eq!(step.turns.len(), 24);
    step
}

fn assert_documented(table: &str) {
    let doc = std::fs::read_to_string(repo().join("docs/compression.md")).unwrap();
    assert!(
        doc.contains(table),
        "docs/compression.md should hold this table:\n{table}"
    );
}

/// The default's bill on `step` against the full history's and against the best compaction
/// schedule in hindsight, under each profile (the rule deciding with that profile's pricing), as
/// a table of docs/compression.md. The rule stays within twice what knowing the future would pay.
fn bill_table(step: &Step) -> String {
    let opts = RenderOptions::from_task(&step.task);
    let mut table = String::from(
        "| pricing | full history | append-compact | best schedule in hindsight | append-compact / full history | best / full history | append-compact / best |\n\
         |---|--:|--:|--:|--:|--:|--:|\n",
    );
    for kind in PricingKind::ALL {
        let comparison = compare_schedules(
            &step.turns,
            &opts,
            false,
            &kind.profile(),
            &HeuristicTokenizer,
        );
        let (full, ours, best) = (
            comparison.full_history.billed(),
            comparison.default.billed(),
            comparison.best.billed(),
        );
        assert!(ours <= 2.0 * best, "{kind}: {ours} against {best}");
        assert!(best <= ours, "{kind}: hindsight is never worse");
        table.push_str(&format!(
            "| {kind} | {} | {} | {} | {:.2} | {:.2} | {:.2} |\n",
            token_count_text(full),
            token_count_text(ours),
            token_count_text(best),
            ours / full,
            best / full,
            ours / best,
        ));
    }
    table
}

// The two 24-turn replays: the default's bill against the full history's and the best schedule
// in hindsight, exactly as docs/compression.md gives them.
#[test]
fn the_long_mission_bills_are_the_documented_ones() {
    assert_documented(&bill_table(&long_mission()));
    assert_documented(&bill_table(&refund_audit()));
}

// Every strategy priced on the requests it would send for the 24 turns of the long mission, as
// a multiple of the full history's bill under each profile (`on` deciding with that profile's
// pricing, as it does against that provider), with the tool calls its last request no longer
// shows, exactly as docs/compression.md gives them.
#[test]
fn every_strategy_on_the_long_mission_is_documented() {
    let step = long_mission();
    let mut table = String::from(
        "| strategy | anthropic | openai | ideal | tool calls dropped by the last request |\n\
         |---|--:|--:|--:|--:|\n",
    );
    for spec in [
        "on",
        "single-user-coalesced",
        "rolling-window",
        "per-turn-summary",
        "aggressive",
    ] {
        let config = CompressionConfig::parse(spec).unwrap();
        let opts = RenderOptions::from_task(&step.task).with_limits(config.limits());
        let mut row = format!("| `{spec}` |");
        let mut dropped = Vec::new();
        for kind in PricingKind::ALL {
            let profile = kind.profile();
            let strategy = config.build_for(Some(kind));
            let comparison = compare_with_full_history(
                &*strategy,
                &step.turns,
                &opts,
                false,
                &profile,
                &HeuristicTokenizer,
            );
            row.push_str(&format!(" {:.2} |", comparison.ratio().unwrap()));
            let last = strategy.to_messages(&step.turns, step.turns[23].memory(), &opts);
            dropped.push(last.stats.tool_calls_dropped);
        }
        dropped.dedup();
        let [dropped] = dropped[..] else {
            panic!("{spec}: the pricing changes what is dropped: {dropped:?}")
        };
        row.push_str(&format!(" {dropped} of 54 |\n"));
        table.push_str(&row);
    }
    assert_documented(&table);
}

// Side effects are never hidden on the long mission: every request of the default, deciding
// with each profile's pricing (it compacts against OpenAI), lists every tool call made before
// it with its arguments, the refund before the failure included.
#[test]
fn the_long_mission_never_hides_a_tool_call() {
    let step = long_mission();
    let opts = RenderOptions::from_task(&step.task);
    for kind in PricingKind::ALL {
        let rule = AppendCompact {
            pricing: kind,
            compact_above_tokens: None,
        };
        let schedule = rule.schedule(&step.turns, &opts);
        let requests = run_requests(&rule, &step.turns, &opts, true);
        for (taken, request) in requests.iter().enumerate() {
            let text: String = request
                .messages
                .iter()
                .map(|m| m.content.as_str())
                .collect();
            for turn in &step.turns[..taken] {
                for call in turn.tool_calls() {
                    // Every call of this mission names its order or its customer first.
                    let first = call.args[0].as_str().expect("a string argument");
                    let listed = format!(";   {}(\"{first}\"", call.name);
                    assert!(
                        text.contains(&listed),
                        "{kind}: request {} (folding {} turns) lost {listed} of turn {}",
                        taken + 1,
                        schedule[taken],
                        turn.number()
                    );
                }
            }
        }
        if kind == PricingKind::OpenAi {
            assert!(schedule.iter().any(|&folded| folded > 0), "{schedule:?}");
        }
    }
}

/// The profiles the targets are checked under: the two providers' own.
const PROVIDERS: [PricingKind; 2] = [PricingKind::Anthropic, PricingKind::OpenAi];

// On every committed run of two turns or more (hand-written or recorded from a real model), the
// default strategy, deciding with each provider's pricing, bills at most 1.05 times the best
// compaction schedule in hindsight and no more than the full history, under that provider's
// profile.
#[test]
fn the_default_stays_near_the_best_schedule_on_every_committed_run() {
    let mut checked = 0;
    let mut worst = (0.0f64, String::new());
    for run in every_replay() {
        let step = replay_step(&run.missions, &run.mission, &run.file);
        if step.turns.len() < 2 {
            continue;
        }
        checked += 1;
        let opts = RenderOptions::from_task(&step.task);
        for kind in PROVIDERS {
            let comparison = compare_schedules(
                &step.turns,
                &opts,
                false,
                &kind.profile(),
                &HeuristicTokenizer,
            );
            let name = format!("{} under {kind}", run.file.display());
            let (ours, best, full) = (
                comparison.default.billed(),
                comparison.best.billed(),
                comparison.full_history.billed(),
            );
            assert!(
                ours <= full,
                "{name}: the default {ours}, the full history {full}"
            );
            assert!(
                ours <= 1.05 * best,
                "{name}: the default {ours}, the best {best}"
            );
            if ours / best > worst.0 {
                worst = (ours / best, name);
            }
        }
    }
    assert_eq!(checked, 98, "runs of two turns or more");
    assert!(worst.0 <= 1.05, "{worst:?}");
    eprintln!("the default over the best schedule, at worst: {worst:?}");
}

/// What the final turn of a run needs, found in the request that turn answered.
#[derive(Debug, Clone, PartialEq)]
enum Found {
    /// The request shows the text.
    Shown,
    /// The request points to this definition, which holds the text.
    PointedTo(&'static str),
    Missing,
}

/// How the last request of `step` under the default (deciding with `kind`'s pricing) shows
/// each of `facts`: as text, or through a pointer to one of `holders` whose value holds it.
fn found_in_last_request(
    step: &Step,
    kind: PricingKind,
    facts: &[&str],
    holders: &[&'static str],
) -> Vec<(String, Found)> {
    let opts = RenderOptions::from_task(&step.task);
    let rule = AppendCompact {
        pricing: kind,
        compact_above_tokens: None,
    };
    let before: &[Turn] = &step.turns[..step.turns.len() - 1];
    let memory = before.last().map_or(&[][..], Turn::memory);
    let text = transcript(&rule.to_messages(before, memory, &opts).messages);
    facts
        .iter()
        .map(|fact| {
            let found = if text.contains(fact) {
                Found::Shown
            } else {
                holders
                    .iter()
                    .find(|name| {
                        text.contains(&format!(" printed {name} in full ("))
                            && memory.iter().any(|def| {
                                def.name == **name
                                    && def.value.as_str().is_some_and(|v| v.contains(fact))
                            })
                    })
                    .map_or(Found::Missing, |name| Found::PointedTo(name))
            };
            (fact.to_string(), found)
        })
        .collect()
}

// The refund audit prints its policy in turn 2 and returns, in turn 24, the report whose
// format the policy's last section fixes. The request turn 24 answers must show that format or
// point to `policy`, which holds it: under the full history it is shown; under the default it
// is shown too at Anthropic's prices, and compacted into a pointer with the policy's size at
// OpenAI's.
#[test]
fn the_refund_audit_keeps_the_report_format_within_reach() {
    let step = refund_audit();
    let facts = [
        ":audit-id - always the string \"RA-2024-06\"",
        ":total - the sum of all amounts refunded, rounded to two decimals",
        ":signed-off-by - always the string \"refund-desk\"",
        "the finance import reads exactly these five keys",
    ];
    for (kind, form) in [
        // Reads are cheap at Anthropic: the turns are still carried as they happened, the
        // policy's print among them.
        (PricingKind::Anthropic, Found::Shown),
        // At OpenAI's read price the run has been compacted, and the print became a pointer.
        (PricingKind::OpenAi, Found::PointedTo("policy")),
    ] {
        let found = found_in_last_request(&step, kind, &facts, &["policy"]);
        let expected: Vec<(String, Found)> = facts
            .iter()
            .map(|f| (f.to_string(), form.clone()))
            .collect();
        assert_eq!(found, expected, "{kind}");
    }
    let opts = RenderOptions::from_task(&step.task);
    let before = &step.turns[..23];
    let full = transcript(
        &Uncompressed
            .to_messages(before, before[22].memory(), &opts)
            .messages,
    );
    for fact in facts {
        assert!(full.contains(fact), "the full history shows {fact}");
    }
}

// In the committed runs where the answer rests on something printed early, the request the
// final turn answers still shows it under the default, under both providers' pricing: the
// company's current name in knowledge-hops (printed in turn 4 of 9), and in refund-queue the
// refund of the turn that failed (turn 12), which the final report must count.
#[test]
fn the_last_requests_show_what_the_final_turns_need() {
    let hops = replay_step(
        &repo().join("benchmarks/missions"),
        "knowledge-hops",
        &repo().join("benchmarks/transcripts/off/knowledge-hops/1.jsonl"),
    );
    let queue = long_mission();
    for kind in PROVIDERS {
        for (step, facts) in [
            (
                &hops,
                &[":merged-into Northwind Group", ":city Tallinn"][..],
            ),
            (&queue, &["refund(\"A-2012\" 48.1)"][..]),
        ] {
            let found = found_in_last_request(step, kind, facts, &[]);
            let expected: Vec<(String, Found)> = facts
                .iter()
                .map(|f| (f.to_string(), Found::Shown))
                .collect();
            assert_eq!(found, expected, "{kind}");
        }
    }
}
