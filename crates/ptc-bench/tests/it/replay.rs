//! The harness end to end, offline: the committed transcripts under `benchmarks/transcripts/`
//! (hand-written replies, not recorded from a real model) replayed against the missions, with
//! their exact verdicts and the report's key numbers; then the transcripts the replay wrote,
//! replayed again, must give the same records.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use ptc_bench::{EvalOptions, Report, RunRecord, evaluate};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh output directory for one test.
fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptc-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn options(llm: String, out: &Path) -> EvalOptions {
    // A mission uses an MCP server from npm.
    ptc_mcp_testkit::ensure_installed().unwrap_or_else(|e| panic!("{e}"));
    EvalOptions {
        missions_dir: repo().join("benchmarks/missions"),
        out_dir: out.to_path_buf(),
        ..EvalOptions::new(llm)
    }
}

/// One line per run: config, mission, run, verdict, outcome, turns, input and output tokens.
fn rows(report: &Report) -> Vec<String> {
    report
        .runs
        .iter()
        .map(|r| {
            let verdict = if r.passed { "pass" } else { "FAIL" };
            format!(
                "{} {} {} {verdict} {} {} {} {}",
                r.config, r.mission, r.run, r.outcome, r.turns, r.input_tokens, r.output_tokens
            )
        })
        .collect()
}

/// The lines of a table written aligned in the source, with their runs of spaces made one.
fn table(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect()
}

/// The evaluation of the missions against `replay-dir:DIR`, written to `out`.
fn replay_options(dir: &Path, out: &Path) -> EvalOptions {
    options(format!("replay-dir:{}", dir.display()), out)
}

/// A replay of the transcripts under `benchmarks/<transcripts>`: the report, where it was
/// written, and its REPORT.md as a replay from the repository's root writes it.
struct Replayed {
    report: Report,
    dir: PathBuf,
    out: PathBuf,
    markdown: String,
}

fn replay(transcripts: &str) -> Replayed {
    let dir = repo().join("benchmarks").join(transcripts);
    let out = out_dir(transcripts);
    let report = evaluate(&replay_options(&dir, &out)).unwrap();
    let markdown = std::fs::read_to_string(out.join("REPORT.md"))
        .unwrap()
        .replace(
            &format!("replay-dir:{}", dir.display()),
            &format!("replay-dir:benchmarks/{transcripts}"),
        )
        // A failure's reason may name a transcript by its path.
        .replace(
            &dir.display().to_string(),
            &format!("benchmarks/{transcripts}"),
        );
    Replayed {
        report,
        dir,
        out,
        markdown,
    }
}

/// Checks that the `index`th ````markdown sample of docs/benchmark.md is `report` but for wall
/// times; with `UPDATE_GOLDEN` set, rewrites the sample first (review the diff).
fn check_doc_sample(index: usize, report: &str) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        rewrite_doc_sample(index, report);
    }
    let doc = std::fs::read_to_string(repo().join("docs/benchmark.md")).unwrap();
    let samples: Vec<&str> = doc
        .split("````markdown\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("````\n").map(|(sample, _)| sample))
        .collect();
    assert_eq!(
        samples.len(),
        4,
        "docs/benchmark.md has four ````markdown samples"
    );
    assert_eq!(
        without_wall_times(samples[index]),
        without_wall_times(report)
    );
}

