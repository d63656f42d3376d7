//! Limits of a tree of agents: a run and the sub-agent runs its programs start, and theirs.
//!
//! The top run sets them from its agent's settings: how deep sub-agents may nest
//! (`max_depth`), how many turns the whole tree may take (`turn_budget`) and when the whole
//! tree must be done (`deadline`). A sub-agent run finds its parent's tree in the calling-run
//! context ([`crate::caller`]), set while the parent's loop awaits the tool calls of a program,
//! so they reach it however deep the call that starts it is.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::agent::Settings;

/// Where a run sits in its tree and what the tree has left.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    /// 0 for the top run, 1 for its sub-agents, ...
    pub depth: u32,
    /// The deepest a sub-agent may run.
    pub max_depth: u32,
    /// Turns the tree has left, shared by all its runs; none for no limit.
    budget: Option<Arc<TurnBudget>>,
    /// When the tree must be done, and the limit that set it.
    pub deadline: Option<(Instant, Duration)>,
}

/// The turns of a `turn_budget`, taken one at a time by every run of the tree.
#[derive(Debug)]
struct TurnBudget {
    total: u32,
    left: AtomicU32,
}

impl Tree {
    /// The tree of a run starting now with `settings`: the tree of the run whose program called
    /// it (`calling`), one level down; else a new tree with the run at the top.
    pub fn for_run(settings: &Settings, started: Instant, calling: Option<Tree>) -> Tree {
        let own_deadline = settings.deadline.map(|limit| (started + limit, limit));
        match calling {
            Some(caller) => Tree {
                depth: caller.depth.saturating_add(1),
                // A sub-agent's own deadline can only shorten the tree's.
                deadline: match (caller.deadline, own_deadline) {
                    (Some(tree), Some(own)) => Some(if own.0 < tree.0 { own } else { tree }),
                    (tree, own) => tree.or(own),
                },
                ..caller
            },
            None => Tree {
                depth: 0,
                max_depth: settings.max_depth,
                budget: settings.turn_budget.map(|total| {
                    Arc::new(TurnBudget {
                        total,
                        left: AtomicU32::new(total),
                    })
                }),
                deadline: own_deadline,
            },
        }
    }

    /// The turns of the tree's budget, if it has one.
    pub fn turn_budget(&self) -> Option<u32> {
        self.budget.as_ref().map(|budget| budget.total)
    }

    /// Takes one turn from the tree's budget: whether one was left (always, without a budget).
    pub fn take_turn(&self) -> bool {
        let Some(budget) = &self.budget else {
            return true;
        };
        budget
            .left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn settings(deadline: Option<u64>, max_depth: u32) -> Settings {
        Settings {
            deadline: deadline.map(Duration::from_secs),
            max_depth,
            ..Settings::default()
        }
    }

    #[tokio::test]
    async fn a_sub_agent_inherits_the_tree_and_may_only_shorten_its_deadline() {
        let start = Instant::now();
        let top = Tree::for_run(&settings(Some(60), 2), start, None);
        assert_eq!((top.depth, top.max_depth), (0, 2));
        let later = start + Duration::from_secs(30);
        let longer = Tree::for_run(&settings(Some(60), 9), later, Some(top.clone()));
        let shorter = Tree::for_run(&settings(Some(10), 9), later, Some(top.clone()));
        // The top's 60 s from `start`, not the sub-agent's own 60 s from `later`.
        assert_eq!(longer.deadline, top.deadline);
        assert_eq!((longer.depth, longer.max_depth), (1, 2));
        assert_eq!(
            shorter.deadline,
            Some((later + Duration::from_secs(10), Duration::from_secs(10)))
        );
        let untimed = Tree::for_run(&settings(None, 9), later, Some(top.clone()));
        assert_eq!(untimed.deadline, top.deadline);
    }
}
