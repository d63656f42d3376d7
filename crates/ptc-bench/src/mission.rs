//! Missions as data: one directory per mission under `benchmarks/missions/`.
//!
//! | file | what it is |
//! |---|---|
//! | `mission.txt` | the task given to the agent (`{{name}}` placeholders are filled from the data) |
//! | `mission.json` | `category`, `max_turns`, `signature` and the `check` ([`crate::check`]) |
//! | `data.json` | optional input data: each top-level key becomes `data/<key>` |
//! | `tools.json` | optional tools ([`crate::tools`]) |
//! | `generate.clj` | optional: a PTC-Lisp program whose value, `{:data {...} :tools {...}}`, adds generated inputs and the answers of tools declared in `tools.json` ([`generated`]) |
//! | `mcp.json` | optional MCP servers whose tools the mission uses, in the `mcpServers` format |
//!
//! A mission's MCP servers are started afresh for every run (so a run never sees another's
//! side effects) and once when the mission is loaded, to list their tools for the checks.
//! Relative `command` paths (with a `/`) and `cwd` are relative to the mission's directory.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use ptc_agent::{Agent, AsyncTool, ScriptedLlm, Signature};
use ptc_lisp::Value;
use ptc_mcp::{Endpoint, McpConfig, McpServers, ServerConfig};
use serde::{Deserialize, Serialize};

use crate::check::Check;
use crate::generated;
use crate::tools::{CallLog, LoggedTool, ToolSet};

/// What a mission exercises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// One program answers it.
    SingleTurn,
    /// The model must look at something (print it) before it can compute the answer.
    MultiTurn,
    /// Tools with side effects that must be called exactly once each.
    SideEffects,
    /// A tool fails, or the obvious program fails, and the model must recover.
    ErrorRecovery,
    /// Eight or more turns, where the size of the history matters.
    LongRun,
}

impl Category {
    /// Every category, in the order reports list them.
    pub const ALL: [Category; 5] = [
        Category::SingleTurn,
        Category::MultiTurn,
        Category::SideEffects,
        Category::ErrorRecovery,
        Category::LongRun,
    ];

    /// The name `mission.json` gives it, e.g. `side-effects`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::SingleTurn => "single-turn",
            Category::MultiTurn => "multi-turn",
            Category::SideEffects => "side-effects",
            Category::ErrorRecovery => "error-recovery",
            Category::LongRun => "long-run",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which half of the benchmark a mission is in. Changes to the prompt and the feedback are
/// tuned on the missions of one half and judged on the other, so a gain that only shows where
/// it was tuned is not taken for a gain (docs/benchmark.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Half {
    /// Missions whose failures changes may be tuned on.
    Tuning,
    /// Missions no change is tuned on: they judge the changes.
    HeldOut,
}

impl Half {
    /// Both halves, in the order reports list them.
    pub const ALL: [Half; 2] = [Half::Tuning, Half::HeldOut];

    /// The name `mission.json` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Half::Tuning => "tuning",
            Half::HeldOut => "held-out",
        }
    }
}

/// How large a mission is: the report keeps the groups apart, so that a win on one never hides
/// a loss on the other.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Size {
    /// Inputs and tool results a model could read whole: tens of records.
    #[default]
    Small,
    /// Where a model cannot read everything: thousands of records, tool results of tens of
    /// kilobytes, tens of dependent calls.
    Large,
}

impl Size {
    /// Both groups, in the order reports list them.
    pub const ALL: [Size; 2] = [Size::Small, Size::Large];

