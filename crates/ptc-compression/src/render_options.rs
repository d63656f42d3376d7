//! What a rendering needs besides the turns: the task and the size limits.

use ptc_lisp::{ToolSpec, Value};
use ptc_turn::Task;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Size limits of a rendering. The defaults are the required ones: the newest 15 `println`
/// entries and 20 tool calls; samples of at most 3 items and 80 characters
/// per string; tool-call arguments of at most 3 items and 60 characters; at most 8,000
/// characters of printed output in one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RenderLimits {
    /// Most recent `println` entries shown (one entry per call, however many lines).
    pub println_limit: usize,
    /// Most recent tool calls shown.
    pub tool_call_limit: usize,
    /// Items shown of a collection in a sample.
    pub sample_limit: usize,
    /// Characters shown of a string in a sample.
    pub sample_printable_limit: usize,
    /// Items shown of a collection in a tool-call argument.
    pub arg_limit: usize,
    /// Characters shown of a string in a tool-call argument.
    pub arg_printable_limit: usize,
    /// Characters of printed output shown in one message: the output section keeps its first
    /// and its last half, with a line saying how much was left out between them.
    pub output_char_limit: usize,
    /// Characters of a `data/` input shown whole in the first message: an input that prints in
    /// fewer is shown as the program sees it, a larger one by its shape over all of its items
    /// and a sample. 0 shows every input by its shape and sample.
    pub data_inline_chars: usize,
    /// Characters of tool results shown as samples in the feedback on a turn that printed:
    /// the first call of each tool is always shown, the others while this budget lasts; the
    /// rest show their type, with a line saying so. (A turn that printed nothing shows every
    /// result as a sample.)
    pub tool_result_chars: usize,
}

impl Default for RenderLimits {
    fn default() -> RenderLimits {
        RenderLimits {
            println_limit: 15,
            tool_call_limit: 20,
            sample_limit: 3,
            sample_printable_limit: 80,
            arg_limit: 3,
            arg_printable_limit: 60,
            output_char_limit: 8_000,
            data_inline_chars: 2_000,
            tool_result_chars: 1_500,
        }
    }
}

/// Everything a strategy renders besides the turns and the namespace.
///
/// ```
/// use ptc_compression::RenderOptions;
/// use ptc_turn::Task;
/// let task = Task { max_turns: 3, ..Task::new("Count the users") };
/// let opts = RenderOptions::from_task(&task);
/// assert_eq!(opts.max_turns, 3);
/// assert_eq!(opts.limits.println_limit, 15);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions<'a> {
    /// The mission, first in the first user message and never removed.
    pub mission: &'a str,
    /// Sent unchanged as the system message.
    pub system_prompt: &'a str,
    /// The `tool/` namespace, in the order shown.
    pub tools: &'a [ToolSpec],
    /// The `data/` namespace, shown in name order.
    pub data: &'a BTreeMap<String, Value>,
    /// What some `data/` inputs mean, shown at the end of their lines.
    pub data_descriptions: &'a BTreeMap<String, String>,
    /// The turn budget. Turns left is `max_turns` minus the turns recorded.
    pub max_turns: u32,
    /// Size limits (the required defaults unless configured).
    pub limits: RenderLimits,
}

static NO_DATA: BTreeMap<String, Value> = BTreeMap::new();
static NO_DESCRIPTIONS: BTreeMap<String, String> = BTreeMap::new();

impl<'a> RenderOptions<'a> {
    /// Options with no tools, no data and the default limits.
    pub fn new(mission: &'a str, system_prompt: &'a str, max_turns: u32) -> RenderOptions<'a> {
        RenderOptions {
            mission,
            system_prompt,
            tools: &[],
            data: &NO_DATA,
            data_descriptions: &NO_DESCRIPTIONS,
            max_turns,
            limits: RenderLimits::default(),
        }
    }

    /// The options of a recorded run, with the default limits.
    pub fn from_task(task: &'a Task) -> RenderOptions<'a> {
        RenderOptions {
            mission: &task.mission,
            system_prompt: &task.system_prompt,
            tools: &task.tools,
            data: &task.data,
            data_descriptions: &task.data_descriptions,
            max_turns: task.max_turns,
            limits: RenderLimits::default(),
        }
    }

    /// Show `tools` in the `tool/` section.
    pub fn with_tools(mut self, tools: &'a [ToolSpec]) -> RenderOptions<'a> {
        self.tools = tools;
        self
    }

    /// Show `data` in the `data/` section.
    pub fn with_data(mut self, data: &'a BTreeMap<String, Value>) -> RenderOptions<'a> {
        self.data = data;
        self
    }

    /// Render with `limits`.
    pub fn with_limits(mut self, limits: RenderLimits) -> RenderOptions<'a> {
        self.limits = limits;
        self
    }

    /// Single-shot runs are never compressed.
    pub fn is_single_shot(&self) -> bool {
        self.max_turns <= 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    // API-004, API-005, TRN-002, TRN-003: the default limits.
    #[test]
    fn default_limits_are_the_required_ones() {
        let limits = RenderLimits::default();
        assert_eq!(limits.println_limit, 15);
        assert_eq!(limits.tool_call_limit, 20);
        assert_eq!(
            (limits.sample_limit, limits.sample_printable_limit),
            (3, 80)
        );
        assert_eq!((limits.arg_limit, limits.arg_printable_limit), (3, 60));
    }
}
