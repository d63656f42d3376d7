//! Tokens (logos).
