//! Google Gemini with streaming (`POST {base}/models/{model}:streamGenerateContent?alt=sse`,
//! header `x-goog-api-key`).
//!
//! Each SSE `data:` line is a whole `GenerateContentResponse`: text parts stream as
//! they are generated; a `functionCall` part arrives complete (name and `args` object,
//! sometimes an `id`, and on thinking models a `thoughtSignature` that must be sent
//! back with the call); the last chunk carries `finishReason` and `usageMetadata`.

use serde_json::{json, Map, Value};

use super::http::{join_url, Decoder, Fault, Wire};
use super::sse::SseEvent;
use super::{
    synthetic_call_id, Message, ModelEvent, ModelRequest, ProviderKind, ProviderSettings,
    StopReason, Usage, SYNTHETIC_ID_PREFIX,
};
use crate::secret::ApiKey;

/// Google's Generative Language API (with its version path).
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

pub(crate) struct GeminiWire {
    model: String,
    base_url: String,
    api_key: Option<ApiKey>,
}

impl GeminiWire {
    pub(crate) fn new(settings: &ProviderSettings) -> GeminiWire {
        GeminiWire {
            model: settings
                .model
                .strip_prefix("models/")
                .unwrap_or(&settings.model)
                .to_string(),
            base_url: settings.base_url.trim_end_matches('/').to_string(),
            api_key: settings.api_key.clone(),
        }
    }
}

fn push_parts(contents: &mut Vec<Value>, role: &str, parts: Vec<Value>) {
    if parts.is_empty() {
        return;
    }
    if let Some(last) = contents.last_mut() {
        if last["role"] == role {
            if let Some(p) = last["parts"].as_array_mut() {
                p.extend(parts);
                return;
            }
        }
    }
    contents.push(json!({"role": role, "parts": parts}));
}

/// Keeps the part of a JSON schema Gemini's `parameters` (an OpenAPI subset) accepts.
pub fn sanitize_schema(schema: &Value) -> Value {
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (k, v) in obj {
        match k.as_str() {
            "type" => match v {
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types
                        .iter()
                        .filter(|t| t.as_str() != Some("null"))
                        .collect();
                    if let Some(t) = non_null.first() {
                        out.insert("type".into(), (*t).clone());
                    }
                    if non_null.len() < types.len() {
                        out.insert("nullable".into(), Value::Bool(true));
                    }
                }
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            },
            "description" | "enum" | "required" | "format" | "nullable" | "minimum" | "maximum"
            | "minItems" | "maxItems" | "minLength" | "maxLength" | "pattern" | "title" => {
                out.insert(k.clone(), v.clone());
            }
            "properties" => {
                if let Some(props) = v.as_object() {
                    let cleaned: Map<String, Value> = props
                        .iter()
                        .map(|(name, s)| (name.clone(), sanitize_schema(s)))
                        .collect();
                    out.insert(k.clone(), Value::Object(cleaned));
                }
            }
            "items" => {
                out.insert(k.clone(), sanitize_schema(v));
            }
            "anyOf" => {
                if let Some(list) = v.as_array() {
                    out.insert(
                        k.clone(),
                        Value::Array(list.iter().map(sanitize_schema).collect()),
                    );
                }
            }
            _ => {} // $schema, additionalProperties, default, examples, …
        }
    }
    Value::Object(out)
}

/// The request body for one turn (public for tests and debugging).
pub fn request_body(request: &ModelRequest) -> Value {
    let mut contents: Vec<Value> = Vec::new();
    for m in &request.messages {
        match m {
            Message::User { text } => {
                push_parts(&mut contents, "user", vec![json!({"text": text})])
            }
            Message::Assistant { text, tool_calls } => {
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(json!({"text": text}));
                }
                for c in tool_calls {
                    let args = match &c.input {
                        Value::Object(_) => c.input.clone(),
                        _ => Value::Object(Map::new()),
                    };
                    let mut call = json!({"name": c.name, "args": args});
                    if !c.id.starts_with(SYNTHETIC_ID_PREFIX) {
                        call["id"] = Value::String(c.id.clone());
                    }
                    let mut part = json!({"functionCall": call});
                    if let Some(sig) = &c.signature {
                        part["thoughtSignature"] = Value::String(sig.clone());
                    }
                    parts.push(part);
                }
                push_parts(&mut contents, "model", parts);
            }
            Message::Tool { results } => push_parts(
                &mut contents,
                "user",
                results
                    .iter()
                    .map(|r| {
                        let response = if r.is_error {
                            json!({"error": r.content})
                        } else {
                            json!({"output": r.content})
                        };
                        let mut fr = json!({"name": r.name, "response": response});
                        if !r.call_id.starts_with(SYNTHETIC_ID_PREFIX) {
                            fr["id"] = Value::String(r.call_id.clone());
                        }
                        json!({"functionResponse": fr})
                    })
                    .collect(),
            ),
        }
    }
    // No maxOutputTokens: on thinking models it would also cap the thinking, so the
    // model's own limit applies.
    let mut body = json!({ "contents": contents });
    if !request.system.is_empty() {
        body["systemInstruction"] = json!({"parts": [{"text": request.system}]});
    }
    if !request.tools.is_empty() {
        let decls: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "parameters": sanitize_schema(&t.input_schema),
                })
            })
            .collect();
        body["tools"] = json!([{"functionDeclarations": decls}]);
    }
    body
}

