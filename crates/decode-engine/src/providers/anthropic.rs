//! Anthropic Messages API with streaming (`POST {base}/messages`, `stream: true`,
//! headers `x-api-key` and `anthropic-version: 2023-06-01`).
//!
//! The stream is named SSE events: `message_start`, then per content block
//! `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) /
//! `content_block_stop`, then `message_delta` (stop reason, output usage) and
//! `message_stop`; `ping` may come anywhere and `error` ends the stream.

use serde_json::{json, Map, Value};

use super::http::{join_url, Decoder, Fault, Wire};
use super::sse::SseEvent;
use super::{Message, ModelEvent, ModelRequest, ProviderKind, ProviderSettings, StopReason, Usage};
use crate::secret::ApiKey;

/// Anthropic's API (with its version path).
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com/v1";
/// The API version header value.
pub const API_VERSION: &str = "2023-06-01";

pub(crate) struct AnthropicWire {
    model: String,
    base_url: String,
    api_key: Option<ApiKey>,
}

impl AnthropicWire {
    pub(crate) fn new(settings: &ProviderSettings) -> AnthropicWire {
        AnthropicWire {
            model: settings.model.clone(),
            base_url: settings.base_url.trim_end_matches('/').to_string(),
            api_key: settings.api_key.clone(),
        }
    }
}

/// Appends `blocks` to the last message if it has the same role (the API wants
/// user and assistant turns to alternate), else starts a new message.
fn push_blocks(messages: &mut Vec<Value>, role: &str, blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    if let Some(last) = messages.last_mut() {
        if last["role"] == role {
            if let Some(content) = last["content"].as_array_mut() {
                content.extend(blocks);
                return;
            }
        }
    }
    messages.push(json!({"role": role, "content": blocks}));
}

/// The request body for one turn (public for tests and debugging).
pub fn request_body(model: &str, request: &ModelRequest) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    for m in &request.messages {
        match m {
            Message::User { text } => push_blocks(
                &mut messages,
                "user",
                vec![json!({"type": "text", "text": text})],
            ),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.trim().is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    let input = match &c.input {
                        Value::Object(_) => c.input.clone(),
                        _ => Value::Object(Map::new()),
                    };
                    blocks.push(json!({
                        "type": "tool_use", "id": c.id, "name": c.name, "input": input,
                    }));
                }
                push_blocks(&mut messages, "assistant", blocks);
            }
            Message::Tool { results } => push_blocks(
                &mut messages,
                "user",
                results
                    .iter()
                    .map(|r| {
                        json!({
                            "type": "tool_result",
                            "tool_use_id": r.call_id,
                            "content": r.content,
                            "is_error": r.is_error,
                        })
                    })
                    .collect(),
            ),
        }
    }
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_output_tokens,
        "messages": messages,
        "stream": true,
    });
    if !request.system.is_empty() {
        body["system"] = Value::String(request.system.clone());
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                })
            })
            .collect();
    }
    body
}

impl Wire for AnthropicWire {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn base_url(&self) -> &str {
        &self.base_url
    }

    fn label(&self) -> String {
        if self.base_url.contains("api.anthropic.com") {
            "Anthropic".to_string()
        } else {
            format!("Anthropic (at {})", self.base_url)
        }
    }

    fn body(&self, request: &ModelRequest) -> Value {
        request_body(&self.model, request)
    }

    fn request(&self, http: &reqwest::Client, body: &Value) -> reqwest::RequestBuilder {
        let mut req = http
            .post(join_url(&self.base_url, "messages"))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .header("anthropic-version", API_VERSION)
            .body(body.to_string());
        if let Some(key) = &self.api_key {
            req = req.header("x-api-key", key.expose());
        }
        req
    }

    fn api_key(&self) -> Option<&crate::secret::ApiKey> {
        self.api_key.as_ref()
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(AnthropicDecoder::default())
    }
}

#[derive(Debug, Default)]
pub(crate) struct AnthropicDecoder {
    /// Indexes of open tool_use blocks.
    tool_blocks: Vec<usize>,
    stop_reason: Option<StopReason>,
    usage: Usage,
    stopped: bool,
}

fn map_stop(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" | "pause_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        other => StopReason::Other(other.to_string()),
    }
}

