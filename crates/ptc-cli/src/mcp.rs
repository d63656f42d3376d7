//! `ptc mcp list`, and the MCP servers `run`, `eval` and `repl` connect to (named by the
//! [`McpOptions`] group): their tools as `tool/` functions.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Subcommand;
use ptc_mcp::McpServers;

use crate::config_file::Config;
use crate::exit;
use crate::options::McpOptions;

/// Connected servers and the async runtime their connections live on.
pub struct McpSession {
    pub runtime: tokio::runtime::Runtime,
    pub servers: McpServers,
}

impl McpSession {
    /// Connects to the servers `options` name, or gives `None` when it names none. Tools whose
    /// names were changed are listed on stderr.
    pub fn start(options: &McpOptions) -> Result<Option<McpSession>, String> {
        let configs = options.servers()?;
        if configs.is_empty() {
            return Ok(None);
        }
        let runtime = new_runtime()?;
        let servers = runtime
            .block_on(McpServers::connect(configs))
            .map_err(|e| e.to_string())?;
        for renamed in servers.renamed() {
            if let Some(reason) = renamed.renamed {
                eprintln!(
                    "note: tool/{} is {:?} of MCP server {} ({reason})",
                    renamed.name, renamed.original, renamed.server
                );
            }
        }
        Ok(Some(McpSession { runtime, servers }))
    }

    /// The tools as the sandbox's tools, for programs run outside an agent.
    pub fn sandbox_tools(&self) -> Result<ptc_lisp::Tools, String> {
        ptc_agent::sandbox_tools(&self.servers.tools(), self.runtime.handle())
            .map_err(|e| e.to_string())
    }

    /// Cancels what is in flight and ends the servers.
    pub fn close(self) {
        self.runtime.block_on(self.servers.close());
    }
}

fn new_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("could not start the async runtime: {e}"))
}

/// Runs `future` to completion: on the servers' runtime when there are servers (their
/// connections live there), else on a runtime of its own.
pub fn block_on<F: std::future::Future>(
    mcp: Option<&McpSession>,
    future: F,
) -> Result<F::Output, String> {
    match mcp {
        Some(mcp) => Ok(mcp.runtime.block_on(future)),
        None => Ok(new_runtime()?.block_on(future)),
    }
}

/// The servers a subcommand uses: those of its command line, else of `PTC_MCP_CONFIG`, else
/// of the configuration file.
pub fn resolve(given: &McpOptions, config: &Config) -> McpOptions {
    given
        .clone()
        .or(McpOptions::from_env())
        .or(config.mcp.clone())
}

/// Runs `body` with the servers `options` names connected (or none), and closes them after.
/// A server that cannot be started or reached is an error of the input (exit status 2).
pub fn with_servers(
    options: &McpOptions,
    body: impl FnOnce(Option<&McpSession>) -> ExitCode,
) -> ExitCode {
    let mcp = match McpSession::start(options) {
        Ok(mcp) => mcp,
        Err(message) => {
            eprintln!("error: {message}");
            return exit::code(exit::USAGE);
        }
    };
    let code = body(mcp.as_ref());
    if let Some(mcp) = mcp {
        mcp.close();
    }
    code
}

/// Adds `extra` tools to `tools`; a name both have is an error.
pub fn merge_tools(tools: &mut ptc_lisp::Tools, extra: &ptc_lisp::Tools) -> Result<(), String> {
    for spec in extra.specs() {
        if tools.contains(&spec.name) {
            return Err(format!(
                "tool/{} is both a --tools fixture and an MCP tool; remove one of them",
                spec.name
            ));
        }
        if let Some(tool) = extra.get(&spec.name) {
            tools.insert_arc(spec.clone(), Arc::clone(tool));
        }
    }
    Ok(())
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Connect to the servers and print every tool with its `tool/` name and the signature
    /// derived from its schemas.
    #[command(after_help = exit::HELP)]
    List(McpOptions),
}

pub fn run(command: &McpCommand, config: &Config) -> ExitCode {
    let McpCommand::List(given) = command;
    let options = resolve(given, config);
    with_servers(&options, |session| match session {
        Some(session) => {
            print!("{}", session.servers.listing());
            exit::code(exit::OK)
        }
        None => {
            eprintln!(
                "error: name the servers: ptc mcp list --mcp 'COMMAND ARGS...' or --mcp-config \
                 FILE.json (or [mcp.servers] in ptc.toml)"
            );
            exit::code(exit::USAGE)
        }
    })
}
