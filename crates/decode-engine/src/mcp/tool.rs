//! An MCP tool as the agent loop and `decode tool` see it: one more [`ToolHandler`],
//! so its calls take the one gated path ([`crate::tools::call_tool`]) and show as
//! ordinary tool cards.

use std::sync::Arc;

use async_trait::async_trait;
use decode_policy::{Call, McpName, Tool};

use super::{McpHub, McpTool};
use crate::tools::{ToolContext, ToolHandler, ToolResult};

/// One tool of a running MCP server.
pub struct McpToolHandler {
    hub: Arc<McpHub>,
    tool: McpTool,
    name: McpName,
    description: String,
}

impl McpToolHandler {
    pub(crate) fn new(hub: Arc<McpHub>, tool: McpTool, name: McpName) -> McpToolHandler {
        let mut description = tool.description.trim().to_string();
        if description.is_empty() {
            description = format!("The tool `{}`.", tool.original);
        }
        description.push_str(&format!(
            "\n\n(A tool of the MCP server `{}`; every call passes Decode's permission gate.)",
            tool.server
        ));
        McpToolHandler {
            hub,
            tool,
            name,
            description,
        }
    }

    /// The tool as its server offers it.
    pub fn mcp_tool(&self) -> &McpTool {
        &self.tool
    }
}

#[async_trait]
impl ToolHandler for McpToolHandler {
    fn tool(&self) -> Tool {
        Tool::Mcp
    }

    fn name(&self) -> String {
        self.tool.name.clone()
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> serde_json::Value {
        self.tool.input_schema.clone()
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        if input.is_object() || input.is_null() {
            Ok(())
        } else {
            Err(format!(
                "{}: the arguments must be a JSON object",
                self.tool.name
            ))
        }
    }

    fn gate_call(&self, input: &serde_json::Value) -> Call {
        Call::mcp(self.name.clone(), input)
    }

    fn mcp_tool(&self) -> Option<&super::McpTool> {
        Some(&self.tool)
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        self.hub
            .call(&self.tool, input, &ctx.cancel, &ctx.progress)
            .await
    }
}
