//! Sandbox limits.
//!
//! Every limit is a cheap counter checked where the work happens: a step counter per evaluation
//! step (the clock is read only every few thousand steps), a depth counter per function call, a
//! byte estimate per value built, counters for tool calls and printed output. Hitting a limit
//! ends the run with an error of the limit's own kind; a program cannot catch it.

use crate::reader::ReadLimits;
use std::time::Duration;

/// All limits of one run. `Limits::default()` suits programs an LLM writes for a single turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Wall-clock budget for a run: reading, analysis and evaluation (default 1 s). Time spent
    /// inside host tools is not counted: tools have their own [`Limits::tool_timeout`].
    pub timeout: Duration,
    /// Evaluation steps (function calls, loop iterations, elements processed by builtins;
    /// default 50,000,000).
    pub max_steps: u64,
    /// Deepest chain of nested function calls (default 2,000).
    pub max_call_depth: usize,
    /// Budget in bytes for the values a run builds, counted as they are built (default
    /// 256 MiB). What a run builds is counted as allocated and never given back, which makes
    /// the check cheap and keeps the peak below the budget; only the containers themselves (a
    /// collection's or closure's own allocation, the copy made to change a small shared
    /// collection) are given back when dropped, so that a loop making one per step is not
    /// charged for each. The counts are estimates: docs/security.md says what they miss.
    pub max_memory_bytes: usize,
    /// Deepest nesting of collections inside one value (default 1,000). Deeper values could not
    /// be printed, compared or freed without exhausting the stack.
    pub max_value_depth: u32,
    /// Tool calls per run (default 1,000).
    pub max_tool_calls: usize,
    /// Longest a single tool call may take (default 30 s); `None` waits forever.
    pub tool_timeout: Option<Duration>,
    /// Total bytes printed per run (default 1 MiB).
    pub max_output_bytes: usize,
    /// Each `println` entry is cut to this many characters (default 2,000).
    pub max_print_chars: usize,
    /// Bounds on the program text.
    pub read: ReadLimits,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_secs(1),
            max_steps: 50_000_000,
            max_call_depth: 2_000,
            max_memory_bytes: 256 << 20,
            max_value_depth: crate::value::MAX_VALUE_DEPTH,
            max_tool_calls: 1_000,
            tool_timeout: Some(Duration::from_secs(30)),
            max_output_bytes: 1 << 20,
            max_print_chars: 2_000,
            read: ReadLimits::default(),
        }
    }
}
