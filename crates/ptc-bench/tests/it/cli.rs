//! The `ptc-bench` binary end to end: replaying the committed transcripts prints one summary
//! line per configuration, the comparison and where the report went; bad arguments exit 2.

use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bench() -> Command {
    // A mission uses an MCP server from npm.
    ptc_mcp_testkit::ensure_installed().unwrap_or_else(|e| panic!("{e}"));
    Command::new(env!("CARGO_BIN_EXE_ptc-bench"))
}

#[test]
fn replaying_the_committed_transcripts_prints_the_summary() {
    let out = std::env::temp_dir().join(format!("ptc-bench-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let output = bench()
        .arg("--llm")
        .arg(format!(
            "replay-dir:{}",
            repo().join("benchmarks/transcripts").display()
        ))
        .arg("--missions-dir")
        .arg(repo().join("benchmarks/missions"))
        .arg("--out")
        .arg(&out)
        .args(["--jobs", "2"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "no progress bar without a terminal, and no errors"
    );
    assert!(output.status.success(), "{:?}", output.status);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        vec![
            "off: 24/25 runs passed (96.0 %), 3.8 turns per run".to_string(),
            "on: 4/4 runs passed (100.0 %), 10.2 turns per run".to_string(),
            "on-openai: 1/1 runs passed (100.0 %), 24.0 turns per run".to_string(),
            "single-user-coalesced: 6/7 runs passed (85.7 %), 3.4 turns per run".to_string(),
            "`on` against `off` on 4 paired missions: -24.3 % prompt tokens (95 % interval -26.7 \
             % to -16.2 %) (-47.4 % without the system prompt, estimated); billed input \
             (modelled) -24.1 % anthropic, -32.4 % openai, -25.3 % ideal; pass rate 100.0 % -> \
             100.0 %, 0.0 points (95 % interval 0.0 to 0.0; sign test 0 better, 0 worse, p = \
             1.00); turns 0.00 per run."
                .to_string(),
            "`on-openai` against `off` on 1 paired mission: -43.3 % prompt tokens (95 % interval \
             -43.3 % to -43.3 %) (-64.7 % without the system prompt, estimated); billed input \
             (modelled) -15.7 % anthropic, -46.5 % openai, -20.7 % ideal; pass rate 100.0 % -> \
             100.0 %, 0.0 points (95 % interval 0.0 to 0.0; sign test 0 better, 0 worse, p = \
             1.00); turns 0.00 per run."
                .to_string(),
            "`single-user-coalesced` against `off` on 6 paired missions: -6.0 % prompt tokens (95 \
             % interval -8.9 % to -1.3 %) (-46.7 % without the system prompt, estimated); billed \
             input (modelled) -10.9 % anthropic, -15.0 % openai, -10.4 % ideal; pass rate 83.3 % -> \
             83.3 %, 0.0 points (95 % interval -50.0 to +50.0; sign test 1 better, 1 worse, p = \
             1.00); turns 0.00 per run."
                .to_string(),
            format!(
                "report: {} and {}",
                out.join("REPORT.md").display(),
                out.join("report.json").display()
            ),
        ]
    );
    assert!(out.join("REPORT.md").is_file());
    assert!(out.join("transcripts/off/knowledge-hops/1.jsonl").is_file());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn an_unknown_model_spec_exits_with_status_2() {
    let output = bench()
        .args(["--llm", "gemini:pro", "--missions-dir"])
        .arg(repo().join("benchmarks/missions"))
        .arg("--out")
        .arg(std::env::temp_dir().join(format!("ptc-bench-cli-bad-{}", std::process::id())))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: --llm gemini:pro: unknown model spec `gemini:pro`; use openai:MODEL, \
         anthropic:MODEL, openai-compatible:URL:MODEL, replay:FILE, file:DIR or human\n"
    );
}
