//! OpenAI-compatible chat completions with streaming (`POST {base}/chat/completions`,
//! `stream: true`, `stream_options.include_usage`): OpenAI, Ollama
//! (`http://localhost:11434/v1`), llama.cpp server, LM Studio, vLLM, OpenRouter.
//!
//! The stream is `data: {chunk}` lines ending with `data: [DONE]`. Text arrives in
//! `choices[0].delta.content`; tool calls in `choices[0].delta.tool_calls[]`, keyed by
//! `index`: the first delta of a call carries its `id` and `function.name`, later ones
//! pieces of `function.arguments`. Servers differ in details this decoder tolerates: a
//! call delivered whole in one chunk (Ollama), a missing `index` or `id`, `[DONE]`
//! without a `finish_reason`, usage in a chunk with empty `choices`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::http::{join_url, Decoder, Fault, Wire};
use super::sse::SseEvent;
use super::{
    is_local_url, synthetic_call_id, Message, ModelEvent, ModelRequest, ProviderKind,
    ProviderSettings, StopReason, Usage,
};
use crate::secret::ApiKey;

/// OpenAI's API.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

pub(crate) struct OpenAiWire {
    model: String,
    base_url: String,
    api_key: Option<ApiKey>,
}

impl OpenAiWire {
    pub(crate) fn new(settings: &ProviderSettings) -> OpenAiWire {
        OpenAiWire {
            model: settings.model.clone(),
            base_url: settings.base_url.trim_end_matches('/').to_string(),
            api_key: settings.api_key.clone(),
        }
    }
}

/// The request body for one turn (public for tests and debugging).
pub fn request_body(model: &str, request: &ModelRequest) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for m in &request.messages {
        match m {
            Message::User { text } => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant { text, tool_calls } => {
                let mut msg = json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { Value::String(text.clone()) },
                });
                if !tool_calls.is_empty() {
                    msg["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            let arguments = match &c.invalid_input {
                                Some(raw) => raw.clone(),
                                None => c.input.to_string(),
                            };
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": arguments},
                            })
                        })
                        .collect();
                }
                messages.push(msg);
            }
            Message::Tool { results } => {
                for r in results {
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": r.call_id,
                        "content": r.content,
                    }));
                }
            }
        }
    }
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    }
                })
            })
            .collect();
    }
    body
}

impl Wire for OpenAiWire {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Openai
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn base_url(&self) -> &str {
        &self.base_url
    }

    fn label(&self) -> String {
        if self.base_url.contains("api.openai.com") {
            "OpenAI".to_string()
        } else {
            format!("the OpenAI-compatible server at {}", self.base_url)
        }
    }

    fn body(&self, request: &ModelRequest) -> Value {
        request_body(&self.model, request)
    }

    fn request(&self, http: &reqwest::Client, body: &Value) -> reqwest::RequestBuilder {
        let mut req = http
            .post(join_url(&self.base_url, "chat/completions"))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .body(body.to_string());
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key.expose());
        }
        req
    }

    fn api_key(&self) -> Option<&crate::secret::ApiKey> {
        self.api_key.as_ref()
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(OpenAiDecoder::default())
    }

    fn key_hint(&self) -> String {
        if is_local_url(&self.base_url) {
            "local servers usually need no key: unset OPENAI_API_KEY / DECODE_API_KEY, or give the key the server expects".to_string()
        } else {
            "store a valid key with `decode key set openai` or set OPENAI_API_KEY".to_string()
        }
    }
}

#[derive(Debug, Default)]
struct CallState {
    started: bool,
    ended: bool,
    id: Option<String>,
    name: Option<String>,
    /// Arguments that arrived before the name.
    pending: String,
}

#[derive(Debug, Default)]
pub(crate) struct OpenAiDecoder {
    calls: BTreeMap<usize, CallState>,
    finish: Option<StopReason>,
    stop_sent: bool,
    done: bool,
}

impl OpenAiDecoder {
    fn close_calls(&mut self, out: &mut Vec<ModelEvent>) {
        for (index, call) in self.calls.iter_mut() {
            if !call.started {
                // A call whose name never arrived: start it now so the loop can report it.
                call.started = true;
                out.push(ModelEvent::ToolCallStart {
                    index: *index,
                    id: call.id.clone().unwrap_or_else(|| synthetic_call_id(*index)),
                    name: call.name.clone().unwrap_or_default(),
                    signature: None,
                });
                if !call.pending.is_empty() {
                    out.push(ModelEvent::ToolCallDelta {
                        index: *index,
                        json: std::mem::take(&mut call.pending),
                    });
                }
            }
            if !call.ended {
                call.ended = true;
                out.push(ModelEvent::ToolCallEnd { index: *index });
            }
        }
    }

    fn send_stop(&mut self, out: &mut Vec<ModelEvent>) {
        if self.stop_sent {
            return;
        }
        self.close_calls(out);
        let reason = match self.finish.clone() {
            Some(StopReason::EndTurn) | None if !self.calls.is_empty() => StopReason::ToolUse,
            Some(r) => r,
            None => StopReason::EndTurn,
        };
        self.stop_sent = true;
        out.push(ModelEvent::Stop(reason));
    }

