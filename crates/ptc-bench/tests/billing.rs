//! What the default compression strategy costs against the full history, over the committed
//! replays (`benchmarks/transcripts/`): every run is replayed under `off`, `on` and
//! `append-compact?pricing=openai` (what `on` does against an OpenAI model), and the modelled
//! bills are compared. The figures `docs/compression.md` gives for the 24-turn mission are the
//! ones computed here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pretty_assertions::assert_eq;
use ptc_agent::ReplayLlm;
use ptc_bench::mission::Mission;
use ptc_bench::tools::CallLog;
use ptc_bench::{EvalOptions, RunRecord, evaluate};
use ptc_compression::cost::token_count_text;
use ptc_compression::{
    AppendCompact, CompressionConfig, HeuristicTokenizer, PricingKind, RenderOptions, Uncompressed,
    compare_with_full_history, price, run_requests,
};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every committed transcript: (mission, file).
fn transcripts() -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    let root = repo().join("benchmarks/transcripts");
    for config in std::fs::read_dir(&root).unwrap().filter_map(Result::ok) {
        if !config.path().is_dir() {
            continue;
        }
        for mission in std::fs::read_dir(config.path())
            .unwrap()
            .filter_map(Result::ok)
        {
            if !mission.path().is_dir() {
                continue;
            }
            for run in std::fs::read_dir(mission.path())
                .unwrap()
                .filter_map(Result::ok)
            {
                let name = mission.file_name().to_string_lossy().into_owned();
                found.push((name, run.path()));
            }
        }
    }
    found.sort();
    found
}

/// The run replayed under the full history, the default, and the default as against OpenAI.
fn replay(mission: &str, file: &Path, out: &Path) -> [RunRecord; 3] {
    let report = evaluate(&EvalOptions {
        missions_dir: repo().join("benchmarks/missions"),
        missions: vec![mission.to_string()],
        compression: vec![
            "off".into(),
            "on".into(),
            "append-compact?pricing=openai".into(),
        ],
        out_dir: out.to_path_buf(),
        ..EvalOptions::new(format!("replay:{}", file.display()))
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
    for (mission, file) in transcripts() {
        let [off, on, openai] = replay(&mission, &file, &out);
        let name = file.display().to_string();
        assert_eq!(
            (on.passed, openai.passed),
            (off.passed, off.passed),
            "{name}"
        );
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
    assert_eq!(checked, 27, "runs of two turns or more");
    let _ = std::fs::remove_dir_all(out);
}

/// The 24-turn mission replayed (the same replies whatever the strategy, so every strategy can be
/// priced on the same turns).
fn long_mission() -> ptc_turn::Step {
    let dir = repo().join("benchmarks/missions/refund-queue");
    let mission = Mission::load(&dir).unwrap();
    let llm = ReplayLlm::from_file(repo().join("benchmarks/transcripts/off/refund-queue/1.jsonl"))
        .unwrap();
    let log = CallLog::new();
    let agent = mission.builder(Arc::new(llm), &log).build().unwrap();
    let step = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(agent.run())
        .unwrap();
    assert!(step.is_success());
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

// The 24-turn mission: the default's bill against the full history's and against the best
// compaction schedule in hindsight, under each profile (the rule deciding with that profile's
// pricing), exactly as docs/compression.md gives them. The rule stays within twice what
// knowing the future would pay.
#[test]
fn the_long_mission_bill_is_the_documented_one() {
    let step = long_mission();
    let opts = RenderOptions::from_task(&step.task);
    let mut table = String::from(
        "| pricing | full history | append-compact | best schedule in hindsight | append-compact / full history | best / full history | append-compact / best |\n\
         |---|--:|--:|--:|--:|--:|--:|\n",
    );
    for kind in PricingKind::ALL {
        let profile = kind.profile();
        let rule = AppendCompact {
            pricing: kind,
            compact_above_tokens: None,
        };
        let bill = |requests: Vec<ptc_compression::PromptRequest>| {
            price(&requests, &profile, &HeuristicTokenizer).billed()
        };
        let full = bill(run_requests(&Uncompressed, &step.turns, &opts, false));
        let ours = bill(run_requests(&rule, &step.turns, &opts, false));
        let (_, best) = rule.cheapest_schedule(&step.turns, &opts, &profile, &HeuristicTokenizer);
        let best = best.billed();
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
    assert_documented(&table);
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
