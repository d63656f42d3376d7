//! `parse_llm_spec`. One test function, because it changes environment variables, which must
//! not happen while other threads of the same process read them.

use pretty_assertions::assert_eq;
use ptc_agent::llm::{LlmError, parse_llm_spec};

fn error(spec: &str) -> String {
    match parse_llm_spec(spec) {
        Ok(llm) => panic!("`{spec}` parsed as {}", llm.describe()),
        Err(e) => e.to_string(),
    }
}

fn describe(spec: &str) -> String {
    match parse_llm_spec(spec) {
        Ok(llm) => llm.describe(),
        Err(e) => panic!("`{spec}` failed: {e}"),
    }
}

#[test]
fn specs() {
    // SAFETY: this test binary runs this single test, so no other thread reads the environment.
    unsafe {
        std::env::remove_var("OPENAI_API_KEY");
        std::env::remove_var("ANTHROPIC_API_KEY");
    }
    assert_eq!(
        error("openai:gpt-4o"),
        "OPENAI_API_KEY is not set; export your OpenAI API key in it"
    );
    assert_eq!(
        error("anthropic:claude-sonnet-4-5"),
        "ANTHROPIC_API_KEY is not set; export your Anthropic API key in it"
    );
    // SAFETY: as above.
    unsafe {
        std::env::set_var("OPENAI_API_KEY", "sk-test");
        std::env::set_var("ANTHROPIC_API_KEY", "sk-ant-test");
    }
    assert_eq!(describe("openai:gpt-4o"), "openai:gpt-4o");
    assert_eq!(
        describe("anthropic:claude-sonnet-4-5"),
        "anthropic:claude-sonnet-4-5"
    );
    // The URL's own colons (scheme, port) stay in the URL; everything after it is the model,
    // colons included.
    assert_eq!(
        describe("openai-compatible:http://localhost:11434/v1:llama3"),
        "openai-compatible:http://localhost:11434/v1:llama3"
    );
    assert_eq!(
        describe(" openai-compatible:https://openrouter.ai/api/v1:meta-llama/llama-3-70b "),
        "openai-compatible:https://openrouter.ai/api/v1:meta-llama/llama-3-70b"
    );
    assert_eq!(
        describe("openai-compatible:http://localhost:11434/v1:qwen2.5:7b"),
        "openai-compatible:http://localhost:11434/v1:qwen2.5:7b"
    );
    assert_eq!(
        describe(
            "openai-compatible:https://openrouter.ai/api/v1:meta-llama/llama-3.3-70b-instruct:free"
        ),
        "openai-compatible:https://openrouter.ai/api/v1:meta-llama/llama-3.3-70b-instruct:free"
    );
    assert_eq!(
        describe("openai-compatible:http://localhost:8080:llama3:latest"),
        "openai-compatible:http://localhost:8080:llama3:latest"
    );
    assert_eq!(
        describe("openai-compatible:http://[::1]:8000/v1/:Qwen/Qwen2.5-Coder-7B:q4"),
        "openai-compatible:http://[::1]:8000/v1:Qwen/Qwen2.5-Coder-7B:q4"
    );

    assert_eq!(
        error("openai:"),
        "the model spec `openai:` has no model; write openai:MODEL"
    );
    assert_eq!(
        error("replay:"),
        "the model spec `replay:` has no file; write replay:FILE"
    );
    assert_eq!(
        error("openai-compatible:llama3"),
        "the model spec `openai-compatible:llama3` needs a URL and a model; write \
         openai-compatible:URL:MODEL, e.g. openai-compatible:http://localhost:11434/v1:llama3"
    );
    // A port is not a model name.
    assert_eq!(
        error("openai-compatible:http://localhost:8080"),
        "the model spec `openai-compatible:http://localhost:8080` needs a URL and a model; \
         write openai-compatible:URL:MODEL, e.g. \
         openai-compatible:http://localhost:11434/v1:llama3"
    );
    assert_eq!(
        error("openai-compatible:http://localhost:8080/v1:"),
        "the model spec `openai-compatible:http://localhost:8080/v1:` needs a URL and a model; \
         write openai-compatible:URL:MODEL, e.g. \
         openai-compatible:http://localhost:11434/v1:llama3"
    );
    assert_eq!(
        error("openai-compatible:localhost:llama3"),
        "`localhost` is not an http:// or https:// URL; give the server's base URL, e.g. \
         http://localhost:11434/v1"
    );
    assert_eq!(
        error("gpt-4o"),
        "unknown model spec `gpt-4o`; use openai:MODEL, anthropic:MODEL, \
         openai-compatible:URL:MODEL, replay:FILE, file:DIR or human"
    );
    assert_eq!(
        error("file:"),
        "the model spec `file:` has no dir; write file:DIR"
    );
    assert_eq!(
        error("human:bob"),
        "unknown model spec `human:bob`; use openai:MODEL, anthropic:MODEL, \
         openai-compatible:URL:MODEL, replay:FILE, file:DIR or human"
    );
    assert!(matches!(
        parse_llm_spec("replay:/nonexistent/transcript.jsonl"),
        Err(LlmError::Transcript { line: None, .. })
    ));
}
