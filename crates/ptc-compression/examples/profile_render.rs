//! Renders the render benchmark's 32-turn history many times, for profilers
//! (`valgrind --tool=callgrind`, `perf`).
//! Usage: cargo run --release -p ptc-compression --example profile_render -- [iterations]

#[path = "../benches/render.rs"]
#[allow(dead_code)]
mod bench_history;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    bench_history::profile(n);
}
