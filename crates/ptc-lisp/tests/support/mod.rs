//! Shared test fixtures.

pub mod products;
