//! Against `@modelcontextprotocol/server-filesystem` and `@modelcontextprotocol/server-memory`
//! (pinned, from npm), together in one session.

use crate::support;

use pretty_assertions::assert_eq;
use ptc_agent::AsyncTool;
use support::Session;

#[test]
fn filesystem_and_memory_tools_work_as_their_schemas_say() {
    let dir = support::scratch("reference-servers");
    let files = dir.join("files");
    std::fs::create_dir_all(files.join("notes")).unwrap();
    std::fs::write(
        files.join("notes/todo.txt"),
        "buy milk\ncall Ada\nfix the roof",
    )
    .unwrap();
    let session = Session::start(vec![
        support::filesystem(&files),
        support::memory(&dir.join("memory.jsonl")),
    ]);
    let read = session.servers.tool("read_text_file").unwrap();
    assert_eq!(
        read.signature(),
        Some("(path :string, tail :float?, head :float?) -> {content :string}")
    );
    session.check(&[
        // Relative paths are resolved by the server against its allowed directory.
        ("(tool/list_directory \"notes\")", Ok(r#"{:content "[FILE] todo.txt"}"#)),
        (
            "(:content (tool/read_text_file \"notes/todo.txt\" nil 1))",
            Ok(r#""buy milk""#),
        ),
        (
            "(:content (tool/read_text_file {:path \"notes/todo.txt\" :tail 1}))",
            Ok(r#""fix the roof""#),
        ),
        (
            "(tool/write_file \"notes/done.txt\" \"nothing yet\")",
            Ok(r#"{:content "Successfully wrote to notes/done.txt"}"#),
        ),
        (
            "(-> (tool/read_text_file \"notes/done.txt\") :content)",
            Ok(r#""nothing yet""#),
        ),
        (
            "(str/starts-with? (ex-message (try (tool/read_text_file \"/etc/passwd\") (catch Exception e e))) \"tool/read_text_file failed: Access denied - path outside allowed directories: /etc/passwd not in \")",
            Ok("true"),
        ),
        (
            r#"(->> (tool/create_entities [{:name "Ada" :entityType "person" :observations ["writes programs"]}])
                    :entities (map :name))"#,
            Ok(r#"("Ada")"#),
        ),
        (
            r#"(-> (tool/read_graph) :entities first :observations)"#,
            Ok(r#"["writes programs"]"#),
        ),
    ]);
    assert_eq!(
        std::fs::read_to_string(files.join("notes/done.txt")).unwrap(),
        "nothing yet"
    );
    assert!(
        std::fs::read_to_string(dir.join("memory.jsonl"))
            .unwrap()
            .contains("\"name\":\"Ada\"")
    );
    session.close();
}
