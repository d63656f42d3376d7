//! The `ptc` command with MCP servers (pinned, from npm): `ptc mcp list`, `ptc eval --mcp`,
//! `--mcp-config`, `PTC_MCP_CONFIG` and `[mcp.servers]` in `ptc.toml`, and an agent run end to
//! end with the real filesystem server and a replayed model.

use crate::support;

use pretty_assertions::assert_eq;
use ptc_turn::Step;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::ptc;

fn server(name: &str) -> String {
    ptc_mcp_testkit::server_command(name)
        .unwrap_or_else(|e| panic!("{e}"))
        .display()
        .to_string()
}

fn here(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn mcp_list_prints_every_tool_with_its_signature() {
    let command = format!("{} stdio", server(ptc_mcp_testkit::EVERYTHING));
    let output = ptc(&["mcp", "list", "--mcp", &command]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!("server everything ({command}, mcp-servers/everything 2.0.0): 13 tools")
    );
    assert_eq!(
        lines[1..4],
        [
            "  (tool/echo message)",
            "    (message :string) -> :any",
            "    Echoes back the input string",
        ]
    );
    assert!(
        text.contains(
            "  (tool/get-structured-content location)\n    (location :string) -> {temperature \
             :float, conditions :string, humidity :float}\n"
        ),
        "{text}"
    );
}

#[test]
fn eval_calls_mcp_tools_from_a_command_line_or_a_config_file() {
    let output = ptc(&[
        "eval",
        "--mcp",
        &format!("{} stdio", server(ptc_mcp_testkit::EVERYTHING)),
        "-e",
        "[(tool/get-sum 1 2) (:humidity (tool/get-structured-content \"Chicago\"))]",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "[\"The sum of 1 and 2 is 3.\" 82]\n");

    // A relative `cwd` is relative to the config file's folder.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-config");
    std::fs::create_dir_all(dir.join("files")).unwrap();
    std::fs::write(dir.join("files/hello.txt"), "hello from a file").unwrap();
    let config = dir.join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"files": {
            "command": server(ptc_mcp_testkit::FILESYSTEM),
            "args": ["."],
            "cwd": "files",
            "autoApprove": []
        }}})
        .to_string(),
    )
    .unwrap();
    let output = ptc(&[
        "eval",
        "--mcp-config",
        config.to_str().unwrap(),
        "-e",
        "(:content (tool/read_text_file \"hello.txt\"))",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "\"hello from a file\"\n");
    assert_eq!(
        stderr(&output),
        format!(
            "note: {}: mcpServers.files.autoApprove has no effect here\n",
            config.display()
        )
    );
}

