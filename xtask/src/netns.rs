//! `cargo xtask fleet-netns`: several "machines" on one: network namespaces, each reaching this
//! machine's own namespace over a veth pair, and a throwaway PostgreSQL cluster listening on the
//! host side of every pair, for measuring a fleet of workers that reach their database over a
//! network link rather than the loopback interface.
//!
//! Namespace `k` (0, 1, …) is joined to the host by a veth pair: the host side has
//! 10.213.k.1/24, the namespace side 10.213.k.2/24 (and the namespace's own loopback is up).
//! The cluster (made as `cargo xtask postgres` makes one) listens on 127.0.0.1 and on every
//! 10.213.k.1, and trusts connections from 127.0.0.1 and every 10.213.k.2 only. The command
//! runs with `PTC_POSTGRES_URL` set to the cluster's URL on 127.0.0.1 and `PTC_FLEET_NETNS` to
//! the namespaces, `NAME=HOST_ADDRESS` separated by spaces; a worker started with `ip netns exec
//! NAME` reaches the cluster (and anything else listening on the host address) at
//! `HOST_ADDRESS`. The namespaces, their links and the cluster are removed afterwards, also
//! when the command fails or is interrupted with Ctrl-C; namespaces left by an earlier run
//! that was killed outright are removed at the start.
//!
//! Making namespaces needs root (`CAP_SYS_ADMIN` and `CAP_NET_ADMIN`) and the `ip` program; a
//! machine that does not permit them (a container without those capabilities) is told apart
//! from other failures, and nothing is measured.

use std::net::Ipv4Addr;
use std::process::Command;

use crate::postgres::{Cluster, URL_VARIABLE, target_dir};

/// The variable that carries the namespaces to the command.
pub const NAMESPACES_VARIABLE: &str = "PTC_FLEET_NETNS";

/// How many namespaces are made unless told otherwise.
const DEFAULT_COUNT: u8 = 4;

/// The start of every namespace's name; the rest is the process id of the run that made it.
const PREFIX: &str = "ptcfleet";

const USAGE: &str = "usage: cargo xtask fleet-netns [--count N] [-- COMMAND ...]

  Makes N network namespaces (4 by default, at most 16), each joined to this machine by a veth
  pair (host side 10.213.K.1, namespace side 10.213.K.2), and a PostgreSQL cluster listening
  on 127.0.0.1 and every host side; runs COMMAND with PTC_POSTGRES_URL (the cluster on
  127.0.0.1) and PTC_FLEET_NETNS (`NAME=HOST_ADDRESS ...`) set; then removes the cluster and
  the namespaces. Needs root. Without COMMAND it runs the measurement of worker processes in
  namespaces beside plain ones:

    cargo test -p ptc-cli --test it fleet_throughput_across_network_namespaces -- --ignored --nocapture";

pub fn run(args: &[String]) -> Result<(), String> {
    let mut count = DEFAULT_COUNT;
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        match first.as_str() {
            "--count" => {
                let (value, tail) = tail
                    .split_first()
                    .ok_or_else(|| format!("--count needs a number\n\n{USAGE}"))?;
                count = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=16).contains(n))
                    .ok_or_else(|| format!("--count takes 1 to 16, got `{value}`"))?;
                rest = tail;
            }
            "--" => {
                rest = tail;
                break;
            }
            "-h" | "--help" | "help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ => break,
        }
    }
    let command: Vec<String> = if rest.is_empty() {
        [
            "cargo",
            "test",
            "-p",
            "ptc-cli",
            "--test",
            "it",
            "fleet_throughput_across_network_namespaces",
            "--",
            "--ignored",
            "--nocapture",
        ]
        .map(str::to_string)
        .to_vec()
    } else {
        rest.to_vec()
    };
    check_permitted()?;
    remove_stale();
    let namespaces = Namespaces::make(count)?;
    let cluster = Cluster::start_listening(
        &target_dir().join(format!("netns-{}", std::process::id())),
        &namespaces.hosts(),
        &namespaces.clients(),
    )?;
    eprintln!(
        "==> {} namespaces; the cluster {} also listens on {}",
        namespaces.names.len(),
        cluster.url,
        namespaces
            .hosts()
            .iter()
            .map(Ipv4Addr::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (program, program_args) = command.split_first().expect("a command");
    // Ctrl-C reaches the command (in the same process group) and ends it; this process only
    // notes it, so that the cluster and the namespaces are removed below. The handler is reset
    // to the default in the command by exec.
    ignore_interrupts();
    let status = Command::new(program)
        .args(program_args)
        .env(URL_VARIABLE, &cluster.url)
        .env(NAMESPACES_VARIABLE, namespaces.variable())
        .status();
    let removed = cluster.remove();
    drop(namespaces);
    removed?;
    let status = status.map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{program} failed ({status})"))
    }
}

