//! A model made from an async closure: for tests, routing, or a provider of one's own without
//! writing a type.

use std::future::Future;

use async_trait::async_trait;

use crate::llm::{Llm, LlmError, LlmRequest, LlmResponse};

/// An [`Llm`] whose replies come from an async closure; see [`llm_fn`].
pub struct FnLlm<F> {
    description: String,
    complete: F,
}

/// A model that answers each request with `complete(request)`. `description` names it in logs
/// (`provider:model`, e.g. `router:fast`).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use ptc_agent::{Agent, LlmResponse, llm_fn};
///
/// let llm = llm_fn("echo:turns", |request| async move {
///     let turn = request.turn.unwrap_or(0);
///     Ok(LlmResponse::text(format!("(return {turn})")))
/// });
/// let agent = Agent::builder("Which turn is it?").llm(llm).build().unwrap();
/// let step = agent.run().await.unwrap();
/// assert_eq!(step.value(), Some(&ptc_lisp::Value::Int(1)));
/// # });
/// ```
pub fn llm_fn<F, Fut>(description: impl Into<String>, complete: F) -> FnLlm<F>
where
    F: Fn(LlmRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<LlmResponse, LlmError>> + Send,
{
    FnLlm {
        description: description.into(),
        complete,
    }
}

#[async_trait]
impl<F, Fut> Llm for FnLlm<F>
where
    F: Fn(LlmRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<LlmResponse, LlmError>> + Send,
{
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        (self.complete)(request.clone()).await
    }

    fn describe(&self) -> String {
        self.description.clone()
    }
}