#[test]
fn a_server_that_cannot_start_is_a_clear_error() {
    let output = ptc(&["eval", "--mcp", "no-such-mcp-server --flag", "-e", "1"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "error: MCP server no-such: cannot start `no-such-mcp-server --flag`: No \
         such file or directory (os error 2) (is the program installed and on the PATH?)\n"
    );
    let output = ptc(&["eval", "--mcp", "node 'unclosed", "-e", "1"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "error: --mcp: cannot split \"node 'unclosed\" into words: a quote is not closed\n"
    );
}

/// The mission of `docs/mcp.md`, replayed: three programs find the largest file through the
/// filesystem server's tools and return its path and first line.
#[test]
fn an_agent_finds_the_largest_file_through_the_filesystem_server() {
    let dump = Path::new(env!("CARGO_TARGET_TMPDIR")).join("largest-file-step.json");
    let transcript = here("tests/mcp/largest-file.jsonl");
    let files = here("tests/mcp/files");
    let output = ptc(&[
        "run",
        "--llm",
        &format!("replay:{}", transcript.display()),
        "--mission",
        "Find the largest file under the folder the filesystem tools can see; return its path \
         relative to that folder and its first line.",
        "--signature",
        "{path :string, first-line :string}",
        "--mcp",
        &format!(
            "{} {}",
            server(ptc_mcp_testkit::FILESYSTEM),
            files.display()
        ),
        "--dump-step",
        dump.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains(
            "=== result ===\nreturned after 3 of 5 turns:\n  {:path \"logs/2026-03.log\", \
             :first-line \"2026-03-01 08:59 checkout service started\"}\n"
        ),
        "{text}"
    );
    let step: Step =
        serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).expect("the step");
    let calls: Vec<Vec<String>> = step
        .turns
        .as_slice()
        .iter()
        .map(|t| t.tool_calls().iter().map(|c| c.name.clone()).collect())
        .collect();
    let mut second = vec!["list_allowed_directories", "search_files"];
    second.extend(["get_file_info"; 6]);
    assert_eq!(
        calls,
        vec![
            vec![
                "list_allowed_directories".to_string(),
                "search_files".into()
            ],
            second.into_iter().map(String::from).collect(),
            vec!["read_text_file".to_string()],
        ]
    );
    // The prompt shows the tools with the signatures derived from their schemas.
    let first_request = &step.turns.as_slice()[0].messages()[1].content;
    assert!(
        first_request.contains(
            "(tool/read_text_file path tail head) ; (path :string, tail :float?, head :float?) \
             -> {content :string} -- Read the complete contents of a file"
        ),
        "{first_request}"
    );
}

/// Three folders hold a `which.txt` saying where the server that reads it was named: in
/// `ptc.toml`, in `PTC_MCP_CONFIG`, or by a flag. A flag wins over the environment, which wins
/// over the file; the file's servers are used when nothing else names any.
#[test]
fn servers_come_from_flags_then_the_environment_then_ptc_toml() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-ptc-toml");
    let _ = std::fs::remove_dir_all(&dir);
    for (folder, text) in [
        ("from-file", "named in ptc.toml"),
        ("from-env", "named in PTC_MCP_CONFIG"),
        ("from-flag", "named by a flag"),
    ] {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
        std::fs::write(dir.join(folder).join("which.txt"), text).unwrap();
    }
    let filesystem = server(ptc_mcp_testkit::FILESYSTEM);
    // Relative paths of the file's servers are relative to the file.
    std::fs::write(
        dir.join("ptc.toml"),
        format!(
            "[mcp.servers.files]\ncommand = {filesystem:?}\nargs = [\".\"]\ncwd = \"from-file\"\n\
             autoApprove = []\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("env.json"),
        serde_json::json!({"mcpServers": {"files": {
            "command": filesystem, "args": ["."], "cwd": "from-env"
        }}})
        .to_string(),
    )
    .unwrap();
    let ptc_in = |args: &[&str], env: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ptc"));
        command
            .args(args)
            .current_dir(&dir)
            .env_remove("PTC_MCP_CONFIG");
        if let Some(value) = env {
            command.env("PTC_MCP_CONFIG", value);
        }
        let output = command.output().expect("run ptc");
        (output.status.code(), stdout(&output), stderr(&output))
    };
    let read = [
        "eval",
        "-e",
        "(:content (tool/read_text_file \"which.txt\"))",
    ];
    let from_flag = format!("{filesystem} '{}'", dir.join("from-flag").display());
    let with_flag: Vec<&str> = read.iter().copied().chain(["--mcp", &from_flag]).collect();
    assert_eq!(
        ptc_in(&read, None),
        (
            Some(0),
            "\"named in ptc.toml\"\n".to_string(),
            "note: ptc.toml: mcp.servers.files.autoApprove has no effect here\n".to_string()
        )
    );
    assert_eq!(
        ptc_in(&read, Some("env.json")),
        (
            Some(0),
            "\"named in PTC_MCP_CONFIG\"\n".to_string(),
            String::new()
        )
    );
    assert_eq!(
        ptc_in(&with_flag, Some("env.json")),
        (Some(0), "\"named by a flag\"\n".to_string(), String::new())
    );
    let (status, listing, _) = ptc_in(&["mcp", "list"], None);
    assert_eq!(status, Some(0));
    assert!(
        listing.starts_with(&format!(
            "server files ({filesystem} ., secure-filesystem-server "
        )),
        "{listing}"
    );
    assert!(
        listing.contains("  (tool/read_text_file path tail head)\n"),
        "{listing}"
    );
}

#[test]
fn mcp_list_needs_servers_and_reports_bad_ones_with_status_2() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-list-errors");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let list = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_ptc"))
            .args(args)
            .current_dir(&dir)
            .env_remove("PTC_MCP_CONFIG")
            .output()
            .expect("run ptc");
        (output.status.code(), stdout(&output), stderr(&output))
    };
    assert_eq!(
        list(&["mcp", "list"]),
        (
            Some(2),
            String::new(),
            "error: name the servers: ptc mcp list --mcp 'COMMAND ARGS...' or --mcp-config \
             FILE.json (or [mcp.servers] in ptc.toml)\n"
                .to_string()
        )
    );
    std::fs::write(dir.join("ptc.toml"), "[mcp.servers.remote]\nurl = 3\n").unwrap();
    assert_eq!(
        list(&["mcp", "list"]),
        (
            Some(2),
            String::new(),
            "error: ptc.toml: mcp.servers.remote: `url` must be a string, not 3\n".to_string()
        )
    );
    assert_eq!(
        list(&["mcp", "list", "--mcp", "no-such-mcp-server"]),
        (
            Some(2),
            String::new(),
            "error: MCP server no-such: cannot start `no-such-mcp-server`: No such file or \
             directory (os error 2) (is the program installed and on the PATH?)\n"
                .to_string()
        )
    );
}
