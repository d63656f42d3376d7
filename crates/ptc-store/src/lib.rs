//! Durable PTC agent runs in SQLite, or in PostgreSQL shared by a fleet of workers.
//!
//! [`SqliteStore`] is a [`RunStore`](ptc_agent::store::RunStore) in one SQLite database file,
//! the embedded default for a service that runs agents: each turn is committed in its own
//! transaction as it completes, so a crashed or redeployed process loses nothing it finished,
//! and [`Agent::resume`](ptc_agent::Agent::resume) continues the run elsewhere. SQLite is
//! compiled into the crate (`rusqlite`'s `bundled` feature), so nothing needs installing.
//!
//! With the `postgres` feature, `PgStore` keeps runs in a PostgreSQL database that many
//! processes on many machines share: besides the `RunStore` it is a
//! [`FleetStore`](ptc_agent::store::FleetStore), whose runs workers claim under leases that
//! fence out a worker that lost its claim, and an [`IntentLog`](ptc_agent::store::IntentLog)
//! of the tool calls in flight (see `docs/fleet.md`).
//!
//! It lives in its own crate so that users of `ptc-agent` do not compile SQLite unless they
//! ask for it.
//!
//! ```
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! use ptc_agent::{Agent, RunOptions, ScriptedLlm};
//! use ptc_store::SqliteStore;
//!
//! let store = SqliteStore::open_in_memory().unwrap();
//! let agent = Agent::builder("Count to three")
//!     .llm(ScriptedLlm::new(["(def n 3)", "(return n)"]))
//!     .build()
//!     .unwrap();
//! let step = agent.run_with(RunOptions::new().with_store(&store, "job-17")).await.unwrap();
//! assert_eq!(step.turns.len(), 2);
//! assert_eq!(store.run_ids().unwrap(), vec!["job-17".to_string()]);
//! # });
//! ```

#![deny(missing_docs)]

mod codec;
#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;

#[cfg(feature = "postgres")]
pub use postgres::PgStore;
pub use sqlite::SqliteStore;
