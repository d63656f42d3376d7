//! Whether an agent can continue a stored run: what differs between the task the run was
//! started with and the one the agent would give it. (The definitions its turns made are
//! restored by the run crate, `ptc-run`'s `core/restore.rs`.)

use ptc_turn::Task;

/// What differs between the task a run was started with and the one this agent would give
/// it, in words; `None` when they are the same.
pub(crate) fn task_difference(stored: &Task, now: &Task) -> Option<String> {
    let differs = |what: &str| {
        Some(format!(
            "its {what} differs from this agent's; resume it with the {what} it was started with"
        ))
    };
    if stored.mission != now.mission {
        return differs("mission");
    }
    if stored.tools != now.tools {
        let names = |task: &Task| {
            task.tools
                .iter()
                .map(|t| format!("tool/{}", t.name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Some(format!(
            "it was started with the tools [{}], this agent has [{}]; resume it with the tools \
             it was started with",
            names(stored),
            names(now)
        ));
    }
    if stored.data != now.data {
        return differs("input data");
    }
    if stored.max_turns != now.max_turns {
        return Some(format!(
            "it was started with a budget of {} turns, this agent has {}",
            stored.max_turns, now.max_turns
        ));
    }
    if stored.system_prompt != now.system_prompt {
        return differs("system prompt (signature or extra system-prompt text)");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_first_difference_is_named() {
        let task = Task::new("m");
        assert_eq!(task_difference(&task, &task.clone()), None);
        assert_eq!(
            task_difference(&task, &Task::new("other")),
            Some(
                "its mission differs from this agent's; resume it with the mission it was \
                 started with"
                    .into()
            )
        );
        let more_turns = Task {
            max_turns: 9,
            ..task.clone()
        };
        assert_eq!(
            task_difference(&task, &more_turns),
            Some("it was started with a budget of 5 turns, this agent has 9".into())
        );
    }
}
