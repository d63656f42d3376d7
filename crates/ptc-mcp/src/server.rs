//! One connection to a server: `initialize`, `tools/list` through every page, and `tools/call`
//! with a deadline, cancelled (`notifications/cancelled`) when its caller stops waiting.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

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
use crate::http::SESSION_LOST;
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
/// again as soon as that is noticed, by a task that watches it, or else at the next call to
/// one of its tools: the calls in flight when it stopped fail with an error saying so, and
/// later calls go to the new connection. A start that fails is tried again after a wait that
/// grows with each failure in a row, up to a cap ([`ServerConfig::restart_backoff`]); calls
/// made while the server waits fail at once, saying when the next start is due.
pub struct McpServer {
    shared: Arc<Shared>,
    watcher: tokio::task::JoinHandle<()>,
}

/// What the server's handle and its watcher share.
struct Shared {
    config: ServerConfig,
    current: Mutex<Live>,
    service: AsyncMutex<Option<RunningService<RoleClient, Notifications>>>,
    restarts: AtomicU64,
    failed_starts: AtomicU64,
    in_flight: Arc<Mutex<HashSet<RequestId>>>,
    backoff: Mutex<Backoff>,
}

/// The failed starts in a row since the server last stopped, and when the next may be tried.
#[derive(Default)]
struct Backoff {
    failures: u32,
    next: Option<Instant>,
    last_error: String,
}

/// The connection in use: its peer and what is known about the server behind it.
#[derive(Clone)]
struct Live {
    peer: Peer<RoleClient>,
    health: Arc<Health>,
}

impl Live {
    fn is_gone(&self) -> bool {
        self.peer.is_transport_closed() || self.health.has_ended()
    }
}

/// Why a connection could not be had: the error for the call, and how long until the next
/// start may be tried (none when the server was closed).
struct NoConnection {
    message: String,
    retry_in: Option<Duration>,
}

/// How often the watcher looks at a connection whose end is not signalled (HTTP).
const WATCH_INTERVAL: Duration = Duration::from_millis(500);

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        self.watcher.abort();
    }
}

impl McpServer {
    /// Starts or reaches the server and runs the `initialize` handshake, within 30 seconds,
    /// and starts the task that starts it again when it stops.
    pub async fn connect(config: ServerConfig) -> Result<McpServer, ConnectError> {
        let health = Arc::new(Health::new(&config.name));
        let service = start(&config, health.clone()).await?;
        let shared = Arc::new(Shared {
            current: Mutex::new(Live {
                peer: service.peer().clone(),
                health,
            }),
            service: AsyncMutex::new(Some(service)),
            config,
            restarts: AtomicU64::new(0),
            failed_starts: AtomicU64::new(0),
            in_flight: Arc::default(),
            backoff: Mutex::default(),
        });
        let watcher = tokio::spawn(watch(Arc::downgrade(&shared)));
        Ok(McpServer { shared, watcher })
    }

    /// How many times the server was started or reached again after it stopped.
    pub fn restarts(&self) -> u64 {
        self.shared.restarts.load(Ordering::Relaxed)
    }

    /// How many starts of the server, after it stopped, failed.
    pub fn failed_starts(&self) -> u64 {
        self.shared.failed_starts.load(Ordering::Relaxed)
    }

    /// The process id of a server spawned over stdio, while the current one runs.
    pub fn process_id(&self) -> Option<u32> {
        self.shared.live().health.process_id()
    }

    /// The configuration it was connected with.
    pub fn config(&self) -> &ServerConfig {
        &self.shared.config
    }

    /// The server's name for itself and its version, from the handshake.
    pub fn server_info(&self) -> Option<(String, String)> {
        let live = self.shared.live();
        let info = live.peer.peer_info()?;
        let implementation = info.server_info.as_ref()?;
        Some((implementation.name.clone(), implementation.version.clone()))
    }

    /// Counts of the notifications and faulty messages the server sent.
    pub fn stats(&self) -> ServerStats {
        self.shared.live().health.stats()
    }