    /// The name `mission.json` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Size::Small => "small",
            Size::Large => "large",
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Half {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `mission.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MissionFile {
    category: Category,
    half: Half,
    #[serde(default)]
    size: Size,
    #[serde(default = "default_max_turns")]
    max_turns: u32,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default)]
    check: Check,
}

fn default_max_turns() -> u32 {
    ptc_turn::DEFAULT_MAX_TURNS
}

/// A mission, loaded and checked.
#[derive(Debug, Clone)]
pub struct Mission {
    /// The directory's name.
    pub name: String,
    /// What it exercises.
    pub category: Category,
    /// The half of the benchmark it is in.
    pub half: Half,
    /// Its size group.
    pub size: Size,
    /// The task text.
    pub text: String,
    /// The input data, by `data/` name.
    pub data: BTreeMap<String, Value>,
    /// Its tools with canned or scripted answers (`tools.json`).
    pub tools: ToolSet,
    /// The MCP servers of `mcp.json`.
    pub mcp: Vec<ServerConfig>,
    /// The parameter names of the MCP servers' tools, by `tool/` name.
    pub mcp_tools: BTreeMap<String, Vec<String>>,
    /// The agent's turn budget.
    pub max_turns: u32,
    /// The agent's output signature, e.g. `{total :float}`; `None` for any value.
    pub signature: Option<String>,
    /// What a run must do to pass.
    pub check: Check,
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn read_optional(path: &Path) -> Result<Option<String>, String> {
    if path.exists() {
        read(path).map(Some)
    } else {
        Ok(None)
    }
}

impl Mission {
    /// Loads and checks the mission in `dir`: every file parses, the signatures parse, the
    /// check names only declared tools and arguments, and an agent can be built from it.
    pub fn load(dir: &Path) -> Result<Mission, String> {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .ok_or_else(|| format!("{} is not a mission directory", dir.display()))?;
        let text = read(&dir.join("mission.txt"))?.trim().to_string();
        if text.is_empty() {
            return Err(format!("{}: the mission text is empty", dir.display()));
        }
        let meta_path = dir.join("mission.json");
        let meta: MissionFile = serde_json::from_str(&read(&meta_path)?)
            .map_err(|e| format!("{}: {e}", meta_path.display()))?;
        let mut data = match read_optional(&dir.join("data.json"))? {
            None => BTreeMap::new(),
            Some(text) => data_entries(&text)
                .map_err(|e| format!("{}: {e}", dir.join("data.json").display()))?,
        };
        let mut tools = match read_optional(&dir.join("tools.json"))? {
            None => ToolSet::default(),
            Some(text) => ToolSet::from_json(&dir.join("tools.json").display().to_string(), &text)?,
        };
        let generator = dir.join("generate.clj");
        if let Some(program) = read_optional(&generator)? {
            let source = generator.display().to_string();
            generated::apply(&source, &program, &mut data, &mut tools)?;
        }
        let mut check = meta.check;
        if let Some(signature) = &meta.signature {
            let signature = Signature::parse(signature)
                .map_err(|e| format!("{}: the signature: {e}", meta_path.display()))?;
            check.extra_keys = matches!(
                signature.output().without_optional(),
                ptc_agent::Type::Record(_)
            );
        }
        let mcp_path = dir.join("mcp.json");
        let (mcp, mcp_tools) = if mcp_path.exists() {
            let config = McpConfig::from_file(&mcp_path).map_err(|e| e.to_string())?;
            if let Some(field) = config.ignored.first() {
                return Err(format!(
                    "{}: {field} means nothing here; remove it",
                    mcp_path.display()
                ));
            }
            let listed = list_mcp_tools(config.servers.clone())
                .map_err(|e| format!("{}: {e}", mcp_path.display()))?;
            if let Some(both) = listed
                .keys()
                .find(|name| tools.names().contains(&name.as_str()))
            {
                return Err(format!(
                    "{}: tool/{both} is both a tool of tools.json and of an MCP server",
                    dir.display()
                ));
            }
            (config.servers, listed)
        } else {
            (Vec::new(), BTreeMap::new())
        };
        let names = tools.names();
        check
            .validate(|tool| {
                if names.contains(&tool) {
                    Some(tools.params(tool))
                } else {
                    mcp_tools.get(tool).map(Vec::as_slice)
                }
            })
            .map_err(|e| format!("{}: check: {e}", meta_path.display()))?;
        let mission = Mission {
            name,
            category: meta.category,
            half: meta.half,
            size: meta.size,
            text,
            data,
            tools,
            mcp,
            mcp_tools,
            max_turns: meta.max_turns,
            signature: meta.signature,
            check,
        };
        mission
            .builder(
                std::sync::Arc::new(ScriptedLlm::new(Vec::<String>::new())),
                &CallLog::new(),
            )
            .build()
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(mission)
    }

    /// The parameter names of every tool, table and MCP, by name.
    pub fn tool_params(&self) -> BTreeMap<String, Vec<String>> {
        let mut params = self.mcp_tools.clone();
        for name in self.tools.names() {
            params.insert(name.to_string(), self.tools.params(name).to_vec());
        }
        params
    }

    /// Starts the mission's MCP servers for one run: the servers (to close when the run ends)
    /// and their tools, logging to `log`. `None` when the mission has none.
    ///
    /// `run` names the run (e.g. `on/1`): the copies of the servers' directories are made at a
    /// path of its own that is the same for every run of that name, so that a model that wrote
    /// a path it was shown into a program replays exactly; two runs of the same name at once
    /// take turns.
    pub async fn start_mcp(&self, log: &CallLog, run: &str) -> Result<Option<McpRun>, String> {
        if self.mcp.is_empty() {
            return Ok(None);
        }
        // Each run works in a copy of every server's working directory: a model that writes,
        // moves or makes files there changes neither the committed mission nor the next run.
        let scratch = Scratch::for_run(&self.name, run).await?;
        let mut configs = Vec::with_capacity(self.mcp.len());
        for (i, config) in self.mcp.iter().enumerate() {
            let mut config = config.clone();
            if let Endpoint::Stdio { cwd: Some(dir), .. } = &config.endpoint {
                let copy = scratch.path.join(i.to_string());
                copy_dir(dir, &copy)?;
                config = config.with_cwd(copy);
            }
            configs.push(config);
        }
        let servers = McpServers::connect(configs)
            .await
            .map_err(|e| format!("{e}{INSTALL_HINT}"))?;
        let tools = servers
            .tools()
            .into_iter()
            .map(|tool| Arc::new(LoggedTool::new(tool, log)) as Arc<dyn AsyncTool>)
            .collect();
        Ok(Some(McpRun {
            servers,
            tools,
            _scratch: scratch,
        }))
    }

    /// An agent builder for this mission with these tools' log; compression and other run
    /// settings are the caller's. The MCP servers' tools are added by the caller (see
    /// [`Mission::start_mcp`]).
    pub fn builder(
        &self,
        llm: std::sync::Arc<dyn ptc_agent::Llm>,
        log: &CallLog,
    ) -> ptc_agent::AgentBuilder {
        let mut builder = Agent::builder(&self.text)
            .llm_arc(llm)
            .max_turns(self.max_turns)
            .limits(program_limits());
        for tool in self.tools.instantiate(log) {
            builder = builder.tool_arc(tool);
        }
        for (name, value) in &self.data {
            builder = builder.data_value(name, value.clone());
        }
        if let Some(signature) = &self.signature {
            builder = builder.signature(signature);
        }
        builder
    }
}

const INSTALL_HINT: &str = " (the MCP servers of the bundled missions are installed by \
                            `cargo xtask mcp-servers`)";

/// Connects to the servers once and lists their tools' parameter names, by `tool/` name.
/// A thread of its own keeps its runtime apart from any the caller may be running.
/// The MCP servers of one run and their tools, logged; the copies of the servers' working
/// directories go when it is dropped.
pub struct McpRun {
    /// The connected servers (close them when the run ends).
    pub servers: McpServers,
    /// Their tools, each call logged.
    pub tools: Vec<Arc<dyn AsyncTool>>,
    _scratch: Scratch,
}

impl McpRun {
    /// The JSON Schema of the arguments of the tool named `name` (its `tool/` name), as its
    /// server gave it.
    pub fn input_schema(&self, name: &str) -> Option<&serde_json::Value> {
        self.servers.tool(name).map(|tool| tool.input_schema())
    }
}

/// A directory of one run's own under the system's temporary directory
/// (`ptc-bench-mcp/MISSION/RUN`), held under a lock file beside it while the run lasts and
/// removed when dropped.
struct Scratch {
    path: PathBuf,
    _lock: std::fs::File,
}

impl Scratch {
    async fn for_run(mission: &str, run: &str) -> Result<Scratch, String> {
        let path = std::env::temp_dir()
            .join("ptc-bench-mcp")
            .join(mission)
            .join(run);
        let lock_path = path.with_extension("lock");
        if let Some(parent) = lock_path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        let lock = std::fs::File::create(&lock_path)
            .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
        // Another run of the same name, in this process or another, has it: wait for it.
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(format!("cannot lock {}: {e}", lock_path.display()));
                }
            }
        }
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(Scratch { path, _lock: lock })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Before the lock goes with the file: the next run of the name finds no copy.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Copies the directory `from` to `to` (which it creates), files and directories alike.
fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("cannot list {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", from.display()))?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if source.is_dir() {
            copy_dir(&source, &target)?;
        } else {
            std::fs::copy(&source, &target).map_err(|e| {
                format!(
                    "cannot copy {} to {}: {e}",
                    source.display(),
                    target.display()
                )
            })?;
        }
    }
    Ok(())
}

fn list_mcp_tools(servers: Vec<ServerConfig>) -> Result<BTreeMap<String, Vec<String>>, String> {
    let listing = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| format!("could not start the async runtime: {e}"))?;
        runtime.block_on(async {
            let servers = McpServers::connect(servers)
                .await
                .map_err(|e| format!("{e}{INSTALL_HINT}"))?;
            let tools = servers
                .mcp_tools()
                .iter()
                .map(|t| (t.name().to_string(), t.params()))
                .collect();
            servers.close().await;
            Ok(tools)
        })
    });
    listing
        .join()
        .unwrap_or_else(|_| Err("listing the MCP tools panicked".to_string()))
}

/// The entries of a data file: a JSON object whose keys become `data/<key>`.
fn data_entries(text: &str) -> Result<BTreeMap<String, Value>, String> {
    let value = ptc_lisp::from_json_str(text).map_err(|e| e.message)?;
    Ok(ptc_lisp::data_entries(&value)
        .map_err(|e| e.message)?
        .into_iter()
        .collect())
}

/// Whether `name` matches a glob pattern: `*` is any run of characters, `?` one character.
///
/// ```
/// use ptc_bench::mission::glob_match;
/// assert!(glob_match("orders-*", "orders-late"));
/// assert!(glob_match("*late*", "orders-late"));
/// assert!(!glob_match("order?", "orders-late"));
/// ```
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // The classic two-pointer match with backtracking to the last `*`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// The mission directories under `root` whose names match one of `patterns` (all when there
/// are none), sorted by name, loaded and checked.
pub fn load_missions(root: &Path, patterns: &[String]) -> Result<Vec<Mission>, String> {
    let entries = std::fs::read_dir(root).map_err(|e| {
        format!(
            "cannot read the missions directory {}: {e} (run from the repository root, or pass \
             --missions-dir)",
            root.display()
        )
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("mission.json").is_file())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().to_string());
            name.is_some_and(|name| {
                patterns.is_empty() || patterns.iter().any(|pat| glob_match(pat, &name))
            })
        })
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(format!(
            "no mission in {} matches {}",
            root.display(),
            if patterns.is_empty() {
                "(any name)".to_string()
            } else {
                patterns.join(", ")
            }
        ));
    }
    dirs.iter().map(|d| Mission::load(d)).collect()
}

