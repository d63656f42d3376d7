//! `cargo xtask bench peers`: ptc-rs side by side with two peers on the same three workloads, in
//! one sitting: pydantic-monty (a Python-subset sandbox written in Rust; pinned, installed from
//! PyPI into a virtual environment under `target/peers`) and Clojure 1.11 (installed with the
//! system's packages). Each is measured net of its fixed start-up: monty's round trip to its
//! worker process by alternating batches of a trivial program with the real one, Clojure inside
//! one warm JVM, ptc-rs by its criterion benchmarks (`crates/ptc-lisp/benches/eval.rs`).
//!
//! The workloads: a small five-element filter/map/reduce program (read, analyse and run), a
//! filter → group-by → sum pipeline over 10,000 product records already in the sandbox, and a
//! 100,000-iteration loop.

#[path = "../../crates/ptc-lisp/tests/support/products.rs"]
mod products;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pydantic-monty release measured (its newest whose dependencies PyPI has in full).
const MONTY_VERSION: &str = "1.4.0";

/// The workloads, with the names of their criterion benchmarks.
const WORKLOADS: &[(&str, &str, &str)] = &[
    (
        "small",
        "parse+eval small pipeline",
        "five-element filter/map/reduce, read + analyse + run",
    ),
    (
        "pipeline",
        "filter-group-by-reduce over 10,000 maps",
        "filter → group-by → sum over 10,000 maps",
    ),
    (
        "loop",
        "loop-recur 100,000 iterations",
        "100,000-iteration loop",
    ),
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

/// Run the comparison and print its table.
pub fn run() -> Result<(), String> {
    let root = workspace_root();
    let dir = root.join("target/peers");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // Check the peers first: a missing one should not cost a benchmark run.
    let clojure = clojure_command()?;
    let python = monty_python(&dir)?;
    let (json, edn) = write_products(&dir)?;

    eprintln!("==> ptc-rs: cargo bench -p ptc-lisp --bench eval");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "bench", "-p", "ptc-lisp", "--bench", "eval", "--", "--noplot",
        ])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("the ptc-lisp benchmarks failed ({status})"));
    }
    let ptc = criterion_medians(&root.join("target/criterion"))?;

    eprintln!("==> pydantic-monty {MONTY_VERSION}");
    let monty = run_script(
        Command::new(&python)
            .arg(root.join("xtask/peers/monty_bench.py"))
            .arg(&json),
    )?;
    eprintln!("==> Clojure");
    let clojure = run_script(
        Command::new(&clojure)
            .arg(root.join("xtask/peers/clojure_bench.clj"))
            .arg(&edn),
    )?;

    println!("\nPeer comparison (µs per run, medians; lower is better)\n");
    println!(
        "| workload | ptc-rs | pydantic-monty {MONTY_VERSION} | Clojure {} |",
        clojure_version(&clojure_command()?)
    );
    println!("|----------|--------|----------------|--------------|");
    for (key, bench, label) in WORKLOADS {
        let cell = |v: Option<&f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        println!(
            "| {label} | {} | {} | {} |",
            cell(ptc.get(*bench)),
            cell(monty.get(*key)),
            cell(clojure.get(*key)),
        );
    }
    if let Some(trip) = monty.get("round-trip") {
        println!("\nmonty's round trip to its worker, subtracted above: {trip:.1} µs");
    }
    Ok(())
}

/// The `clojure` command, if it runs Clojure 1.11.
fn clojure_command() -> Result<String, String> {
    let version = clojure_version("clojure");
    if version.starts_with("1.11") {
        Ok("clojure".to_string())
    } else if version.is_empty() {
        Err(
            "Clojure 1.11 is needed for the peer comparison: install it with \
             `apt-get install clojure` (Debian and Ubuntu)"
                .to_string(),
        )
    } else {
        Err(format!(
            "the peer comparison measures Clojure 1.11, `clojure` is {version}"
        ))
    }
}

fn clojure_version(command: &str) -> String {
    Command::new(command)
        .args(["-e", "(print (clojure-version))"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The Python of a virtual environment holding pydantic-monty [`MONTY_VERSION`], made (once)
/// under `dir`.
fn monty_python(dir: &Path) -> Result<PathBuf, String> {
    let venv = dir.join("monty-venv");
    let python = venv.join("bin/python");
    let installed = Command::new(&python)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('pydantic-monty'))",
        ])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if installed.as_deref() == Some(MONTY_VERSION) {
        return Ok(python);
    }
    eprintln!(
        "==> installing pydantic-monty {MONTY_VERSION} into {}",
        venv.display()
    );
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .map_err(|e| {
            format!(
                "could not run python3 ({e}): Python 3.10 or newer is needed for the peer \
                 comparison (`apt-get install python3 python3-venv`)"
            )
        })?;
    if !made.success() {
        return Err("python3 -m venv failed: install python3-venv".to_string());
    }
    let pip = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet"])
        .arg(format!("pydantic-monty=={MONTY_VERSION}"))
        .status()
        .map_err(|e| format!("could not run pip: {e}"))?;
    if !pip.success() {
        return Err(format!(
            "pip could not install pydantic-monty=={MONTY_VERSION} from PyPI"
        ));
    }
    Ok(python)
}

/// The 10,000 product records of the benchmarks, as JSON (for monty) and EDN (for Clojure).
pub(crate) fn write_products(dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let json = products::products_json(10_000);
    let value = ptc_lisp::from_json_str(&json).map_err(|e| e.message)?;
    let records = match &value {
        ptc_lisp::Value::Map(map) => map
            .get(&ptc_lisp::Value::keyword("products"))
            .cloned()
            .unwrap_or_default(),
        _ => ptc_lisp::Value::Nil,
    };
    let json_path = dir.join("products.json");
    let edn_path = dir.join("products.edn");
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write(&json_path, &json)?;
    write(&edn_path, &ptc_lisp::pr_str(&records))?;
    Ok((json_path, edn_path))
}

/// Run a peer's script; its `name microseconds` lines.
fn run_script(command: &mut Command) -> Result<BTreeMap<String, f64>, String> {
    let output = command
        .output()
        .map_err(|e| format!("could not run {command:?}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{command:?} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text
        .lines()
        .filter_map(|line| {
            let (name, micros) = line.split_once(' ')?;
            Some((name.to_string(), micros.trim().parse().ok()?))
        })
        .collect())
}

/// The median of every criterion benchmark under `dir`, in µs, by benchmark name.
fn criterion_medians(dir: &Path) -> Result<BTreeMap<String, f64>, String> {
    let mut medians = BTreeMap::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let new = entry.path().join("new");
        let (Ok(bench), Ok(estimates)) = (
            std::fs::read_to_string(new.join("benchmark.json")),
            std::fs::read_to_string(new.join("estimates.json")),
        ) else {
            continue;
        };
        let field = |text: &str, path: &[&str]| -> Option<ptc_lisp::Value> {
            let mut value = ptc_lisp::from_json_str(text).ok()?;
            for key in path {
                value = match value {
                    ptc_lisp::Value::Map(map) => map.get(&ptc_lisp::Value::keyword(key))?.clone(),
                    _ => return None,
                };
            }
            Some(value)
        };
        let name = field(&bench, &["full_id"]);
        let median = field(&estimates, &["median", "point_estimate"]);
        if let (Some(ptc_lisp::Value::Str(name)), Some(ptc_lisp::Value::Float(ns))) = (name, median)
        {
            medians.insert(name.to_string(), ns / 1000.0);
        }
    }
    Ok(medians)
}
