//! `--mcp` and `--mcp-config` (for `run`, `eval`, `repl`) and `ptc mcp list`: the tools of MCP
//! servers as `tool/` functions.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Subcommand};
use ptc_mcp::{McpConfig, McpServers, ServerConfig};

/// The MCP servers to connect to.
#[derive(Debug, Clone, Default, Args)]
pub struct McpArgs {
    /// An MCP server to spawn, as one string of shell words: 'COMMAND ARGS...' (e.g.
    /// 'npx -y @modelcontextprotocol/server-filesystem .'). Its tools become tool/NAME.
    /// Repeatable.
    #[arg(long = "mcp", value_name = "'COMMAND ARGS...'")]
    pub commands: Vec<String>,
    /// MCP servers from a JSON file in the `mcpServers` format of MCP hosts (`command`,
    /// `args`, `env`, `cwd`, or `url` and `headers`; `timeout` in seconds). Repeatable.
    #[arg(long = "mcp-config", value_name = "FILE.json")]
    pub configs: Vec<PathBuf>,
}

impl McpArgs {
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty() && self.configs.is_empty()
    }

    /// The servers, config files first, then `--mcp` commands. Fields of a config file that
    /// mean nothing here are named on stderr.
    pub fn servers(&self) -> Result<Vec<ServerConfig>, String> {
        let mut servers = Vec::new();
        for path in &self.configs {
            let config = McpConfig::from_file(path).map_err(|e| e.to_string())?;
            for field in &config.ignored {
                eprintln!("note: {}: {field} has no effect here", path.display());
            }
            servers.extend(config.servers);
        }
        for line in &self.commands {
            servers.push(ServerConfig::from_command_line(line).map_err(|e| format!("--mcp: {e}"))?);
        }
        Ok(servers)
    }
}

/// Connected servers and the async runtime their connections live on.
pub struct McpSession {
    pub runtime: tokio::runtime::Runtime,
    pub servers: McpServers,
}

impl McpSession {
    /// Connects to the servers `args` name, or gives `None` when it names none. Tools whose
    /// names were changed are listed on stderr.
    pub fn start(args: &McpArgs) -> Result<Option<McpSession>, String> {
        if args.is_empty() {
            return Ok(None);
        }
        let configs = args.servers()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("could not start the async runtime: {e}"))?;
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

/// Runs `body` with the servers `args` names connected (or none), and closes them after. A
/// server that cannot be reached is an error of the arguments (exit status 2).
pub fn with_servers(
    args: &McpArgs,
    body: impl FnOnce(Option<&McpSession>) -> ExitCode,
) -> ExitCode {
    let mcp = match McpSession::start(args) {
        Ok(mcp) => mcp,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
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
    List(McpArgs),
}

pub fn run(command: &McpCommand) -> ExitCode {
    let McpCommand::List(args) = command;
    if args.is_empty() {
        eprintln!(
            "error: name the servers: ptc mcp list --mcp 'COMMAND ARGS...' or --mcp-config FILE.json"
        );
        return ExitCode::from(2);
    }
    match McpSession::start(args) {
        Ok(Some(session)) => {
            print!("{}", session.servers.listing());
            session.close();
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