/// Makes and removes a namespace of its own, to tell a machine that does not permit
/// namespaces from later failures.
fn check_permitted() -> Result<(), String> {
    let probe = format!("{PREFIX}{}-probe", std::process::id());
    let made = Command::new("ip").args(["netns", "add", &probe]).output();
    match made {
        Ok(out) if out.status.success() => {
            let _ = Command::new("ip")
                .args(["netns", "delete", &probe])
                .output();
            Ok(())
        }
        Ok(out) => Err(format!(
            "this machine does not permit network namespaces here: `ip netns add` failed ({}): \
             {}; the measurement needs root with CAP_SYS_ADMIN and CAP_NET_ADMIN (a container \
             must be given them), and nothing was measured",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!(
            "cannot run `ip` ({e}): network namespaces are made with iproute2's `ip` \
             (Debian's package `iproute2`); nothing was measured"
        )),
    }
}

/// Removes the namespaces of earlier runs whose process is gone (killed before it could).
fn remove_stale() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or_default();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        // Signal 0 checks that the process exists without touching it.
        if pid != std::process::id() as i32 && unsafe { libc::kill(pid, 0) } != 0 {
            eprintln!("==> removing the namespace {name} left by an earlier run");
            let _ = Command::new("ip").args(["netns", "delete", name]).output();
        }
    }
}

/// The namespaces made, deleted (with their veth pairs) when dropped.
struct Namespaces {
    names: Vec<String>,
}

impl Namespaces {
    fn make(count: u8) -> Result<Namespaces, String> {
        let taken = ip(&["-4", "-o", "address", "show"])?;
        if let Some(line) = taken.lines().find(|l| l.contains(" 10.213.")) {
            return Err(format!(
                "an interface of this machine already has an address in 10.213.0.0/16, which \
                 the namespaces use (is another measurement running?): {}",
                line.trim()
            ));
        }
        let pid = std::process::id();
        let mut made = Namespaces { names: Vec::new() };
        for k in 0..count {
            let name = format!("{PREFIX}{pid}-{k}");
            let (host, inside) = (format!("pf{pid}h{k}"), format!("pf{pid}n{k}"));
            ip(&["netns", "add", &name])?;
            made.names.push(name.clone());
            ip(&[
                "link", "add", &host, "type", "veth", "peer", "name", &inside,
            ])?;
            ip(&["link", "set", &inside, "netns", &name])?;
            ip(&["address", "add", &format!("10.213.{k}.1/24"), "dev", &host])?;
            ip(&["link", "set", &host, "up"])?;
            let within = |args: &[&str]| {
                let mut all = vec!["netns", "exec", &name, "ip"];
                all.extend_from_slice(args);
                ip(&all)
            };
            within(&["link", "set", "lo", "up"])?;
            within(&[
                "address",
                "add",
                &format!("10.213.{k}.2/24"),
                "dev",
                &inside,
            ])?;
            within(&["link", "set", &inside, "up"])?;
        }
        Ok(made)
    }

    /// The host side of each pair, where the cluster listens.
    fn hosts(&self) -> Vec<Ipv4Addr> {
        (0..self.names.len() as u8)
            .map(|k| Ipv4Addr::new(10, 213, k, 1))
            .collect()
    }

    /// The namespace side of each pair, whose connections the cluster trusts.
    fn clients(&self) -> Vec<Ipv4Addr> {
        (0..self.names.len() as u8)
            .map(|k| Ipv4Addr::new(10, 213, k, 2))
            .collect()
    }

    /// `NAME=HOST_ADDRESS ...`
    fn variable(&self) -> String {
        self.names
            .iter()
            .zip(self.hosts())
            .map(|(name, host)| format!("{name}={host}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end inside it, and with it the host end.
        for name in &self.names {
            if let Err(e) = ip(&["netns", "delete", name]) {
                eprintln!("==> cannot remove the namespace {name}: {e}");
            }
        }
    }
}

/// Runs `ip ARGS` and returns its output, or its error output as the error.
fn ip(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run `ip {}`: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`ip {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

extern "C" fn note_interrupt(_: libc::c_int) {}

fn ignore_interrupts() {
    let handler = note_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler does nothing, so it is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}
