//! Throughput of `ptc worker` processes on several "machines": each worker in a network
//! namespace of its own, reaching the one PostgreSQL server and its model server over a veth
//! pair (as a worker on another machine reaches them over the network), side by side, in one
//! sitting, with the same number of plain worker processes reaching them on 127.0.0.1. The
//! workload is that of `fleet_throughput` (200 runs of two turns, every model request answered
//! after 100 ms); 1, 2 and 4 workers of each kind are measured in turn (plain 1, namespaces 1,
//! plain 2, …), so that both kinds see the same load of the machine.
//!
//! `cargo xtask fleet-netns` makes the namespaces and a PostgreSQL cluster listening on their
//! host sides, runs this measurement (as root) and removes them; it sets `PTC_FLEET_NETNS`
//! (`NAME=HOST_ADDRESS ...`) and `PTC_POSTGRES_URL`.

use crate::fleet_throughput::{Measured, Placement, RUNS, measure, millis};

const COUNTS: [usize; 3] = [1, 2, 4];

/// The namespaces `cargo xtask fleet-netns` made: each one's name and the address on this
/// machine's side of its pair.
fn namespaces() -> Vec<(String, String)> {
    let value = std::env::var("PTC_FLEET_NETNS").unwrap_or_else(|_| {
        panic!(
            "PTC_FLEET_NETNS is not set: this measurement needs network namespaces and a \
             PostgreSQL server listening on their pairs; run it with `cargo xtask fleet-netns` \
             (as root)"
        )
    });
    value
        .split_whitespace()
        .map(|pair| {
            let (name, host) = pair
                .split_once('=')
                .unwrap_or_else(|| panic!("PTC_FLEET_NETNS holds `{pair}`, not NAME=ADDRESS"));
            (name.to_string(), host.to_string())
        })
        .collect()
}

fn row(kind: &str, m: &Measured, one: f64) {
    println!(
        "| {kind} | {} | {RUNS} | {:.2} s | {:.1} | {:.2}× | {} | {} | {} |",
        m.workers,
        m.wall.as_secs_f64(),
        m.runs_per_second(),
        m.runs_per_second() / one,
        millis(m.latency(0.5)),
        millis(m.latency(0.95)),
        millis(*m.gaps.last().expect("gaps")),
    );
}

#[test]
#[ignore = "a measurement (about 3 min) in network namespaces: run it with `cargo xtask fleet-netns`"]
fn fleet_throughput_across_network_namespaces() {
    let namespaces = namespaces();
    assert!(
        namespaces.len() >= *COUNTS.last().expect("counts"),
        "PTC_FLEET_NETNS names {} namespaces; the measurement needs {}",
        namespaces.len(),
        COUNTS.last().expect("counts")
    );
    let dir = crate::support::Scratch::new("fleet-namespaces");
    let data = dir.file("data.json", r#"{"n": 6}"#);
    let data = crate::support::utf8(&data).to_string();
    let placed = Placement::Namespaces(namespaces);
    let mut plain = Vec::new();
    let mut apart = Vec::new();
    for n in COUNTS {
        plain.push(measure(
            n,
            &Placement::Plain,
            &format!("ptc_cli_plain_{n}"),
            &data,
        ));
        apart.push(measure(n, &placed, &format!("ptc_cli_netns_{n}"), &data));
    }
    let one = plain[0].runs_per_second();
    println!(
        "| worker processes in | count | runs | wall time | runs per second | vs 1 plain | \
         claim latency p50 | p95 | max |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (p, a) in plain.iter().zip(&apart) {
        row("one namespace (127.0.0.1)", p, one);
        row("a namespace each (veth)", a, one);
    }
    println!();
    println!(
        "| count | runs per second, namespaces / plain | p95 claim latency, namespaces − plain |"
    );
    println!("|---|---|---|");
    for (p, a) in plain.iter().zip(&apart) {
        let p95 = a.latency(0.95).as_secs_f64() - p.latency(0.95).as_secs_f64();
        println!(
            "| {} | {:.2} | {:+.1} ms |",
            p.workers,
            a.runs_per_second() / p.runs_per_second(),
            p95 * 1000.0
        );
    }
}
