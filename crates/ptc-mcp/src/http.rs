//! The streamable HTTP transport: rmcp's, on a reqwest client with rustls and the `ring`
//! provider (as the LLM providers use), with the message size limit applied to JSON replies
//! and to each server-sent event.
//!
//! A server started again has forgotten the session the client holds: it answers the next
//! request with an error that names no request (`Bad Request: No valid session ID provided`,
//! HTTP 400, from the reference servers; the specification's 404 is handled by rmcp itself).
//! rmcp cannot match such an error to its request, which would then wait for its deadline.
//! This transport answers every request in flight with [`SESSION_LOST`] instead, and ends the
//! connection, so that the server is reached again with a new session; a request refused so
//! was never run (a server that ran it would know its id), so it may be sent again.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ErrorCode, ErrorData, JsonRpcMessage, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::RoleClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, Transport};

use crate::health::Health;

/// The JSON-RPC error code of the replies this client makes up for the requests in flight when
/// the server answered with an error naming no request: their session is gone.
pub(crate) const SESSION_LOST: ErrorCode = ErrorCode(-32_098);

type Inner = StreamableHttpClientTransport<reqwest::Client>;

pub(crate) struct HttpTransport {
    inner: Inner,
    pending: Arc<Mutex<HashSet<RequestId>>>,
    made_up: VecDeque<ServerJsonRpcMessage>,
    ended: bool,
    health: Arc<Health>,
}

impl Transport<RoleClient> for HttpTransport {
    type Error = <Inner as Transport<RoleClient>>::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            match &item {
                JsonRpcMessage::Request(request) => {
                    pending.insert(request.id.clone());
                }
                JsonRpcMessage::Notification(note) => {
                    if let ClientNotification::CancelledNotification(cancelled) = &note.notification
                        && let Some(id) = &cancelled.params.request_id
                    {
                        pending.remove(id);
                    }
                }
                _ => {}
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if let Some(message) = self.made_up.pop_front() {
                return Some(message);
            }
            if self.ended {
                return None;
            }
            let message = self.inner.receive().await?;
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            match &message {
                JsonRpcMessage::Response(response) => {
                    pending.remove(&response.id);
                }
                JsonRpcMessage::Error(error) => match &error.id {
                    Some(id) => {
                        pending.remove(id);
                    }
                    None if !pending.is_empty() => {
                        let said = error.error.message.to_string();
                        self.health
                            .set_exit(format!("no longer knows this session ({said})"));
                        for id in pending.drain() {
                            self.made_up.push_back(JsonRpcMessage::error(
                                ErrorData::new(
                                    SESSION_LOST,
                                    format!("the server no longer knows this session: {said}"),
                                    None,
                                ),
                                Some(id),
                            ));
                        }
                        self.ended = true;
                        self.health.mark_ended();
                        continue;
                    }
                    None => {}
                },
                _ => {}
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

pub(crate) fn transport(
    url: &str,
    headers: &BTreeMap<String, String>,
    max_message_bytes: usize,
    health: Arc<Health>,
) -> Result<HttpTransport, String> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!(
            "the URL {url:?} must start with http:// or https://"
        ));
    }
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("the header name {name:?} is not valid: {e}"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| format!("the value of header {name} is not valid: {e}"))?;
        custom.insert(header, value);
    }
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another part of the program may have installed one first; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let client = reqwest::Client::builder()
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(custom)
        .max_json_response_size(max_message_bytes)
        .max_sse_event_size(max_message_bytes);
    Ok(HttpTransport {
        inner: StreamableHttpClientTransport::with_client(client, config),
        pending: Arc::default(),
        made_up: VecDeque::new(),
        ended: false,
        health,
    })
}
