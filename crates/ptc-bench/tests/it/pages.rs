//! The report page and the run pages of a replayed benchmark: the 24-turn run of `refund-queue`
//! under each committed configuration, its page held against its step, and the report page's
//! figures against the report.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use ptc_bench::{EvalOptions, Report, evaluate};
use ptc_turn::Step;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `data-value` of the table `data-chart="NAME"`, row by row.
fn chart_values(page: &str, name: &str) -> Vec<String> {
    let start = page
        .find(&format!("data-chart=\"{name}\""))
        .unwrap_or_else(|| panic!("no table {name}"));
    let table = &page[start..start + page[start..].find("</table>").expect("closed")];
    table
        .split("data-value=\"")
        .skip(1)
        .map(|rest| rest[..rest.find('"').expect("closed")].to_string())
        .collect()
}

/// The `data-value` of the first element with `data-figure="NAME"` after `from` in `page`.
pub(crate) fn figure_after(page: &str, from: &str, name: &str) -> String {
    let at = page.find(from).unwrap_or_else(|| panic!("no {from}"));
    let rest = &page[at..];
    let key = format!("data-figure=\"{name}\" data-value=\"");
    let rest = &rest[rest.find(&key).unwrap_or_else(|| panic!("no {name}")) + key.len()..];
    rest[..rest.find('"').expect("closed")].to_string()
}

/// The 24-turn run of `refund-queue` under each committed configuration of
/// `benchmarks/transcripts`, replayed into a fresh directory named after `name`, with its
/// steps and pages.
pub(crate) fn replay_refund_queue(name: &str) -> (Report, PathBuf) {
    let out = std::env::temp_dir().join(format!("ptc-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let options = EvalOptions {
        missions_dir: repo().join("benchmarks/missions"),
        missions: vec!["refund-queue".to_string()],
        out_dir: out.clone(),
        write_steps: true,
        progress: false,
        ..EvalOptions::new(format!(
            "replay-dir:{}",
            repo().join("benchmarks/transcripts").display()
        ))
    };
    (evaluate(&options).expect("the replay runs"), out)
}

#[test]
fn a_replayed_benchmark_writes_its_report_page_and_a_page_per_run() {
    let (report, out) = replay_refund_queue("pages");
    let page = std::fs::read_to_string(out.join("REPORT.html")).expect("REPORT.html");

    // The pass rates, and the requests per run of the one mission, as the report has them.
    for config in &report.configs {
        let row = format!("<tr data-config=\"{}\">", config.label);
        assert_eq!(
            figure_after(&page, &row, "pass-rate"),
            config.total.pass_rate.to_string()
        );
        assert_eq!(
            figure_after(&page, &row, "runs"),
            config.total.runs.to_string()
        );
    }
    let requests: Vec<String> = report
        .configs
        .iter()
        .filter_map(|c| c.missions.first())
        .map(|m| m.summary.per_run(m.summary.llm_requests).to_string())
        .collect();
    assert_eq!(chart_values(&page, "requests"), requests);
    assert_eq!(page.matches("<svg").count(), 9, "nine charts");
    assert!(!page.contains("src="), "the report loads nothing");

    for config in &report.configs {
        if config.total.runs == 0 {
            continue;
        }
        let link = format!("href=\"steps/{}/refund-queue/1.html\"", config.label);
        assert!(page.contains(&link), "{link} missing");
        let dir = out.join("steps").join(&config.label).join("refund-queue");
        let step: Step =
            serde_json::from_str(&std::fs::read_to_string(dir.join("1.json")).expect("the step"))
                .expect("a step");
        let run_page = std::fs::read_to_string(dir.join("1.html")).expect("the run page");
        assert!(
            run_page.len() < 1_000_000,
            "{}: {} bytes",
            config.label,
            run_page.len()
        );
        assert_eq!(step.turns.len(), 24, "{}", config.label);
        assert_eq!(
            run_page.matches("<section class=\"turn\"").count(),
            step.turns.len()
        );
        for turn in step.turns.as_slice() {
            let program = ptc_view::highlight::program(turn.program());
            assert!(
                run_page.contains(&program),
                "turn {} missing",
                turn.number()
            );
        }
        assert_eq!(
            figure_after(&run_page, "<section id=\"summary\">", "input-tokens"),
            step.usage.tokens.input_tokens.to_string()
        );
        assert!(run_page.contains("<span data-figure=\"signature\">the value matches it</span>"));
        assert!(!run_page.contains("src="), "the run page loads nothing");
    }
    let _ = std::fs::remove_dir_all(&out);
}