    /// Every tool the server lists, following `nextCursor` through all pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ConnectError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let live = self.shared.live();
        for _ in 0..MAX_PAGES {
            let params = cursor
                .take()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let page =
                tokio::time::timeout(self.shared.config.timeout, live.peer.list_tools(params))
                    .await
                    .map_err(|_| {
                        self.connect_error(format!(
                            "tools/list got no answer within {}",
                            seconds(self.shared.config.timeout)
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
            server: self.shared.config.name.clone(),
            message,
        }
    }

    /// The order in which the server wrote a tool's schema properties, when known.
    pub(crate) fn property_order(&self, tool: &str) -> Option<PropertyOrder> {
        self.shared.live().health.property_order(tool)
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
        let (live, reply) = match self.call_once(request.clone()).await? {
            // The server had forgotten the session (it was started again) and refused the
            // request without running it: it goes to a new session.
            (_, Err(ServiceError::McpError(data))) if data.code == SESSION_LOST => {
                self.call_once(request).await?
            }
            answered => answered,
        };
        match reply {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(_) => Err("the server's reply is not a tool result".to_string()),
            Err(ServiceError::Timeout { .. }) => Err(format!(
                "no answer within {}; the call was cancelled",
                seconds(self.shared.config.timeout)
            )),
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                let next = match self.shared.config.endpoint {
                    crate::config::Endpoint::Stdio { .. } => "it is being started again",
                    crate::config::Endpoint::Http { .. } => "the next call tries again",
                };
                Err(format!("{}; {next}", self.describe_error(&e, &live.health)))
            }
            Err(e) => Err(self.describe_error(&e, &live.health)),
        }
    }

    /// Sends `request` on the current connection (or a new one) and waits for its reply.
    async fn call_once(
        &self,
        request: ClientRequest,
    ) -> Result<(Live, Result<ServerResult, ServiceError>), String> {
        let mut live = self.shared.connection().await?;
        let handle = match live
            .peer
            .send_request_with_option(
                request.clone(),
                PeerRequestOptions::with_timeout(self.shared.config.timeout),
            )
            .await
        {
            Ok(handle) => handle,
            // The server stopped before the request left: nothing was sent, so the request
            // goes to the server started again.
            Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)) => {
                live = self.shared.connection().await?;
                live.peer
                    .send_request_with_option(
                        request,
                        PeerRequestOptions::with_timeout(self.shared.config.timeout),
                    )
                    .await
                    .map_err(|e| self.describe_error(&e, &live.health))?
            }
            Err(e) => return Err(self.describe_error(&e, &live.health)),
        };
        let mut guard = CancelOnDrop {
            peer: live.peer.clone(),
            id: Some(handle.id.clone()),
            in_flight: self.shared.in_flight.clone(),
        };
        self.shared
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(handle.id.clone());
        let reply = handle.await_response().await;
        guard.disarm();
        Ok((live, reply))
    }

