//! `cargo xtask fuzz`: run the cargo-fuzz targets in `fuzz/` for a while each and report how
//! many inputs each one ran and what it found.
//!
//! The targets need a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`); neither is
//! needed by the normal build, which does not include `fuzz/`. Each target's corpus lives in
//! `fuzz/corpus/<target>` (not committed) and starts from the programs of the test corpora;
//! findings land in `fuzz/artifacts/<target>`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const TARGETS: &[&str] = &["parse", "eval"];

/// Directories whose case files (`;; ==== name` followed by a program) seed the corpora.
const SEED_DIRS: &[&str] = &[
    "crates/ptc-lisp/tests/eval",
    "crates/ptc-lisp/tests/conformance",
    "crates/ptc-lisp/tests/adversarial",
    "crates/ptc-lisp/tests/reader",
];

struct Options {
    minutes: f64,
    targets: Vec<String>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        minutes: 1.0,
        targets: Vec::new(),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--minutes" => {
                let value = args.next().ok_or("--minutes needs a number")?;
                options.minutes = value
                    .parse()
                    .ok()
                    .filter(|m: &f64| *m > 0.0)
                    .ok_or_else(|| format!("--minutes needs a positive number, got `{value}`"))?;
            }
            "--target" => {
                let value = args.next().ok_or("--target needs a name")?;
                if !TARGETS.contains(&value.as_str()) {
                    return Err(format!(
                        "unknown fuzz target `{value}`; the targets are {}",
                        TARGETS.join(", ")
                    ));
                }
                options.targets.push(value.clone());
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}`; usage: cargo xtask fuzz [--minutes N] [--target NAME]"
                ));
            }
        }
    }
    if options.targets.is_empty() {
        options.targets = TARGETS.iter().map(|t| t.to_string()).collect();
    }
    Ok(options)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

/// The programs of every case file in the seed directories.
fn seed_programs(root: &Path) -> Vec<String> {
    let mut programs = Vec::new();
    for dir in SEED_DIRS {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let mut current = String::new();
            for line in text.lines() {
                if line.starts_with(";; ==== ") {
                    if !current.trim().is_empty() {
                        programs.push(std::mem::take(&mut current));
                    }
                    current.clear();
                } else if !line.starts_with(";;") {
                    current.push_str(line);
                    current.push('\n');
                }
            }
            if !current.trim().is_empty() {
                programs.push(current);
            }
        }
    }
    programs
}

/// Fill an empty corpus directory with the seed programs.
fn seed_corpus(dir: &Path, programs: &[String]) -> Result<usize, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let existing = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .count();
    if existing > 0 {
        return Ok(existing);
    }
    for (i, program) in programs.iter().enumerate() {
        let path = dir.join(format!("seed-{i:05}"));
        std::fs::write(&path, program)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(programs.len())
}

fn artifacts(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    found.sort();
    found
}

/// Executions from libFuzzer's final statistics (`stat::number_of_executed_units: N`).
fn executions(log: &str) -> Option<u64> {
    log.lines().rev().find_map(|line| {
        line.strip_prefix("stat::number_of_executed_units:")
            .and_then(|n| n.trim().parse().ok())
    })
}

/// Seconds spent fuzzing, from libFuzzer's closing line (`Done N runs in S second(s)`); the
/// wall time around the command also counts building the target.
fn fuzzing_seconds(log: &str) -> Option<f64> {
    log.lines().rev().find_map(|line| {
        let rest = line.strip_prefix("Done ")?;
        let (_, after) = rest.split_once(" runs in ")?;
        after.split_whitespace().next()?.parse().ok()
    })
}

struct Report {
    target: String,
    executions: Option<u64>,
    findings: Vec<PathBuf>,
    seconds: f64,
}

fn run_target(root: &Path, target: &str, seconds: u64, seeds: &[String]) -> Result<Report, String> {
    let fuzz_dir = root.join("fuzz");
    let corpus = fuzz_dir.join("corpus").join(target);
    let inputs = seed_corpus(&corpus, seeds)?;
    let artifact_dir = fuzz_dir.join("artifacts").join(target);
    let before = artifacts(&artifact_dir);
    eprintln!("==> fuzz {target} for {seconds} s ({inputs} inputs in its corpus)");
    let started = Instant::now();
    let output = Command::new("cargo")
        .current_dir(&fuzz_dir)
        .args(["+nightly", "fuzz", "run", "-O", target])
        .arg(&corpus)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        // A run is limited to a fraction of a second; seconds mean a hang.
        .arg("-timeout=10")
        .arg("-rss_limit_mb=2048")
        .arg("-max_len=65536")
        .arg(format!(
            "-dict={}",
            fuzz_dir.join("ptc-lisp.dict").display()
        ))
        .arg("-print_final_stats=1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| {
            format!(
                "could not run cargo fuzz: {e}; install it with `cargo install cargo-fuzz` \
                 (it needs a nightly toolchain)"
            )
        })?;
    let log = String::from_utf8_lossy(&output.stderr);
    let log_path = fuzz_dir.join(format!("{target}.log"));
    let _ = std::fs::write(&log_path, log.as_bytes());
    let findings: Vec<PathBuf> = artifacts(&artifact_dir)
        .into_iter()
        .filter(|a| !before.contains(a))
        .collect();
    let executions = executions(&log);
    if !output.status.success() && findings.is_empty() {
        return Err(format!(
            "cargo fuzz run {target} failed ({}) without a finding; see {}",
            output.status,
            log_path.display()
        ));
    }
    Ok(Report {
        target: target.to_string(),
        executions,
        findings,
        seconds: fuzzing_seconds(&log).unwrap_or_else(|| started.elapsed().as_secs_f64()),
    })
}

pub fn run(args: &[String]) -> Result<(), String> {
    let options = parse_args(args)?;
    let root = workspace_root();
    let seeds = seed_programs(&root);
    let seconds = (options.minutes * 60.0).round().max(1.0) as u64;
    let mut reports = Vec::new();
    for target in &options.targets {
        reports.push(run_target(&root, target, seconds, &seeds)?);
    }
    println!("target  seconds  executions  findings");
    let mut total_findings = 0;
    for r in &reports {
        let executions = r
            .executions
            .map_or_else(|| "unknown".to_string(), |n| n.to_string());
        println!(
            "{:<7} {:>7.0}  {:>10}  {}",
            r.target,
            r.seconds,
            executions,
            r.findings.len()
        );
        for f in &r.findings {
            println!("        finding: {}", f.display());
        }
        total_findings += r.findings.len();
    }
    if total_findings > 0 {
        return Err(format!(
            "{total_findings} finding(s); reproduce one with \
             `cd fuzz && cargo +nightly fuzz run <target> <file>`"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn options_default_to_every_target_for_a_minute() {
        let options = parse_args(&[]).unwrap();
        assert_eq!(options.minutes, 1.0);
        assert_eq!(
            options.targets,
            vec!["parse".to_string(), "eval".to_string()]
        );
        let options = parse_args(&[
            "--minutes".into(),
            "10".into(),
            "--target".into(),
            "eval".into(),
        ])
        .unwrap();
        assert_eq!(options.minutes, 10.0);
        assert_eq!(options.targets, vec!["eval".to_string()]);
    }

    #[test]
    fn bad_options_are_explained() {
        assert_eq!(
            parse_args(&["--minutes".into(), "0".into()]).err(),
            Some("--minutes needs a positive number, got `0`".to_string())
        );
        assert_eq!(
            parse_args(&["--target".into(), "nope".into()]).err(),
            Some("unknown fuzz target `nope`; the targets are parse, eval".to_string())
        );
    }

    #[test]
    fn executions_come_from_the_final_stats() {
        let log = "#1024 pulse\nstat::number_of_executed_units: 123456\nstat::peak_rss_mb: 80\n";
        assert_eq!(executions(log), Some(123456));
        assert_eq!(executions("no stats"), None);
    }

    #[test]
    fn fuzzing_time_comes_from_the_closing_line() {
        let log = "#2405136\tDONE   cov: 10492\nDone 2405136 runs in 601 second(s)\n";
        assert_eq!(fuzzing_seconds(log), Some(601.0));
        assert_eq!(fuzzing_seconds("no closing line"), None);
    }

    #[test]
    fn seeds_are_the_programs_of_the_case_files() {
        let programs = seed_programs(&workspace_root());
        assert!(
            programs.len() > 1000,
            "only {} seed programs",
            programs.len()
        );
        assert!(programs.iter().all(|p| !p.trim().is_empty()));
        assert!(
            programs
                .iter()
                .all(|p| !p.lines().any(|l| l.starts_with(";;")))
        );
    }
}
