//! How to reach a server: a command to spawn (stdio) or a URL (streamable HTTP), with the
//! limits of its calls. Built in code, from a command line (`--mcp 'npx -y PKG DIR'`) or from
//! the `mcpServers` JSON that MCP hosts use.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The default time a call may take before it fails and is cancelled: less than the sandbox's
/// own limit for a tool call (30 s), so that the call is cancelled rather than abandoned.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(25);
/// The default limit of the text a program receives from one call; longer text is cut with a
/// note.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1024 * 1024;
/// The default limit of one message from a server; a longer one fails its call.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// How long connecting (spawning, `initialize`, listing the tools) may take.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default longest wait after the first failed start of a server that died; each failure
/// in a row doubles it, up to [`DEFAULT_RESTART_BACKOFF_CAP`].
pub const DEFAULT_RESTART_BACKOFF: Duration = Duration::from_millis(500);
/// The default cap of the wait between failed starts of a server that died.
pub const DEFAULT_RESTART_BACKOFF_CAP: Duration = Duration::from_secs(30);

/// Where a server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A command spawned as a child process, speaking JSON-RPC on its stdin and stdout. It
    /// inherits the environment, plus `env`.
    Stdio {
        /// The program to run, looked up on the `PATH` when it has no `/`.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment.
        env: BTreeMap<String, String>,
        /// The working directory; the current one when `None`.
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    Http {
        /// The endpoint's URL.
        url: String,
        /// Headers sent with every request (e.g. `Authorization`).
        headers: BTreeMap<String, String>,
    },
}

/// One server to connect to, and the limits of its calls.
///
/// ```
/// use ptc_mcp::ServerConfig;
/// use std::time::Duration;
///
/// let files = ServerConfig::stdio("files", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "."])
///     .with_timeout(Duration::from_secs(10));
/// let same = ServerConfig::from_command_line("npx -y @modelcontextprotocol/server-filesystem .").unwrap();
/// assert_eq!(same.name, "filesystem");
/// assert_eq!(same.endpoint, files.endpoint);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The server's name: it prefixes its tools' names when two servers have a tool of the
    /// same name, and names the server in errors.
    pub name: String,
    /// Where the server is.
    pub endpoint: Endpoint,
    /// How long one call may take; then it fails and the server is told to cancel it.
    pub timeout: Duration,
    /// The most bytes of text a program receives from one call (see the crate docs).
    pub max_result_bytes: usize,
    /// The largest message accepted from the server; a reply over it fails its call.
    pub max_message_bytes: usize,
    /// A server that died is started again at once; after a start that fails, the next one
    /// waits up to this long (a random part of its upper half), doubled after each failure
    /// in a row, up to [`ServerConfig::restart_backoff_cap`].
    pub restart_backoff: Duration,
    /// The longest wait between failed starts.
    pub restart_backoff_cap: Duration,
}

impl ServerConfig {
    /// A server spawned as `command args...`.
    pub fn stdio<S: Into<String>>(
        name: impl Into<String>,
        command: impl Into<String>,
        args: impl IntoIterator<Item = S>,
    ) -> ServerConfig {
        ServerConfig::new(
            name,
            Endpoint::Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
        )
    }

