//! The stdio transport: a server spawned as a child process, one JSON-RPC message a line.
//!
//! rmcp has a child-process transport; this one exists because a client of untrusted servers
//! must turn every way a server can misbehave into a prompt, specific error of the call it
//! concerns, with bounded memory:
//!
//! - a line longer than the message limit is discarded while it is read (never buffered
//!   whole), and the request it answers fails at once with the size and the limit;
//! - a line that is not a JSON-RPC message fails the request it answers (found by its id, or
//!   the only request in flight) instead of leaving it to time out;
//! - when the server exits, its exit status and the last lines of its stderr are kept for the
//!   error of the calls in flight;
//! - the server runs in a process group of its own, which is ended with it (a server started
//!   through `npx` or a shell has children of its own).
//!
//! It also keeps the order of each tool's schema properties from the raw `tools/list` replies
//! (parsed JSON objects have sorted keys), so that positional arguments follow the schema.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ErrorCode, ErrorData, JsonRpcMessage, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::health::Health;

/// The JSON-RPC error code of replies this client makes up for a request whose real reply it
/// could not read (too large, or not a JSON-RPC message).
pub(crate) const UNREADABLE_REPLY: ErrorCode = ErrorCode(-32_099);

/// How much of a discarded line is kept to find the id of the request it answers.
const ID_WINDOW: usize = 4096;
/// The longest stderr line kept; the rest of it is dropped.
const STDERR_LINE: usize = 400;
/// How long a closing server gets to exit after its stdin is closed, and again after SIGTERM.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// What was sent and not yet answered: request id to method.
type Pending = Arc<Mutex<HashMap<RequestId, String>>>;

pub(crate) struct StdioTransport {
    child: Option<Child>,
    stdout: BufReader<ChildStdout>,
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    line: Vec<u8>,
    max_line: usize,
    pending: Pending,
    made_up: VecDeque<ServerJsonRpcMessage>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    health: Arc<Health>,
}

impl StdioTransport {
    /// Spawns `command args` in `cwd` with `env` added to the inherited environment.
    pub(crate) fn spawn(
        command: &str,
        args: &[String],
        env: &std::collections::BTreeMap<String, String>,
        cwd: Option<&std::path::Path>,
        max_line: usize,
        health: Arc<Health>,
    ) -> std::io::Result<StdioTransport> {
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd.spawn()?;
        health.set_process_id(child.id());
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("the child's stdout is missing"))?;
        let stdin = child.stdin.take();
        let stderr_task = child.stderr.take().map(|stderr| {
            let health = health.clone();
            tokio::spawn(async move {
                let mut reader = BufReader::new(stderr);
                let mut line = Vec::new();
                while let Ok(LineRead::Line | LineRead::Oversized { .. }) =
                    read_line(&mut reader, &mut line, STDERR_LINE).await
                {
                    let text = String::from_utf8_lossy(&line).trim_end().to_string();
                    line.clear();
                    tracing::debug!(server = %health.server, stderr = %text, "mcp server stderr");
                    health.push_stderr(text);
                }
            })
        });
        Ok(StdioTransport {
            child: Some(child),
            stdout: BufReader::new(stdout),
            stdin: Arc::new(tokio::sync::Mutex::new(stdin)),
            line: Vec::new(),
            max_line,
            pending: Arc::default(),
            made_up: VecDeque::new(),
            stderr_task,
            health,
        })
    }

    /// Waits a little for the child to exit, and records how it ended.
    async fn note_exit(&mut self) {
        if let Some(child) = self.child.as_mut()
            && let Ok(Ok(status)) = tokio::time::timeout(EXIT_GRACE, child.wait()).await
        {
            self.health.set_exit(describe_status(status));
        }
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
        }
    }

    /// A reply standing for the unreadable one that answers a request in flight, if it can be
    /// told which request that is.
    fn stand_in(&self, head: &[u8], tail: &[u8], message: String) -> Option<ServerJsonRpcMessage> {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let id = find_id(tail, &pending, true)
            .or_else(|| find_id(head, &pending, false))
            .or_else(|| {
                (pending.len() == 1)
                    .then(|| pending.keys().next().cloned())
                    .flatten()
            })?;
        pending.remove(&id);
        Some(JsonRpcMessage::error(
            ErrorData::new(UNREADABLE_REPLY, message, None),
            Some(id),
        ))
    }
}

