//! The run stores against real databases: SQLite files, and (with the `postgres` feature) the
//! PostgreSQL server whose URL `PTC_POSTGRES_URL` gives (`cargo xtask postgres run -- cargo
//! test -p ptc-store --features postgres`).

mod contract;
#[cfg(feature = "postgres")]
mod postgres;
mod rules;
mod sqlite;
