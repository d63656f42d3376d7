//! `cargo xtask postgres`: a throwaway PostgreSQL cluster on 127.0.0.1 for the tests of the
//! PostgreSQL run store, made with the `initdb` and `pg_ctl` of Debian's server package.
//!
//! The cluster lives under `target/postgres/`, listens on a free TCP port of 127.0.0.1 only (no
//! Unix socket), trusts every local connection (nothing but this machine can reach it), and is
//! stopped by signalling the process id its postmaster wrote, never by a name. `initdb` refuses
//! to run as root, so when this runs as root the cluster is made and run by the `postgres`
//! system user (created if missing). When the server's programs are missing and this runs as
//! root on Debian, the distribution's server package is installed with `apt-get`; apt checks
//! every package against the hashes of the archive's signed index.

use std::ffi::CString;
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The variable that carries the cluster's URL to the command `run` starts, and to the tests.
pub const URL_VARIABLE: &str = "PTC_POSTGRES_URL";

/// The superuser `initdb` creates, and the database every cluster has.
const SUPERUSER: &str = "postgres";

/// The system user the server runs as when this runs as root.
const SYSTEM_USER: &str = "postgres";

/// How long the server may take to start or stop.
const WAIT: Duration = Duration::from_secs(60);

const USAGE: &str = "usage: cargo xtask postgres [start | stop | url | run -- COMMAND ...]

  start             make a fresh cluster under target/postgres/cluster, start it on a free port
                    of 127.0.0.1 and print its URL (the default when no command is given)
  stop              stop the cluster `start` left running, by its postmaster's process id
  url               print the URL of the cluster `start` left running
  run -- COMMAND    make and start a cluster of its own, run COMMAND with PTC_POSTGRES_URL set
                    to its URL ({url} in COMMAND's arguments is replaced by it too), then stop
                    the cluster and remove it

The server's programs are found in $PTC_POSTGRES_BIN, else in the newest
/usr/lib/postgresql/VERSION/bin; when missing, Debian's server package is installed (as root).";

pub fn run(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        None | Some("start") => {
            if let Some(extra) = args.get(1) {
                return Err(format!(
                    "start takes no arguments, got `{extra}`\n\n{USAGE}"
                ));
            }
            let dir = target_dir().join("cluster");
            if let Some(url) = running_url(&dir)? {
                eprintln!("==> the cluster in {} is already running", dir.display());
                println!("{url}");
                return Ok(());
            }
            let cluster = Cluster::start(&dir)?;
            eprintln!(
                "==> started (postmaster {}); stop it with `cargo xtask postgres stop`",
                cluster.pid
            );
            println!("{}", cluster.url);
            // Left running on purpose: `stop` finds it by the directory.
            std::mem::forget(cluster);
            Ok(())
        }
        Some("stop") => {
            let dir = target_dir().join("cluster");
            match postmaster_pid(&dir.join("data"))? {
                Some(pid) => {
                    stop_pid(pid)?;
                    eprintln!(
                        "==> stopped the cluster in {} (postmaster {pid})",
                        dir.display()
                    );
                }
                None => eprintln!("==> no cluster is running in {}", dir.display()),
            }
            Ok(())
        }
        Some("url") => {
            let dir = target_dir().join("cluster");
            let url = running_url(&dir)?.ok_or_else(|| {
                format!(
                    "no cluster is running in {}; start one with `cargo xtask postgres`",
                    dir.display()
                )
            })?;
            println!("{url}");
            Ok(())
        }
        Some("run") => {
            let rest = match args.get(1).map(String::as_str) {
                Some("--") => &args[2..],
                _ => &args[1..],
            };
            let Some((program, program_args)) = rest.split_first() else {
                return Err(format!("run needs a command after --\n\n{USAGE}"));
            };
            let cluster =
                Cluster::start(&target_dir().join(format!("run-{}", std::process::id())))?;
            eprintln!("==> {} (postmaster {})", cluster.url, cluster.pid);
            let status = Command::new(program)
                .args(
                    program_args
                        .iter()
                        .map(|a| a.replace("{url}", &cluster.url)),
                )
                .env(URL_VARIABLE, &cluster.url)
                .status();
            cluster.remove()?;
            exit_ok(program, status)
        }
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown postgres command `{other}`\n\n{USAGE}")),
    }
}

