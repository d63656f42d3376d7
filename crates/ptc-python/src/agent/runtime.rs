//! The tokio runtime the process's agent runs wait on: for a model named by its spec, MCP
//! servers' tools and checkpoint stores.

use std::sync::OnceLock;

use pyo3::prelude::*;

use crate::errors::agent_error;

/// The runtime every agent run of the process waits on.
pub(super) fn runtime() -> PyResult<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("ptc-agent")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| agent_error_now(&format!("cannot start the agents' runtime: {e}")))
}

fn agent_error_now(message: &str) -> PyErr {
    Python::attach(|py| agent_error(py, message))
}
