//! `cargo xtask python`: builds the Python package (`crates/ptc-python`) into a wheel with
//! maturin, installs it into a virtual environment under `target/python/`, and runs its tests
//! (pytest, which also type-checks the stubs and the examples with mypy). `cargo xtask python
//! wheel` only builds the wheel (in release mode, for installing); `cargo xtask bench python`
//! measures the package side by side with pydantic-monty.
//!
//! The environment holds the pinned packages of `crates/ptc-python/requirements/` (installed
//! with `--require-hashes --no-deps`, so nothing unpinned is fetched), is made once under a lock
//! file, and is reused while the pins stay the same. The test wheel is built in the workspace's
//! target directory and in the `dev` profile, the one `cargo test` uses, with the crate's
//! `shared-build` feature, which turns on what the workspace's tests turn on in the crates they
//! share: cargo then reuses the crates `cargo test --workspace --all-features` compiled, and
//! compiles only PyO3 and the package itself. Before building, the feature sets are compared
//! (`cargo tree`), and a crate the wheel would compile with other features than the tests is an
//! error that names the features to add.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The packages the wheel is built and tested with.
const TEST_REQUIREMENTS: &str = include_str!("../../crates/ptc-python/requirements/test.txt");
/// The peer the benchmark measures against.
const BENCH_REQUIREMENTS: &str = include_str!("../../crates/ptc-python/requirements/bench.txt");

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

/// The workspace's target directory (the one `CARGO_TARGET_DIR` names, if set).
fn target_dir() -> PathBuf {
    let root = workspace_root();
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

/// `cargo xtask python [--release] | wheel`.
pub fn run(args: &[String]) -> Result<(), String> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        [] => test(Profile::Dev),
        ["--release"] => test(Profile::Release),
        ["wheel"] => {
            let env = Environment::ensure("test", &[TEST_REQUIREMENTS])?;
            let wheel = env.build_wheel(Profile::Release)?;
            println!("{}", wheel.display());
            Ok(())
        }
        _ => Err(format!(
            "usage: cargo xtask python [--release] | wheel; got `{}`",
            args.join(" ")
        )),
    }
}

/// Builds the wheel in `profile`, installs it and runs the Python tests.
fn test(profile: Profile) -> Result<(), String> {
    let started = Instant::now();
    if let Profile::Dev = profile {
        check_shared_build()?;
    }
    let env = Environment::ensure("test", &[TEST_REQUIREMENTS])?;
    let wheel = env.build_wheel(profile)?;
    env.install(&wheel)?;
    eprintln!("==> pytest crates/ptc-python/tests");
    let status = Command::new(&env.python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "crates/ptc-python/tests",
        ])
        .current_dir(workspace_root())
        .status()
        .map_err(|e| format!("could not run pytest: {e}"))?;
    eprintln!(
        "    cargo xtask python took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if status.success() {
        Ok(())
    } else {
        Err(format!("the Python tests failed ({status})"))
    }
}

/// `cargo xtask bench python`: ptc and pydantic-monty side by side, in one process.
pub fn bench() -> Result<(), String> {
    let env = Environment::ensure("bench", &[TEST_REQUIREMENTS, BENCH_REQUIREMENTS])?;
    let wheel = env.build_wheel(Profile::Release)?;
    env.install(&wheel)?;
    let root = workspace_root();
    let dir = target_dir().join("python");
    let (products, _) = crate::peers::write_products(&dir)?;
    eprintln!("==> ptc vs pydantic-monty (xtask/peers/python_bench.py)");
    let status = Command::new(&env.python)
        .arg(root.join("xtask/peers/python_bench.py"))
        .arg(&products)
        .current_dir(&root)
        .status()
        .map_err(|e| format!("could not run the benchmark: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the Python benchmark failed ({status})"))
    }
}

/// The cargo profile a wheel is built in.
#[derive(Clone, Copy)]
enum Profile {
    /// `dev`, shared with `cargo test`: quick to build, slow to run.
    Dev,
    /// `release`: what users install, and what the benchmark measures.
    Release,
}

