//! The integration tests of `ptc-lisp`, one module per topic, built as one test binary
//! (one link instead of one per file).

// Shared with xtask, which uses the parts these tests do not.
#[allow(dead_code)]
#[path = "../../../../xtask/src/cases.rs"]
mod cases;
// Shared with xtask, which uses the parts these tests do not.
#[allow(dead_code)]
#[path = "../../../../xtask/src/pending.rs"]
mod pending;
#[path = "../support/rewrite.rs"]
mod rewrite;
// Shared with xtask, which uses the parts these tests do not.
#[allow(dead_code)]
#[path = "../../../../xtask/src/verdict.rs"]
mod verdict;

mod adversarial;
mod conformance;
mod convert;
mod eval_golden;
mod language_doc;
mod limits;
mod numeric_tower;
mod parallel;
mod random_programs;
mod reader_golden;
mod reader_proptest;
mod security_doc;
mod suspend;
