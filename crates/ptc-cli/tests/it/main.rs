//! The integration tests of `ptc-cli`, one module per topic, built as one test binary
//! (one link instead of one per file).

#[path = "../support/mod.rs"]
mod support;

mod demo_cli;
mod eval_cli;
mod exec_cli;
mod fleet_cli;
mod fleet_namespaces;
mod fleet_throughput;
mod json_schema_cli;
mod local_model;
mod mcp_cli;
mod otlp_cli;
mod peak_memory;
mod preview_cli;
mod render_cli;
mod repl_cli;
mod run_cli;
mod run_durable;
