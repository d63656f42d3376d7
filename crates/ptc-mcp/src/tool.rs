//! One MCP tool as an agent tool: its `tool/` name, the signature and description derived from
//! its schemas, and calls that check their arguments first and convert the result.

use std::sync::Arc;

use async_trait::async_trait;
use ptc_agent::{AsyncTool, SignatureError, ToolError};
use ptc_lisp::{ToolSpec, Value};

use crate::naming::{Renamed, ToolName};
use crate::result;
use crate::schema::Shape;
use crate::server::McpServer;

/// A tool of a connected server, callable as `tool/NAME`.
pub struct McpTool {
    name: ToolName,
    title: Option<String>,
    description: String,
    shape: Shape,
    input_schema: serde_json::Value,
    server: Arc<McpServer>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .field("signature", &self.shape.signature)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    pub(crate) fn new(name: ToolName, tool: &rmcp::model::Tool, server: Arc<McpServer>) -> McpTool {
        let order = server.property_order(&tool.name).unwrap_or_default();
        let shape = Shape::new(
            &tool.input_schema,
            tool.output_schema.as_deref(),
            &order.input,
            &order.output,
        );
        let mut description = tool
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .or(tool.title.as_deref())
            .unwrap_or("")
            .to_string();
        if let Some(choices) = shape.choices_note() {
            description.push_str(&format!(" (allowed values: {choices})"));
        }
        if name.renamed.is_some() {
            description.push_str(&format!(
                " (the MCP tool {:?} of server {})",
                name.original, name.server
            ));
        }
        McpTool {
            input_schema: serde_json::Value::Object((*tool.input_schema).clone()),
            title: tool.title.clone(),
            description: description.trim().to_string(),
            name,
            shape,
            server,
        }
    }

    /// Its `tool/` name, the server's name for it and why they differ.
    pub fn tool_name(&self) -> &ToolName {
        &self.name
    }

    /// Why the `tool/` name differs from the server's, if it does.
    pub fn renamed(&self) -> Option<Renamed> {
        self.name.renamed
    }

    /// The title the server gives the tool, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The parameter names, in the order positional arguments take.
    pub fn params(&self) -> Vec<String> {
        self.shape.param_names()
    }

    /// The JSON Schema of its arguments, as the server gave it: what a model calling the tool
    /// natively is shown.
    pub fn input_schema(&self) -> &serde_json::Value {
        &self.input_schema
    }

    /// The server it belongs to.
    pub fn server(&self) -> &Arc<McpServer> {
        &self.server
    }
}

#[async_trait]
impl AsyncTool for McpTool {
    fn name(&self) -> &str {
        &self.name.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn signature(&self) -> Option<&str> {
        self.shape.signature.as_deref()
    }

    /// The parameter names are given even when the signature cannot show them (a property
    /// name that is not a symbol), so that positional calls stay documented.
    fn spec(&self) -> Result<ToolSpec, SignatureError> {
        let mut spec =
            ToolSpec::new(&self.name.name, &self.description).with_params(self.shape.param_names());
        if let Some(signature) = &self.shape.signature {
            spec = spec.with_signature(signature.clone());
        }
        Ok(spec)
    }

    async fn call(&self, args: Vec<Value>) -> Result<Value, ToolError> {
        let arguments = self
            .shape
            .arguments(&self.name.name, &args)
            .map_err(ToolError::new)?;
        let reply = self
            .server
            .call(&self.name.original, arguments)
            .await
            .map_err(ToolError::new)?;
        result::to_value(
            reply,
            self.shape.has_output_schema,
            self.server.config().max_result_bytes,
        )
        .map_err(ToolError::new)
    }
}
