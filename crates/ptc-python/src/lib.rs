//! `import ptc`: PTC-Lisp's sandbox and the PTC agent loop as a Python extension module
//! (`ptc._ptc`, wrapped by the pure-Python package in `python/ptc`).
//!
//! Programs run in the calling process, with the GIL released while they evaluate: the
//! sandbox bounds their time, steps, depth, memory and output itself, so no worker process is
//! needed. The Python tests (`cargo xtask python`) test this crate; see docs/python.md.

#![deny(missing_docs)]

// The modules, in layer order: each may use only the modules declared above it (`cargo xtask
// layers` checks it). Each has a comment line of its own, so that formatting keeps the order.

// The exceptions raised, defined in Python.
mod errors;
// Values to Python objects and back.
mod convert;
// `ptc.Limits`.
mod limits;
// Python functions as tools.
mod tools;
// `ptc.Result`, `ptc.ToolCall`, and the exception that ends a run.
mod outcome;
// Ctrl-C during a run.
mod interrupt;
// `ptc.Session`, `ptc.run`, `ptc.Suspended`.
mod session;
// `ptc.Agent` and `ptc.Step`.
mod agent;

use pyo3::prelude::*;

/// The extension module.
#[pymodule(name = "_ptc")]
fn ptc_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    interrupt::record_main_thread(m.py())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<limits::PyLimits>()?;
    m.add_class::<outcome::RunResult>()?;
    m.add_class::<outcome::PyToolCall>()?;
    m.add_class::<session::PySession>()?;
    m.add_class::<session::PySuspended>()?;
    m.add_function(wrap_pyfunction!(session::run, m)?)?;
    agent::register(m)?;
    m.add_function(wrap_pyfunction!(_panic, m)?)?;
    Ok(())
}

/// Panics with `message`: for the tests of what a panic in this module becomes in Python (an
/// exception, never a crashed process).
#[pyfunction]
fn _panic(message: &str) {
    panic!("{message}");
}
