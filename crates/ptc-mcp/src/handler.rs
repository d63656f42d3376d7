//! What the client does with a server's notifications and requests: counts and traces them,
//! never fails on them, and declines what it does not offer (sampling, elicitation, roots).

use std::sync::Arc;

use rmcp::ClientHandler;
#[allow(deprecated)]
use rmcp::model::{
    ClientCapabilities, ClientConfig, CustomNotification, Implementation,
    LoggingMessageNotificationParam, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RoleClient};

use crate::health::Health;

/// The client side of one connection.
pub(crate) struct Notifications {
    pub health: Arc<Health>,
}

impl ClientHandler for Notifications {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("ptc-mcp", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.health.count_progress();
        tracing::debug!(
            server = %self.health.server,
            progress = params.progress,
            total = params.total,
            message = params.message.as_deref().unwrap_or(""),
            "mcp progress"
        );
    }

    // Logging is deprecated in the newest protocol version, but the servers of the versions
    // before it (the reference servers among them) still send it.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.health.count_log_message();
        tracing::debug!(server = %self.health.server, level = ?params.level, data = %params.data, "mcp log message");
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // The tools a program sees are fixed when the run starts, so that the prompt's tool/
        // section stays the same (and cached) from turn to turn.
        self.health.count_tools_list_changed();
        tracing::info!(server = %self.health.server, "the mcp server's tool list changed; programs keep the tools listed at start");
    }

    async fn on_resource_updated(
        &self,
        _params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.health.count_other_notification();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.health.count_other_notification();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.health.count_other_notification();
    }

    async fn on_custom_notification(
        &self,
        _notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        self.health.count_other_notification();
    }
}
