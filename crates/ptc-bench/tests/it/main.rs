//! The integration tests of `ptc-bench`, one module per topic, built as one test binary
//! (one link instead of one per file).

mod billing;
mod browser;
mod cli;
mod compiled;
mod pages;
mod replay;
mod solutions;
