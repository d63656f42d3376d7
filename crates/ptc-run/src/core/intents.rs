//! Intent planning: which tool calls of a run that keeps an intent log are made, under which
//! keys, and which are answered from the log.
//!
//! Each call of a turn's program gets the key `RUN:TURN:INDEX`, INDEX counting the turn's
//! calls in the order the program made them. A call to make is recorded under its key before
//! its tool is called, and its outcome after (the driver's I/O). A turn run again after a crash
//! (its run resumed from its last committed turn) makes its calls under the same keys: a call
//! the log holds as completed is answered from the log and not made again; a call recorded but
//! never completed (in flight at the crash) is made again under the same key, so a tool that
//! honours the key acts once. The turn's calls are matched to the recorded ones in order up to
//! the first that differs (the model wrote another program); from there each call gets a new
//! key, after every key recorded for the turn.
//!
//! The driver loads what the log holds once, when the run starts ([`RecordedIntents`]); every
//! decision after that is made here, from that data and the keys handed out since.

use std::collections::BTreeMap;

use ptc_lisp::{ToolAnswer, ToolRequest};

use crate::intent_log::{IdempotencyKey, RecordedCall, answer_from_log};
use crate::model::LlmResponse;

/// What a run's intent log held when the run started, loaded by its driver: the run's id (the
/// first part of each key), the calls recorded for it and, for a resumed run, the model's
/// reply recorded for the turn it resumes at. A run given none keeps no intent log: its calls
/// are made without keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordedIntents {
    /// The run's id.
    pub run_id: String,
    /// Every call recorded for the run, by turn and then call index.
    pub calls: Vec<RecordedCall>,
    /// The reply recorded for the turn the run resumes at: the turn runs its program again
    /// instead of asking the model (whose request was made, and billed, before the run
    /// stopped).
    pub reply: Option<LlmResponse>,
}

impl RecordedIntents {
    /// The log of run `run_id` with nothing recorded yet: a new run's.
    pub fn new(run_id: impl Into<String>) -> RecordedIntents {
        RecordedIntents {
            run_id: run_id.into(),
            calls: Vec::new(),
            reply: None,
        }
    }
}

/// One call of a suspended program, as the core planned it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCall {
    /// The call.
    pub request: ToolRequest,
    /// The key it is made under (the tool reads it), when the run keeps an intent log.
    pub key: Option<IdempotencyKey>,
    /// Whether it is made or answered from the log.
    pub plan: CallPlan,
}

/// What becomes of a planned call.
#[derive(Debug, Clone, PartialEq)]
pub enum CallPlan {
    /// Make the call: with a key, record its intent under the key first (a call that cannot
    /// be recorded is not made: answer it with
    /// [`call_not_recorded`](crate::call_not_recorded)) and its outcome after.
    Make,
    /// Not made: the intent log holds it as completed before the run stopped, and this is its
    /// recorded answer.
    Answered(ToolAnswer),
}

impl PlannedCall {
    /// A call made without a key: the run keeps no intent log.
    fn unkeyed(request: ToolRequest) -> PlannedCall {
        PlannedCall {
            request,
            key: None,
            plan: CallPlan::Make,
        }
    }

    /// Whether the driver makes the call (and answers it in [`Event::ToolsAnswered`](super::Event::ToolsAnswered)).
    pub fn is_made(&self) -> bool {
        matches!(self.plan, CallPlan::Make)
    }
}

/// The numbering of a run's calls against what its intent log held at the start.
pub(super) struct Intents {
    run_id: String,
    /// The calls the log held, by key.
    recorded: BTreeMap<IdempotencyKey, RecordedCall>,
    /// The turn whose calls are being numbered.
    turn: u32,
    /// The index the turn's next call gets.
    next: u32,
}

impl Intents {
    pub(super) fn new(run_id: String, recorded: Vec<RecordedCall>) -> Intents {
        Intents {
            run_id,
            recorded: recorded.into_iter().map(|r| (r.key.clone(), r)).collect(),
            turn: 0,
            next: 0,
        }
    }

    /// Plans `requests`, calls of the program of turn `turn` in the order it made them.
    pub(super) fn plan(&mut self, turn: u32, requests: Vec<ToolRequest>) -> Vec<PlannedCall> {
        if turn != self.turn {
            self.turn = turn;
            self.next = 0;
        }
        requests.into_iter().map(|r| self.plan_one(r)).collect()
    }

    fn plan_one(&mut self, request: ToolRequest) -> PlannedCall {
        loop {
            let key = IdempotencyKey::new(self.run_id.as_str(), self.turn, self.next);
            self.next += 1;
            let plan = match self.recorded.get(&key) {
                None => CallPlan::Make,
                Some(r) if r.tool == request.name && r.args == request.args => {
                    match &r.outcome {
                        Some(outcome) => CallPlan::Answered(answer_from_log(outcome.clone())),
                        // In flight when the run stopped: made again under the same key.
                        None => CallPlan::Make,
                    }
                }
                Some(_) => {
                    // Another program than the recorded one: new keys from here on, after
                    // every recorded one (so no later call of the turn matches again).
                    self.next = self.first_unrecorded();
                    continue;
                }
            };
            return PlannedCall {
                request,
                key: Some(key),
                plan,
            };
        }
    }

    /// The first index after every call recorded for the turn (and every key handed out).
    fn first_unrecorded(&self) -> u32 {
        self.recorded
            .keys()
            .filter(|key| key.turn() == self.turn)
            .map(|key| key.call() + 1)
            .max()
            .unwrap_or(0)
            .max(self.next)
    }
}

/// `requests` planned without an intent log: each is made, without a key.
pub(super) fn unkeyed(requests: Vec<ToolRequest>) -> Vec<PlannedCall> {
    requests.into_iter().map(PlannedCall::unkeyed).collect()
}