fn describe_status(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "exited".to_string(),
    }
}

/// The id of a pending request named in a fragment of a message: the last `"id":` in the
/// fragment (the reply's own id ends the line in most servers' output) or the first.
fn find_id(fragment: &[u8], pending: &HashMap<RequestId, String>, last: bool) -> Option<RequestId> {
    let text = String::from_utf8_lossy(fragment);
    let mut found: Vec<RequestId> = Vec::new();
    let mut rest: &str = &text;
    while let Some(at) = rest.find("\"id\"") {
        let after = rest[at + 4..].trim_start();
        rest = &rest[at + 4..];
        let Some(value) = after.strip_prefix(':') else {
            continue;
        };
        let value = value.trim_start();
        let id = if let Some(quoted) = value.strip_prefix('"') {
            quoted
                .split('"')
                .next()
                .map(|s| RequestId::String(Arc::from(s)))
        } else {
            let digits: String = value
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            digits.parse::<i64>().ok().map(RequestId::Number)
        };
        if let Some(id) = id.filter(|id| pending.contains_key(id)) {
            found.push(id);
        }
    }
    if last {
        found.pop()
    } else {
        found.into_iter().next()
    }
}

/// The outcome of reading one line with a length limit.
enum LineRead {
    /// A whole line (without its newline) is in the buffer.
    Line,
    /// The line was longer than the limit: the buffer has its first bytes, `tail` its last.
    Oversized {
        len: usize,
        tail: Vec<u8>,
    },
    Eof,
}

/// Reads one `\n`-terminated line into `buf` (which must be empty), never holding more than
/// `max` bytes of it: past that, only the first `ID_WINDOW` bytes stay in `buf` and the last
/// ones are returned, the rest is skipped as it arrives.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    let mut len = 0usize;
    let mut tail: Option<Vec<u8>> = None;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if len == 0 {
                LineRead::Eof
            } else if let Some(tail) = tail {
                LineRead::Oversized { len, tail }
            } else {
                LineRead::Line
            });
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..end], Some(end + 1)),
            None => (available, None),
        };
        len += chunk.len();
        match &mut tail {
            None if len <= max => buf.extend_from_slice(chunk),
            None => {
                buf.extend_from_slice(chunk);
                buf.truncate(ID_WINDOW.min(max));
                let from = chunk.len().saturating_sub(ID_WINDOW);
                tail = Some(chunk[from..].to_vec());
            }
            Some(tail) => {
                tail.extend_from_slice(chunk);
                if tail.len() > 2 * ID_WINDOW {
                    tail.drain(..tail.len() - ID_WINDOW);
                }
            }
        }
        let consumed = done.unwrap_or(chunk.len());
        reader.consume(consumed);
        if done.is_some() {
            return Ok(match tail {
                Some(tail) => LineRead::Oversized { len, tail },
                None => LineRead::Line,
            });
        }
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            JsonRpcMessage::Request(request) => {
                self.pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(request.id.clone(), request.request.method().to_string());
            }
            JsonRpcMessage::Notification(note) => {
                if let ClientNotification::CancelledNotification(cancelled) = &note.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.pending
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(id);
                }
            }
            _ => {}
        }
        let stdin = self.stdin.clone();
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            let mut stdin = stdin.lock().await;
            let pipe = stdin.as_mut().ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "the server's stdin is closed",
                )
            })?;
            pipe.write_all(&line).await?;
            pipe.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if let Some(message) = self.made_up.pop_front() {
                return Some(message);
            }
            self.line.clear();
            let read = match read_line(&mut self.stdout, &mut self.line, self.max_line).await {
                Ok(read) => read,
                Err(e) => {
                    tracing::warn!(server = %self.health.server, error = %e, "cannot read from the mcp server");
                    LineRead::Eof
                }
            };
            match read {
                LineRead::Eof => {
                    self.note_exit().await;
                    self.health.mark_ended();
                    return None;
                }
                LineRead::Oversized { len, tail } => {
                    self.health.count_oversized();
                    let message = format!(
                        "the server's reply is {len} bytes, more than the limit of {} bytes \
                         for one message; it was not read (ask for less, or raise the limit)",
                        self.max_line
                    );
                    tracing::warn!(server = %self.health.server, len, limit = self.max_line, "mcp message over the limit");
                    let head = std::mem::take(&mut self.line);
                    if let Some(reply) = self.stand_in(&head, &tail, message) {
                        return Some(reply);
                    }
                }
                LineRead::Line => {
                    let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
                        Ok(message) => {
                            self.answered(&message, line);
                            return Some(message);
                        }
                        Err(e) => {
                            self.health.count_malformed();
                            let shown: String =
                                String::from_utf8_lossy(line).chars().take(120).collect();
                            tracing::warn!(server = %self.health.server, error = %e, line = %shown, "malformed mcp message");
                            let line = line.to_vec();
                            let message = format!(
                                "the server's reply is not a valid JSON-RPC message ({e}); it \
                                 began: {shown}"
                            );
                            if let Some(reply) = self.stand_in(&line, &line, message) {
                                return Some(reply);
                            }
                        }
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing stdin asks the server to exit; then SIGTERM, then SIGKILL, each after a wait.
        self.stdin.lock().await.take();
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let group = child.id();
        if tokio::time::timeout(EXIT_GRACE, child.wait())
            .await
            .is_err()
        {
            signal_group(group, Signal::Term);
            if tokio::time::timeout(EXIT_GRACE, child.wait())
                .await
                .is_err()
            {
                signal_group(group, Signal::Kill);
                let _ = child.kill().await;
            }
        }
        signal_group(group, Signal::Kill);
        self.health.set_process_id(None);
        Ok(())
    }
}