    /// A server at a streamable HTTP URL.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> ServerConfig {
        ServerConfig::new(
            name,
            Endpoint::Http {
                url: url.into(),
                headers: BTreeMap::new(),
            },
        )
    }

    fn new(name: impl Into<String>, endpoint: Endpoint) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            endpoint,
            timeout: DEFAULT_TIMEOUT,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            restart_backoff: DEFAULT_RESTART_BACKOFF,
            restart_backoff_cap: DEFAULT_RESTART_BACKOFF_CAP,
        }
    }

    /// A stdio server from one line of shell words, `COMMAND ARGS...` (quotes as in a POSIX
    /// shell; no expansion, pipes or redirections), named after the server it starts: the
    /// package or program name without `@version`, `server-` or `mcp-server-`
    /// (`npx -y @modelcontextprotocol/server-filesystem .` is `filesystem`).
    pub fn from_command_line(line: &str) -> Result<ServerConfig, ConfigError> {
        let words = shlex::split(line).ok_or_else(|| {
            ConfigError::new(format!(
                "cannot split {line:?} into words: a quote is not closed"
            ))
        })?;
        let Some((command, args)) = words.split_first() else {
            return Err(ConfigError::new(
                "the server command is empty; give a command and its arguments, e.g. \
                 'npx -y @modelcontextprotocol/server-filesystem .'",
            ));
        };
        Ok(ServerConfig::stdio(
            derived_name(command, args),
            command.clone(),
            args.iter().cloned(),
        ))
    }

    /// Adds an environment variable (stdio servers; ignored for HTTP).
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> ServerConfig {
        if let Endpoint::Stdio { env, .. } = &mut self.endpoint {
            env.insert(key.into(), value.into());
        }
        self
    }

    /// Sets the working directory (stdio servers; ignored for HTTP).
    pub fn with_cwd(mut self, dir: impl Into<PathBuf>) -> ServerConfig {
        if let Endpoint::Stdio { cwd, .. } = &mut self.endpoint {
            *cwd = Some(dir.into());
        }
        self
    }

    /// Adds a header sent with every request (HTTP servers; ignored for stdio).
    pub fn with_header(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> ServerConfig {
        if let Endpoint::Http { headers, .. } = &mut self.endpoint {
            headers.insert(name.into(), value.into());
        }
        self
    }

    /// Sets how long one call may take.
    pub fn with_timeout(mut self, timeout: Duration) -> ServerConfig {
        self.timeout = timeout;
        self
    }

    /// Sets the most bytes of text a program receives from one call.
    pub fn with_max_result_bytes(mut self, bytes: usize) -> ServerConfig {
        self.max_result_bytes = bytes;
        self
    }

    /// Sets the largest message accepted from the server.
    pub fn with_max_message_bytes(mut self, bytes: usize) -> ServerConfig {
        self.max_message_bytes = bytes;
        self
    }

    /// Sets the waits between failed starts of a server that died: up to `first` after the
    /// first failure, doubling after each failure in a row, never more than `cap`.
    pub fn with_restart_backoff(mut self, first: Duration, cap: Duration) -> ServerConfig {
        self.restart_backoff = first;
        self.restart_backoff_cap = cap.max(first);
        self
    }

    /// The command line or URL, for messages.
    pub fn describe(&self) -> String {
        match &self.endpoint {
            Endpoint::Stdio { command, args, .. } => {
                let words = std::iter::once(command).chain(args).map(String::as_str);
                shlex::try_join(words).unwrap_or_else(|_| format!("{command} {}", args.join(" ")))
            }
            Endpoint::Http { url, .. } => url.clone(),
        }
    }
}

impl fmt::Display for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name, self.describe())
    }
}

/// Programs that start another program named by their first argument that is not a flag.
const LAUNCHERS: &[&str] = &[
    "npx", "node", "bunx", "bun", "deno", "uvx", "uv", "pipx", "python", "python3", "docker",
    "pnpm", "yarn", "env", "sh", "bash",
];

/// The name of a server started by `command args`: see [`ServerConfig::from_command_line`].
fn derived_name(command: &str, args: &[String]) -> String {
    let program = file_name(command);
    let subject = if LAUNCHERS.contains(&program.as_str()) {
        args.iter()
            .filter(|a| !a.starts_with('-') && !matches!(a.as_str(), "run" | "exec" | "dlx"))
            .map(|a| file_name(a))
            .next()
            .unwrap_or(program)
    } else {
        program
    };
    let without_version = match subject.rfind('@') {
        Some(at) if at > 0 => subject[..at].to_string(),
        _ => subject,
    };
    let stem = without_version
        .strip_suffix(".js")
        .or_else(|| without_version.strip_suffix(".mjs"))
        .or_else(|| without_version.strip_suffix(".py"))
        .unwrap_or(&without_version);
    let short = stem
        .strip_prefix("mcp-server-")
        .or_else(|| stem.strip_prefix("server-"))
        .or_else(|| stem.strip_suffix("-mcp-server"))
        .or_else(|| stem.strip_suffix("-mcp"))
        .filter(|s| !s.is_empty())
        .unwrap_or(stem);
    crate::naming::symbol_part(short)
}

fn file_name(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

/// A configuration that cannot be used, with what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    /// What is wrong and what to write instead.
    pub message: String,
}

impl ConfigError {
    pub(crate) fn new(message: impl Into<String>) -> ConfigError {
        ConfigError {
            message: message.into(),
        }
    }
}

