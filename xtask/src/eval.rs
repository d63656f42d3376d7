//! `cargo xtask eval`: the agent benchmark, run by the `ptc-bench` binary in release mode.

use std::path::Path;
use std::process::Command;

const HELP: &str =
    "usage: cargo xtask eval --llm SPEC [--runs N] [--compression SPEC ...] [--missions GLOB ...]
                         [--jobs N] [--temperature T] [--out DIR] [--missions-dir DIR]

Runs every mission in benchmarks/missions N times per compression configuration (default: off
and on) and writes target/eval/REPORT.md, target/eval/report.json and one transcript per run
under target/eval/transcripts/<config>/<mission>/<run>.jsonl.

SPEC: openai:MODEL, anthropic:MODEL, openai-compatible:URL:MODEL, replay:FILE.jsonl, or
replay-dir:DIR to replay the transcripts of an earlier evaluation, e.g.
  cargo xtask eval --llm replay-dir:benchmarks/transcripts
See docs/benchmark.md.";

/// The arguments of `ptc-bench` for `cargo xtask eval ARGS`: the same arguments. `None` asks
/// for the help text.
pub fn bench_args(args: &[String]) -> Option<Vec<String>> {
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        return None;
    }
    let mut all = vec![
        "run".to_string(),
        "--release".to_string(),
        "--quiet".to_string(),
        "--package".to_string(),
        "ptc-bench".to_string(),
        "--".to_string(),
    ];
    all.extend(args.iter().cloned());
    Some(all)
}

/// Builds and runs `ptc-bench` from the repository root, so its default paths
/// (`benchmarks/missions`, `target/eval`) are the repository's.
pub fn run(args: &[String]) -> Result<(), String> {
    let Some(cargo_args) = bench_args(args) else {
        println!("{HELP}");
        return Ok(());
    };
    // Missions may use the pinned MCP servers.
    crate::mcp_servers::run()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("the xtask crate is not inside the repository")?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(cargo)
        .args(&cargo_args)
        .current_dir(root)
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the benchmark did not finish ({status})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn arguments_pass_through_to_the_release_binary() {
        let args: Vec<String> = ["--llm", "replay-dir:benchmarks/transcripts", "--runs", "2"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            bench_args(&args),
            Some(
                [
                    "run",
                    "--release",
                    "--quiet",
                    "--package",
                    "ptc-bench",
                    "--",
                    "--llm",
                    "replay-dir:benchmarks/transcripts",
                    "--runs",
                    "2"
                ]
                .map(String::from)
                .to_vec()
            )
        );
        assert_eq!(bench_args(&[]), None);
        assert_eq!(bench_args(&["--llm".into(), "x".into(), "-h".into()]), None);
    }
}
