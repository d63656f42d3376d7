//! The reader: program text to [`Form`]s.
//!
//! Lexing is done by `logos` ([`lexer`]), the grammar by `chumsky` ([`parser`]). Before the
//! grammar runs, one linear pass checks that brackets balance and nest no deeper than
//! [`ReadLimits::max_depth`], so malformed or hostile input gets a precise `line:column` error
//! (`unclosed '(' opened at 1:1`) and can never exhaust the stack.

mod form;
pub mod lexer;
pub mod parser;
mod quote;
pub(crate) mod regex;

pub(crate) use form::literal_kind;
pub use form::{Form, FormKind, with_article};
pub(crate) use quote::VALUE_TOKEN;
pub(crate) use quote::date_literal;
pub use quote::read_value;
pub(crate) use quote::uuid_literal;

use crate::error::Result;

/// Bounds on program text. Exceeding any of them is an [`crate::ErrorKind::ProgramLimit`] error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadLimits {
    /// Largest program accepted, in bytes (default 1 MiB).
    pub max_program_bytes: usize,
    /// Deepest nesting of `( [ { #{ #(` accepted (default 200). Prefixes waiting for their
    /// form (`'`, `@`, `^`, `#_`, `#tag`) count as a level each: `''x` nests like
    /// `(quote (quote x))`.
    pub max_depth: usize,
    /// Longest number literal accepted, in characters (default 64). Longer literals are
    /// rejected before any conversion work is done.
    pub max_number_literal_len: usize,
}

impl Default for ReadLimits {
    fn default() -> ReadLimits {
        ReadLimits {
            max_program_bytes: 1 << 20,
            max_depth: 200,
            max_number_literal_len: 64,
        }
    }
}

/// Read every top-level form of `src`. Errors carry a span and a resolved `line:column`.
pub fn read(src: &str, limits: &ReadLimits) -> Result<Vec<Form>> {
    parser::parse(src, limits).map_err(|e| e.locate(src))
}
