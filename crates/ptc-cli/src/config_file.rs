//! The configuration file, `ptc.toml`: the options of [`crate::options`] in tables, read from
//! `--config FILE` or from `ptc.toml` in the working directory. Flags and environment
//! variables win over it; it wins over the defaults.
//!
//! ```toml
//! [agent]
//! llm = "anthropic:claude-sonnet-4-5"
//! request-timeout = "60s"
//! headers = { "X-Title" = "Weekly report" }   # sent with every model request
//! retries = 2
//! deadline = "10m"
//! max-turns = 8
//! compression = "single-user-coalesced?println_limit=10"
//!
//! [input]               # paths are relative to this file
//! data = "data.json"
//! tools = "tools.json"
//!
//! [limits]
//! timeout-ms = 5000
//!
//! [history]
//! max-tokens = 32000
//! summary = "last:8"
//!
//! [mcp.servers.files]   # MCP servers in the mcpServers format; paths relative to this file
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "docs"]
//!
//! [mcp.servers.search]
//! url = "http://127.0.0.1:3001/mcp"
//! timeout = 60
//! ```
//!
//! `[mcp]` may also hold `commands` (like `--mcp`) and `config-files` (like `--mcp-config`).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::options::{
    AgentOptions, FILE_NAME, HistoryOptions, InputOptions, LimitOptions, McpOptions,
};

/// The options of a configuration file; tables it does not have are empty.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub agent: AgentOptions,
    #[serde(default)]
    pub input: InputOptions,
    #[serde(default)]
    pub limits: LimitOptions,
    #[serde(default)]
    pub history: HistoryOptions,
    #[serde(default)]
    pub mcp: McpOptions,
}

impl Config {
    /// The configuration from `path` (which must exist), else from `ptc.toml` in the working
    /// directory if there is one, else none.
    pub fn load(path: Option<&Path>) -> Result<Config, String> {
        let path: PathBuf = match path {
            Some(path) => path.to_path_buf(),
            None => {
                let found = PathBuf::from(FILE_NAME);
                if !found.is_file() {
                    return Ok(Config::default());
                }
                found
            }
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read the configuration {}: {e}", path.display()))?;
        let config = Config::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new(""));
        Ok(Config {
            input: config.input.relative_to(dir),
            mcp: config.mcp.read_from(&path),
            ..config
        })
    }

    /// The configuration in `text`.
    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{Span, Summary};
    use pretty_assertions::assert_eq;
    use ptc_compression::history::SummaryStrategy;
    use ptc_mcp::ServerConfig;
    use std::time::Duration;

    /// The example of the module documentation (and of the README) is a valid configuration.
    #[test]
    fn the_documented_example_reads() {
        let doc = include_str!("config_file.rs");
        let example: String = doc
            .lines()
            .skip_while(|l| !l.starts_with("//! ```toml"))
            .skip(1)
            .take_while(|l| !l.starts_with("//! ```"))
            .map(|l| {
                l.trim_start_matches("//!")
                    .trim_start_matches(' ')
                    .to_string()
                    + "\n"
            })
            .collect();
        let config = Config::parse(&example).expect("the example parses");
        assert_eq!(
            config.agent.request_timeout,
            Some(Span(Duration::from_secs(60)))
        );
        assert_eq!(config.agent.max_turns, Some(8));
        assert_eq!(
            config.agent.headers,
            Some(vec![crate::options::Header {
                name: "X-Title".into(),
                value: "Weekly report".into(),
            }])
        );
        assert_eq!(config.input.data, Some(PathBuf::from("data.json")));
        assert_eq!(config.limits.timeout_ms, Some(5000));
        assert_eq!(
            config.history.summary,
            Some(Summary(SummaryStrategy::FromLastNMessages(8)))
        );
        let servers = config
            .mcp
            .read_from(Path::new("/project/ptc.toml"))
            .servers()
            .expect("the servers read");
        assert_eq!(
            servers,
            vec![
                ServerConfig::stdio(
                    "files",
                    "npx",
                    ["-y", "@modelcontextprotocol/server-filesystem", "docs"]
                ),
                ServerConfig::http("search", "http://127.0.0.1:3001/mcp")
                    .with_timeout(Duration::from_secs(60)),
            ]
        );
    }

    /// The `[mcp]` example of docs/mcp.md reads, its paths relative to the file.
    #[test]
    fn the_mcp_guide_example_reads() {
        let guide = include_str!("../../../docs/mcp.md");
        let block = guide
            .split("```toml\n")
            .nth(1)
            .and_then(|rest| rest.split_once("```"))
            .map(|(block, _)| block)
            .expect("docs/mcp.md has a ptc.toml example");
        let mcp = Config::parse(block)
            .expect("the example parses")
            .mcp
            .read_from(Path::new("/project/ptc.toml"));
        assert_eq!(
            mcp.config_files,
            Some(vec![PathBuf::from("/project/more-servers.json")])
        );
        let entries = mcp.servers.expect("servers");
        let names: Vec<&str> = entries.keys().map(String::as_str).collect();
        assert_eq!(names, ["files", "remote"]);
        assert_eq!(
            entries["remote"],
            serde_json::json!({"url": "http://127.0.0.1:3001/mcp",
                               "headers": {"Authorization": "Bearer TOKEN"}, "timeout": 60})
        );
    }

    /// Every `ptc.toml` example of the README reads.
    #[test]
    fn the_readme_examples_read() {
        let readme = include_str!("../../../README.md");
        let blocks: Vec<&str> = readme
            .split("```toml\n")
            .skip(1)
            .filter_map(|rest| rest.split_once("```").map(|(block, _)| block))
            .filter(|block| block.starts_with("[agent]"))
            .collect();
        assert_eq!(blocks.len(), 1);
        for block in blocks {
            let config = Config::parse(block).expect("a README example parses");
            assert_eq!(config.agent.retries, Some(2));
            let servers = config.mcp.servers().expect("the README's servers read");
            assert_eq!(
                servers
                    .iter()
                    .map(ServerConfig::describe)
                    .collect::<Vec<_>>(),
                ["npx -y @modelcontextprotocol/server-filesystem docs"]
            );
        }
    }

    #[test]
    fn unknown_keys_and_bad_values_are_reported_with_their_place() {
        assert_eq!(
            Config::parse("[agent]\nmax-turn = 3\n"),
            Err(
                "TOML parse error at line 2, column 1\n  |\n2 | max-turn = 3\n  | ^^^^^^^^\n\
                 unknown field `max-turn`, expected one of `llm`, `request-timeout`, `headers`, `retries`, \
                 `stream`, `deadline`, `max-turns`, `max-kept-bytes`, `float-precision`, `compression`, \
                 `pricing`, `signature`, `temperature`, `top-p`, `seed`, `stop`, `parallel-tool-calls`, \
                 `max-tokens`, `reply`, \
                 `system-prompt-extra`, `system-prompt-prefix`, `prompt-limit`, `system-prompt-file`, `llm-tools`"
                    .to_string()
            )
        );
        assert_eq!(
            Config::parse("[agent]\ndeadline = \"soon\"\n"),
            Err(
                "TOML parse error at line 2, column 12\n  |\n2 | deadline = \"soon\"\n  |  \
                 \x20         ^^^^^^\n`soon` is not a duration (expected number at 0); write e.g. \
                 500ms, 30s or 2m"
                    .to_string()
            )
        );
    }
}
