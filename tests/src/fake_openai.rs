//! A fake OpenAI-compatible chat-completions server on 127.0.0.1 for the end-to-end
//! suite and the window bench: it streams Server-Sent Events exactly as the real API
//! does (text deltas, tool calls with their arguments in pieces, the finish reason, a
//! usage chunk, `[DONE]`), optionally paced token by token, and records every request
//! so a test can check what reached the model.
//!
//! What it answers is a function of the conversation: [`Script`] picks the reply by the
//! person's latest prompt and how many model turns followed it, so one app session can
//! run several independent flows.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One model turn to stream.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    pub text: String,
    /// `(id, name, JSON arguments)`.
    pub calls: Vec<(String, String, String)>,
    /// Pause between text pieces (one piece per token); none streams at once.
    pub token_delay: Option<Duration>,
    /// Split the text into pieces of this many characters (default: words).
    pub piece_chars: Option<usize>,
}

impl Turn {
    pub fn text(text: &str) -> Turn {
        Turn {
            text: text.to_string(),
            ..Turn::default()
        }
    }

    /// A turn that calls one tool.
    pub fn call(text: &str, id: &str, name: &str, args: Value) -> Turn {
        Turn {
            text: text.to_string(),
            calls: vec![(id.to_string(), name.to_string(), args.to_string())],
            ..Turn::default()
        }
    }
}

/// Replies keyed by a word in the person's latest prompt; the n-th model turn after
/// that prompt gets the n-th reply (the last one repeats).
#[derive(Debug, Clone, Default)]
pub struct Script {
    flows: Vec<(String, Vec<Turn>)>,
}

impl Script {
    pub fn new() -> Script {
        Script::default()
    }

    /// When the latest prompt contains `key`, answer with `turns` in order.
    pub fn flow(mut self, key: &str, turns: Vec<Turn>) -> Script {
        self.flows.push((key.to_string(), turns));
        self
    }

    fn reply(&self, body: &Value) -> Turn {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let last_user = messages.iter().rposition(|m| m["role"] == "user");
        let prompt = last_user
            .and_then(|i| messages[i]["content"].as_str())
            .unwrap_or("")
            .to_string();
        let turns_since = last_user
            .map(|i| {
                messages[i..]
                    .iter()
                    .filter(|m| m["role"] == "assistant")
                    .count()
            })
            .unwrap_or(0);
        for (key, turns) in &self.flows {
            if prompt.contains(key.as_str()) && !turns.is_empty() {
                return turns[turns_since.min(turns.len() - 1)].clone();
            }
        }
        Turn::text(&format!("(the fake model has no reply for: {prompt})"))
    }
}

fn chunk(delta: Value, finish: Value) -> String {
    let c = json!({
        "id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1_735_000_000,
        "model": "gpt-e2e",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
    });
    format!("data: {c}\n\n")
}

fn pieces(text: &str, size: Option<usize>) -> Vec<String> {
    match size {
        Some(n) if n > 0 => text
            .chars()
            .collect::<Vec<_>>()
            .chunks(n)
            .map(|c| c.iter().collect())
            .collect(),
        _ => text.split_inclusive(' ').map(str::to_string).collect(),
    }
}

/// The running server. Dropping it stops accepting connections.
pub struct FakeOpenAi {
    pub base_url: String,
    requests: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeOpenAi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeOpenAi {
    /// The app's arguments to open `project` with this server as its model provider
    /// (`openai`, model `gpt-e2e`).
    pub fn app_args(&self, project: &std::path::Path) -> Vec<String> {
        vec![
            project.display().to_string(),
            "--provider".into(),
            "openai".into(),
            "--base-url".into(),
            self.base_url.clone(),
            "--model".into(),
            "gpt-e2e".into(),
        ]
    }

    /// Starts the server on a free port of 127.0.0.1.
    pub async fn start(script: Script) -> std::io::Result<FakeOpenAi> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(script);
        let recorded = Arc::clone(&requests);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let script = Arc::clone(&script);
                let recorded = Arc::clone(&recorded);
                tokio::spawn(async move {
                    let _ = serve(stream, &script, &recorded).await;
                });
            }
        });
        Ok(FakeOpenAi {
            base_url: format!("http://{addr}/v1"),
            requests,
            task,
        })
    }

    /// Every request body received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The contents of every `tool` message of the latest request.
    pub fn last_tool_results(&self) -> Vec<String> {
        self.requests()
            .last()
            .and_then(|r| r["messages"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter(|m| m["role"] == "tool")
            .filter_map(|m| m["content"].as_str().map(str::to_string))
            .collect()
    }
}

async fn serve(
    mut stream: TcpStream,
    script: &Script,
    recorded: &Mutex<Vec<Value>>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let header_end = loop {
        let n = stream.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return Ok(());
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let headers: HashMap<String, String> = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < header_end + length {
        let n = stream.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body: Value = serde_json::from_slice(&buf[header_end..]).unwrap_or(Value::Null);
    recorded
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(body.clone());
    let turn = script.reply(&body);

    stream
        .write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
        )
        .await?;
    stream
        .write_all(chunk(json!({"role": "assistant", "content": ""}), Value::Null).as_bytes())
        .await?;
    // Paced on an absolute schedule, so timer slack does not slow the stream down.
    let start = tokio::time::Instant::now();
    for (i, piece) in pieces(&turn.text, turn.piece_chars).into_iter().enumerate() {
        stream
            .write_all(chunk(json!({"content": piece}), Value::Null).as_bytes())
            .await?;
        if let Some(d) = turn.token_delay {
            stream.flush().await?;
            tokio::time::sleep_until(start + d * (i as u32 + 1)).await;
        }
    }
    for (i, (id, name, args)) in turn.calls.iter().enumerate() {
        let mid = args.len() / 2;
        let mid = (mid..=args.len())
            .find(|&m| args.is_char_boundary(m))
            .unwrap_or(args.len());
        stream
            .write_all(
                chunk(
                    json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                                           "function": {"name": name, "arguments": &args[..mid]}}]}),
                    Value::Null,
                )
                .as_bytes(),
            )
            .await?;
        stream
            .write_all(
                chunk(
                    json!({"tool_calls": [{"index": i, "function": {"arguments": &args[mid..]}}]}),
                    Value::Null,
                )
                .as_bytes(),
            )
            .await?;
    }
    let finish = if turn.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    stream
        .write_all(chunk(json!({}), json!(finish)).as_bytes())
        .await?;
    let usage = json!({
        "id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1_735_000_000,
        "model": "gpt-e2e", "choices": [],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 34, "total_tokens": 1234}
    });
    stream
        .write_all(format!("data: {usage}\n\ndata: [DONE]\n\n").as_bytes())
        .await?;
    stream.flush().await?;
    stream.shutdown().await
}
