//! A set of connected servers and all their tools, named so that no two clash.

use std::fmt::Write as _;
use std::sync::Arc;

use ptc_agent::AsyncTool;

use crate::config::ServerConfig;
use crate::naming::{self, ToolName};
use crate::server::{ConnectError, McpServer};
use crate::tool::McpTool;

/// Connected servers and their tools.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use ptc_mcp::{McpServers, ServerConfig};
///
/// let servers = McpServers::connect([ServerConfig::from_command_line(
///     "npx -y @modelcontextprotocol/server-filesystem .",
/// )?])
/// .await?;
/// let mut builder = ptc_agent::Agent::builder("Which file under . is the largest?");
/// for tool in servers.tools() {
///     builder = builder.tool_arc(tool);
/// }
/// // ... build and run the agent, then:
/// servers.close().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct McpServers {
    servers: Vec<Arc<McpServer>>,
    tools: Vec<Arc<McpTool>>,
}

impl McpServers {
    /// Connects to every server at once and lists their tools. A server whose name another
    /// one already has is renamed `NAME-2`, `NAME-3`, ... If any server fails, those already
    /// connected are closed and the first error is returned.
    pub async fn connect(
        configs: impl IntoIterator<Item = ServerConfig>,
    ) -> Result<McpServers, ConnectError> {
        let mut configs: Vec<ServerConfig> = configs.into_iter().collect();
        let mut seen: Vec<String> = Vec::new();
        for config in &mut configs {
            let stem = config.name.clone();
            let mut n = 2;
            while seen.contains(&config.name) {
                config.name = format!("{stem}-{n}");
                n += 1;
            }
            seen.push(config.name.clone());
        }
        let mut tasks = tokio::task::JoinSet::new();
        for (index, config) in configs.into_iter().enumerate() {
            tasks.spawn(async move {
                let server = Arc::new(McpServer::connect(config).await?);
                match server.list_tools().await {
                    Ok(tools) => Ok((index, server, tools)),
                    Err(e) => {
                        server.close().await;
                        Err(e)
                    }
                }
            });
        }
        let mut connected = Vec::new();
        let mut first_error: Option<ConnectError> = None;
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok(done)) => connected.push(done),
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(e) => {
                    first_error.get_or_insert(ConnectError {
                        server: "?".into(),
                        message: format!("connecting failed: {e}"),
                    });
                }
            }
        }
        if let Some(error) = first_error {
            for (_, server, _) in connected {
                server.close().await;
            }
            return Err(error);
        }
        connected.sort_by_key(|(index, _, _)| *index);
        let listing: Vec<(String, Vec<String>)> = connected
            .iter()
            .map(|(_, server, tools)| {
                (
                    server.config().name.clone(),
                    tools.iter().map(|t| t.name.to_string()).collect(),
                )
            })
            .collect();
        let names = naming::assign(&listing);
        let mut all_tools = Vec::new();
        let mut servers = Vec::new();
        for ((_, server, tools), names) in connected.into_iter().zip(names) {
            for (tool, name) in tools.iter().zip(names) {
                all_tools.push(Arc::new(McpTool::new(name, tool, server.clone())));
            }
            servers.push(server);
        }
        Ok(McpServers {
            servers,
            tools: all_tools,
        })
    }

    /// Every tool, as agent tools (for [`ptc_agent::AgentBuilder::tool_arc`]), in server order
    /// and then the order each server lists them.
    pub fn tools(&self) -> Vec<Arc<dyn AsyncTool>> {
        self.tools
            .iter()
            .map(|t| t.clone() as Arc<dyn AsyncTool>)
            .collect()
    }

    /// Every tool, with what is known about it as an MCP tool.
    pub fn mcp_tools(&self) -> &[Arc<McpTool>] {
        &self.tools
    }

    /// The tool called `tool/NAME`.
    pub fn tool(&self, name: &str) -> Option<&Arc<McpTool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// The connected servers, in the order given.
    pub fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    /// The server named `name`.
    pub fn server(&self, name: &str) -> Option<&Arc<McpServer>> {
        self.servers.iter().find(|s| s.config().name == name)
    }

    /// The tools whose `tool/` names differ from their servers' names for them.
    pub fn renamed(&self) -> Vec<&ToolName> {
        self.tools
            .iter()
            .map(|t| t.tool_name())
            .filter(|n| n.renamed.is_some())
            .collect()
    }

    /// Every server and its tools, each with its signature and description: what
    /// `ptc mcp list` prints.
    pub fn listing(&self) -> String {
        let mut out = String::new();
        for server in &self.servers {
            let config = server.config();
            let info = server
                .server_info()
                .map(|(name, version)| format!(", {name} {version}"))
                .unwrap_or_default();
            let count = self
                .tools
                .iter()
                .filter(|t| Arc::ptr_eq(t.server(), server))
                .count();
            let _ = writeln!(
                out,
                "server {} ({}{info}): {count} tool{}",
                config.name,
                config.describe(),
                if count == 1 { "" } else { "s" }
            );
            for tool in self
                .tools
                .iter()
                .filter(|t| Arc::ptr_eq(t.server(), server))
            {
                let mut call = format!("(tool/{}", tool.name());
                for param in tool.params() {
                    call.push(' ');
                    call.push_str(&param);
                }
                call.push(')');
                let _ = writeln!(out, "  {call}");
                if let Some(signature) = tool.signature() {
                    let _ = writeln!(out, "    {signature}");
                }
                if let Some(renamed) = tool.renamed() {
                    let _ = writeln!(
                        out,
                        "    the server calls it {:?} ({renamed})",
                        tool.tool_name().original
                    );
                }
                let description: String = tool
                    .description()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                if !description.is_empty() {
                    let _ = writeln!(out, "    {description}");
                }
            }
        }
        out
    }

    /// Cancels calls in flight and closes every connection (spawned servers are ended).
    pub async fn close(&self) {
        for server in &self.servers {
            server.close().await;
        }
    }
}