/// A report with every wall time (the last column of its tables, `0.01 s`) blanked out.
fn without_wall_times(report: &str) -> String {
    let wall = regex::Regex::new(r"\| \d+\.\d\d s \|$").unwrap();
    report
        .lines()
        .map(|line| wall.replace(line, "| _ s |").into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The parts of a record that do not depend on the machine or the output directory.
fn stable(mut r: RunRecord) -> RunRecord {
    r.wall_ms = 0;
    r
}

#[test]
fn replaying_the_committed_transcripts_gives_the_recorded_verdicts_and_numbers() {
    let Replayed {
        report,
        dir,
        out,
        markdown,
    } = replay("transcripts");

    // Every mission once without compression (each mission's check accepts a correct answer);
    // the default strategy (`on`, and `on-openai`: as it runs against an OpenAI model) and the
    // seed's `single-user-coalesced` on some of them; passing and failing runs.
    assert_eq!(
        rows(&report),
        table(
            "
            off                    category-ratings      1 pass returned 1    2594   57
            off                    currency-totals       1 pass returned 2    5412  111
            off                    escalate-tickets      1 pass returned 1    2699   98
            off                    flaky-rates           1 pass returned 3    8070   90
            off                    forecast-hottest      1 pass returned 3    8341  151
            off                    invoice-reminders     1 pass returned 1    2684   74
            off                    knowledge-hops        1 pass returned 9   22759  258
            off                    late-delivery-credits 1 pass returned 5   15996  632
            off                    low-stock             1 pass returned 1    2599   39
            off                    mcp-service-logs      1 pass returned 2    6987  180
            off                    missing-customers     1 pass returned 2    5496  118
            off                    order-revenue         1 pass returned 1    2636   59
            off                    order-revenue         2 pass returned 2    5360  100
            off                    paged-admins          1 pass returned 3    8119  203
            off                    refund-queue          1 pass returned 24 156864 5285
            off                    refund-unknown-order  1 pass failed   2    5410   91
            off                    renamed-fields        1 pass returned 3    8016   93
            off                    restock               1 pass returned 1    2686   82
            off                    shipment-delays       1 pass returned 3    8324  184
            off                    sms-rate-limit        1 pass returned 3    8328  230
            off                    team-hours            1 pass returned 3    8161  153
            off                    ticket-routing        1 pass returned 10  32507  682
            off                    ticket-status-counts  1 pass returned 1    2591   67
            off                    top-spenders          1 FAIL returned 1    2584   73
            off                    warehouse-audit       1 pass returned 9   29090  669
            on                     late-delivery-credits 1 pass returned 5   13416  632
            on                     refund-queue          1 pass returned 24 114486 5285
            on                     sms-rate-limit        1 pass returned 3    6969  252
            on                     warehouse-audit       1 pass returned 9   24208  659
            on-openai              refund-queue          1 pass returned 24  88988 5285
            single-user-coalesced  late-delivery-credits 1 pass returned 5   15184  632
            single-user-coalesced  order-revenue         1 pass returned 1    2636   59
            single-user-coalesced  order-revenue         2 pass returned 2    5307  100
            single-user-coalesced  paged-admins          1 pass returned 3    7947  203
            single-user-coalesced  sms-rate-limit        1 FAIL returned 3    8190  188
            single-user-coalesced  top-spenders          1 pass returned 1    2584   81
            single-user-coalesced  warehouse-audit       1 pass returned 9   26125  659
            "
        )
    );
    let reasons: Vec<(String, Vec<String>)> = report
        .runs
        .iter()
        .filter(|r| !r.passed)
        .map(|r| (format!("{} {}", r.config, r.mission), r.reasons.clone()))
        .collect();
    assert_eq!(
        reasons,
        vec![
            (
                "off top-spenders".to_string(),
                vec![r#"returned ["c-14","c-11","c-16"], expected ["c-15","c-12","c-13"]"#.to_string()]
            ),
            (
                "single-user-coalesced sms-rate-limit".to_string(),
                vec![
                    r#"tool/send-sms: expected one call per phone in ["+4670000001","+4670000002","+4670000003","+4670000004"], got "+4670000001" 2 times"#
                        .to_string()
                ]
            ),
        ]
    );

    // The key numbers of the report.
    assert_eq!(report.missions, 24);
    let totals: Vec<(String, usize, usize, u64, u64, u64)> = report
        .configs
        .iter()
        .map(|c| {
            let t = &c.total;
            (
                c.label.clone(),
                t.runs,
                t.passed,
                t.input_tokens,
                t.output_tokens,
                t.cache_read_tokens,
            )
        })
        .collect();
    assert_eq!(
        totals,
        vec![
            ("off".to_string(), 25, 24, 364313, 9779, 0),
            ("on".to_string(), 4, 4, 159079, 6828, 0),
            ("on-openai".to_string(), 1, 1, 88988, 5285, 0),
            ("single-user-coalesced".to_string(), 7, 6, 67973, 1922, 0),
        ]
    );
    assert_eq!(
        report
            .configs
            .iter()
            .map(|c| c.compression.as_str())
            .collect::<Vec<_>>(),
        vec![
            "off",
            "append-compact",
            "append-compact?pricing=openai",
            "single-user-coalesced"
        ]
    );
    let [_, _, comparison] = report.comparisons.as_slice() else {
        panic!("expected three comparisons, got {:?}", report.comparisons);
    };
    assert_eq!(
        (comparison.baseline.as_str(), comparison.config.as_str()),
        ("off", "single-user-coalesced")
    );
    // Eighteen missions ran without this strategy, so they are not paired with it.
    assert_eq!(comparison.missions, 6);
    let s = comparison.sign_test;
    assert_eq!((s.better, s.worse, s.ties, s.p_value), (1, 1, 4, 1.0));
    assert_eq!(comparison.pass_rate.difference, 0.0);
    assert_eq!(comparison.turns.difference, 0.0);
    // Per mission, the mean prompt tokens per run, summed over the six paired missions.
    let p = comparison.prompt_tokens;
    assert_eq!((p.baseline, p.config), (68115.0, 64001.5));
    assert_eq!(
        format!("{:.4}", p.change.unwrap()),
        format!("{:.4}", 64001.5 / 68115.0 - 1.0)
    );
    let ci = p.ci95.unwrap();
    assert!(
        ci.low <= p.change.unwrap() && p.change.unwrap() <= ci.high,
        "{ci:?}"
    );
    // The estimates depend on the current system prompt, so only their direction is pinned:
    // compression sends less history.
    let h = comparison.est_history_tokens;
    assert!(h.config < h.baseline, "{h:?}");

    assert!(
        markdown.contains(&format!("- {}\n", comparison.summary)),
        "{markdown}"
    );
    assert!(
        comparison.summary.starts_with(
            "`single-user-coalesced` against `off` on 6 paired missions: -6.0 % prompt tokens \
             (95 % interval "
        ),
        "{}",
        comparison.summary
    );
    assert!(
        markdown.contains("| off | `off` | 25 | 96.0 % (24/25) | 3.8 | 14,573 | 391 | 0 |"),
        "{markdown}"
    );
    // docs/benchmark.md shows this report as its first sample (made with `--llm
    // replay-dir:benchmarks/transcripts` from the repository's root).
    check_doc_sample(0, &markdown);
    let json: Report =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(json, report);

    // A replay writes back the transcript it read, byte for byte...
    for r in &report.runs {
        let committed = dir.join(r.transcript.trim_start_matches("transcripts/"));
        assert_eq!(
            std::fs::read_to_string(out.join(&r.transcript)).unwrap(),
            std::fs::read_to_string(&committed).unwrap(),
            "{}",
            r.transcript
        );
    }
    // ...and replaying what it wrote gives the same records: the same verdicts and numbers.
    let again = out_dir("rewritten");
    let second = evaluate(&replay_options(&out.join("transcripts"), &again)).unwrap();
    assert_eq!(
        second.runs.into_iter().map(stable).collect::<Vec<_>>(),
        report.runs.into_iter().map(stable).collect::<Vec<_>>()
    );
    let _ = std::fs::remove_dir_all(out);
    let _ = std::fs::remove_dir_all(again);
}

#[test]
fn one_transcript_replays_fresh_for_every_run() {
    let out = out_dir("one-file");
    let file = repo().join("benchmarks/transcripts/off/order-revenue/2.jsonl");
    let mut opts = options(format!("replay:{}", file.display()), &out);
    opts.missions = vec!["order-*".into()];
    opts.compression = vec!["off".into(), "rolling-window?window=1".into()];
    opts.runs = Some(2);
    let report = evaluate(&opts).unwrap();
    let got: Vec<(String, u32, bool)> = report
        .runs
        .iter()
        .map(|r| (r.config.clone(), r.run, r.passed))
        .collect();
    assert_eq!(
        got,
        vec![
            ("off".to_string(), 1, true),
            ("off".to_string(), 2, true),
            ("rolling-window_window=1".to_string(), 1, true),
            ("rolling-window_window=1".to_string(), 2, true),
        ]
    );
    let original = std::fs::read_to_string(&file).unwrap();
    for run in report.runs {
        assert_eq!(
            std::fs::read_to_string(out.join(&run.transcript)).unwrap(),
            original,
            "{}",
            run.transcript
        );
    }
    let config =
        std::fs::read_to_string(out.join("transcripts/rolling-window_window=1/config.json"))
            .unwrap();
    assert_eq!(
        config,
        "{\n  \"compression\": \"rolling-window?window=1\"\n}\n"
    );
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn bad_arguments_are_explained() {
    let out = out_dir("bad");
    let err = |opts: EvalOptions| evaluate(&opts).unwrap_err();
    assert_eq!(
        err(options("gemini:pro".into(), &out)),
        "--llm gemini:pro: unknown model spec `gemini:pro`; use openai:MODEL, anthropic:MODEL, \
         openai-compatible:URL:MODEL, replay:FILE, file:DIR or human"
    );
    let mut opts = replay_options(&repo().join("benchmarks/transcripts"), &out);
    opts.missions = vec!["no-such-*".into()];
    assert_eq!(
        err(opts.clone()),
        format!(
            "no mission in {} matches no-such-*",
            repo().join("benchmarks/missions").display()
        )
    );
    opts.missions = vec![];
    opts.compression = vec!["sideways".into()];
    assert!(
        err(opts.clone()).starts_with("--compression sideways: "),
        "{}",
        err(opts)
    );
    assert_eq!(
        err(options("replay-dir:/nonexistent/dir".into(), &out)),
        "--llm replay-dir:/nonexistent/dir: /nonexistent/dir is not a directory of transcripts \
         (DIR/<config>/<mission>/<run>.jsonl)"
    );
}

/// The report of the recorded SmolLM2 runs in docs/benchmark.md is what replaying them gives
/// (but for wall times): the second ````markdown sample there.
#[test]
fn the_recorded_smollm2_runs_replay_to_the_documented_report() {
    let Replayed {
        report,
        out,
        markdown,
        ..
    } = replay("transcripts-smollm2-135m");
    assert_eq!(report.runs.len(), 46);
    assert!(report.runs.iter().all(|r| !r.passed && r.input_tokens > 0));
    check_doc_sample(1, &markdown);
    let _ = std::fs::remove_dir_all(out);
}

/// The runs recorded against Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) replay to the verdicts they
/// were recorded with, and to the report docs/benchmark.md shows.
#[test]
fn the_recorded_qwen_runs_replay_to_their_verdicts_and_the_documented_report() {
    let Replayed {
        report,
        out,
        markdown,
        ..
    } = replay(QWEN_TRANSCRIPTS);
    assert_eq!(report.runs.len(), 24);
    assert!(report.runs.iter().all(|r| r.input_tokens > 0));
    let passed: Vec<String> = report
        .runs
        .iter()
        .filter(|r| r.passed)
        .map(|r| format!("{} {}", r.config, r.mission))
        .collect();
    assert_eq!(passed, QWEN_PASSED);
    check_doc_sample(2, &markdown);
    let _ = std::fs::remove_dir_all(out);
}

const QWEN_TRANSCRIPTS: &str = "transcripts-qwen2.5-coder-1.5b-q4_k_m";

/// The runs a capable model answered through the file provider, PTC against plain tool calling,
/// replay to the verdicts they were recorded with and to the report docs/benchmark.md shows.
#[test]
fn the_capable_model_runs_replay_to_their_verdicts_and_the_documented_report() {
    let Replayed {
        report,
        out,
        markdown,
        ..
    } = replay("transcripts-capable");
    assert_eq!(report.runs.len(), CAPABLE_RUNS);
    assert!(report.runs.iter().all(|r| r.usage_estimated));
    let failed: Vec<String> = report
        .runs
        .iter()
        .filter(|r| !r.passed)
        .map(|r| format!("{} {} ({})", r.config, r.mission, r.outcome))
        .collect();
    assert_eq!(failed, CAPABLE_FAILED);
    check_doc_sample(3, &markdown);
    let _ = std::fs::remove_dir_all(out);
}

/// Every mission once by PTC without compression (`off`) and with the default (`on`) and by
/// plain tool calling, and the tuning half by PTC with the program sent as a native tool call.
const CAPABLE_RUNS: usize = 105;

/// The runs that failed when they were recorded: plain tool calling on three of the six large
/// missions (it gave up twice and ran out of context once).
const CAPABLE_FAILED: [&str; 3] = [
    "tool-calls fx-settlement (failed)",
    "tool-calls regional-revenue (failed)",
    "tool-calls stock-reconciliation (llm_error)",
];

/// The runs that passed when they were recorded.
const QWEN_PASSED: [&str; 0] = [];

/// Replaces the `index`th ````markdown sample of docs/benchmark.md with `report`
/// (`UPDATE_GOLDEN=1`; review the diff).
fn rewrite_doc_sample(index: usize, report: &str) {
    let path = repo().join("docs/benchmark.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let mut parts: Vec<String> = doc.split("````markdown\n").map(str::to_string).collect();
    let part = &mut parts[index + 1];
    let (_, rest) = part.split_once("````\n").expect("a closed sample");
    *part = format!("{report}````\n{rest}");
    std::fs::write(&path, parts.join("````markdown\n")).unwrap();
}
