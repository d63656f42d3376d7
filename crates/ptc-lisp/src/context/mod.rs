//! The context of a run: what one run of a program keeps and counts, below the evaluator. (The
//! `Runtime` an embedder configures and calls is the engine's, at the top of the crate; it makes
//! a [`Ctx`] for each run.)
//!
//! - [`ctx`]: [`Ctx`], the state of a run (value stack, user definitions, limit counters,
//!   prints, tool calls) and the budget checks every layer above calls;
//! - [`limits`]: the limits a host sets ([`limits::Limits`]), and [`interrupt`], its way to stop a run
//!   from outside;
//! - [`tools`]: host tools and the record of their calls;
//! - [`tool_call`], [`output`], [`parallel`]: calling tools, recording prints, and the contexts
//!   of `pmap`/`pcalls` workers;
//! - [`fiber`]: evaluation on a stack of its own, which stops at host-answered tool calls;
//! - [`builtin`]: what a builtin is (the entries are the library's).

pub(crate) mod builtin;
pub(crate) mod ctx;
pub(crate) mod fiber;
pub(crate) mod interrupt;
pub(crate) mod limits;
pub(crate) mod output;
pub(crate) mod parallel;
pub(crate) mod tool_call;
pub(crate) mod tools;

pub(crate) use builtin::Builtin;
pub(crate) use ctx::{Binding, Ctx, EvalResult, Flow};
