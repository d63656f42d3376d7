//! The history policy of a run: the budgets and summaries of
//! [`AgentBuilder::history_policy`](crate::AgentBuilder::history_policy), applied to the
//! messages each turn renders.

use ptc_compression::history::{
    HistoryError, HistoryManager, HistoryPolicy, SummaryState, TRIM_NOTICE,
};
use ptc_turn::{Message, Role, Usage};

use crate::error::RunError;
use crate::llm_summarizer::LlmSummarizer;

/// The history policy of a run, with the state it keeps across turns. It applies to whatever
/// the run renders: the full history, or a compression strategy's messages.
pub(crate) struct HistoryBudget {
    policy: HistoryPolicy,
    /// Holds the tokenizer (and its cache) for every turn's manager.
    manager: HistoryManager,
    state: SummaryState,
    summarizer: LlmSummarizer,
}

impl HistoryBudget {
    /// Checks that the budget holds the system prompt and the mission message, which are
    /// always sent.
    pub(crate) fn new(
        policy: HistoryPolicy,
        mission: &Message,
        system: &Message,
        summarizer: LlmSummarizer,
    ) -> Result<HistoryBudget, RunError> {
        let manager = HistoryManager::new(policy);
        let mission_tokens = manager.tokenizer().count_message(mission);
        if let Err(HistoryError::InvalidTokenLimit {
            system_prompt_tokens,
            ..
        }) = manager
            .with_policy(pinned(policy, mission_tokens))
            .validate(std::slice::from_ref(system))
        {
            return Err(RunError::HistoryBudget {
                max_tokens: policy.max_tokens.unwrap_or_default(),
                system_tokens: system_prompt_tokens,
                mission_tokens,
            });
        }
        Ok(HistoryBudget {
            policy,
            manager,
            state: SummaryState::new(),
            summarizer,
        })
    }

    /// The messages to send: `messages` (system message first, then the first user message:
    /// the mission, or a compression strategy's summary that starts with it) within the
    /// policy. The summary step sees every message (its strategies keep the first user
    /// message); the limits apply to the others, with the budget left after the first user
    /// message, which is then put back in its place.
    pub(crate) async fn apply(
        &mut self,
        messages: Vec<Message>,
        usage: &mut Usage,
    ) -> Vec<Message> {
        let system_count = messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .count();
        let mission = messages
            .get(system_count)
            .filter(|m| m.role == Role::User)
            .cloned();
        let summarizing = self.manager.with_policy(HistoryPolicy {
            max_tokens: None,
            max_messages: None,
            ..self.policy
        });
        let summarized = match summarizing
            .apply(&messages, &mut self.state, &self.summarizer)
            .await
        {
            Ok(summarized) => summarized,
            Err(error) => {
                tracing::warn!(%error, "the history summary failed; trimming without it");
                messages
            }
        };
        *usage += self.summarizer.take_usage();
        let Some(mission) = mission else {
            return self
                .manager
                .with_policy(self.policy)
                .apply_limits(&summarized)
                .unwrap_or(summarized);
        };
        let mut rest = summarized;
        if rest.get(system_count) == Some(&mission) {
            rest.remove(system_count);
        }
        let mission_tokens = self.manager.tokenizer().count_message(&mission);
        let limited = self
            .manager
            .with_policy(pinned(self.policy, mission_tokens))
            .apply_limits(&rest)
            .unwrap_or_else(|error| {
                // A budget too small for the system prompt and the first user message, which a
                // compression strategy's summary can outgrow: send only those.
                tracing::warn!(%error, "the history budget holds no more than the first messages");
                rest[..system_count.min(rest.len())].to_vec()
            });
        keep_mission(limited, &mission)
    }
}

/// The limits of `policy` for the messages other than the mission message (`mission_tokens`),
/// which [`keep_mission`] puts back.
fn pinned(policy: HistoryPolicy, mission_tokens: usize) -> HistoryPolicy {
    let mut pinned = policy;
    pinned.summarize = None;
    pinned.max_tokens = policy
        .max_tokens
        .map(|max| max.saturating_sub(mission_tokens));
    pinned.max_messages = policy.max_messages.map(|max| max.saturating_sub(1).max(1));
    pinned
}

/// `messages` with `mission` after the system messages, if a trim dropped it; a trim notice
/// that took its place is folded into it.
fn keep_mission(mut messages: Vec<Message>, mission: &Message) -> Vec<Message> {
    if messages.iter().any(|m| m == mission) {
        return messages;
    }
    let at = messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let mut mission = mission.clone();
    if messages
        .get(at)
        .is_some_and(|m| m.role == Role::User && m.content == TRIM_NOTICE)
    {
        let notice = messages.remove(at);
        mission.content.push_str("\n\n");
        mission.content.push_str(&notice.content);
    }
    messages.insert(at, mission);
    messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_dropped_mission_comes_back_with_the_trim_notice_folded_in() {
        let mission = Message::user("Do it");
        let trimmed = vec![
            Message::system("sys"),
            Message::user(TRIM_NOTICE),
            Message::assistant("(x)"),
        ];
        assert_eq!(
            keep_mission(trimmed, &mission),
            vec![
                Message::system("sys"),
                Message::user(format!("Do it\n\n{TRIM_NOTICE}")),
                Message::assistant("(x)"),
            ]
        );
        let kept = vec![Message::system("sys"), mission.clone()];
        assert_eq!(keep_mission(kept.clone(), &mission), kept);
    }
}
