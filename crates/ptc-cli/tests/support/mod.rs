//! What the `ptc` tests share: running `ptc` apart from the caller's settings, masking timings,
//! a scratch directory, and a local model server.

#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::mpsc;

/// `ptc` with `args`, without the environment variables that would change what it does (API
/// keys, a default model, retries, timeouts, an MCP configuration, log filters).
pub fn ptc_command(args: &[&str]) -> Command {
    ptc_command_through(&[], args)
}

/// [`ptc_command`] started through `launcher` (a program and its arguments, `ptc` and `args`
/// following them: `ip netns exec NAME`), or directly when `launcher` is empty.
pub fn ptc_command_through(launcher: &[&str], args: &[&str]) -> Command {
    let ptc = env!("CARGO_BIN_EXE_ptc");
    let mut command = match launcher.split_first() {
        Some((program, rest)) => {
            let mut command = Command::new(program);
            command.args(rest).arg(ptc);
            command
        }
        None => Command::new(ptc),
    };
    command.args(args);
    for name in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "RUST_LOG",
        "PTC_LLM",
        "PTC_RETRIES",
        "PTC_REQUEST_TIMEOUT",
        "PTC_DEADLINE",
        "PTC_MCP_CONFIG",
        "PTC_STORE",
    ] {
        command.env_remove(name);
    }
    command
}

/// Runs [`ptc_command`] to the end.
pub fn ptc(args: &[&str]) -> Output {
    ptc_command(args).output().expect("run ptc")
}

/// Every printed duration (`850 µs`, `12 ms`, `1.5 s`, `2 min 5 s`) becomes `<t>`: timings
/// differ from run to run.
pub fn mask_timings(text: &str) -> String {
    regex::Regex::new(r"\d+ min \d+ s|\d+(\.\d)? (µs|ms|s)\b")
        .expect("valid pattern")
        .replace_all(text, "<t>")
        .into_owned()
}

/// A directory of its own under the system's temporary directory, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("ptc-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a scratch directory");
        Scratch(dir)
    }

    /// Writes `contents` to `name` in the directory and returns its path.
    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).expect("write a test file");
        path
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn utf8(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// A local server speaking the OpenAI chat-completions API: it answers request N with reply
/// N, and from request number `hang_from` (0-based) on it accepts the request and never
/// answers, telling the test through `hanging` when such a request has arrived.
pub struct ModelServer {
    pub base_url: String,
    pub hanging: mpsc::Receiver<usize>,
    /// The headers of each request, in arrival order, names in lower case.
    pub headers: mpsc::Receiver<Headers>,
}

impl ModelServer {
    /// `replies` are reply texts, each answered with a usage of 100 tokens in and 10 out.
    pub fn start(replies: Vec<String>, hang_from: usize) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("address"));
        let (tell, hanging) = mpsc::channel();
        let (tell_headers, headers) = mpsc::channel();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for (index, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { return };
                let Some((head, _)) = read_request_with_headers(&mut stream) else {
                    continue;
                };
                let _ = tell_headers.send(head);
                match replies.get(index).filter(|_| index < hang_from) {
                    Some(reply) => answer(&mut stream, reply),
                    None => {
                        held.push(stream);
                        let _ = tell.send(index);
                    }
                }
            }
        });
        ModelServer {
            base_url,
            hanging,
            headers,
        }
    }

    /// A server that accepts every request and never answers.
    pub fn silent() -> ModelServer {
        ModelServer::start(Vec::new(), 0)
    }

    /// The `--llm` spec for this server.
    pub fn spec(&self) -> String {
        format!("openai-compatible:{}:test-model", self.base_url)
    }
}

/// Reads one HTTP request (headers, then a body of `Content-Length` bytes).
pub fn read_request(stream: &mut TcpStream) -> Option<Vec<u8>> {
    read_request_with_headers(stream).map(|(_, body)| body)
}

/// Header names (in lower case) and values, in the order they came.
pub type Headers = Vec<(String, String)>;

/// Reads one HTTP request: its headers and its body.
pub fn read_request_with_headers(stream: &mut TcpStream) -> Option<(Headers, Vec<u8>)> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut length = 0;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            let name = name.to_ascii_lowercase();
            if name == "content-length" {
                length = value.trim().parse().ok()?;
            }
            headers.push((name, value.trim().to_string()));
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((headers, body))
}

/// Answers one chat-completion request on `stream` with `reply` as the assistant's message.
pub fn answer(stream: &mut TcpStream, reply: &str) {
    let body = serde_json::json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    })
    .to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}
