//! The integration tests of `ptc-compression`, one module per topic, built as one test binary
//! (one link instead of one per file).

#[path = "../common/mod.rs"]
mod common;
#[path = "../fixtures/mod.rs"]
mod fixtures;

mod golden;
mod history_linear;
mod history_pairs_prop;
mod history_policy;
mod history_strategies;
mod requirements;
mod seed_rows;
mod tiktoken;
