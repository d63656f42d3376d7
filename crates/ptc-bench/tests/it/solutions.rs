//! Every mission that keeps a reference solution (`solution.clj`, the generated missions at
//! scale) is solved by it: the mission can be done in PTC-Lisp with its data and tools, and the
//! check's exact answers are the right ones. The solution runs as the one reply of a replayed
//! model, through the harness, as a model's program would.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use ptc_bench::{EvalOptions, evaluate};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_reference_solution_passes_its_mission() {
    let missions = repo().join("benchmarks/missions");
    let mut solved: Vec<(String, String)> = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(&missions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("solution.clj").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in &names {
        let solution = std::fs::read_to_string(missions.join(name).join("solution.clj")).unwrap();
        let out =
            std::env::temp_dir().join(format!("ptc-bench-{}-solution-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        let transcript = out.join("solution.jsonl");
        let reply = serde_json::json!({"content": format!("```clojure\n{solution}```")});
        std::fs::write(&transcript, format!("{reply}\n")).unwrap();
        let report = evaluate(&EvalOptions {
            missions_dir: missions.clone(),
            missions: vec![name.clone()],
            compression: vec!["off".into()],
            out_dir: out.clone(),
            ..EvalOptions::new(format!("replay:{}", transcript.display()))
        })
        .unwrap();
        let run = &report.runs[0];
        solved.push((
            name.clone(),
            if run.passed {
                "pass".to_string()
            } else {
                format!("{} {:?}", run.outcome, run.reasons)
            },
        ));
        let _ = std::fs::remove_dir_all(&out);
    }
    let expected: Vec<(String, String)> = [
        "catalogue-repricing",
        "fx-settlement",
        "incident-correlation",
        "regional-revenue",
        "sla-escalations",
        "stock-reconciliation",
    ]
    .iter()
    .map(|name| (name.to_string(), "pass".to_string()))
    .collect();
    assert_eq!(solved, expected);
}
