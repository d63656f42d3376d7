//! The calling-run context: the run whose program made the tool call being awaited, as tools
//! called by that program see it: the model it asks (LLM tools and sub-agents ask it too), the
//! registry and retry policy of its agent, the tree of runs it belongs to (whose limits a
//! sub-agent shares), the idempotency key of the call when the run keeps an intent log, and
//! where the model requests of those tools and the usage of sub-agent runs are reported so
//! that the calling turn counts them. One task-local value, set while the run's driver awaits
//! a program's tool calls (and for each call, with its key), so it reaches a tool however the
//! call is made.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use ptc_turn::Usage;

use crate::llm::{Llm, LlmRequest, RetryPolicy};
use crate::registry::LlmRegistry;
use crate::store::IdempotencyKey;
use crate::tree::Tree;

/// One request an LLM tool made while a turn's program ran: what it sent and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmToolCall {
    /// The tool's name.
    pub tool: String,
    /// The request, exactly as sent.
    pub request: LlmRequest,
    /// Its requests (retries included), tokens and time.
    pub usage: Usage,
}

tokio::task_local! {
    /// The run whose program made the tool call being awaited.
    pub(crate) static CALLER: Caller;
}

/// What an LLM tool takes from the run that calls it, and where it reports its requests.
#[derive(Clone)]
pub(crate) struct Caller {
    pub(crate) llm: Arc<dyn Llm>,
    pub(crate) registry: LlmRegistry,
    pub(crate) retry: RetryPolicy,
    pub(crate) turn: u32,
    /// The key of the call being awaited, when the run keeps an intent log.
    key: Option<IdempotencyKey>,
    /// The limits the run shares with the runs above and below it.
    tree: Tree,
    reported: Arc<Mutex<Reported>>,
}

/// The requests LLM tools made for a run.
#[derive(Default)]
struct Reported {
    /// Those not yet shown to the run's observer.
    unseen: Vec<LlmToolCall>,
    /// What those not yet counted in a turn's usage spent.
    spent: Usage,
}

impl Caller {
    /// The caller of a run asking `llm`, with the agent's registry and retry policy.
    pub fn new(llm: Arc<dyn Llm>, registry: LlmRegistry, retry: RetryPolicy, tree: Tree) -> Caller {
        Caller {
            llm,
            registry,
            retry,
            turn: 0,
            key: None,
            tree,
            reported: Arc::default(),
        }
    }

    /// Awaits `calls`, tool calls of the program of turn `turn`: LLM tools among them ask
    /// this run's model and report their requests here, and the sub-agents they start run one
    /// level further down this run's tree.
    pub async fn calling<F: Future>(&self, turn: u32, calls: F) -> F::Output {
        let caller = Caller {
            turn,
            key: None,
            ..self.clone()
        };
        CALLER.scope(caller, calls).await
    }

    pub(crate) fn record(&self, call: LlmToolCall) {
        let mut reported = self.reported();
        reported.spent += call.usage.clone();
        reported.unseen.push(call);
    }

    /// The requests not yet shown to the observer, oldest first.
    pub fn take_unseen(&self) -> Vec<LlmToolCall> {
        std::mem::take(&mut self.reported().unseen)
    }

    /// What the requests not yet counted spent.
    pub fn take_spent(&self) -> Usage {
        std::mem::take(&mut self.reported().spent)
    }

    /// Adds what a sub-agent's run spent to the turn whose program called it.
    fn spend(&self, usage: Usage) {
        self.reported().spent += usage;
    }

    fn reported(&self) -> std::sync::MutexGuard<'_, Reported> {
        self.reported.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Awaits `call`, a tool call being made under `key` within a run's
/// [`calling`](Caller::calling): the tool reads the key with [`current_idempotency_key`].
pub(crate) async fn with_call_key<F: Future>(key: IdempotencyKey, call: F) -> F::Output {
    match CALLER.try_with(|caller| Caller {
        key: Some(key),
        ..caller.clone()
    }) {
        Ok(caller) => CALLER.scope(caller, call).await,
        // Outside a run's tool calls there is no calling context to hold the key.
        Err(_) => call.await,
    }
}

/// The idempotency key of the tool call in progress, when read from within a tool called by a
/// run whose store keeps an intent log
/// ([`RunStore::intent_log`](crate::store::RunStore::intent_log)): a tool that acts on the
/// world passes it on (as an `Idempotency-Key` header, a unique column, ...) so that a call
/// retried after a crash acts once. `None` outside such a call. It is a field of the calling
/// run's context, like the model an LLM tool asks.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::sync::{Arc, Mutex};
///
/// use ptc_agent::store::MemoryStore;
/// use ptc_agent::{Agent, RunOptions, ScriptedLlm, ToolError, current_idempotency_key, tool_fn};
///
/// let keys = Arc::new(Mutex::new(Vec::new()));
/// let seen = keys.clone();
/// let send = tool_fn("send", "Sends a message", move |text: String| -> Result<String, ToolError> {
///     // The key is the same when the call is made again after a crash: pass it on.
///     let key = current_idempotency_key().map(|key| key.to_string());
///     seen.lock().unwrap().push(key);
///     Ok(format!("sent {text}"))
/// });
/// let agent = Agent::builder("Send two messages")
///     .llm(ScriptedLlm::new(["(return [(tool/send \"hi\") (tool/send \"ho\")])"]))
///     .tool(send)
///     .build()
///     .unwrap();
/// let store = MemoryStore::new();
/// agent.run_with(RunOptions::new().with_store(&store, "job-7")).await.unwrap();
/// let keys = keys.lock().unwrap();
/// assert_eq!(*keys, [Some("job-7:1:0".to_string()), Some("job-7:1:1".to_string())]);
/// assert_eq!(current_idempotency_key(), None);
/// # });
/// ```
pub fn current_idempotency_key() -> Option<IdempotencyKey> {
    CALLER.try_with(|caller| caller.key.clone()).ok().flatten()
}

/// The model of the run whose program made the tool call being awaited (`None` outside a
/// run's tool calls): the agent's, or the one the run asks instead.
pub(crate) fn calling_llm() -> Option<Arc<dyn Llm>> {
    CALLER.try_with(|caller| caller.llm.clone()).ok()
}

/// The tree of the run whose program made the tool call being awaited (`None` outside a run's
/// tool calls): a sub-agent run started by that call joins it one level down.
pub(crate) fn calling_tree() -> Option<Tree> {
    CALLER.try_with(|caller| caller.tree.clone()).ok()
}

/// Counts `usage`, what a sub-agent called as a tool spent, in the usage of the calling turn
/// (nothing outside a run's tool calls).
pub(crate) fn count_in_calling_turn(usage: Usage) {
    let _ = CALLER.try_with(|caller| caller.spend(usage));
}
