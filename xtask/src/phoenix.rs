//! `cargo xtask phoenix`: Arize Phoenix, the OpenTelemetry receiver the test of
//! `ptc run --otlp` exports a run to and reads its spans back from. Installed from the pinned
//! requirements (versions and hashes) into a virtual environment under `target/phoenix`, once;
//! rebuilt when the pins change. The test starts and stops the server itself.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const REQUIREMENTS: &str = include_str!("../phoenix/requirements.txt");

/// `cargo xtask phoenix`: makes sure the environment is there and says where its server is.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("phoenix takes no arguments, got `{extra}`"));
    }
    let program = ensure()?;
    println!("{}", program.display());
    Ok(())
}

/// Where the environment lives: `phoenix/` in the workspace's target directory (the one
/// `CARGO_TARGET_DIR` names, if set), where the test looks for it.
fn home() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = root.canonicalize().unwrap_or(root);
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
    .join("phoenix")
}

/// The `phoenix` program of the environment, building the environment first when it is
/// missing or was built from other pins.
pub fn ensure() -> Result<PathBuf, String> {
    let started = Instant::now();
    let venv = home().join("venv");
    let program = venv.join("bin/phoenix");
    let stamp = venv.join("ptc-pins.txt");
    if program.is_file() && fs::read_to_string(&stamp).ok().as_deref() == Some(REQUIREMENTS) {
        eprintln!(
            "==> Arize Phoenix: {} (found in {:.1} s)",
            program.display(),
            started.elapsed().as_secs_f64()
        );
        return Ok(program);
    }
    eprintln!(
        "==> Arize Phoenix is missing or its pins changed: installing it in {} (pinned, hashes checked)",
        venv.display()
    );
    let _ = fs::remove_dir_all(&venv);
    let python = std::env::var_os("PTC_PYTHON").unwrap_or_else(|| "python3".into());
    run_command(
        Command::new(&python).args(["-m", "venv"]).arg(&venv),
        "create the virtual environment (Debian: apt-get install python3-venv)",
    )?;
    let requirements = home().join("requirements.txt");
    fs::write(&requirements, REQUIREMENTS)
        .map_err(|e| format!("cannot write {}: {e}", requirements.display()))?;
    run_command(
        Command::new(venv.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--quiet",
            ])
            .args(["--require-hashes", "--no-deps", "--only-binary", ":all:"])
            .arg("-r")
            .arg(&requirements),
        "install the pinned Arize Phoenix",
    )?;
    if !program.is_file() {
        return Err(format!(
            "{} is missing after installing Arize Phoenix",
            program.display()
        ));
    }
    fs::write(&stamp, REQUIREMENTS)
        .map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    eprintln!("    installed in {:.1} s", started.elapsed().as_secs_f64());
    Ok(program)
}

/// Runs `command`; on failure, says what it printed.
fn run_command(command: &mut Command, what: &str) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("could not {what}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "could not {what} ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}
