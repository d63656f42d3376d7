#![deny(missing_docs)]

//! The MCP servers that `ptc-mcp`'s tests, the `ptc` command's tests and the benchmark run.
//!
//! `servers/package.json` and its lock file pin the reference servers from the npm registry
//! (`@modelcontextprotocol/server-everything`, `-filesystem`, `-memory`); [`ensure_installed`]
//! runs `npm ci` from the lock file once, under a file lock, and again only when the lock file
//! changes. `servers/fault-server.mjs` is a misbehaving server written for the fault tests; it
//! needs nothing but node.
//!
//! Node.js (18 or newer, with npm) must be on the `PATH`; without it every function here fails
//! with a message saying what to install, so a test that needs a server fails rather than
//! passing silently.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The reference servers, by the name of their command in `node_modules/.bin`.
/// The reference server that exercises every protocol feature (echo, sampling, resources, ...).
pub const EVERYTHING: &str = "mcp-server-everything";
/// The reference server that reads and writes files under the directories it is given.
pub const FILESYSTEM: &str = "mcp-server-filesystem";
/// The reference server that keeps a knowledge graph in a JSON file.
pub const MEMORY: &str = "mcp-server-memory";

/// Where the lock file's copy is kept once `npm ci` has installed it.
const STAMP: &str = "node_modules/.installed-lock.json";

const INSTALL_NODE: &str = "install Node.js 18 or newer with npm (e.g. `apt-get install nodejs \
                            npm`, or from nodejs.org) so that `node` and `npm` are on the PATH";

/// The folder with `package.json`, the lock file and the fault server.
pub fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("servers")
}

/// Installs the pinned servers if they are not installed from the current lock file, and
/// returns the servers folder. Safe to call from many test processes at once: one installs,
/// the others wait for it. The result is computed once per process.
pub fn ensure_installed() -> Result<PathBuf, String> {
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    INSTALLED.get_or_init(install).clone()
}

/// The command that starts a reference server (e.g. [`EVERYTHING`]), installing the servers
/// first if needed.
pub fn server_command(name: &str) -> Result<PathBuf, String> {
    let path = ensure_installed()?.join("node_modules/.bin").join(name);
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} is missing after installing the MCP servers",
            path.display()
        ))
    }
}

/// `node` and the path of the fault server's script, to spawn as `node SCRIPT ARGS...`.
pub fn fault_server() -> Result<(String, PathBuf), String> {
    node_version()?;
    Ok(("node".to_string(), servers_dir().join("fault-server.mjs")))
}

/// The version `node --version` prints, or what to install.
pub fn node_version() -> Result<String, String> {
    let output = Command::new("node")
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run `node` ({e}): {INSTALL_NODE}"))?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let major: Option<u32> = version
        .strip_prefix('v')
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse().ok());
    match major {
        Some(major) if major >= 18 => Ok(version),
        _ => Err(format!("`node --version` says {version:?}: {INSTALL_NODE}")),
    }
}

fn install() -> Result<PathBuf, String> {
    node_version()?;
    let dir = servers_dir();
    let lock_path = dir.join("package-lock.json");
    let wanted = std::fs::read(&lock_path)
        .map_err(|e| format!("cannot read {}: {e}", lock_path.display()))?;
    if is_installed(&dir, &wanted) {
        return Ok(dir);
    }
    // One process installs; the others wait here and then find the stamp.
    let guard = lock_file(&dir)?;
    guard
        .lock()
        .map_err(|e| format!("cannot lock {}: {e}", dir.display()))?;
    if !is_installed(&dir, &wanted) {
        eprintln!(
            "installing the MCP test servers: npm ci in {}",
            dir.display()
        );
        let output = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .output()
            .map_err(|e| format!("cannot run `npm` ({e}): {INSTALL_NODE}"))?;
        if !output.status.success() {
            return Err(format!(
                "`npm ci` in {} failed ({}); the npm registry must be reachable:\n{}{}",
                dir.display(),
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        std::fs::write(dir.join(STAMP), &wanted)
            .map_err(|e| format!("cannot write the install stamp: {e}"))?;
    }
    Ok(dir)
}

fn is_installed(dir: &Path, lock: &[u8]) -> bool {
    std::fs::read(dir.join(STAMP)).is_ok_and(|stamp| stamp == lock)
}

fn lock_file(dir: &Path) -> Result<File, String> {
    let path = dir.join(".install.lock");
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}
