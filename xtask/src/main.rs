//! Project automation, run as `cargo xtask <subcommand>`.

// The modules, in layer order: each may use only the modules declared above it (`cargo xtask
// layers`, part of `cargo xtask ci`, checks it). Each has a comment line of its own, so that
// formatting keeps the order.

// The `.cases` file format.
mod cases;
// `cargo xtask docs`.
mod docs;
// `cargo xtask fuzz`.
mod fuzz;
// The run crate's dependency tree: no async runtime, no HTTP.
mod run_deps;
// `cargo xtask layers`.
mod layers;
// `cargo xtask local-model`.
mod local_model;
// `cargo xtask mcp-servers`.
mod mcp_servers;
// `cargo xtask browser`.
mod browser;
// `cargo xtask phoenix`.
mod phoenix;
// `cargo xtask eval`.
mod eval;
// `cargo xtask bench peers`.
mod peers;
// `cargo xtask python` and `cargo xtask bench python`.
mod python;
// Whether PTC-Lisp gives a conformance case's result.
mod verdict;
// The conformance cases not passed yet.
mod pending;
// `cargo xtask conformance`.
mod conformance;
// `cargo xtask postgres`: a throwaway PostgreSQL cluster.
mod postgres;
// `cargo xtask fleet-netns`: network namespaces reaching one PostgreSQL cluster.
mod netns;
// `cargo xtask ci` and `cargo xtask bench`.
mod ci;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <subcommand>

subcommands:
  ci                                    every check CI runs: layers, fmt, clippy, tests, doc tests, benches compile, docs,
                                        the Python package's tests
  bench [FILTER]                        run the benchmarks: criterion (medians in target/criterion),
                                        agents_at_scale (10,000 concurrent agent runs)
  bench peers                           ptc-rs side by side with pydantic-monty and Clojure 1.11
                                        (installs monty into target/peers; needs python3, clojure)
  bench python                          the Python package side by side with pydantic-monty, in one
                                        process (both pinned, installed under target/python)
  browser                               install headless Chromium (Debian's package, apt-get) for the
                                        tests of the HTML pages, when it is missing
  phoenix                               install Arize Phoenix (pinned, from PyPI) into target/phoenix:
                                        the OpenTelemetry receiver of the `ptc run --otlp` test
  conformance [--regenerate | --docs | --pending]
                                        check (or regenerate) the Clojure conformance corpus,
                                        its table of Clojure vars and its pending list
  docs [--check]                        write docs/language.md from the builtin registry (or check it)
  layers                                check that every crate's modules use only the modules above them, with no import circle,
                                        and that ptc-run builds without tokio, async-trait or HTTP
  eval --llm SPEC [--runs N] [--compression SPEC ...] [--missions GLOB ...]
                                        run the agent missions against a model; report in target/eval
  fuzz [--minutes N] [--target NAME]    run the fuzz targets in fuzz/ (cargo-fuzz, nightly) N minutes each
  local-model <setup | serve | run -- COMMAND>
                                        a real small model (SmolLM2-135M) behind a local OpenAI-compatible server
  python [--release | wheel]            build the Python package's wheel (maturin, pinned) into
                                        target/python, install it in a virtual environment there and
                                        run its tests; `wheel`: only build it, in release mode
  mcp-servers                           install the pinned MCP servers the tests and missions use (npm ci)
  postgres [start | stop | url | run -- COMMAND]
                                        a throwaway PostgreSQL cluster on 127.0.0.1 (target/postgres),
                                        for the tests of the PostgreSQL run store
  fleet-netns [--count N] [-- COMMAND]  network namespaces joined by veth pairs to a throwaway PostgreSQL cluster
                                        listening on their host sides; runs the throughput measurement of
                                        worker processes in them beside plain ones (needs root)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci::ci(&args[1..]),
        Some("bench") if args.get(1).map(String::as_str) == Some("peers") => peers::run(),
        Some("bench") if args.get(1).map(String::as_str) == Some("python") => python::bench(),
        Some("bench") => ci::bench(&args[1..]),
        Some("browser") => browser::run(&args[1..]),
        Some("phoenix") => phoenix::run(&args[1..]),
        Some("conformance") => conformance::run(&args[1..]),
        Some("docs") => docs::run(&args[1..]),
        Some("eval") => eval::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("layers") => layers::run(&args[1..]),
        Some("local-model") => local_model::run(&args[1..]),
        Some("mcp-servers") => mcp_servers::run(),
        Some("postgres") => postgres::run(&args[1..]),
        Some("fleet-netns") => netns::run(&args[1..]),
        Some("python") => python::run(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown subcommand `{other}`\n\n{USAGE}")),
        None => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
