//! One connection to a server: `initialize`, `tools/list` through every page, and `tools/call`
//! with a deadline, cancelled (`notifications/cancelled`) when its caller stops waiting.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, JsonObject, PaginatedRequestParams, RequestId, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService, ServiceExt};
use rmcp::{Peer, ServiceError};
use tokio::sync::Mutex as AsyncMutex;

use crate::config::{DEFAULT_CONNECT_TIMEOUT, Endpoint, ServerConfig};
use crate::handler::Notifications;
use crate::health::{Health, PropertyOrder, ServerStats};
use crate::stdio::{StdioTransport, UNREADABLE_REPLY};

/// Most pages of `tools/list` read; a server that keeps sending cursors is cut off there.
const MAX_PAGES: usize = 100;

/// A server that could not be connected to or listed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("MCP server {server}: {message}")]
pub struct ConnectError {
    /// The server's name.
    pub server: String,
    /// What went wrong and what to do about it.
    pub message: String,
}

/// A connected server.
///
/// A server that stops (its process dies, or its connection closes) is started or reached
/// again at the next call to one of its tools: the calls in flight when it stopped fail with
/// an error saying so, and later calls go to the new connection.
pub struct McpServer {
    config: ServerConfig,
    current: Mutex<Live>,
    service: AsyncMutex<Option<RunningService<RoleClient, Notifications>>>,
    restarts: AtomicU64,
    in_flight: Arc<Mutex<HashSet<RequestId>>>,
}

/// The connection in use: its peer and what is known about the server behind it.
#[derive(Clone)]
struct Live {
    peer: Peer<RoleClient>,
    health: Arc<Health>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// Starts or reaches the server and runs the `initialize` handshake, within 30 seconds.
    pub async fn connect(config: ServerConfig) -> Result<McpServer, ConnectError> {
        let health = Arc::new(Health::new(&config.name));
        let service = start(&config, health.clone()).await?;
        Ok(McpServer {
            current: Mutex::new(Live {
                peer: service.peer().clone(),
                health,
            }),
            service: AsyncMutex::new(Some(service)),
            config,
            restarts: AtomicU64::new(0),
            in_flight: Arc::default(),
        })
    }

    fn live(&self) -> Live {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The connection to use for a call: the current one, or, when the server has stopped, a
    /// new one (the server is started or reached again, with a new handshake).
    async fn connection(&self) -> Result<Live, String> {
        let mut service = self.service.lock().await;
        let live = self.live();
        let Some(running) = service.as_mut() else {
            return Err(format!("the MCP server {} was closed", self.config.name));
        };
        if !live.peer.is_transport_closed() && !running.is_closed() {
            return Ok(live);
        }
        let how = live.health.exit().unwrap_or_else(|| "stopped".to_string());
        let name = &self.config.name;
        tracing::warn!(server = %name, "the MCP server {name} {how}; starting it again");
        let _ = running.close_with_timeout(Duration::from_secs(2)).await;
        let health = Arc::new(live.health.continued());
        let started = start(&self.config, health.clone()).await.map_err(|e| {
            format!(
                "the MCP server {name} {how} and could not be started again: {}",
                e.message
            )
        })?;
        let live = Live {
            peer: started.peer().clone(),
            health,
        };
        *service = Some(started);
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = live.clone();
        self.restarts.fetch_add(1, Ordering::Relaxed);
        Ok(live)
    }

    /// How many times the server was started or reached again after it stopped.
    pub fn restarts(&self) -> u64 {
        self.restarts.load(Ordering::Relaxed)
    }

    /// The process id of a server spawned over stdio, while the current one runs.
    pub fn process_id(&self) -> Option<u32> {
        self.live().health.process_id()
    }

    /// The configuration it was connected with.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The server's name for itself and its version, from the handshake.
    pub fn server_info(&self) -> Option<(String, String)> {
        let live = self.live();
        let info = live.peer.peer_info()?;
        let implementation = info.server_info.as_ref()?;
        Some((implementation.name.clone(), implementation.version.clone()))
    }

    /// Counts of the notifications and faulty messages the server sent.
    pub fn stats(&self) -> ServerStats {
        self.live().health.stats()
    }

    /// Every tool the server lists, following `nextCursor` through all pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ConnectError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let live = self.live();
        for _ in 0..MAX_PAGES {
            let params = cursor
                .take()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let page = tokio::time::timeout(self.config.timeout, live.peer.list_tools(params))
                .await
                .map_err(|_| {
                    self.connect_error(format!(
                        "tools/list got no answer within {}",
                        seconds(self.config.timeout)
                    ))
                })?
                .map_err(|e| {
                    self.connect_error(format!(
                        "tools/list failed: {}",
                        self.describe_error(&e, &live.health)
                    ))
                })?;
            tools.extend(page.tools);
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(tools),
            }
        }
        Err(self.connect_error(format!(
            "tools/list still had more pages after {MAX_PAGES}; is the server repeating its cursor?"
        )))
    }

    fn connect_error(&self, message: String) -> ConnectError {
        ConnectError {
            server: self.config.name.clone(),
            message,
        }
    }

    /// The order in which the server wrote a tool's schema properties, when known.
    pub(crate) fn property_order(&self, tool: &str) -> Option<PropertyOrder> {
        self.live().health.property_order(tool)
    }

    /// Calls a tool. The error says, for a program to read, why there is no result.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, String> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(tool.to_string()).with_arguments(arguments),
        ));
        let mut live = self.connection().await?;
        let handle = match live
            .peer
            .send_request_with_option(
                request.clone(),
                PeerRequestOptions::with_timeout(self.config.timeout),
            )
            .await
        {
            Ok(handle) => handle,
            // The server stopped before the request left: nothing was sent, so the request
            // goes to the server started again.
            Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)) => {
                live = self.connection().await?;
                live.peer
                    .send_request_with_option(
                        request,
                        PeerRequestOptions::with_timeout(self.config.timeout),
                    )
                    .await
                    .map_err(|e| self.describe_error(&e, &live.health))?
            }
            Err(e) => return Err(self.describe_error(&e, &live.health)),
        };
        let mut guard = CancelOnDrop {
            peer: live.peer.clone(),
            id: Some(handle.id.clone()),
            in_flight: self.in_flight.clone(),
        };
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(handle.id.clone());
        let reply = handle.await_response().await;
        guard.disarm();
        match reply {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(_) => Err("the server's reply is not a tool result".to_string()),
            Err(ServiceError::Timeout { .. }) => Err(format!(
                "no answer within {}; the call was cancelled",
                seconds(self.config.timeout)
            )),
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                Err(format!(
                    "{}; it will be started again at the next call",
                    self.describe_error(&e, &live.health)
                ))
            }
            Err(e) => Err(self.describe_error(&e, &live.health)),
        }
    }

    /// A service error in words for a program, with what is known about a server that is gone.
    fn describe_error(&self, error: &ServiceError, health: &Health) -> String {
        match error {
            ServiceError::McpError(data) if data.code == UNREADABLE_REPLY => {
                data.message.to_string()
            }
            ServiceError::McpError(data) => format!(
                "the server answered with an error: {} (JSON-RPC error {})",
                data.message, data.code.0
            ),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => format!(
                "the MCP server {} is not running{}",
                self.config.name,
                gone_suffix(health)
            ),
            ServiceError::Cancelled { reason } => format!(
                "the server cancelled the call{}",
                reason
                    .as_ref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            ),
            ServiceError::Timeout { timeout } => format!("no answer within {}", seconds(*timeout)),
            ServiceError::UnexpectedResponse => {
                "the server's reply is not a tool result".to_string()
            }
            other => other.to_string(),
        }
    }

    /// Cancels the calls still in flight and closes the connection: a spawned server gets its
    /// stdin closed, then SIGTERM, then SIGKILL, a couple of seconds apart.
    pub async fn close(&self) {
        let in_flight: Vec<RequestId> = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        let live = self.live();
        for id in in_flight {
            let _ = live
                .peer
                .notify_cancelled(CancelledNotificationParam::new(
                    Some(id),
                    Some("the client is closing".to_string()),
                ))
                .await;
        }
        if let Some(mut service) = self.service.lock().await.take() {
            let _ = service.close_with_timeout(Duration::from_secs(10)).await;
        }
    }
}