impl StdioTransport {
    /// Forgets an answered request; keeps the schema property order of a `tools/list` reply.
    fn answered(&self, message: &ServerJsonRpcMessage, raw: &[u8]) {
        let id = match message {
            JsonRpcMessage::Response(r) => &r.id,
            JsonRpcMessage::Error(e) => match &e.id {
                Some(id) => id,
                None => return,
            },
            _ => return,
        };
        let method = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if method.as_deref() == Some("tools/list") {
            self.health.keep_property_order(raw);
        }
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // `kill_on_drop` ends the server itself; its children are in its process group.
        if let Some(child) = &self.child {
            signal_group(child.id(), Signal::Kill);
        }
    }
}

enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
fn signal_group(leader: Option<u32>, signal: Signal) {
    let Some(pid) = leader.and_then(|p| libc::pid_t::try_from(p).ok()) else {
        return;
    };
    let signal = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: killpg has no memory effects; a group that no longer exists gives ESRCH.
    unsafe {
        libc::killpg(pid, signal);
    }
}

#[cfg(not(unix))]
fn signal_group(_leader: Option<u32>, _signal: Signal) {}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    async fn lines(input: &[u8], max: usize) -> Vec<String> {
        let mut reader = BufReader::with_capacity(7, input);
        let mut out = Vec::new();
        loop {
            let mut buf = Vec::new();
            match read_line(&mut reader, &mut buf, max).await.unwrap() {
                LineRead::Eof => return out,
                LineRead::Line => out.push(String::from_utf8(buf).unwrap()),
                LineRead::Oversized { len, tail } => out.push(format!(
                    "oversized {len}: {}..{}",
                    String::from_utf8_lossy(&buf),
                    String::from_utf8_lossy(&tail)
                )),
            }
        }
    }

    #[tokio::test]
    async fn lines_over_the_limit_are_skipped_keeping_their_ends() {
        assert_eq!(
            lines(b"short\nthis line is long\n\nlast", 10).await,
            vec![
                "short".to_string(),
                "oversized 17: this line ..e is long".to_string(),
                String::new(),
                "last".to_string(),
            ]
        );
    }

    #[test]
    fn ids_are_found_only_among_pending_requests() {
        let pending: HashMap<RequestId, String> = [
            (RequestId::Number(7), "tools/call".to_string()),
            (RequestId::String(Arc::from("a")), "tools/call".to_string()),
        ]
        .into();
        let text = br#"{"result":{"items":[{"id":3},{"id": 7}]},"jsonrpc":"2.0","id":7}"#;
        assert_eq!(find_id(text, &pending, true), Some(RequestId::Number(7)));
        assert_eq!(
            find_id(br#"{"id" : "a", "x": 1"#, &pending, false),
            Some(RequestId::String(Arc::from("a")))
        );
        assert_eq!(find_id(br#"{"id":3}"#, &pending, true), None);
    }
}