impl Decoder for AnthropicDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), Fault> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| Fault::Malformed(format!("an event was not JSON: {e}")))?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or("")
            .to_string();
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match kind.as_str() {
            "message_start" => {
                if let Some(u) = data.pointer("/message/usage") {
                    self.usage.input_tokens =
                        u.get("input_tokens").and_then(Value::as_u64).unwrap_or(0)
                            + u.get("cache_read_input_tokens")
                                .and_then(Value::as_u64)
                                .unwrap_or(0)
                            + u.get("cache_creation_input_tokens")
                                .and_then(Value::as_u64)
                                .unwrap_or(0);
                    self.usage.output_tokens =
                        u.get("output_tokens").and_then(Value::as_u64).unwrap_or(0);
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").cloned().unwrap_or(Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") | Some("server_tool_use") => {
                        self.tool_blocks.push(index);
                        out.push(ModelEvent::ToolCallStart {
                            index,
                            id: block
                                .get("id")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                            name: block
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                            signature: None,
                        });
                        // The input normally streams as input_json_delta; a non-empty
                        // input here is the whole input.
                        if let Some(input) = block.get("input").and_then(Value::as_object) {
                            if !input.is_empty() {
                                out.push(ModelEvent::ToolCallDelta {
                                    index,
                                    json: Value::Object(input.clone()).to_string(),
                                });
                            }
                        }
                    }
                    Some("text") => {
                        if let Some(text) = block.get("text").and_then(Value::as_str) {
                            if !text.is_empty() {
                                out.push(ModelEvent::TextDelta {
                                    text: text.to_string(),
                                });
                            }
                        }
                    }
                    _ => {} // thinking, redacted_thinking, …: not shown
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta").cloned().unwrap_or(Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(text) = delta.get("text").and_then(Value::as_str) {
                            if !text.is_empty() {
                                out.push(ModelEvent::TextDelta {
                                    text: text.to_string(),
                                });
                            }
                        }
                    }
                    Some("input_json_delta") => {
                        if let Some(json) = delta.get("partial_json").and_then(Value::as_str) {
                            if !json.is_empty() {
                                out.push(ModelEvent::ToolCallDelta {
                                    index,
                                    json: json.to_string(),
                                });
                            }
                        }
                    }
                    _ => {} // thinking_delta, signature_delta, citations_delta
                }
            }
            "content_block_stop" => {
                if let Some(pos) = self.tool_blocks.iter().position(|i| *i == index) {
                    self.tool_blocks.remove(pos);
                    out.push(ModelEvent::ToolCallEnd { index });
                }
            }
            "message_delta" => {
                if let Some(r) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(map_stop(r));
                }
                if let Some(n) = data.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.usage.output_tokens = n;
                }
                if let Some(n) = data.pointer("/usage/input_tokens").and_then(Value::as_u64) {
                    self.usage.input_tokens = self.usage.input_tokens.max(n);
                }
            }
            "message_stop" => {
                for index in std::mem::take(&mut self.tool_blocks) {
                    out.push(ModelEvent::ToolCallEnd { index });
                }
                out.push(ModelEvent::Usage(self.usage));
                out.push(ModelEvent::Stop(
                    self.stop_reason.clone().unwrap_or(StopReason::EndTurn),
                ));
                self.stopped = true;
            }
            "error" => {
                let kind = data
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let message = data
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or(kind)
                    .to_string();
                let retryable = matches!(
                    kind,
                    "overloaded_error" | "api_error" | "rate_limit_error" | "timeout_error"
                );
                return Err(Fault::Provider { retryable, message });
            }
            _ => {} // ping and future events
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut Vec<ModelEvent>) -> Result<(), Fault> {
        if self.stopped {
            Ok(())
        } else {
            Err(Fault::Cut("the stream ended before `message_stop`".into()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{ToolCall, ToolOutput};

    #[test]
    fn consecutive_user_turns_are_merged() {
        let req = ModelRequest {
            system: "sys".into(),
            messages: vec![
                Message::User { text: "a".into() },
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "t1".into(),
                        name: "read".into(),
                        input: Value::Null,
                        invalid_input: Some("{bad".into()),
                        signature: None,
                    }],
                },
                Message::Tool {
                    results: vec![ToolOutput {
                        call_id: "t1".into(),
                        name: "read".into(),
                        content: "err".into(),
                        is_error: true,
                        shortened: false,
                    }],
                },
                Message::User { text: "b".into() },
            ],
            tools: vec![],
            max_output_tokens: 100,
        };
        let body = request_body("m", &req);
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3);
        assert_eq!(msgs[1]["content"][0]["input"], json!({}));
        assert_eq!(msgs[2]["content"][0]["type"], "tool_result");
        assert_eq!(msgs[2]["content"][1]["text"], "b");
        assert_eq!(body["system"], "sys");
        assert!(body.get("tools").is_none());
    }
}
