//! Servers for the tests: the pinned reference servers (installed on first use by
//! `ptc-mcp-testkit`) and the fault server, each as a `ServerConfig`.

#![allow(dead_code)]

pub mod logs;

use std::path::Path;
use std::time::Duration;

use ptc_mcp::{McpServers, ServerConfig};

/// A multi-threaded runtime, as the agent and the `ptc` command use.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn command(name: &str) -> String {
    ptc_mcp_testkit::server_command(name)
        .unwrap_or_else(|e| panic!("{e}"))
        .display()
        .to_string()
}

/// `@modelcontextprotocol/server-everything` over stdio.
pub fn everything() -> ServerConfig {
    ServerConfig::stdio(
        "everything",
        command(ptc_mcp_testkit::EVERYTHING),
        ["stdio"],
    )
}

/// `@modelcontextprotocol/server-filesystem` allowed to see `dir`.
pub fn filesystem(dir: &Path) -> ServerConfig {
    ServerConfig::stdio(
        "filesystem",
        command(ptc_mcp_testkit::FILESYSTEM),
        [dir.display().to_string()],
    )
}

/// `@modelcontextprotocol/server-memory` keeping its graph in `file`.
pub fn memory(file: &Path) -> ServerConfig {
    ServerConfig::stdio(
        "memory",
        command(ptc_mcp_testkit::MEMORY),
        Vec::<String>::new(),
    )
    .with_env("MEMORY_FILE_PATH", file.display().to_string())
}

/// The fault server with these options, calls timing out after `timeout`.
pub fn fault(options: &[&str], timeout: Duration) -> ServerConfig {
    let (node, script) = ptc_mcp_testkit::fault_server().unwrap_or_else(|e| panic!("{e}"));
    let mut args = vec![script.display().to_string()];
    args.extend(options.iter().map(|o| o.to_string()));
    ServerConfig::stdio("fault", node, args).with_timeout(timeout)
}

/// Waits up to five seconds for `done`: notifications are handled on tasks of their own, so
/// their counts may trail the reply that followed them.
pub fn eventually(done: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !done() {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Kills the process `pid` with SIGKILL.
pub fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill -KILL {pid}: {status}");
}

/// Connects, or fails the test with the reason.
pub async fn connect(configs: Vec<ServerConfig>) -> McpServers {
    McpServers::connect(configs)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The agent `builder` makes, with every tool of `servers`.
pub fn agent_with(builder: ptc_agent::AgentBuilder, servers: &McpServers) -> ptc_agent::Agent {
    servers
        .tools()
        .into_iter()
        .fold(builder, |builder, tool| builder.tool_arc(tool))
        .build()
        .expect("agent")
}

/// A fresh directory under the target directory, emptied first.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Connected servers and a sandbox whose `tool/` functions are their tools, to run programs
/// as `ptc eval` does.
pub struct Session {
    pub runtime: tokio::runtime::Runtime,
    pub servers: McpServers,
    sandbox: ptc_lisp::Runtime,
}

impl Session {
    pub fn start(configs: Vec<ServerConfig>) -> Session {
        let runtime = runtime();
        let servers = runtime.block_on(connect(configs));
        let tools = ptc_agent::sandbox_tools(&servers.tools(), runtime.handle())
            .unwrap_or_else(|e| panic!("{e}"));
        Session {
            runtime,
            servers,
            sandbox: ptc_lisp::Runtime::new().with_tools(tools),
        }
    }

    /// The program's value as Clojure prints it, or its error message.
    pub fn run(&self, program: &str) -> Result<String, String> {
        let out = self
            .sandbox
            .run_str(program, &ptc_lisp::UserNamespace::new());
        match &out.outcome {
            ptc_lisp::Outcome::Value(v) | ptc_lisp::Outcome::Returned(v) => Ok(ptc_lisp::pr_str(v)),
            ptc_lisp::Outcome::Failed(reason) => Err(ptc_lisp::pr_str(reason)),
            ptc_lisp::Outcome::Error(e) => Err(e.message.clone()),
        }
    }

    /// Checks each `(program, expected)` and reports every difference at once.
    pub fn check(&self, cases: &[(&str, Result<&str, &str>)]) {
        let mut failures = Vec::new();
        for (program, expected) in cases {
            let expected = expected.map(str::to_string).map_err(str::to_string);
            let got = self.run(program);
            if got != expected {
                failures.push(format!(
                    "{program}\n  expected {expected:?}\n  got      {got:?}"
                ));
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    pub fn close(self) {
        self.runtime.block_on(self.servers.close());
    }
}
