//! The model providers' streaming wire formats, written by hand as the real APIs
//! send them (OpenAI chat completions, Anthropic Messages, Gemini
//! `streamGenerateContent?alt=sse`), and the wiremock responders that serve them.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::{json, Value};
use wiremock::{Request, Respond, ResponseTemplate};

/// A 200 `text/event-stream` response with this body.
pub fn sse(body: impl Into<String>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.into().into_bytes(), "text/event-stream")
}

/// Answers the requests in order with the given responses; the last one repeats.
pub struct Seq(Mutex<VecDeque<ResponseTemplate>>);

impl Seq {
    pub fn new(responses: Vec<ResponseTemplate>) -> Seq {
        Seq(Mutex::new(responses.into()))
    }
}

impl Respond for Seq {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let mut q = self.0.lock().unwrap();
        if q.len() > 1 {
            q.pop_front().unwrap()
        } else {
            q.front()
                .cloned()
                .unwrap_or_else(|| ResponseTemplate::new(500))
        }
    }
}

/// A request body as JSON.
pub fn body_json(req: &Request) -> Value {
    serde_json::from_slice(&req.body).expect("request body is JSON")
}

// ---------------------------------------------------------------------------------
// Wire formats, as the real APIs stream them

/// A tool call in a scripted turn: id, name, arguments (JSON text).
pub type Call<'a> = (&'a str, &'a str, &'a str);

fn halves(s: &str) -> (&str, &str) {
    let mut mid = s.len() / 2;
    while !s.is_char_boundary(mid) {
        mid += 1;
    }
    s.split_at(mid)
}

fn openai_chunk(delta: Value, finish: Value) -> String {
    let chunk = json!({
        "id": "chatcmpl-AbC123", "object": "chat.completion.chunk", "created": 1_735_000_000,
        "model": "gpt-4.1-2025-04-14", "system_fingerprint": "fp_3f5ea4",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        "usage": null
    });
    format!("data: {chunk}\n\n")
}

/// One OpenAI chat-completions turn: text in pieces, then the calls with their
/// arguments split in two deltas each (interleaved across calls, as parallel calls
/// stream), the finish reason, the usage chunk and `[DONE]`.
pub fn openai_turn(text: &str, calls: &[Call<'_>]) -> String {
    let mut out = openai_chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    for word in text.split_inclusive(' ') {
        out += &openai_chunk(json!({"content": word}), Value::Null);
    }
    for (i, (id, name, _)) in calls.iter().enumerate() {
        out += &openai_chunk(
            json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                                    "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        );
    }
    for (i, (_, _, args)) in calls.iter().enumerate() {
        out += &openai_chunk(
            json!({"tool_calls": [{"index": i, "function": {"arguments": halves(args).0}}]}),
            Value::Null,
        );
    }
    for (i, (_, _, args)) in calls.iter().enumerate() {
        out += &openai_chunk(
            json!({"tool_calls": [{"index": i, "function": {"arguments": halves(args).1}}]}),
            Value::Null,
        );
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out += &openai_chunk(json!({}), json!(finish));
    let usage = json!({
        "id": "chatcmpl-AbC123", "object": "chat.completion.chunk", "created": 1_735_000_000,
        "model": "gpt-4.1-2025-04-14", "choices": [],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    });
    out += &format!("data: {usage}\n\n");
    out += "data: [DONE]\n\n";
    out
}

fn anthropic_event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// One Anthropic Messages turn: message_start, a text block, one tool_use block per
/// call with `input_json_delta`s, message_delta, message_stop (and a ping).
pub fn anthropic_turn(text: &str, calls: &[Call<'_>]) -> String {
    let mut out = anthropic_event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
            "content": [], "model": "claude-sonnet-4-5-20250929", "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 472, "output_tokens": 2}}}),
    );
    let mut index = 0;
    if !text.is_empty() {
        out += &anthropic_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}}),
        );
        out += &anthropic_event("ping", json!({"type": "ping"}));
        for word in text.split_inclusive(' ') {
            out += &anthropic_event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": word}}),
            );
        }
        out += &anthropic_event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        );
        index = 1;
    }
    for (id, name, args) in calls {
        out += &anthropic_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        );
        let (a, b) = halves(args);
        for part in ["", a, b] {
            out += &anthropic_event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": part}}),
            );
        }
        out += &anthropic_event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out += &anthropic_event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": 89}}),
    );
    out += &anthropic_event("message_stop", json!({"type": "message_stop"}));
    out
}

/// One Gemini `streamGenerateContent?alt=sse` turn: text chunks, then one chunk
/// with every functionCall part, finishReason STOP and usageMetadata.
pub fn gemini_turn(text: &str, calls: &[Call<'_>]) -> String {
    let mut out = String::new();
    for word in text.split_inclusive(' ') {
        let chunk = json!({
            "candidates": [{"content": {"parts": [{"text": word}], "role": "model"}, "index": 0}],
            "usageMetadata": {"promptTokenCount": 300, "totalTokenCount": 300},
            "modelVersion": "gemini-2.5-flash", "responseId": "resp-1"
        });
        out += &format!("data: {chunk}\r\n\r\n");
    }
    let parts: Vec<Value> = calls
        .iter()
        .map(|(_, name, args)| {
            json!({"functionCall": {"name": name, "args": serde_json::from_str::<Value>(args).unwrap()},
                   "thoughtSignature": "c2lnbmF0dXJl"})
        })
        .collect();
    let last = json!({
        "candidates": [{"content": {"parts": if parts.is_empty() { vec![json!({"text": ""})] } else { parts }, "role": "model"},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 300, "candidatesTokenCount": 40, "totalTokenCount": 340},
        "modelVersion": "gemini-2.5-flash", "responseId": "resp-1"
    });
    out += &format!("data: {last}\r\n\r\n");
    out
}
