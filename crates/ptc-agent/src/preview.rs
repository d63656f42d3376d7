//! The first request of a run, built without sending it: to see exactly what the model would
//! be given.

use std::fmt;

use std::time::Instant;

use ptc_turn::Usage;

use crate::agent::Agent;
use crate::llm::LlmRequest;
use crate::prompt::SystemPrompt;
use crate::run::{RunError, RunOptions};
use crate::tree::Tree;
use ptc_run::{Action, Event, Start};

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
        let inner = &self.inner;
        // A tree of its own: the preview takes no turn from the budget of a running tree.
        let tree = Tree::for_run(&inner.settings, Instant::now(), None);
        let mut core = inner.run_core(
            task,
            Start::new(),
            Instant::now(),
            inner.llm.pricing(),
            tree.turn_budget(),
        );
        let mut event = Event::Next;
        let request = loop {
            event = match core.advance(event, Instant::now()) {
                Action::Rendered { .. } => Event::Next,
                Action::TakeTurn => Event::TurnTaken {
                    granted: tree.take_turn(),
                },
                // With no turn yet, a history policy keeps the system prompt and the mission.
                Action::ApplyHistory(messages) => Event::HistoryApplied {
                    messages,
                    spent: Usage::default(),
                },
                Action::Ask(request) => break *request,
                action @ (Action::CallTools { .. } | Action::Recorded | Action::Finished) => {
                    unreachable!("a run's first action is a request: {action:?}")
                }
            };
        };
        Ok(PromptPreview {
            system_prompt: inner.system_prompt.clone(),
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