impl Wire for GeminiWire {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Gemini
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn base_url(&self) -> &str {
        &self.base_url
    }

    fn label(&self) -> String {
        if self.base_url.contains("generativelanguage.googleapis.com") {
            "Gemini".to_string()
        } else {
            format!("Gemini (at {})", self.base_url)
        }
    }

    fn body(&self, request: &ModelRequest) -> Value {
        request_body(request)
    }

    fn request(&self, http: &reqwest::Client, body: &Value) -> reqwest::RequestBuilder {
        let url = join_url(
            &self.base_url,
            &format!("models/{}:streamGenerateContent?alt=sse", self.model),
        );
        let mut req = http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .body(body.to_string());
        if let Some(key) = &self.api_key {
            req = req.header("x-goog-api-key", key.expose());
        }
        req
    }

    fn api_key(&self) -> Option<&crate::secret::ApiKey> {
        self.api_key.as_ref()
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(GeminiDecoder::default())
    }

    fn is_auth_error(&self, status: u16, detail: &str) -> bool {
        status == 400
            && (detail.contains("API key not valid") || detail.contains("API_KEY_INVALID"))
    }
}

#[derive(Debug, Default)]
pub(crate) struct GeminiDecoder {
    calls: usize,
    finished: Option<StopReason>,
    stop_sent: bool,
}

impl Decoder for GeminiDecoder {
    fn event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), Fault> {
        let chunk: Value = serde_json::from_str(&event.data)
            .map_err(|e| Fault::Malformed(format!("a stream chunk was not JSON: {e}")))?;
        if let Some(err) = chunk.get("error") {
            let code = err.get("code").and_then(Value::as_u64).unwrap_or(0);
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error")
                .to_string();
            return Err(Fault::Provider {
                retryable: code == 429 || code >= 500,
                message,
            });
        }
        if let Some(reason) = chunk
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
        {
            return Err(Fault::Provider {
                retryable: false,
                message: format!("Gemini blocked the prompt ({reason})"),
            });
        }
        if let Some(candidate) = chunk.pointer("/candidates/0") {
            if let Some(parts) = candidate
                .pointer("/content/parts")
                .and_then(Value::as_array)
            {
                for part in parts {
                    if part.get("thought").and_then(Value::as_bool) == Some(true) {
                        continue;
                    }
                    if let Some(text) = part.get("text").and_then(Value::as_str) {
                        if !text.is_empty() {
                            out.push(ModelEvent::TextDelta {
                                text: text.to_string(),
                            });
                        }
                    }
                    if let Some(call) = part.get("functionCall") {
                        let index = self.calls;
                        self.calls += 1;
                        let id = call
                            .get("id")
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .map(str::to_string)
                            .unwrap_or_else(|| synthetic_call_id(index));
                        out.push(ModelEvent::ToolCallStart {
                            index,
                            id,
                            name: call
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                            signature: part
                                .get("thoughtSignature")
                                .and_then(Value::as_str)
                                .map(str::to_string),
                        });
                        let args = call
                            .get("args")
                            .cloned()
                            .unwrap_or_else(|| Value::Object(Map::new()));
                        out.push(ModelEvent::ToolCallDelta {
                            index,
                            json: args.to_string(),
                        });
                        out.push(ModelEvent::ToolCallEnd { index });
                    }
                }
            }
            if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
                self.finished = Some(match reason {
                    "STOP" if self.calls > 0 => StopReason::ToolUse,
                    "STOP" => StopReason::EndTurn,
                    "MAX_TOKENS" => StopReason::MaxTokens,
                    other => StopReason::Other(other.to_string()),
                });
            }
        }
        if let Some(u) = chunk.get("usageMetadata") {
            out.push(ModelEvent::Usage(Usage {
                input_tokens: u
                    .get("promptTokenCount")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                output_tokens: u
                    .get("candidatesTokenCount")
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
                    + u.get("thoughtsTokenCount")
                        .and_then(Value::as_u64)
                        .unwrap_or(0),
            }));
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), Fault> {
        match &self.finished {
            Some(reason) => {
                if !self.stop_sent {
                    self.stop_sent = true;
                    out.push(ModelEvent::Stop(reason.clone()));
                }
                Ok(())
            }
            None => Err(Fault::Cut(
                "the stream ended without a finish reason".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_is_cleaned_for_gemini() {
        let s = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "path": {"type": "string", "description": "p"},
                "limit": {"type": ["integer", "null"], "default": 3},
                "todos": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                          "properties": {"status": {"type": "string", "enum": ["pending", "done"]}}}}
            },
            "required": ["path"]
        });
        let c = sanitize_schema(&s);
        assert_eq!(
            c,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "p"},
                    "limit": {"type": "integer", "nullable": true},
                    "todos": {"type": "array", "items": {"type": "object",
                              "properties": {"status": {"type": "string", "enum": ["pending", "done"]}}}}
                },
                "required": ["path"]
            })
        );
    }
}
