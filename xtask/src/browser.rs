//! `cargo xtask browser`: the headless Chromium the tests of the HTML pages open them in
//! (Debian's `chromium` package, installed with apt-get when it is missing).

use std::process::Command;
use std::time::Instant;

/// The browser's program, as the tests look for it.
const PROGRAM: &str = "chromium";

/// `cargo xtask browser`: makes sure Chromium is installed and says which.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("browser takes no arguments, got `{extra}`"));
    }
    ensure().map(|_| ())
}

/// Chromium's version line, installing Debian's package first when it is missing.
pub fn ensure() -> Result<String, String> {
    let started = Instant::now();
    if let Some(version) = version() {
        eprintln!(
            "==> {version} (found in {:.1} s)",
            started.elapsed().as_secs_f64()
        );
        return Ok(version);
    }
    eprintln!("==> Chromium is missing: apt-get install chromium (Debian's package)");
    for args in [
        &["update"][..],
        &["install", "--yes", "--no-install-recommends", PROGRAM][..],
    ] {
        let status = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| format!("cannot run apt-get to install Chromium: {e}"))?;
        if !status.success() {
            return Err(format!(
                "`apt-get {}` failed ({status}); install Debian's `{PROGRAM}` package (as root) \
                 for the tests of the HTML pages",
                args.join(" ")
            ));
        }
    }
    let version = version()
        .ok_or_else(|| format!("`{PROGRAM} --version` still fails after installing the package"))?;
    eprintln!(
        "    installed {version} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(version)
}

/// `chromium --version`, when it runs.
fn version() -> Option<String> {
    let out = Command::new(PROGRAM).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}
