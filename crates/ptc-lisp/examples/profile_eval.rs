//! Runs one benchmark program many times, for profilers (`valgrind --tool=callgrind`, `perf`).
//! Usage: cargo run --release -p ptc-lisp --example profile_eval -- small|pipeline|loop [iterations]

#[path = "../benches/eval.rs"]
#[allow(dead_code)]
mod bench_programs;

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "small".into());
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    bench_programs::profile(&which, n);
}
