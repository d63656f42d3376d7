//! Many agents at once: N concurrent runs (10,000 unless `PTC_SCALE_RUNS` says otherwise) on
//! the default multi-threaded runtime, each with a scripted model whose program calls a tool
//! that sleeps 1 s: once, then twice inside `pmap` (three calls, two seconds of waiting).
//! Default limits. Reports the wall time, the peak number of OS threads, the peak resident
//! memory and the memory each suspended run holds (resident and virtual), and checks that
//! every run returned its own right value.
//!
//! A scenario of `cargo xtask bench` (`cargo xtask bench agents_at_scale` runs only it), not a
//! criterion benchmark: one sample takes seconds and the numbers that matter are not times.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ptc_agent::{Agent, RunOptions, ScriptedLlm, ToolError, async_tool};
use ptc_lisp::Value;

const NAME: &str = "agents_at_scale";
const PROGRAM: &str = "```clojure
(let [a (tool/sleep data/i)
      bc (pmap tool/sleep [(+ data/i 1) (+ data/i 2)])]
  (return (+ a (reduce + bc))))
```";

fn main() {
    // Cargo passes `--bench` and criterion's options; a bare word is a name filter.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !filters.is_empty() && !filters.iter().any(|f| NAME.contains(f.as_str())) {
        return;
    }
    let runs: usize = std::env::var("PTC_SCALE_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(scenario(runs));
    sandbox_alone(runs);
}

/// The sandbox's own share of a suspended run: `runs` programs started with
/// `Runtime::start` and left waiting inside `pmap` (the run's stack and two items' stacks).
fn sandbox_alone(runs: usize) {
    let mut tools = ptc_lisp::Tools::new();
    tools.insert_awaited(ptc_lisp::ToolSpec::new("sleep", "Sleeps"));
    let runtime = ptc_lisp::Runtime::new().with_tools(tools);
    let memory = ptc_lisp::UserNamespace::new();
    let before = status();
    let waiting: Vec<ptc_lisp::SuspendedRun> = (0..runs)
        .map(|i| {
            let source = format!("(+ {i} (reduce + (pmap tool/sleep [1 2])))");
            match runtime.start(&source, &memory) {
                ptc_lisp::Progress::Suspended(run) => run,
                ptc_lisp::Progress::Finished(out) => panic!("did not wait: {:?}", out.outcome),
            }
        })
        .collect();
    let after = status();
    let per_run = |now: u64, before: u64| now.saturating_sub(before) as f64 / runs as f64;
    println!(
        "  sandbox alone        {:.1} KiB resident, {:.1} KiB virtual per run waiting inside pmap \
         ({runs} runs of Runtime::start)",
        per_run(after.rss_kib, before.rss_kib),
        per_run(after.virtual_kib, before.virtual_kib)
    );
    drop(waiting);
}

/// CPU time the process has used (user and system), from `/proc/self/stat`.
fn cpu_time() -> Duration {
    let text = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name (which may hold spaces) in parentheses.
    let fields: Vec<&str> = text
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the line, 11 and 12 after the name; clock ticks
    // are 1/100 s on Linux.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// What `/proc/self/status` says now.
#[derive(Debug, Clone, Copy, Default)]
struct Status {
    threads: u64,
    /// Resident memory, KiB.
    rss_kib: u64,
    /// Peak resident memory so far, KiB.
    hwm_kib: u64,
    /// Virtual memory, KiB.
    virtual_kib: u64,
}

fn status() -> Status {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    Status {
        threads: field("Threads:"),
        rss_kib: field("VmRSS:"),
        hwm_kib: field("VmHWM:"),
        virtual_kib: field("VmSize:"),
    }
}

async fn scenario(runs: usize) {
    let sleep = Arc::new(async_tool(
        "sleep",
        "Sleeps one second, then returns n",
        |n: i64| async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok::<_, ToolError>(n)
        },
    ));
    let agent = Agent::builder("Add up the numbers")
        .llm(ScriptedLlm::new((0..runs).map(|_| PROGRAM)))
        .tool_arc(sleep)
        .build()
        .expect("the agent");
    let idle = status();
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        std::thread::spawn(move || {
            let mut peak = Status::default();
            // Resident and virtual memory 1.5 s in: every run waits inside pmap then.
            let mut suspended = None;
            let started = Instant::now();
            while sampling.load(Ordering::Relaxed) {
                let now = status();
                peak.threads = peak.threads.max(now.threads);
                peak.hwm_kib = peak.hwm_kib.max(now.hwm_kib);
                if suspended.is_none() && started.elapsed() >= Duration::from_millis(1_500) {
                    suspended = Some(now);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            (peak, suspended)
        })
    };
    let started = Instant::now();
    let cpu_before = cpu_time();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..runs {
        let agent = agent.clone();
        tasks.spawn(async move {
            let i = i as i64 * 10;
            let step = agent
                .run_with(RunOptions::new().with_data_value("i", Value::Int(i)))
                .await;
            (i, step)
        });
    }
    let mut wrong = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        let (i, step) = joined.expect("a run's task");
        let expected = Value::Int(3 * i + 3);
        match step {
            Ok(step) if step.value() == Some(&expected) => {}
            Ok(step) => wrong.push(format!("run {i}: {:?}", step.outcome)),
            Err(e) => wrong.push(format!("run {i}: {e}")),
        }
    }
    let wall = started.elapsed();
    let cpu = cpu_time().saturating_sub(cpu_before);
    sampling.store(false, Ordering::Relaxed);
    let (peak, suspended) = sampler.join().expect("the sampler");
    let per_run = |now: u64, before: u64| now.saturating_sub(before) as f64 * 1024.0 / runs as f64;
    println!("{NAME}: {runs} concurrent runs, 3 calls of a 1 s tool each (2 s of waiting)");
    println!("  wall time            {:.2} s", wall.as_secs_f64());
    println!("  CPU time             {:.2} s", cpu.as_secs_f64());
    println!(
        "  right values         {}/{runs}",
        runs - wrong.len().min(runs)
    );
    println!(
        "  peak OS threads      {} (the sampling thread included)",
        peak.threads
    );
    println!(
        "  peak RSS             {:.1} MiB (idle before the runs: {:.1} MiB)",
        peak.hwm_kib as f64 / 1024.0,
        idle.rss_kib as f64 / 1024.0
    );
    if let Some(s) = suspended {
        println!(
            "  per suspended run    {:.1} KiB resident, {:.1} KiB virtual (1.5 s in, all waiting \
             inside pmap)",
            per_run(s.rss_kib, idle.rss_kib) / 1024.0,
            per_run(s.virtual_kib, idle.virtual_kib) / 1024.0
        );
    }
    for line in wrong.iter().take(5) {
        println!("  WRONG {line}");
    }
    assert!(
        wrong.is_empty(),
        "{} runs returned a wrong value",
        wrong.len()
    );
}
