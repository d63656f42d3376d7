//! `ptc demo` end to end: the exact output, timings masked.
//!
//! The snapshot holds the system prompt's size, which follows the builtin registry; after a
//! deliberate change, `UPDATE_GOLDEN=1 cargo test -p ptc-cli --test it demo_cli` rewrites it
//! (review the diff).

use crate::support;

use pretty_assertions::assert_eq;
use std::path::PathBuf;
use std::process::Command;
use support::mask_timings;

#[test]
fn the_demo_runs_offline_to_its_return_and_compares_what_the_history_costs() {
    let output = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .arg("demo")
        // Nothing from the environment may matter: no keys, no network.
        .env_clear()
        .current_dir(std::env::temp_dir())
        .output()
        .expect("run ptc demo");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    assert!(output.status.success(), "exit status {}", output.status);
    let stdout = mask_timings(&String::from_utf8_lossy(&output.stdout));
    let snapshot = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/demo.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&snapshot, &stdout).expect("write the snapshot");
    }
    let expected = std::fs::read_to_string(&snapshot).expect("read the snapshot");
    assert_eq!(stdout, expected);
    assert_billed_no_more_than_the_full_history(&stdout);
}

/// The demo's compressed history costs at most what the full history would, under every
/// pricing profile: `billed, compressed / full history: 0.97 (anthropic), ...`.
fn assert_billed_no_more_than_the_full_history(stdout: &str) {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("billed, compressed / full history: "))
        .expect("the demo reports the billed comparison");
    let ratios: Vec<(String, f64)> = line
        .split(", ")
        .map(|part| {
            let (ratio, profile) = part.split_once(' ').expect("`RATIO (PROFILE)`");
            (
                profile.trim_matches(['(', ')']).to_string(),
                ratio.parse().expect("a number"),
            )
        })
        .collect();
    let profiles: Vec<&str> = ratios.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(profiles, ["anthropic", "openai", "ideal"]);
    for (profile, ratio) in ratios {
        assert!(
            ratio <= 1.0,
            "{profile}: billed {ratio} of the full history"
        );
    }
}