/// The servers of an `mcpServers` file, and the fields it has that are not used here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpConfig {
    /// In the file's order; servers marked `"disabled": true` are left out.
    pub servers: Vec<ServerConfig>,
    /// Fields that mean something to some MCP host but nothing here (e.g.
    /// `mcpServers.fs.autoApprove`), to tell the user they have no effect.
    pub ignored: Vec<String>,
}

impl McpConfig {
    /// Reads the `mcpServers` JSON that MCP hosts use:
    ///
    /// ```json
    /// {"mcpServers": {
    ///   "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
    ///             "env": {"LOG": "1"}, "cwd": "work", "timeout": 30},
    ///   "remote": {"url": "http://127.0.0.1:3001/mcp", "headers": {"Authorization": "Bearer T"}}
    /// }}
    /// ```
    ///
    /// A server has a `command` (with `args`, `env`, `cwd`) or a `url` (with `headers`);
    /// `type` may say `stdio` or `http`. `timeout` is in seconds. A relative `cwd`, and a
    /// relative `command` with a `/` in it, are relative to `base` (the file's folder).
    ///
    /// ```
    /// let config = ptc_mcp::McpConfig::parse(
    ///     r#"{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
    ///                                   "autoApprove": []}}}"#,
    ///     std::path::Path::new("."),
    /// ).unwrap();
    /// assert_eq!(config.servers[0].name, "memory");
    /// assert_eq!(config.ignored, ["mcpServers.memory.autoApprove"]);
    /// ```
    pub fn parse(text: &str, base: &Path) -> Result<McpConfig, ConfigError> {
        let json: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| ConfigError::new(format!("not valid JSON: {e}")))?;
        let root = json.as_object().ok_or_else(|| {
            ConfigError::new("expected an object {\"mcpServers\": {\"NAME\": {...}}}")
        })?;
        let servers = root
            .get("mcpServers")
            .or_else(|| root.get("servers"))
            .and_then(|s| s.as_object())
            .ok_or_else(|| {
                ConfigError::new(
                    "expected {\"mcpServers\": {\"NAME\": {\"command\": \"...\", \"args\": \
                     [...]}}} or {\"mcpServers\": {\"NAME\": {\"url\": \"http://...\"}}}",
                )
            })?;
        let mut config = McpConfig::from_entries(servers, base, "mcpServers")?;
        let unused_keys = root
            .keys()
            .filter(|k| !matches!(k.as_str(), "mcpServers" | "servers"))
            .cloned();
        config.ignored.splice(0..0, unused_keys);
        Ok(config)
    }

    /// The servers of a table of named entries in the `mcpServers` format, as another file
    /// may hold them (`[mcp.servers]` of the `ptc` command's `ptc.toml`). `place` is the
    /// table's name in errors and in [`McpConfig::ignored`]; relative paths are relative to
    /// `base`.
    ///
    /// ```
    /// let entries = serde_json::json!({"files": {"command": "npx", "args": ["-y", "pkg", "."]}});
    /// let config = ptc_mcp::McpConfig::from_entries(
    ///     entries.as_object().unwrap(),
    ///     std::path::Path::new("."),
    ///     "mcp.servers",
    /// ).unwrap();
    /// assert_eq!(config.servers[0].describe(), "npx -y pkg .");
    /// ```
    pub fn from_entries(
        entries: &serde_json::Map<String, serde_json::Value>,
        base: &Path,
        place: &str,
    ) -> Result<McpConfig, ConfigError> {
        let mut config = McpConfig {
            servers: Vec::new(),
            ignored: Vec::new(),
        };
        for (name, entry) in entries {
            let server = parse_server(name, entry, base, place, &mut config.ignored)
                .map_err(|e| ConfigError::new(format!("{place}.{name}: {}", e.message)))?;
            if let Some(server) = server {
                config.servers.push(server);
            }
        }
        Ok(config)
    }

    /// Reads an `mcpServers` file (see [`McpConfig::parse`]).
    pub fn from_file(path: &Path) -> Result<McpConfig, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new(format!("cannot read {}: {e}", path.display())))?;
        let folder = path.parent().unwrap_or(Path::new("."));
        // Absolute, so that a relative command does not depend on the server's `cwd`.
        let base = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
        McpConfig::parse(&text, &base)
            .map_err(|e| ConfigError::new(format!("{}: {}", path.display(), e.message)))
    }
}

