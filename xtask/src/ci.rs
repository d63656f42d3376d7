//! `cargo xtask ci` and `cargo xtask bench`: every check CI runs (the Python package's tests
//! included), and the benchmarks.

use std::process::Command;
use std::time::Instant;

/// One cargo invocation of the pipeline.
struct Step {
    name: &'static str,
    args: &'static [&'static str],
    /// Environment variables the step sets.
    env: &'static [(&'static str, &'static str)],
    /// Whether the step runs against a PostgreSQL server (the tests of the PostgreSQL store).
    postgres: bool,
}

const CI_STEPS: &[Step] = &[
    Step {
        name: "format",
        args: &["fmt", "--all", "--check"],
        env: &[],
        postgres: false,
    },
    Step {
        name: "clippy",
        args: &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ],
        env: &[],
        postgres: false,
    },
    Step {
        name: "tests (unit, integration, doc)",
        args: &["test", "--workspace", "--all-features"],
        env: &[],
        postgres: true,
    },
    Step {
        name: "benches compile",
        args: &["test", "--workspace", "--benches", "--no-run"],
        env: &[],
        postgres: false,
    },
    Step {
        name: "docs (every intra-doc link resolves, private items' too)",
        args: &[
            "doc",
            "--workspace",
            "--no-deps",
            "--all-features",
            "--document-private-items",
        ],
        env: &[("RUSTDOCFLAGS", "-D warnings")],
        postgres: false,
    },
];

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

fn run_step(name: &str, args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    eprintln!("==> {name}: cargo {}", args.join(" "));
    let started = Instant::now();
    let mut command = Command::new(cargo());
    // As from the shell, so that these builds and the Python wheel's reuse each other's crates.
    crate::python::as_from_the_shell(&mut command);
    let status = command
        .args(args)
        .envs(env.iter().copied())
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    eprintln!("    {name} took {:.1} s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("{name} failed ({status})"))
    }
}

/// Run every check, stopping at the first failure.
pub fn ci(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("ci takes no arguments, got `{extra}`"));
    }
    let started = Instant::now();
    eprintln!("==> every crate's modules are layered downward, with no import circle");
    crate::layers::run(&[])?;
    // Once per lock file: the tests of ptc-mcp, ptc and the benchmark run these servers.
    crate::mcp_servers::run()?;
    // The tests of the HTML pages open them in headless Chromium.
    crate::browser::ensure()?;
    // The test of `ptc run --otlp` exports a run to Arize Phoenix and reads its spans back.
    crate::phoenix::ensure()?;
    // The end-to-end tests of `ptc run` need the local model server; building its environment
    // first (once, then reused) makes a missing compiler or Python fail here, by name.
    eprintln!("==> local model environment (llama-cpp-python and SmolLM2, pinned)");
    let setup = Instant::now();
    let environment = crate::local_model::ensure()?;
    eprintln!(
        "    ready in {:.1} s: {}",
        setup.elapsed().as_secs_f64(),
        environment.model().display()
    );
    for step in CI_STEPS {
        if step.postgres {
            // A cluster of the step's own, stopped (and removed) when the step ends, passed or
            // failed: the cluster's guard stops it when dropped.
            eprintln!("==> PostgreSQL cluster for {}", step.name);
            let cluster =
                crate::postgres::Cluster::start(&crate::postgres::target_dir().join("ci"))?;
            eprintln!("    {}", cluster.url);
            let mut env = step.env.to_vec();
            env.push((crate::postgres::URL_VARIABLE, &cluster.url));
            let result = run_step(step.name, step.args, &env);
            cluster.remove()?;
            result?;
        } else {
            run_step(step.name, step.args, step.env)?;
        }
    }
    eprintln!("==> conformance corpus and generated docs are up to date");
    crate::conformance::run(&[])?;
    // After the workspace's tests: the wheel is built in their profile and reuses their crates.
    eprintln!("==> the Python package: wheel, install, tests");
    crate::python::run(&[])?;
    eprintln!(
        "==> all checks passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Run the criterion benchmarks; extra arguments go to criterion (e.g. a name filter).
pub fn bench(args: &[String]) -> Result<(), String> {
    let mut cargo_args = vec!["bench", "--workspace", "--"];
    cargo_args.extend(args.iter().map(String::as_str));
    run_step("benchmarks", &cargo_args, &[])
}
