//! The first request of a run, built without sending it: to see exactly what the model would
//! be given.

use std::fmt;

use ptc_compression::{Compression, RenderOptions, Uncompressed};

use crate::agent::Agent;
use crate::llm::LlmRequest;
use crate::prompt::SystemPrompt;
use crate::run::{RunError, RunOptions, request_for};

/// The system prompt and the first request of a run, as they would be sent. Its `Display`
/// shows both for a person: each message under a header with its role and size.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptPreview {
    /// The system prompt, with its size.
    pub system_prompt: SystemPrompt,
    /// The first request exactly as the model would receive it: system prompt, the first user
    /// message (mission, `tool/`, `data/`), the cacheable prefix, the reply token limit and the
    /// temperature.
    pub request: LlmRequest,
}

impl Agent {
    /// The system prompt and the first request a run with `options` would send, without
    /// sending it. The input is checked as the run would check it, so the errors are the
    /// run's.
    ///
    /// ```
    /// use ptc_agent::{Agent, RunOptions, ScriptedLlm};
    ///
    /// let agent = Agent::builder("Count the users")
    ///     .llm(ScriptedLlm::new(Vec::<String>::new()))
    ///     .data(&serde_json::json!({"users": ["ann", "bo"]}))
    ///     .build()
    ///     .unwrap();
    /// let preview = agent.preview_prompt(&RunOptions::new()).unwrap();
    /// assert_eq!(preview.request.system, agent.system_prompt().text);
    /// assert!(preview.request.messages[0].content.starts_with("Count the users\n\n;; === data/ ==="));
    /// ```
    pub fn preview_prompt(&self, options: &RunOptions<'_>) -> Result<PromptPreview, RunError> {
        let task = self.task_for(options)?;
        let settings = &self.inner.settings;
        let opts = RenderOptions::from_task(&task).with_limits(settings.render_limits());
        // With no turn yet, every strategy renders the system prompt and the mission message
        // the same way; a history policy always keeps both.
        let rendered = Uncompressed.to_messages(&[], &[], &opts);
        let request = request_for(
            &rendered.messages,
            &rendered.cache_points,
            settings,
            1,
            opts.tools,
        );
        Ok(PromptPreview {
            system_prompt: self.inner.system_prompt.clone(),
            request,
        })
    }
}

impl fmt::Display for PromptPreview {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prompt = &self.system_prompt;
        writeln!(
            f,
            "=== system ({} chars, about {} tokens) ===",
            prompt.chars, prompt.estimated_tokens
        )?;
        writeln!(f, "{}", self.request.system)?;
        for message in &self.request.messages {
            writeln!(
                f,
                "=== {} ({} chars) ===",
                message.role.as_str(),
                message.content.chars().count()
            )?;
            writeln!(f, "{}", message.content)?;
        }
        for breakpoint in &self.request.cache_breakpoints {
            writeln!(
                f,
                "=== cacheable prefix: the system prompt and the first {} bytes of message {} ===",
                breakpoint.byte_offset,
                breakpoint.message_index + 1
            )?;
        }
        Ok(())
    }
}
