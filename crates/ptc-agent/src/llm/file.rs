//! A model answered through files: each request is written to a directory, and the reply is
//! read from a file someone (a person, or a model given only the request files) writes there.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use ptc_compression::{HeuristicTokenizer, Tokenizer};

use super::readable::{estimated_reply, invalid, parse_reply_json, request_markdown};
use super::{Llm, LlmError, LlmRequest, LlmResponse};

/// How long [`FileLlm`] waits for a reply unless told otherwise: answering by hand takes
/// minutes, not the seconds an HTTP provider is given.
pub const FILE_REPLY_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// A model that is whoever answers the files in a directory (spec `file:DIR`).
///
/// For the N-th request (from 1) it writes `req-N.json`, the request exactly as the agent made
/// it ([`LlmRequest`] as JSON), and `req-N.md`, the same for reading: the system prompt, the
/// native tools when the request offers any, and every message with its number and role, with a
/// line saying how many leading messages the previous request had too. Then it waits, up to its
/// timeout, for the reply:
///
/// - `reply-N.txt`: the reply's text;
/// - `reply-N.json`: `{"content": "...", "tool_calls": [{"name": "...", "arguments": {...}}]}`,
///   for requests that offer native tools (ids are given as `call-N-K` when the file has none).
///
/// Each file is read once it exists, so write it elsewhere first and rename it into place:
/// a rename is atomic, a write is not. Usage is estimated with the token counter
/// ([`with_tokenizer`](Self::with_tokenizer), four characters a token by default) and marked
/// so ([`LlmResponse::usage_estimated`]). When the model is dropped, or
/// [`finish`](Self::finish) is called, it writes `END`, which tells the answerer the run is
/// over. Numbering goes on after the highest `req-N` already in the directory, so a resumed
/// run continues in the same place; a request asked again after a timeout keeps its number.
///
/// ```no_run
/// # async fn demo() -> Result<(), ptc_agent::llm::LlmError> {
/// use ptc_agent::llm::{FileLlm, Llm, LlmRequest};
/// use ptc_turn::Message;
///
/// let llm = FileLlm::new("answers")?;
/// // Writes answers/req-1.json and answers/req-1.md, then waits for answers/reply-1.txt.
/// let reply = llm.complete(&LlmRequest::new("Be brief.", vec![Message::user("2+2?")])).await?;
/// println!("{}", reply.content);
/// # Ok(())
/// # }
/// ```
pub struct FileLlm {
    dir: PathBuf,
    timeout: Duration,
    poll: Duration,
    tokenizer: Arc<dyn Tokenizer>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The number of the last request written.
    last: u32,
    /// The last request written, and whether its reply has been read.
    previous: Option<(LlmRequest, bool)>,
    finished: bool,
}

