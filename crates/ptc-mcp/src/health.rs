//! What is known about a server beyond its replies: how it exited, the last lines of its
//! stderr, the notifications and faulty messages it sent, and the order of its schemas'
//! properties. Shared by its transport, its notification handler and its tools.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, Visitor};

/// How many stderr lines are kept.
const STDERR_LINES: usize = 20;

/// Counts of what a server sent besides replies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// `notifications/progress`.
    pub progress: u64,
    /// `notifications/message` (logging).
    pub log_messages: u64,
    /// `notifications/tools/list_changed`.
    pub tools_list_changed: u64,
    /// Any other notification.
    pub other_notifications: u64,
    /// Lines that were not JSON-RPC messages.
    pub malformed_messages: u64,
    /// Messages over the size limit, discarded unread.
    pub oversized_messages: u64,
}

/// The order of a tool's schema properties as the server wrote them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PropertyOrder {
    pub input: Vec<String>,
    pub output: Vec<String>,
}

#[derive(Debug, Default)]
pub(crate) struct Health {
    pub server: String,
    stderr: Mutex<VecDeque<String>>,
    exit: Mutex<Option<String>>,
    progress: AtomicU64,
    log_messages: AtomicU64,
    tools_list_changed: AtomicU64,
    other_notifications: AtomicU64,
    malformed: AtomicU64,
    oversized: AtomicU64,
    orders: Mutex<HashMap<String, PropertyOrder>>,
    pid: Mutex<Option<u32>>,
    ended: AtomicBool,
    ended_signal: tokio::sync::Notify,
}

impl Health {
    pub fn new(server: &str) -> Health {
        Health {
            server: server.to_string(),
            ..Health::default()
        }
    }

    /// A record for the same server started again: its counts and schema property orders go
    /// on, its stderr, exit and process id start afresh.
    pub fn continued(&self) -> Health {
        let get = |c: &AtomicU64| AtomicU64::new(c.load(Ordering::Relaxed));
        Health {
            server: self.server.clone(),
            progress: get(&self.progress),
            log_messages: get(&self.log_messages),
            tools_list_changed: get(&self.tools_list_changed),
            other_notifications: get(&self.other_notifications),
            malformed: get(&self.malformed),
            oversized: get(&self.oversized),
            orders: Mutex::new(
                self.orders
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone(),
            ),
            ..Health::default()
        }
    }

    pub fn set_process_id(&self, pid: Option<u32>) {
        *self.pid.lock().unwrap_or_else(PoisonError::into_inner) = pid;
    }

    /// The process id of a spawned server, until it is known to have ended.
    pub fn process_id(&self) -> Option<u32> {
        if self.exit().is_some() {
            return None;
        }
        *self.pid.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn push_stderr(&self, line: String) {
        let mut lines = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The last lines the server wrote to stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    pub fn set_exit(&self, how: String) {
        *self.exit.lock().unwrap_or_else(PoisonError::into_inner) = Some(how);
    }

    /// How the server process ended (`exited with status 3`), if it did.
    pub fn exit(&self) -> Option<String> {
        self.exit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records that the connection ended: the server's output closed (it exited).
    pub fn mark_ended(&self) {
        self.ended.store(true, Ordering::Relaxed);
        // One waiter (the server's watcher); a permit is kept if it is not waiting yet.
        self.ended_signal.notify_one();
    }

    /// Whether the connection ended.
    pub fn has_ended(&self) -> bool {
        self.ended.load(Ordering::Relaxed)
    }

    /// Waits until [`Health::mark_ended`] is called (at once if it was already).
    pub async fn ended(&self) {
        if !self.has_ended() {
            self.ended_signal.notified().await;
        }
    }

    pub fn count_progress(&self) {
        self.progress.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_log_message(&self) {
        self.log_messages.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_tools_list_changed(&self) {
        self.tools_list_changed.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_other_notification(&self) {
        self.other_notifications.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_malformed(&self) {
        self.malformed.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_oversized(&self) {
        self.oversized.fetch_add(1, Ordering::Relaxed);
    }

    pub fn stats(&self) -> ServerStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ServerStats {
            progress: get(&self.progress),
            log_messages: get(&self.log_messages),
            tools_list_changed: get(&self.tools_list_changed),
            other_notifications: get(&self.other_notifications),
            malformed_messages: get(&self.malformed),
            oversized_messages: get(&self.oversized),
        }
    }

    /// Keeps the property order of the tools in a raw `tools/list` reply.
    pub fn keep_property_order(&self, raw: &[u8]) {
        let Ok(reply) = serde_json::from_slice::<RawReply>(raw) else {
            return;
        };
        let mut orders = self.orders.lock().unwrap_or_else(PoisonError::into_inner);
        for tool in reply.result.tools {
            orders.insert(
                tool.name,
                PropertyOrder {
                    input: tool
                        .input_schema
                        .map(|s| s.properties.0)
                        .unwrap_or_default(),
                    output: tool
                        .output_schema
                        .map(|s| s.properties.0)
                        .unwrap_or_default(),
                },
            );
        }
    }

    /// The property order of a tool's schemas, when the transport could see it.
    pub fn property_order(&self, tool: &str) -> Option<PropertyOrder> {
        self.orders
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(tool)
            .cloned()
    }
}

#[derive(Deserialize)]
struct RawReply {
    result: RawTools,
}

#[derive(Deserialize)]
struct RawTools {
    tools: Vec<RawTool>,
}

#[derive(Deserialize)]
struct RawTool {
    name: String,
    #[serde(rename = "inputSchema", default)]
    input_schema: Option<RawSchema>,
    #[serde(rename = "outputSchema", default)]
    output_schema: Option<RawSchema>,
}

#[derive(Deserialize)]
struct RawSchema {
    #[serde(default)]
    properties: KeyOrder,
}

/// The keys of a JSON object in the order written.
#[derive(Default)]
struct KeyOrder(Vec<String>);

impl<'de> Deserialize<'de> for KeyOrder {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<KeyOrder, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = KeyOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeyOrder, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(KeyOrder(keys))
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn property_order_is_kept_as_written() {
        let health = Health::new("fs");
        health.keep_property_order(
            br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[
                {"name":"read","inputSchema":{"type":"object","properties":{"path":{},"tail":{},"head":{}}},
                 "outputSchema":{"type":"object","properties":{"z":{},"a":{}}}},
                {"name":"bare","inputSchema":{"type":"object"}}]}}"#,
        );
        assert_eq!(
            health.property_order("read"),
            Some(PropertyOrder {
                input: vec!["path".into(), "tail".into(), "head".into()],
                output: vec!["z".into(), "a".into()],
            })
        );
        assert_eq!(
            health.property_order("bare"),
            Some(PropertyOrder::default())
        );
        assert_eq!(health.property_order("other"), None);
    }
}