/// Starts or reaches the server and runs the `initialize` handshake, within 30 seconds.
async fn start(
    config: &ServerConfig,
    health: Arc<Health>,
) -> Result<RunningService<RoleClient, Notifications>, ConnectError> {
    let fail = |message: String| ConnectError {
        server: config.name.clone(),
        message,
    };
    let handler = Notifications {
        health: health.clone(),
    };
    let started = match &config.endpoint {
        Endpoint::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let transport = StdioTransport::spawn(
                command,
                args,
                env,
                cwd.as_deref(),
                config.max_message_bytes,
                health.clone(),
            )
            .map_err(|e| {
                fail(format!(
                    "cannot start `{}`: {e}{}",
                    config.describe(),
                    if e.kind() == std::io::ErrorKind::NotFound {
                        " (is the program installed and on the PATH?)"
                    } else {
                        ""
                    }
                ))
            })?;
            tokio::time::timeout(DEFAULT_CONNECT_TIMEOUT, handler.serve(transport)).await
        }
        Endpoint::Http { url, headers } => {
            let transport =
                crate::http::transport(url, headers, config.max_message_bytes).map_err(fail)?;
            tokio::time::timeout(DEFAULT_CONNECT_TIMEOUT, handler.serve(transport)).await
        }
    };
    match started {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(e)) => Err(fail(format!(
            "the initialize handshake with `{}` failed: {e}{}",
            config.describe(),
            gone_suffix(&health)
        ))),
        Err(_) => Err(fail(format!(
            "`{}` did not complete the initialize handshake within {} s",
            config.describe(),
            DEFAULT_CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// `; it exited with status 3; its last words on stderr: ...` when that is known.
fn gone_suffix(health: &Health) -> String {
    let mut text = String::new();
    if let Some(how) = health.exit() {
        text.push_str(&format!(": it {how}"));
    }
    if let Some(last) = health
        .stderr_tail()
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
    {
        text.push_str(&format!("; its last words on stderr: {last}"));
    }
    text
}

fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs} s")
    }
}

/// Tells the server to stop working on a request whose caller stopped waiting for it (the
/// run ended, or the program's own time ran out), unless it was answered first.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
    in_flight: Arc<Mutex<HashSet<RequestId>>>,
}

impl CancelOnDrop {
    fn disarm(&mut self) {
        if let Some(id) = self.id.take() {
            self.in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id);
        }
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(id),
                        Some("the caller stopped waiting for the result".to_string()),
                    ))
                    .await;
            });
        }
    }
}
