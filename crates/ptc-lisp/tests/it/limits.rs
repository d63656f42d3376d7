//! The `;; limits:` line of the golden files: settings such as `timeout_ms=200 max_steps=1000`
//! applied to a starting set of limits.

use ptc_lisp::Limits;
use std::time::Duration;

/// `base` with each `(name, number)` setting applied. A setting that is not a number, or a
/// name no limit has, fails the test that wrote it.
pub(crate) fn limits_from(base: Limits, settings: &[(String, String)]) -> Limits {
    let mut limits = base;
    for (k, v) in settings {
        let n: u64 = v
            .parse()
            .unwrap_or_else(|_| panic!("limit {k}={v} is not a number"));
        match k.as_str() {
            "timeout_ms" => limits.timeout = Duration::from_millis(n),
            "max_steps" => limits.max_steps = n,
            "max_call_depth" => limits.max_call_depth = n as usize,
            "max_memory_bytes" => limits.max_memory_bytes = n as usize,
            "max_value_depth" => limits.max_value_depth = n as u32,
            "max_tool_calls" => limits.max_tool_calls = n as usize,
            "tool_timeout_ms" => limits.tool_timeout = Some(Duration::from_millis(n)),
            "max_output_bytes" => limits.max_output_bytes = n as usize,
            "max_print_chars" => limits.max_print_chars = n as usize,
            "max_program_bytes" => limits.read.max_program_bytes = n as usize,
            "max_depth" => limits.read.max_depth = n as usize,
            "max_number_literal_len" => limits.read.max_number_literal_len = n as usize,
            other => panic!("unknown limit {other}"),
        }
    }
    limits
}
