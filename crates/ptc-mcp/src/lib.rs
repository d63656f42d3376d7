#![deny(missing_docs)]

//! The tools of [Model Context Protocol](https://modelcontextprotocol.io) servers as `tool/`
//! functions of PTC-Lisp programs.
//!
//! [`McpServers::connect`] starts or reaches each server (a command spawned with stdio, or a
//! streamable HTTP URL), runs the `initialize` handshake, lists every tool (through all
//! pages) and makes each one an agent [`AsyncTool`](ptc_agent::AsyncTool):
//!
//! - **names**: a tool keeps its server's name when that is a PTC-Lisp symbol and no other
//!   server has a tool of that name; otherwise it is mapped (characters other than letters,
//!   digits and `- _ ? ! * .` become `-`) or, on a clash between servers, prefixed with its
//!   server's name: `tool/everything.echo`. [`McpServers::renamed`] lists the mapping, and
//!   the tool's description names the original;
//! - **signatures**: the `inputSchema` gives the parameters (their order is the schema's, for
//!   positional arguments) and `outputSchema` the result type; see the table in
//!   `docs/mcp.md`;
//! - **calls** take one map of named arguments, `(tool/read_text_file {:path "a.txt"})`, or
//!   positional ones, `(tool/read_text_file "a.txt")`; they are checked against the schema
//!   before anything is sent;
//! - **results**: `structuredContent` is the value; otherwise one text block is a string,
//!   several blocks a vector; JSON text stays text unless the tool has an `outputSchema`;
//!   images and binary data are summarized, never passed on; `isError` is a tool error with
//!   the server's message; text over [`ServerConfig::max_result_bytes`] is cut with a note;
//! - **faults**: each call has a deadline ([`ServerConfig::timeout`]) after which it fails and
//!   the server gets `notifications/cancelled`, as it does when the caller stops waiting (the
//!   agent's run ends). A server that exits, hangs, floods notifications, writes malformed
//!   JSON-RPC or a message over [`ServerConfig::max_message_bytes`] makes that call fail with
//!   an error saying so; nothing panics and memory stays bounded. A server that stops is
//!   started or reached again as soon as that is noticed (its process exited, its connection
//!   closed), or at the next call to one of its tools; after a start that fails the next one
//!   waits, longer after each failure in a row ([`ServerConfig::restart_backoff`]), so a
//!   server that keeps failing is not started over and over.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use ptc_mcp::{McpServers, ServerConfig};
//!
//! let servers = McpServers::connect([
//!     ServerConfig::from_command_line("npx -y @modelcontextprotocol/server-filesystem .")?,
//! ])
//! .await?;
//! print!("{}", servers.listing());
//! servers.close().await;
//! # Ok(()) }
//! ```

// The modules, in layer order: each may use only the modules declared above it (`cargo xtask
// layers`, part of `cargo xtask ci`, checks it). Each has a comment line of its own, so that
// formatting keeps the order.

// The waits between failed starts of a server.
mod backoff;
// What is known about a server beyond its replies.
mod health;
// A server's notifications and requests.
mod handler;
// The streamable HTTP transport.
mod http;
// The `tool/` names of MCP tools.
mod naming;
// How to reach a server.
mod config;
// A tool's result as a value.
mod result;
// JSON Schemas as PTC signatures.
mod schema;
// The stdio transport.
mod stdio;
// One connection to a server.
mod server;
// One MCP tool as an agent tool.
mod tool;
// A set of servers and all their tools.
mod servers;

pub use config::{
    ConfigError, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_RESTART_BACKOFF, DEFAULT_RESTART_BACKOFF_CAP, DEFAULT_TIMEOUT, Endpoint, McpConfig,
    ServerConfig,
};
pub use health::ServerStats;
pub use naming::{Renamed, ToolName};
pub use server::{ConnectError, McpServer};
pub use servers::McpServers;
pub use tool::McpTool;