impl std::fmt::Debug for FileLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileLlm")
            .field("dir", &self.dir)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl FileLlm {
    /// A model answered in `dir`, which is made if it does not exist. An `END` left there by an
    /// earlier run is removed.
    pub fn new(dir: impl Into<PathBuf>) -> Result<FileLlm, LlmError> {
        let dir = dir.into();
        let configuration = |what: &str, e: std::io::Error| {
            LlmError::Configuration(format!("cannot {what} {}: {e}", dir.display()))
        };
        std::fs::create_dir_all(&dir).map_err(|e| configuration("create the directory", e))?;
        let last = highest_request(&dir).map_err(|e| configuration("list", e))?;
        match std::fs::remove_file(dir.join("END")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(configuration("remove END from", e));
            }
            _ => {}
        }
        Ok(FileLlm {
            dir,
            timeout: FILE_REPLY_TIMEOUT,
            poll: Duration::from_millis(100),
            tokenizer: Arc::new(HeuristicTokenizer),
            state: Mutex::new(State {
                last,
                ..State::default()
            }),
        })
    }

    /// How long to wait for each reply (default [`FILE_REPLY_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How often to look for the reply (default 100 ms).
    pub fn with_poll_interval(mut self, poll: Duration) -> Self {
        self.poll = poll;
        self
    }

    /// The token counter that estimates each reply's usage (default four characters a token).
    pub fn with_tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    /// The directory requests go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `END`: the run is over and no request will follow. Dropping the model does the
    /// same; calling it twice writes once.
    pub fn finish(&self) -> Result<(), LlmError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.finished {
            return Ok(());
        }
        state.finished = true;
        write_atomically(&self.dir, "END", "")
            .map_err(|e| LlmError::Configuration(format!("cannot write END: {e}")))
    }

    /// The number of `request`: the pending one's when it is asked again (a retry after a
    /// timeout), else the next, with its files written.
    fn begin(&self, request: &LlmRequest) -> Result<u32, LlmError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((pending, false)) = &state.previous
            && pending == request
        {
            return Ok(state.last);
        }
        let number = state.last + 1;
        let previous = state.previous.as_ref().map(|(request, _)| request);
        let json = serde_json::to_string_pretty(request).map_err(|e| {
            LlmError::InvalidRequest(format!("cannot write the request as JSON: {e}"))
        })?;
        let write = |name: String, text: &str| {
            write_atomically(&self.dir, &name, text).map_err(|e| {
                LlmError::Configuration(format!(
                    "cannot write {}: {e}",
                    self.dir.join(&name).display()
                ))
            })
        };
        // The JSON first: an answerer waits for the Markdown, and finds both.
        write(format!("req-{number}.json"), &(json + "\n"))?;
        write(
            format!("req-{number}.md"),
            &request_markdown(request, number, previous, false),
        )?;
        state.last = number;
        state.previous = Some((request.clone(), false));
        Ok(number)
    }

    /// The reply to request `number`, if a reply file is there.
    fn read_reply(
        &self,
        request: &LlmRequest,
        number: u32,
    ) -> Result<Option<LlmResponse>, LlmError> {
        let json_path = self.dir.join(format!("reply-{number}.json"));
        let text_path = self.dir.join(format!("reply-{number}.txt"));
        let (content, calls) = if let Some(text) = read_if_there(&json_path)? {
            parse_reply_json(&text, request, number)
                .map_err(|e| invalid(self.describe(), format!("{}: {e}", json_path.display())))?
        } else if let Some(text) = read_if_there(&text_path)? {
            if text.trim().is_empty() {
                return Err(invalid(
                    self.describe(),
                    format!("{} is empty", text_path.display()),
                ));
            }
            (text, Vec::new())
        } else {
            return Ok(None);
        };
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, read)) = &mut state.previous {
            *read = true;
        }
        Ok(Some(estimated_reply(
            request,
            content,
            calls,
            self.tokenizer.as_ref(),
        )))
    }
}

#[async_trait]
impl Llm for FileLlm {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        request.validate()?;
        let number = self.begin(request)?;
        let started = Instant::now();
        loop {
            if let Some(reply) = self.read_reply(request, number)? {
                return Ok(reply);
            }
            if started.elapsed() >= self.timeout {
                return Err(LlmError::Timeout {
                    provider: self.describe(),
                    timeout: self.timeout,
                });
            }
            tokio::time::sleep(self.poll).await;
        }
    }

    fn describe(&self) -> String {
        format!("file:{}", self.dir.display())
    }
}

impl Drop for FileLlm {
    fn drop(&mut self) {
        // Nothing to report to: an answerer that never sees END stops at its own timeout.
        let _ = self.finish();
    }
}

/// The highest N of the `req-N.json` files in `dir`, or 0.
fn highest_request(dir: &Path) -> std::io::Result<u32> {
    let mut highest = 0;
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        let number = name
            .to_str()
            .and_then(|name| name.strip_prefix("req-"))
            .and_then(|rest| rest.strip_suffix(".json"))
            .and_then(|n| n.parse::<u32>().ok());
        highest = highest.max(number.unwrap_or(0));
    }
    Ok(highest)
}

/// Writes `name` in `dir` under a temporary name first, then renames it into place, so that a
/// reader never sees half of it.
fn write_atomically(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    let temporary = dir.join(format!(".{name}.partial"));
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, dir.join(name))
}

/// The file's text, or `None` when it does not exist.
fn read_if_there(path: &Path) -> Result<Option<String>, LlmError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(LlmError::Configuration(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}
