//! A benchmark of agent missions: does the agent succeed, in how many turns, for how many
//! tokens, with and without history compression?
//!
//! Missions are data ([`mission`]): a task, input data, tools with canned or scripted answers
//! ([`tools`]), an output signature and a check ([`check`]). The harness ([`harness`]) runs each
//! mission N times per configuration against any model the agent supports, records each run's
//! model replies as a transcript that `replay:` can play back, and the report ([`report`])
//! summarizes pass rates, turns, tokens and wall time, and compares each configuration with the
//! first on the same missions ([`stats`]).
//!
//! The command line is `ptc-bench` (also `cargo xtask eval`); see `docs/benchmark.md`.

#![deny(missing_docs)]

// The modules, in layer order: each may use only the modules declared above it (`cargo xtask
// layers`, part of `cargo xtask ci`, checks it). Each has a comment line of its own, so that
// formatting keeps the order.

// JSON values compared as the checks do.
pub mod json_compare;
// Paired comparisons and their intervals.
pub mod stats;
// A mission's canned tools and the log of their calls.
pub mod tools;
// Generated mission data: a PTC-Lisp program that makes inputs and tool answers.
pub mod generated;
// Whether a run succeeded, as the mission says.
pub mod check;
// Missions as data, loaded from their directories.
pub mod mission;
// Turns of a run that did not move its mission forward, by cause.
pub mod lost;
// Plain tool calling, the baseline PTC is measured against.
pub mod tool_calling;
// Running missions under each configuration.
pub mod harness;
// The report of a benchmark run.
pub mod report;

use std::path::Path;

pub use harness::{EvalOptions, LlmSource, RunRecord};
pub use report::Report;

/// Runs a whole evaluation: plans the runs, makes them, and writes `REPORT.md`, `REPORT.html`,
/// `report.json` and the transcripts into `options.out_dir`. Starts its own tokio runtime.
pub fn evaluate(options: &EvalOptions) -> Result<Report, String> {
    let source = LlmSource::parse(&options.llm, &options.provider)?;
    let plan = harness::plan(options, &source)?;
    std::fs::create_dir_all(&options.out_dir)
        .map_err(|e| format!("cannot create {}: {e}", options.out_dir.display()))?;
    harness::write_config_files(&plan, &options.out_dir)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("could not start the async runtime: {e}"))?;
    let records = runtime.block_on(harness::execute(&plan, &source, options));
    let mut report = Report::new(&source.describe(), &plan.missions, &plan.configs, records);
    if let LlmSource::ReplayDir(dir) = &source {
        report.annotations = lost::read_annotations(&dir.join(lost::ANNOTATIONS_FILE))?;
    }
    write(&options.out_dir.join("REPORT.md"), &report.markdown())?;
    write(
        &options.out_dir.join("REPORT.html"),
        &report.html(options.write_steps),
    )?;
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| format!("cannot write the report as JSON: {e}"))?;
    write(&options.out_dir.join("report.json"), &(json + "\n"))?;
    Ok(report)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