impl Profile {
    fn name(self) -> &'static str {
        match self {
            Profile::Dev => "dev",
            Profile::Release => "release",
        }
    }
}

/// A ready virtual environment holding the pinned packages.
struct Environment {
    python: PathBuf,
    bin: PathBuf,
}

impl Environment {
    /// The environment `target/python/NAME-venv` with `requirements` installed, made first if
    /// it is missing or was made from other pins. Holds a lock file while it works.
    fn ensure(name: &str, requirements: &[&str]) -> Result<Environment, String> {
        let home = target_dir().join("python");
        fs::create_dir_all(&home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
        let lock_path = home.join(format!("{name}.lock"));
        let lock = File::create(&lock_path)
            .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
        lock.lock()
            .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
        let venv = home.join(format!("{name}-venv"));
        let bin = venv.join("bin");
        let environment = Environment {
            python: bin.join("python"),
            bin: bin.clone(),
        };
        let stamp = venv.join("ptc-pins.txt");
        let pins = requirements.join("\n");
        if fs::read_to_string(&stamp).ok().as_deref() == Some(pins.as_str())
            && environment.python.is_file()
        {
            return Ok(environment);
        }
        eprintln!("==> making the Python environment {}", venv.display());
        let started = Instant::now();
        let _ = fs::remove_dir_all(&venv);
        let python = std::env::var_os("PTC_PYTHON").unwrap_or_else(|| "python3".into());
        checked(
            Command::new(&python).args(["-m", "venv"]).arg(&venv),
            "create the virtual environment (Python 3.9 or later with venv is needed; Debian: \
             apt-get install python3-venv; or name a Python in PTC_PYTHON)",
        )?;
        let file = home.join(format!("{name}-requirements.txt"));
        fs::write(&file, &pins).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        checked(
            Command::new(&environment.python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args([
                    "--require-hashes",
                    "--no-deps",
                    "--only-binary",
                    ":all:",
                    "-r",
                ])
                .arg(&file),
            "install the pinned Python packages",
        )?;
        fs::write(&stamp, pins).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
        eprintln!("    made in {:.1} s", started.elapsed().as_secs_f64());
        Ok(environment)
    }

    /// Builds the wheel in `profile` into `target/python/wheels/PROFILE` and returns its path.
    fn build_wheel(&self, profile: Profile) -> Result<PathBuf, String> {
        let out = target_dir().join("python/wheels").join(profile.name());
        let _ = fs::remove_dir_all(&out);
        eprintln!("==> maturin build --profile {}", profile.name());
        let started = Instant::now();
        // maturin runs `cargo` from PATH: the one running this command comes first, so that
        // the wheel is compiled by the toolchain that compiled the workspace.
        let mut path = vec![self.bin.clone()];
        if let Some(cargo_dir) = std::env::var_os("CARGO")
            .map(PathBuf::from)
            .and_then(|cargo| cargo.parent().map(Path::to_path_buf))
        {
            path.push(cargo_dir);
        }
        if let Some(existing) = std::env::var_os("PATH") {
            path.extend(std::env::split_paths(&existing));
        }
        let mut maturin = Command::new(self.bin.join("maturin"));
        as_from_the_shell(&mut maturin);
        maturin.args([
            "build",
            "--quiet",
            "--compatibility",
            "linux",
            "--profile",
            profile.name(),
        ]);
        if let Profile::Dev = profile {
            maturin.args(["--features", "shared-build"]);
        }
        let status = maturin
            .arg("--manifest-path")
            .arg(workspace_root().join("crates/ptc-python/Cargo.toml"))
            .arg("--interpreter")
            .arg(&self.python)
            .arg("--out")
            .arg(&out)
            .env("PATH", std::env::join_paths(path).unwrap_or_default())
            .status()
            .map_err(|e| format!("could not run maturin: {e}"))?;
        if !status.success() {
            return Err(format!("maturin could not build the wheel ({status})"));
        }
        eprintln!("    built in {:.1} s", started.elapsed().as_secs_f64());
        let wheel = fs::read_dir(&out)
            .map_err(|e| format!("{}: {e}", out.display()))?
            .flatten()
            .map(|entry| entry.path())
            .find(|path| path.extension().is_some_and(|e| e == "whl"))
            .ok_or_else(|| format!("maturin left no wheel in {}", out.display()))?;
        Ok(wheel)
    }

    /// Installs `wheel` (replacing the package installed before).
    fn install(&self, wheel: &Path) -> Result<(), String> {
        checked(
            Command::new(&self.python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args(["--no-deps", "--force-reinstall"])
                .arg(wheel),
            "install the wheel",
        )
        .map(|_| ())
    }
}

/// Removes from `command`'s environment the variables `cargo run` sets for this program
/// (`CARGO_PKG_NAME=xtask`, ...): build scripts that ask to be rerun when such a variable
/// changes (ring's does) would otherwise see other values than in a cargo run from the shell,
/// and their crates would be compiled again.
pub(crate) fn as_from_the_shell(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let set_by_cargo_run = name.starts_with("CARGO_PKG_")
            || matches!(
                name,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_MANIFEST_LINKS"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
            );
        if set_by_cargo_run {
            command.env_remove(name);
        }
    }
}

/// The features of every crate in a `cargo tree` of `args`, by crate (a crate built for the
/// host and for the target may appear with two sets).
fn feature_sets(args: &[&str]) -> Result<BTreeMap<String, BTreeSet<BTreeSet<String>>>, String> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["tree", "--quiet", "--prefix", "none", "--format", "{p}|{f}"])
        .args(args)
        .current_dir(workspace_root())
        .output()
        .map_err(|e| format!("could not run cargo tree: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo tree {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let mut sets: BTreeMap<String, BTreeSet<BTreeSet<String>>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Some((package, features)) = line.trim_end_matches(" (*)").split_once('|') else {
            continue;
        };
        let features = features
            .split(',')
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
        sets.entry(package.trim().to_string())
            .or_default()
            .insert(features);
    }
    Ok(sets)
}

