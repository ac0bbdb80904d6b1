//! The `task` tool (docs/agents.md, "Subagents"): starts an agent of the catalog on a
//! sub-task. It is a control tool — never gated itself; every call the subagent makes
//! is. The subagent runs inside the agent loop ([`crate::agent_loop`]), which owns
//! the model client, the events and the Stop button; this handler only describes the
//! tool and checks its input (a call that reaches it outside a loop, `decode tool
//! task`, is an error).

use async_trait::async_trait;
use decode_policy::Tool;
use serde::Deserialize;
use serde_json::json;

use super::files::parse_input;
use super::{ToolContext, ToolHandler, ToolResult};

/// What a `task` call asks for.
#[derive(Debug, Clone, Deserialize)]
pub struct TaskInput {
    /// The catalog agent to start.
    pub agent: String,
    /// A few words for the person.
    pub description: String,
    /// The sub-task: all the subagent sees.
    pub prompt: String,
}

impl TaskInput {
    /// Parses and checks a `task` call's input (every field a non-empty string).
    pub fn parse(input: &serde_json::Value) -> Result<TaskInput, String> {
        let i: TaskInput = parse_input("task", input)?;
        for (key, value) in [
            ("agent", &i.agent),
            ("description", &i.description),
            ("prompt", &i.prompt),
        ] {
            if value.trim().is_empty() {
                return Err(format!("task: `{key}` is empty"));
            }
        }
        Ok(i)
    }
}

/// The `task` tool.
pub struct TaskTool;

#[async_trait]
impl ToolHandler for TaskTool {
    fn tool(&self) -> Tool {
        Tool::Task
    }

    fn description(&self) -> &'static str {
        "Starts a subagent — an agent of the catalog with its own instructions, tools and \
         context — on a self-contained sub-task, and returns its final answer. The subagent \
         sees only `prompt`, not this conversation: say everything it needs. Use it to keep \
         broad research (mapping a codebase, finding where things happen) out of your own \
         context. Several `task` calls in one turn run at the same time (up to 4). A \
         subagent cannot start subagents; its tool calls are checked by the permission \
         gate like yours, in a mode never looser than yours."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "agent": {"type": "string", "description": "The name of the agent to start (one of those listed below)."},
                "description": {"type": "string", "description": "A few words saying what the subagent does, shown to the person."},
                "prompt": {"type": "string", "description": "The sub-task, self-contained: the subagent sees nothing else."}
            },
            "required": ["agent", "description", "prompt"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        TaskInput::parse(input).map(|_| ())
    }

    async fn execute(&self, _input: serde_json::Value, _ctx: &ToolContext) -> ToolResult {
        ToolResult::error("task: subagents run only inside an agent's conversation")
    }
}
