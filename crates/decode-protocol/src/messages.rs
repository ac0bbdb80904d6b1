//! The conversation, provider-neutral: what the model reads and what it sent back.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// One message of the conversation. Serialises as `{"role":"user","text":…}`,
/// `{"role":"assistant","text":…,"tool_calls":[…]}` or `{"role":"tool","results":[…]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the person typed. Never shortened.
    User { text: String },
    /// One model turn: its text and the tool calls it made.
    Assistant {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(as = "Option<_>", optional)]
        tool_calls: Vec<ToolCall>,
    },
    /// The results of the tool calls of the assistant message before it, in call order.
    Tool { results: Vec<ToolOutput> },
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolCall {
    /// The provider's call id (or one Decode made up when the provider sends none).
    pub id: String,
    /// The tool name as the model sent it.
    pub name: String,
    /// The parsed arguments; `null` when they were not valid JSON.
    pub input: Value,
    /// The arguments exactly as sent, when they were not valid JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub invalid_input: Option<String>,
    /// Opaque provider data that must be sent back with the call (Gemini's
    /// `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub signature: Option<String>,
}

/// The result of one tool call, as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ToolOutput {
    /// The id of the [`ToolCall`].
    pub call_id: String,
    /// The tool name of the call (Gemini matches results by name).
    pub name: String,
    /// What the model reads.
    pub content: String,
    /// Whether the call failed or was denied.
    #[serde(default)]
    pub is_error: bool,
    /// Whether Decode shortened this output to save context.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<_>", optional)]
    pub shortened: bool,
}

/// Token counts reported by the provider (for one turn, or summed over a session).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    /// Adds another turn's counts.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants its tool calls run.
    ToolUse,
    /// The output limit was reached.
    MaxTokens,
    /// Something else (refusal, safety stop, …), as the provider named it.
    Other(String),
}