    fn tool_deltas(&mut self, deltas: &[Value], out: &mut Vec<ModelEvent>) {
        for (position, d) in deltas.iter().enumerate() {
            let index = d
                .get("index")
                .and_then(Value::as_u64)
                .map(|i| i as usize)
                .unwrap_or(position);
            let call = self.calls.entry(index).or_default();
            if let Some(id) = d
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                if call.id.is_none() {
                    call.id = Some(id.to_string());
                }
            }
            let function = d.get("function");
            if let Some(name) = function
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                if call.name.is_none() {
                    call.name = Some(name.to_string());
                }
            }
            let args = function.and_then(|f| f.get("arguments"));
            let args = match args {
                Some(Value::String(s)) => s.clone(),
                // Some servers send the arguments as an object.
                Some(v @ Value::Object(_)) => v.to_string(),
                _ => String::new(),
            };
            if !call.started {
                if let Some(name) = call.name.clone() {
                    call.started = true;
                    out.push(ModelEvent::ToolCallStart {
                        index,
                        id: call.id.clone().unwrap_or_else(|| synthetic_call_id(index)),
                        name,
                        signature: None,
                    });
                    let pending = std::mem::take(&mut call.pending);
                    if !pending.is_empty() {
                        out.push(ModelEvent::ToolCallDelta {
                            index,
                            json: pending,
                        });
                    }
                } else {
                    call.pending.push_str(&args);
                    continue;
                }
            }
            if !args.is_empty() {
                out.push(ModelEvent::ToolCallDelta { index, json: args });
            }
        }
    }
}

fn map_finish(reason: &str) -> StopReason {
    match reason {
        "stop" | "end_turn" => StopReason::EndTurn,
        "tool_calls" | "function_call" | "tool_use" => StopReason::ToolUse,
        "length" | "max_tokens" => StopReason::MaxTokens,
        other => StopReason::Other(other.to_string()),
    }
}

impl Decoder for OpenAiDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), Fault> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            self.send_stop(out);
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| Fault::Malformed(format!("a stream chunk was not JSON: {e}")))?;
        if let Some(err) = chunk.get("error") {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            let code = err.get("code").and_then(Value::as_u64).unwrap_or(0);
            let kind = err.get("type").and_then(Value::as_str).unwrap_or("");
            let retryable = code == 429
                || code >= 500
                || kind.contains("server")
                || kind.contains("overloaded")
                || kind.contains("rate");
            return Err(Fault::Provider { retryable, message });
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            out.push(ModelEvent::Usage(Usage {
                input_tokens: usage
                    .get("prompt_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                output_tokens: usage
                    .get("completion_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            }));
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                if !text.is_empty() {
                    out.push(ModelEvent::TextDelta {
                        text: text.to_string(),
                    });
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                self.tool_deltas(calls, out);
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(map_finish(reason));
            self.send_stop(out);
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), Fault> {
        if self.done || self.finish.is_some() {
            self.send_stop(out);
            Ok(())
        } else {
            Err(Fault::Cut(
                "the stream ended without `[DONE]` or a finish reason".into(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::sse::SseParser;

    fn decode(body: &str) -> (Vec<ModelEvent>, Result<(), Fault>) {
        let mut p = SseParser::new();
        let mut events = Vec::new();
        p.feed(body.as_bytes(), &mut events);
        p.finish(&mut events);
        let mut d = OpenAiDecoder::default();
        let mut out = Vec::new();
        for e in events {
            if let Err(f) = d.event(e, &mut out) {
                return (out, Err(f));
            }
        }
        let r = d.finish(&mut out);
        (out, r)
    }

    #[test]
    fn whole_call_in_one_chunk_without_index() {
        let body = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"call_a\",\"function\":{\"name\":\"read\",\"arguments\":{\"path\":\"x\"}}}]},\"finish_reason\":null}]}\n\n\
                    data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n";
        let (out, r) = decode(body);
        assert!(r.is_ok());
        assert_eq!(
            out,
            vec![
                ModelEvent::ToolCallStart {
                    index: 0,
                    id: "call_a".into(),
                    name: "read".into(),
                    signature: None
                },
                ModelEvent::ToolCallDelta {
                    index: 0,
                    json: "{\"path\":\"x\"}".into()
                },
                ModelEvent::ToolCallEnd { index: 0 },
                ModelEvent::Stop(StopReason::ToolUse),
            ]
        );
    }

    #[test]
    fn missing_done_and_finish_is_a_cut() {
        let (_, r) = decode("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n");
        assert!(matches!(r, Err(Fault::Cut(_))));
    }

    #[test]
    fn error_chunk_is_reported() {
        let (_, r) =
            decode("data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n");
        assert_eq!(
            r,
            Err(Fault::Provider {
                retryable: true,
                message: "boom".into()
            })
        );
    }
}
