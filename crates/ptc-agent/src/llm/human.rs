//! A model that is a person at a terminal (spec `human`): each request is shown, and the reply
//! is typed or pasted.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use ptc_compression::{HeuristicTokenizer, Tokenizer};

use super::readable::{
    estimated_reply, invalid, looks_like_json_reply, parse_reply_json, request_markdown,
};
use super::{Llm, LlmError, LlmRequest, LlmResponse};

/// The line that ends a typed reply.
pub const END_OF_REPLY: &str = ".";

/// A person answering at a terminal, or any pair of a reader and a writer.
///
/// Each request is written as Markdown (the first one whole; later ones without the system
/// prompt, tools and messages the request before had too, which the reader has just seen),
/// followed by a prompt for the reply. The reply is every line up to one that holds only
/// [`END_OF_REPLY`] (`.`). When the request offers native tools, a reply that starts with `{`
/// is read as `{"content": "...", "tool_calls": [{"name": ..., "arguments": {...}}]}`. A reply
/// the request cannot take (no text, a tool it does not offer) is refused and asked for again;
/// the end of the input is an error. Usage is estimated, as for [`FileLlm`](super::FileLlm).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use ptc_agent::llm::{HumanLlm, Llm, LlmRequest};
/// use ptc_turn::Message;
///
/// let typed = "It is\nfour.\n.\n";
/// let llm = HumanLlm::new(std::io::Cursor::new(typed), Vec::<u8>::new());
/// let reply = llm.complete(&LlmRequest::new("Be brief.", vec![Message::user("2+2?")])).await;
/// assert_eq!(reply.unwrap().content, "It is\nfour.");
/// # });
/// ```
pub struct HumanLlm {
    io: Arc<Mutex<Io>>,
    tokenizer: Arc<dyn Tokenizer>,
}

struct Io {
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
    number: u32,
    previous: Option<LlmRequest>,
}

impl std::fmt::Debug for HumanLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HumanLlm").finish_non_exhaustive()
    }
}

impl HumanLlm {
    /// Requests written to `output`, replies read from `input`.
    pub fn new(
        input: impl BufRead + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> HumanLlm {
        HumanLlm {
            io: Arc::new(Mutex::new(Io {
                input: Box::new(input),
                output: Box::new(output),
                number: 0,
                previous: None,
            })),
            tokenizer: Arc::new(HeuristicTokenizer),
        }
    }

    /// Requests on standard error (standard output stays the program's), replies from standard
    /// input.
    pub fn stdio() -> HumanLlm {
        HumanLlm::new(std::io::BufReader::new(std::io::stdin()), std::io::stderr())
    }

    /// The token counter that estimates each reply's usage (default four characters a token).
    pub fn with_tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.tokenizer = tokenizer;
        self
    }
}

#[async_trait]
impl Llm for HumanLlm {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        request.validate()?;
        let io = self.io.clone();
        let request = request.clone();
        let tokenizer = self.tokenizer.clone();
        let provider = self.describe();
        // Reading a terminal blocks: on a thread of its own, not on the runtime's.
        tokio::task::spawn_blocking(move || {
            let mut io = io.lock().unwrap_or_else(PoisonError::into_inner);
            ask(&mut io, &request, tokenizer.as_ref(), &provider)
        })
        .await
        .map_err(|e| invalid(self.describe(), format!("the terminal reader stopped: {e}")))?
    }

    fn describe(&self) -> String {
        "human".into()
    }
}

fn ask(
    io: &mut Io,
    request: &LlmRequest,
    tokenizer: &dyn Tokenizer,
    provider: &str,
) -> Result<LlmResponse, LlmError> {
    io.number += 1;
    let number = io.number;
    let shown = request_markdown(request, number, io.previous.as_ref(), true);
    io.previous = Some(request.clone());
    let terminal = |e: std::io::Error| invalid(provider.to_string(), format!("the terminal: {e}"));
    write!(io.output, "{shown}").map_err(terminal)?;
    loop {
        writeln!(
            io.output,
            "\n--- your reply to request {number}, ended by a line `{END_OF_REPLY}`{}:",
            if request.tools.is_empty() {
                ""
            } else {
                " (native tool calls as {\"content\": ..., \"tool_calls\": [...]})"
            }
        )
        .and_then(|()| io.output.flush())
        .map_err(terminal)?;
        let mut reply = String::new();
        let mut ended = false;
        let mut line = String::new();
        loop {
            line.clear();
            if io.input.read_line(&mut line).map_err(terminal)? == 0 {
                break;
            }
            if line.trim_end_matches(['\n', '\r']) == END_OF_REPLY {
                ended = true;
                break;
            }
            reply.push_str(&line);
        }
        if !ended && reply.trim().is_empty() {
            return Err(invalid(
                provider.to_string(),
                "the input ended before a reply was given".into(),
            ));
        }
        let reply = reply.trim_end_matches(['\n', '\r']).to_string();
        let parsed = if looks_like_json_reply(&reply, request) {
            parse_reply_json(&reply, request, number)
        } else if reply.trim().is_empty() {
            Err("the reply is empty".into())
        } else {
            Ok((reply, Vec::new()))
        };
        match parsed {
            Ok((content, calls)) => {
                return Ok(estimated_reply(request, content, calls, tokenizer));
            }
            Err(problem) if ended => {
                writeln!(
                    io.output,
                    "That reply cannot be sent: {problem}. Try again."
                )
                .map_err(terminal)?;
            }
            Err(problem) => return Err(invalid(provider.to_string(), problem)),
        }
    }
}