    /// A service error in words for a program, with what is known about a server that is gone.
    fn describe_error(&self, error: &ServiceError, health: &Health) -> String {
        match error {
            ServiceError::McpError(data)
                if data.code == UNREADABLE_REPLY || data.code == SESSION_LOST =>
            {
                data.message.to_string()
            }
            ServiceError::McpError(data) => format!(
                "the server answered with an error: {} (JSON-RPC error {})",
                data.message, data.code.0
            ),
            ServiceError::TransportSend(sent)
                if matches!(
                    self.shared.config.endpoint,
                    crate::config::Endpoint::Http { .. }
                ) =>
            {
                let mut why = sent.to_string();
                let mut source = std::error::Error::source(sent);
                while let Some(cause) = source {
                    why = cause.to_string();
                    source = cause.source();
                }
                format!(
                    "the MCP server {} cannot be reached at {}: {why}",
                    self.shared.config.name,
                    self.shared.config.describe()
                )
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => format!(
                "the MCP server {} is not running{}",
                self.shared.config.name,
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
        self.watcher.abort();
        let in_flight: Vec<RequestId> = self
            .shared
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .collect();
        let live = self.shared.live();
        for id in in_flight {
            let _ = live
                .peer
                .notify_cancelled(CancelledNotificationParam::new(
                    Some(id),
                    Some("the client is closing".to_string()),
                ))
                .await;
        }
        if let Some(mut service) = self.shared.service.lock().await.take() {
            let _ = service.close_with_timeout(Duration::from_secs(10)).await;
        }
    }
}

impl Shared {
    fn live(&self) -> Live {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The connection to use for a call: the current one, or, when the server has stopped, a
    /// new one (the server is started or reached again, with a new handshake), unless a start
    /// failed and the wait before the next one is not over.
    async fn connection(&self) -> Result<Live, String> {
        self.revive().await.map_err(|no| no.message)
    }

    /// The current connection, or a new one when the server has stopped.
    async fn revive(&self) -> Result<Live, NoConnection> {
        let mut service = self.service.lock().await;
        let live = self.live();
        let name = &self.config.name;
        let Some(running) = service.as_mut() else {
            return Err(NoConnection {
                message: format!("the MCP server {name} was closed"),
                retry_in: None,
            });
        };
        if !live.is_gone() && !running.is_closed() {
            return Ok(live);
        }
        let how = live.health.exit().unwrap_or_else(|| "stopped".to_string());
        let failures = {
            let backoff = self.backoff.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(next) = backoff.next
                && let Some(wait) = next.checked_duration_since(Instant::now())
                && !wait.is_zero()
            {
                return Err(NoConnection {
                    message: format!(
                        "the MCP server {name} {how} and could not be started again ({} failed                          starts; the last: {}); the next start is in {}",
                        backoff.failures,
                        backoff.last_error,
                        seconds_rounded(wait)
                    ),
                    retry_in: Some(wait),
                });
            }
            backoff.failures
        };
        let again = match self.config.endpoint {
            crate::config::Endpoint::Stdio { .. } => "starting it again",
            crate::config::Endpoint::Http { .. } => "reaching it again",
        };
        if failures == 0 {
            tracing::warn!(server = %name, "the MCP server {name} {how}; {again}");
        }
        let _ = running.close_with_timeout(Duration::from_secs(2)).await;
        let health = Arc::new(live.health.continued());
        match start(&self.config, health.clone()).await {
            Ok(started) => {
                let live = Live {
                    peer: started.peer().clone(),
                    health,
                };
                *service = Some(started);
                *self.current.lock().unwrap_or_else(PoisonError::into_inner) = live.clone();
                self.restarts.fetch_add(1, Ordering::Relaxed);
                *self.backoff.lock().unwrap_or_else(PoisonError::into_inner) = Backoff::default();
                if failures > 0 {
                    tracing::warn!(
                        server = %name,
                        "the MCP server {name} was started again after {failures} failed starts"
                    );
                }
                Ok(live)
            }
            Err(e) => {
                self.failed_starts.fetch_add(1, Ordering::Relaxed);
                let failures = failures + 1;
                let wait = crate::backoff::wait_after(
                    failures,
                    self.config.restart_backoff,
                    self.config.restart_backoff_cap,
                );
                tracing::warn!(
                    server = %name,
                    "the MCP server {name} could not be started again (failed start {failures} \
                     in a row): {}; trying again in {}",
                    e.message,
                    seconds_rounded(wait)
                );
                *self.backoff.lock().unwrap_or_else(PoisonError::into_inner) = Backoff {
                    failures,
                    next: Some(Instant::now() + wait),
                    last_error: e.message.clone(),
                };
                Err(NoConnection {
                    message: format!(
                        "the MCP server {name} {how} and could not be started again: {}",
                        e.message
                    ),
                    retry_in: Some(wait),
                })
            }
        }
    }
}

/// Starts the server again as soon as it is seen to have stopped, and again after each wait
/// while its starts fail; ends when the server is closed or its handle dropped.
async fn watch(shared: Weak<Shared>) {
    loop {
        let Some(server) = shared.upgrade() else {
            return;
        };
        let live = server.live();
        drop(server);
        if !live.is_gone() {
            // A stdio server's end is signalled; an HTTP connection's is looked for.
            let _ = tokio::time::timeout(WATCH_INTERVAL, live.health.ended()).await;
            continue;
        }
        let Some(server) = shared.upgrade() else {
            return;
        };
        match server.revive().await {
            Ok(_) => {}
            Err(NoConnection {
                retry_in: Some(wait),
                ..
            }) => {
                drop(server);
                tokio::time::sleep(wait).await;
            }
            Err(NoConnection { retry_in: None, .. }) => return,
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
                crate::http::transport(url, headers, config.max_message_bytes, health.clone())
                    .map_err(fail)?;
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

/// `0.8 s`, `12.0 s`: a wait, to a tenth of a second.
fn seconds_rounded(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
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