/// The sandbox limits of a benchmark program: the defaults, but 30 seconds of run time instead
/// of one. A mission's program over tens of thousands of records takes a fraction of a second
/// in a release build and several seconds in an unoptimized one on a busy machine; the time
/// limit is the one limit that depends on the machine, so a replay of a recorded run must not
/// meet it where the recording did not. The step and memory limits, which do not depend on
/// the machine, still stop a runaway program.
pub fn program_limits() -> ptc_lisp::Limits {
    ptc_lisp::Limits {
        timeout: std::time::Duration::from_secs(30),
        ..ptc_lisp::Limits::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn globs_match_whole_names() {
        let cases = [
            ("*", "anything", true),
            ("", "", true),
            ("", "x", false),
            ("a*c", "abbbc", true),
            ("a*c", "abbbd", false),
            ("*-late", "orders-late", true),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("**b", "aab", true),
            ("*a*b*", "xxaxxbxx", true),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(glob_match(pattern, name), expected, "{pattern} ~ {name}");
        }
    }

    // A run's filesystem server works in a copy of the mission: what the model writes or makes
    // there is gone when the run ends, and the committed files stay as they are.
    #[test]
    fn a_run_cannot_change_the_files_of_its_mission() {
        ptc_mcp_testkit::ensure_installed().unwrap_or_else(|e| panic!("{e}"));
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benchmarks/missions");
        let missions = load_missions(&root, &["mcp-service-logs".to_string()]).unwrap();
        let files = root.join("mcp-service-logs/files");
        let listing = |dir: &Path| {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        let before = listing(&files);
        let written = tokio::runtime::Runtime::new().unwrap().block_on(async {
            let mcp = missions[0]
                .start_mcp(&CallLog::new(), "test/1")
                .await
                .unwrap()
                .unwrap();
            let tool = |name: &str| {
                mcp.tools
                    .iter()
                    .find(|t| t.name() == name)
                    .unwrap_or_else(|| panic!("no {name}"))
                    .clone()
            };
            let args = |pairs: &[(&str, &str)]| {
                vec![Value::map(
                    pairs
                        .iter()
                        .map(|(k, v)| (Value::keyword(k), Value::string(*v))),
                )]
            };
            tool("write_file")
                .call(args(&[("path", "notes.txt"), ("content", "mine")]))
                .await
                .unwrap();
            tool("create_directory")
                .call(args(&[("path", "service_logs")]))
                .await
                .unwrap();
            let read = tool("read_text_file")
                .call(args(&[("path", "notes.txt")]))
                .await
                .unwrap();
            let copy = mcp._scratch.path.clone();
            mcp.servers.close().await;
            (read, copy)
        });
        assert_eq!(
            written.0,
            Value::map([(Value::keyword("content"), Value::string("mine"))])
        );
        assert_eq!(listing(&files), before);
        assert_eq!(before, ["api.log", "billing.log", "search.log"]);
        assert!(!written.1.exists(), "the copy is removed with the run");
    }

    #[test]
    fn every_bundled_mission_loads_and_every_category_is_covered() {
        // A mission uses an MCP server from npm.
        ptc_mcp_testkit::ensure_installed().unwrap_or_else(|e| panic!("{e}"));
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benchmarks/missions");
        let missions = load_missions(&root, &[]).unwrap();
        assert!(missions.len() >= 20, "{} missions", missions.len());
        for category in Category::ALL {
            assert!(
                missions.iter().any(|m| m.category == category),
                "no {category} mission"
            );
        }
        let service_logs = missions
            .iter()
            .find(|m| m.name == "mcp-service-logs")
            .unwrap();
        assert_eq!(service_logs.mcp.len(), 1);
        assert_eq!(
            service_logs
                .mcp_tools
                .get("read_text_file")
                .map(Vec::as_slice),
            Some(["path".to_string(), "tail".into(), "head".into()].as_slice())
        );
        for long in missions.iter().filter(|m| m.category == Category::LongRun) {
            assert!(
                long.max_turns >= 8,
                "{} allows {} turns",
                long.name,
                long.max_turns
            );
        }
    }
}
