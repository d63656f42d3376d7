//! The integration tests of `ptc-mcp`, one module per topic, built as one test binary
//! (one link instead of one per file).

#[path = "../support/mod.rs"]
mod support;

mod everything;
mod faults;
mod http;
mod reference_servers;
mod restart;
mod resume;
mod watch;