/// Checks that the test wheel's build (`-p ptc-python --features shared-build`) gives every
/// crate it shares with the workspace's tests the features those give it, so that cargo reuses
/// their compiled crates.
fn check_shared_build() -> Result<(), String> {
    let wheel = feature_sets(&[
        "-p",
        "ptc-python",
        "--features",
        "shared-build",
        "-e",
        "normal,build",
    ])?;
    let tests = feature_sets(&["--workspace", "--all-features", "-e", "normal,build,dev"])?;
    let mut differences = Vec::new();
    for (package, sets) in &wheel {
        if package.starts_with("ptc-python ") {
            continue;
        }
        let theirs = tests.get(package).cloned().unwrap_or_default();
        for ours in sets.difference(&theirs) {
            let missing: BTreeSet<String> = theirs
                .iter()
                .filter(|t| t.is_superset(ours))
                .flat_map(|t| t.difference(ours).cloned())
                .collect();
            differences.push(if missing.is_empty() {
                format!("{package}: built with {ours:?}, a set the tests never use")
            } else {
                format!("{package}: the tests add {missing:?}")
            });
        }
    }
    if differences.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the test wheel would compile these crates again, with other features than \
         `cargo test --workspace --all-features`; add what the tests add to the `shared-build` \
         feature of crates/ptc-python/Cargo.toml:\n  {}",
        differences.join("\n  ")
    ))
}

/// Runs `command`, and on failure returns the end of what it printed.
fn checked(command: &mut Command, what: &str) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("could not {what}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    Err(format!(
        "could not {what} ({}); the end of its output:\n{}",
        output.status,
        lines[lines.len().saturating_sub(40)..].join("\n")
    ))
}
