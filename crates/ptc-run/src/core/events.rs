//! What the core and its driver tell each other: the [`Action`] the core decides on, and the
//! [`Event`] the driver answers with once it has carried the action out.

use ptc_compression::CompressionStats;
use ptc_lisp::ToolAnswer;
use ptc_turn::{Message, Usage};

use super::intents::PlannedCall;
use crate::model::{LlmError, LlmRequest, LlmResponse};

#[cfg(doc)]
use super::{CallPlan, ModelTurns, RunCore};

/// What the driver does next.
#[derive(Debug)]
pub enum Action {
    /// Take one turn from the turn budget the run shares with its tree of runs (the run has
    /// one: [`ModelTurns::shared_turn_budget`]); answer with [`Event::TurnTaken`].
    TakeTurn,
    /// The history of turn `turn` was rendered with these stats (to show an observer);
    /// answer with [`Event::Next`].
    Rendered {
        /// The turn whose history it is.
        turn: u32,
        /// What the rendering did against the full history.
        stats: CompressionStats,
    },
    /// Apply the run's history policy to these messages (which may ask a model for a
    /// summary); answer with [`Event::HistoryApplied`].
    ApplyHistory(Vec<Message>),
    /// Send this request to the model (its messages are [`RunCore::messages`]); answer with
    /// [`Event::Replied`].
    Ask(Box<LlmRequest>),
    /// The program of turn `turn` waits for these tool calls (one, or all the items of a
    /// `pmap`), each planned: made (under its idempotency key, recorded first, when the run
    /// keeps an intent log) or answered from the log. Make those to make and answer with
    /// [`Event::ToolsAnswered`], their answers in the order of the calls.
    CallTools {
        /// The turn whose program calls.
        turn: u32,
        /// The calls, in the order the program made them.
        calls: Vec<PlannedCall>,
    },
    /// A turn is recorded (it is [`RunCore::last_turn`]): checkpoint it, show it; then answer
    /// with [`Event::Next`].
    Recorded,
    /// The run is over: [`RunCore::into_step`] gives its step.
    Finished,
}

/// What happened, for the core to decide on.
#[derive(Debug)]
pub enum Event {
    /// Go on: to start a run, after [`Action::Rendered`] and after [`Action::Recorded`].
    Next,
    /// The answer to [`Action::TakeTurn`]: whether a turn was left to take.
    TurnTaken {
        /// Whether the budget had a turn left (it has one less now).
        granted: bool,
    },
    /// The messages within the history policy, and what asking for a summary spent.
    HistoryApplied {
        /// The messages to send.
        messages: Vec<Message>,
        /// What asking for a summary spent.
        spent: Usage,
    },
    /// The model's answer to [`Action::Ask`], and the requests and time it took.
    Replied {
        /// The reply, or why there is none.
        result: Result<LlmResponse, LlmError>,
        /// The requests and time it took.
        spent: Usage,
    },
    /// The answers to [`Action::CallTools`], and what the models the tools asked spent.
    ToolsAnswered {
        /// The answers of the calls made ([`CallPlan::Make`]), in the order of the calls
        /// (those answered from the log are the core's already).
        answers: Vec<ToolAnswer>,
        /// What the models the tools asked spent.
        spent: Usage,
    },
    /// The run's stop signal fired while the driver carried out the last action: the turn in
    /// progress is cut off (not recorded) and the run ends `interrupted`.
    Stopped {
        /// What the models the tools asked spent meanwhile.
        spent: Usage,
    },
    /// The run's deadline ([`RunCore::deadline`]) passed while the driver carried out the
    /// last action: the turn in progress is cut off and the run ends `timeout`.
    DeadlinePassed {
        /// What the models the tools asked spent meanwhile.
        spent: Usage,
    },
}