fn exit_ok(program: &str, status: std::io::Result<ExitStatus>) -> Result<(), String> {
    let status = status.map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{program} failed ({status})"))
    }
}

/// `target/postgres` of the workspace (or of `CARGO_TARGET_DIR`).
pub fn target_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.join("target"), PathBuf::from);
    target.join("postgres")
}

/// A running cluster, stopped (by its postmaster's process id) and removed when dropped.
pub struct Cluster {
    /// `postgres://…` of its `postgres` database.
    pub url: String,
    dir: PathBuf,
    pid: i32,
}

impl Cluster {
    /// Makes a fresh cluster in `dir/data` (removing whatever `dir` held) and starts it on a free
    /// port of 127.0.0.1. A server still running from an earlier cluster in `dir` is stopped first.
    pub fn start(dir: &Path) -> Result<Cluster, String> {
        Cluster::start_listening(dir, &[], &[])
    }

    /// [`Cluster::start`], the server also listening on each of `addresses` (which must be this
    /// machine's already) and trusting connections from each of `clients` besides 127.0.0.1.
    pub fn start_listening(
        dir: &Path,
        addresses: &[Ipv4Addr],
        clients: &[Ipv4Addr],
    ) -> Result<Cluster, String> {
        let bin = server_programs()?;
        let user = server_user()?;
        if let Some(pid) = postmaster_pid(&dir.join("data"))? {
            stop_pid(pid)?;
        }
        if dir.exists() {
            std::fs::remove_dir_all(dir)
                .map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        if let Some(user) = &user {
            std::os::unix::fs::chown(dir, Some(user.uid), Some(user.gid))
                .map_err(|e| format!("cannot give {} to {SYSTEM_USER}: {e}", dir.display()))?;
        }
        let data = dir.join("data");
        let initdb = as_server_user(Command::new(bin.join("initdb")), &user, dir)
            .arg("--pgdata")
            .arg(&data)
            .args(["--username", SUPERUSER, "--auth=trust", "--encoding=UTF8"])
            // A throwaway cluster: `--no-sync` skips flushing the template files at creation;
            // the server itself runs with its durable defaults (fsync on), so commits cost
            // what they cost on a real server.
            .args(["--locale=C", "--no-sync"])
            .output()
            .map_err(|e| format!("cannot run {}: {e}", bin.join("initdb").display()))?;
        if !initdb.status.success() {
            return Err(format!(
                "initdb failed ({}): {}",
                initdb.status,
                String::from_utf8_lossy(&initdb.stderr).trim()
            ));
        }
        if !clients.is_empty() {
            let hba = data.join("pg_hba.conf");
            let mut rules = std::fs::read_to_string(&hba)
                .map_err(|e| format!("cannot read {}: {e}", hba.display()))?;
            for client in clients {
                rules.push_str(&format!("host all all {client}/32 trust\n"));
            }
            std::fs::write(&hba, rules)
                .map_err(|e| format!("cannot write {}: {e}", hba.display()))?;
        }
        let port = free_port()?;
        let listen: Vec<String> = std::iter::once(Ipv4Addr::LOCALHOST)
            .chain(addresses.iter().copied())
            .map(|a| a.to_string())
            .collect();
        let options = format!(
            "-c listen_addresses='{}' -c port={port} -c unix_socket_directories='' \
             -c max_connections=200",
            listen.join(",")
        );
        let started = as_server_user(Command::new(bin.join("pg_ctl")), &user, dir)
            .arg("start")
            .arg("--pgdata")
            .arg(&data)
            .arg("--log")
            .arg(dir.join("server.log"))
            .args(["--wait", "--timeout", &WAIT.as_secs().to_string()])
            .args(["-o", &options])
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", bin.join("pg_ctl").display()))?;
        if !started.status.success() {
            let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
            return Err(format!(
                "pg_ctl could not start the server ({}): {}\n{}",
                started.status,
                String::from_utf8_lossy(&started.stderr).trim(),
                log.trim()
            ));
        }
        let pid = postmaster_pid(&data)?.ok_or_else(|| {
            format!(
                "the server started but {} has no process id",
                data.display()
            )
        })?;
        let url = format!("postgres://{SUPERUSER}@127.0.0.1:{port}/postgres");
        std::fs::write(dir.join("url"), &url)
            .map_err(|e| format!("cannot write {}: {e}", dir.join("url").display()))?;
        Ok(Cluster {
            url,
            dir: dir.to_path_buf(),
            pid,
        })
    }

    /// Stops the server and removes its directory.
    pub fn remove(mut self) -> Result<(), String> {
        let pid = std::mem::replace(&mut self.pid, 0);
        stop_pid(pid)?;
        std::fs::remove_dir_all(&self.dir)
            .map_err(|e| format!("cannot remove {}: {e}", self.dir.display()))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.pid != 0 {
            let _ = stop_pid(self.pid);
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The URL of the cluster running in `dir`, if one is.
fn running_url(dir: &Path) -> Result<Option<String>, String> {
    if postmaster_pid(&dir.join("data"))?.is_none() {
        return Ok(None);
    }
    let url = std::fs::read_to_string(dir.join("url"))
        .map_err(|e| format!("cannot read {}: {e}", dir.join("url").display()))?;
    Ok(Some(url.trim().to_string()))
}

/// The process id of the postmaster running on `data`: the first line of its
/// `postmaster.pid`, if that process is alive.
fn postmaster_pid(data: &Path) -> Result<Option<i32>, String> {
    let file = data.join("postmaster.pid");
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let pid: i32 = text
        .lines()
        .next()
        .and_then(|line| line.trim().parse().ok())
        .filter(|pid| *pid > 0)
        .ok_or_else(|| format!("{} does not start with a process id", file.display()))?;
    Ok(alive(pid).then_some(pid))
}

fn alive(pid: i32) -> bool {
    // Signal 0 checks that the process exists without touching it.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Asks the postmaster `pid` for a fast shutdown (SIGINT: connections are closed, the data is
/// flushed) and waits until it is gone; one that is still there after [`WAIT`] is killed.
fn stop_pid(pid: i32) -> Result<(), String> {
    if pid <= 0 || !alive(pid) {
        return Ok(());
    }
    if unsafe { libc::kill(pid, libc::SIGINT) } != 0 {
        return Err(format!(
            "cannot signal the postmaster {pid}: {}",
            std::io::Error::last_os_error()
        ));
    }
    let started = Instant::now();
    while alive(pid) {
        if started.elapsed() > WAIT {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            return Err(format!(
                "the postmaster {pid} did not stop within {} s and was killed",
                WAIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(|e| format!("cannot find a free port on 127.0.0.1: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port on 127.0.0.1: {e}"))
}

/// The user and group a command runs as.
struct ServerUser {
    uid: u32,
    gid: u32,
    home: PathBuf,
}

/// `None` when this process is not root (the server runs as whoever runs this); as root, the
/// `postgres` system user, created when missing.
fn server_user() -> Result<Option<ServerUser>, String> {
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    if let Some(user) = lookup_user(SYSTEM_USER) {
        return Ok(Some(user));
    }
    eprintln!(
        "==> creating the system user `{SYSTEM_USER}` to run the server (initdb refuses root)"
    );
    let status = Command::new("useradd")
        .args(["--system", "--user-group", "--no-create-home"])
        .args(["--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin"])
        .arg(SYSTEM_USER)
        .status()
        .map_err(|e| format!("cannot run useradd: {e}"))?;
    if !status.success() {
        return Err(format!(
            "useradd could not create `{SYSTEM_USER}` ({status})"
        ));
    }
    lookup_user(SYSTEM_USER)
        .map(Some)
        .ok_or_else(|| format!("useradd succeeded but `{SYSTEM_USER}` is still unknown"))
}

fn lookup_user(name: &str) -> Option<ServerUser> {
    let name = CString::new(name).ok()?;
    // getpwnam's record is static; it is copied out at once, and xtask calls it from one thread.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        return None;
    }
    let entry = unsafe { &*entry };
    let home = unsafe { std::ffi::CStr::from_ptr(entry.pw_dir) };
    Some(ServerUser {
        uid: entry.pw_uid,
        gid: entry.pw_gid,
        home: PathBuf::from(home.to_string_lossy().into_owned()),
    })
}

/// `command`, run from `dir` as `user` when there is one (its supplementary groups dropped).
fn as_server_user(mut command: Command, user: &Option<ServerUser>, dir: &Path) -> Command {
    command.current_dir(dir).env("LC_ALL", "C");
    if let Some(user) = user {
        command
            .uid(user.uid)
            .gid(user.gid)
            .env("HOME", &user.home)
            .env("USER", SYSTEM_USER)
            .env("LOGNAME", SYSTEM_USER);
    }
    command
}

/// The directory holding `initdb`, `pg_ctl` and `postgres`, installing the server when missing.
fn server_programs() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("PTC_POSTGRES_BIN") {
        let dir = PathBuf::from(dir);
        return if dir.join("initdb").is_file() && dir.join("pg_ctl").is_file() {
            Ok(dir)
        } else {
            Err(format!(
                "PTC_POSTGRES_BIN={} holds no initdb and pg_ctl",
                dir.display()
            ))
        };
    }
    if let Some(dir) = installed_server() {
        return Ok(dir);
    }
    install_server()?;
    installed_server().ok_or_else(|| {
        "the server package was installed, but no /usr/lib/postgresql/VERSION/bin/initdb is there"
            .to_string()
    })
}

/// The newest `/usr/lib/postgresql/VERSION/bin` that has `initdb` and `pg_ctl`.
fn installed_server() -> Option<PathBuf> {
    let versions = std::fs::read_dir("/usr/lib/postgresql").ok()?;
    versions
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()).then_some((version, bin))
        })
        .max_by_key(|(version, _)| *version)
        .map(|(_, bin)| bin)
}

/// The server package of each Debian release the project runs on: one major version per
/// release, as the release ships it (its security updates included).
const SERVER_PACKAGES: &[(&str, &str)] =
    &[("bookworm", "postgresql-15"), ("trixie", "postgresql-17")];

fn install_server() -> Result<(), String> {
    let release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let codename = release
        .lines()
        .find_map(|line| line.strip_prefix("VERSION_CODENAME="))
        .map(|c| c.trim_matches('"').to_string())
        .unwrap_or_default();
    let Some((_, package)) = SERVER_PACKAGES.iter().find(|(name, _)| *name == codename) else {
        return Err(format!(
            "PostgreSQL's server is not installed, and this is not a Debian release the project \
             knows ({}); install the server and set PTC_POSTGRES_BIN to the directory of its \
             initdb and pg_ctl",
            if codename.is_empty() {
                "no VERSION_CODENAME in /etc/os-release"
            } else {
                &codename
            }
        ));
    };
    if unsafe { libc::geteuid() } != 0 {
        return Err(format!(
            "PostgreSQL's server is not installed; install it as root with \
             `apt-get update && apt-get install -y --no-install-recommends {package}`"
        ));
    }
    eprintln!("==> installing PostgreSQL's server ({package}) with apt-get");
    for args in [
        vec!["update"],
        vec!["install", "-y", "--no-install-recommends", package],
    ] {
        let status = Command::new("apt-get")
            .args(&args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| format!("cannot run apt-get: {e}"))?;
        if !status.success() {
            return Err(format!("apt-get {} failed ({status})", args.join(" ")));
        }
    }
    Ok(())
}