fn parse_server(
    name: &str,
    entry: &serde_json::Value,
    base: &Path,
    place: &str,
    ignored: &mut Vec<String>,
) -> Result<Option<ServerConfig>, ConfigError> {
    let fields = entry
        .as_object()
        .ok_or_else(|| ConfigError::new("expected an object with a `command` or a `url`"))?;
    if fields.get("disabled").and_then(|d| d.as_bool()) == Some(true) {
        return Ok(None);
    }
    let string = |key: &str| -> Result<Option<String>, ConfigError> {
        match fields.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(ConfigError::new(format!(
                "`{key}` must be a string, not {other}"
            ))),
        }
    };
    let strings = |key: &str| -> Result<BTreeMap<String, String>, ConfigError> {
        match fields.get(key) {
            None | Some(serde_json::Value::Null) => Ok(BTreeMap::new()),
            Some(serde_json::Value::Object(map)) => map
                .iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => Ok((k.clone(), s.clone())),
                    other => Err(ConfigError::new(format!(
                        "`{key}.{k}` must be a string, not {other}"
                    ))),
                })
                .collect(),
            Some(other) => Err(ConfigError::new(format!(
                "`{key}` must be an object of strings, not {other}"
            ))),
        }
    };
    let kind = string("type")?;
    let command = string("command")?;
    let url = string("url")?.or(string("serverUrl")?);
    let mut server = match (kind.as_deref(), command, url) {
        (Some("sse"), _, _) => {
            return Err(ConfigError::new(
                "the legacy HTTP+SSE transport is not supported; use the server's streamable \
                 HTTP endpoint (`\"type\": \"http\"`) or its stdio command",
            ));
        }
        (_, Some(_), Some(_)) => {
            return Err(ConfigError::new(
                "has both `command` and `url`; give one (a command to spawn, or the URL of a \
                 streamable HTTP server)",
            ));
        }
        (None | Some("stdio"), Some(command), None) => {
            let args = match fields.get("args") {
                None | Some(serde_json::Value::Null) => Vec::new(),
                Some(serde_json::Value::Array(items)) => items
                    .iter()
                    .map(|a| match a {
                        serde_json::Value::String(s) => Ok(s.clone()),
                        other => Err(ConfigError::new(format!(
                            "`args` must hold strings, not {other}"
                        ))),
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => {
                    return Err(ConfigError::new(format!(
                        "`args` must be an array of strings, not {other}"
                    )));
                }
            };
            let command = if command.contains('/') && Path::new(&command).is_relative() {
                base.join(&command).display().to_string()
            } else {
                command
            };
            let mut server = ServerConfig::stdio(name, command, args);
            if let Endpoint::Stdio { env, cwd, .. } = &mut server.endpoint {
                *env = strings("env")?;
                *cwd = string("cwd")?.map(|dir| base.join(dir));
            }
            server
        }
        (None | Some("http" | "streamable-http" | "streamableHttp"), None, Some(url)) => {
            let mut server = ServerConfig::http(name, url);
            if let Endpoint::Http { headers, .. } = &mut server.endpoint {
                *headers = strings("headers")?;
            }
            server
        }
        (Some(kind), _, _)
            if !matches!(
                kind,
                "stdio" | "http" | "streamable-http" | "streamableHttp"
            ) =>
        {
            return Err(ConfigError::new(format!(
                "unknown `type` {kind:?}; use \"stdio\" (with `command`) or \"http\" (with `url`)"
            )));
        }
        _ => {
            return Err(ConfigError::new(
                "needs a `command` (a server to spawn, with `args`) or a `url` (a streamable \
                 HTTP server)",
            ));
        }
    };
    if let Some(timeout) = fields.get("timeout") {
        let seconds = timeout
            .as_f64()
            .filter(|s| s.is_finite() && *s > 0.0)
            .ok_or_else(|| {
                ConfigError::new(format!(
                    "`timeout` is in seconds and must be a positive number, not {timeout}"
                ))
            })?;
        server.timeout = Duration::from_secs_f64(seconds);
    }
    let used = [
        "type",
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "serverUrl",
        "headers",
        "timeout",
        "disabled",
    ];
    for key in fields.keys() {
        if !used.contains(&key.as_str()) {
            ignored.push(format!("{place}.{name}.{key}"));
        }
    }
    Ok(Some(server))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_come_from_the_package_or_program() {
        let cases = [
            (
                "npx -y @modelcontextprotocol/server-filesystem /tmp",
                "filesystem",
            ),
            (
                "npx -y @modelcontextprotocol/server-memory@2026.8.31",
                "memory",
            ),
            (
                "node_modules/.bin/mcp-server-everything stdio",
                "everything",
            ),
            ("node /srv/fault-server.mjs --name-clash", "fault-server"),
            ("uvx mcp-server-fetch", "fetch"),
            ("/usr/local/bin/github-mcp-server stdio", "github"),
            ("docker run -i --rm mcp/git", "git"),
            ("my_tool", "my_tool"),
        ];
        for (line, name) in cases {
            assert_eq!(
                ServerConfig::from_command_line(line).unwrap().name,
                name,
                "{line}"
            );
        }
    }

    #[test]
    fn command_lines_split_like_a_shell() {
        let server =
            ServerConfig::from_command_line(r#"node "my server.js" --root '/a b' x\ y"#).unwrap();
        assert_eq!(
            server.endpoint,
            Endpoint::Stdio {
                command: "node".into(),
                args: vec![
                    "my server.js".into(),
                    "--root".into(),
                    "/a b".into(),
                    "x y".into()
                ],
                env: BTreeMap::new(),
                cwd: None,
            }
        );
        assert_eq!(server.describe(), "node 'my server.js' --root '/a b' 'x y'");
        assert_eq!(
            ServerConfig::from_command_line("node 'open")
                .unwrap_err()
                .message,
            "cannot split \"node 'open\" into words: a quote is not closed"
        );
        assert!(ServerConfig::from_command_line("  ").is_err());
    }

    #[test]
    fn config_files_read_both_transports_and_resolve_paths() {
        let config = McpConfig::parse(
            r#"{"mcpServers": {
                "files": {"command": "./bin/fs", "args": ["."], "env": {"A": "1"}, "cwd": "data",
                          "timeout": 2.5},
                "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                           "headers": {"Authorization": "Bearer t"}, "alwaysAllow": []},
                "off": {"command": "x", "disabled": true}
            }, "globalShortcut": "x"}"#,
            Path::new("/cfg"),
        )
        .unwrap();
        let expected = vec![
            ServerConfig::stdio("files", "/cfg/./bin/fs", ["."])
                .with_env("A", "1")
                .with_cwd("/cfg/data")
                .with_timeout(Duration::from_millis(2500)),
            ServerConfig::http("remote", "http://127.0.0.1:9/mcp")
                .with_header("Authorization", "Bearer t"),
        ];
        assert_eq!(config.servers, expected);
        assert_eq!(
            config.ignored,
            vec!["globalShortcut", "mcpServers.remote.alwaysAllow"]
        );
    }

    #[test]
    fn config_errors_say_what_to_write() {
        let err = |text: &str| McpConfig::parse(text, Path::new(".")).unwrap_err().message;
        assert_eq!(
            err(r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#),
            "mcpServers.a: has both `command` and `url`; give one (a command to spawn, or the \
             URL of a streamable HTTP server)"
        );
        assert_eq!(
            err(r#"{"mcpServers": {"a": {"type": "sse", "url": "http://h/sse"}}}"#),
            "mcpServers.a: the legacy HTTP+SSE transport is not supported; use the server's \
             streamable HTTP endpoint (`\"type\": \"http\"`) or its stdio command"
        );
        assert_eq!(
            err(r#"{"mcpServers": {"a": {"command": "x", "args": "y"}}}"#),
            "mcpServers.a: `args` must be an array of strings, not \"y\""
        );
        assert_eq!(
            err(r#"{"mcpServers": {"a": {"command": "x", "timeout": 0}}}"#),
            "mcpServers.a: `timeout` is in seconds and must be a positive number, not 0"
        );
        assert_eq!(
            err(r#"{"servers": []}"#),
            "expected {\"mcpServers\": {\"NAME\": {\"command\": \"...\", \"args\": [...]}}} or \
             {\"mcpServers\": {\"NAME\": {\"url\": \"http://...\"}}}"
        );
        assert!(err("{").starts_with("not valid JSON: "));
    }
}
