//! The script provider (`--provider script --script FILE`): replays model turns from a
//! JSON file, for tests and offline demos of the gate.
//!
//! ```json
//! {"turns": [
//!   {"text": "Let me look at the README.",
//!    "tool_calls": [{"name": "read", "input": {"path": "README.md"}}]},
//!   {"text": "Now the fix.",
//!    "tool_calls": [{"name": "edit", "input": {"path": "src/lib.rs", "old_string": "a", "new_string": "b"}}]},
//!   {"text": "Done."}
//! ]}
//! ```
//!
//! A turn has `text` (streamed word by word), `tool_calls` (each `name` plus `input`
//! (an object) or `arguments` (the raw argument string, which may be invalid JSON), and
//! an optional `id`), `delay_ms` (a pause before the turn, cancellable) and `error` (the
//! turn fails with this message, as a provider failure would).
//!
//! Which turn is replayed is decided by the conversation, not by a counter: a request
//! whose conversation already holds N assistant messages gets turn N (0-based). So a
//! resumed session continues where it stopped, and a script is deterministic however
//! often it is run. After the last turn the model "runs out" and the request fails.
//!
//! `subagents` (optional) maps an agent name to the turns a subagent of that agent
//! replays when a `task` call starts it: `{"turns": […], "subagents": {"explore":
//! [{"text": "main is in src/main.rs"}]}}`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    Message, ModelClient, ModelEvent, ModelInfo, ModelRequest, ModelStream, ProviderError,
    ProviderErrorKind, ProviderKind, StopReason, Usage,
};

/// A script file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The model name shown (default `script`).
    #[serde(default)]
    pub model: Option<String>,
    /// The turns, in order.
    pub turns: Vec<ScriptTurn>,
    /// The turns of the subagents a `task` call starts, by agent name (each
    /// subagent of that name replays them from its first turn; docs/agents.md,
    /// "Subagents"). An agent without turns here runs out at once.
    #[serde(default)]
    pub subagents: std::collections::BTreeMap<String, Vec<ScriptTurn>>,
}

/// One scripted model turn.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptTurn {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub tool_calls: Vec<ScriptCall>,
    /// Milliseconds to wait before answering.
    #[serde(default)]
    pub delay_ms: u64,
    /// Fail this turn with this message.
    #[serde(default)]
    pub error: Option<String>,
}

/// One scripted tool call.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptCall {
    pub name: String,
    #[serde(default)]
    pub input: Option<Value>,
    /// Raw arguments (used instead of `input`; may be invalid JSON on purpose).
    #[serde(default)]
    pub arguments: Option<String>,
    #[serde(default)]
    pub id: Option<String>,
}

/// Replays a [`Script`].
pub struct ScriptClient {
    script: Script,
    path: PathBuf,
}

impl ScriptClient {
    /// Reads and checks a script file.
    pub fn load(path: &Path) -> Result<ScriptClient, ProviderError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ProviderError::new(
                ProviderErrorKind::Config,
                format!("could not read the script {}: {e}", path.display()),
            )
        })?;
        let script: Script = serde_json::from_str(&text).map_err(|e| {
            ProviderError::new(
                ProviderErrorKind::Config,
                format!(
                    "the script {} is not valid (line {}, column {}): {e}",
                    path.display(),
                    e.line(),
                    e.column()
                ),
            )
        })?;
        Ok(ScriptClient::new(script, path))
    }

    /// A client for an in-memory script (`path` is only shown).
    pub fn new(script: Script, path: &Path) -> ScriptClient {
        ScriptClient {
            script,
            path: path.to_path_buf(),
        }
    }

    fn events_for(&self, turn: &ScriptTurn, number: usize) -> Vec<ModelEvent> {
        let mut events = Vec::new();
        if let Some(message) = &turn.error {
            events.push(ModelEvent::Error(ProviderError::new(
                ProviderErrorKind::Script,
                format!("the script's turn {} failed: {message}", number + 1),
            )));
            return events;
        }
        for piece in split_words(&turn.text) {
            events.push(ModelEvent::TextDelta { text: piece });
        }
        for (index, call) in turn.tool_calls.iter().enumerate() {
            let json = match (&call.arguments, &call.input) {
                (Some(raw), _) => raw.clone(),
                (None, Some(v)) => v.to_string(),
                (None, None) => "{}".to_string(),
            };
            events.push(ModelEvent::ToolCallStart {
                index,
                id: call
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("script_{}_{}", number + 1, index + 1)),
                name: call.name.clone(),
                signature: None,
            });
            events.push(ModelEvent::ToolCallDelta { index, json });
            events.push(ModelEvent::ToolCallEnd { index });
        }
        events.push(ModelEvent::Usage(Usage {
            input_tokens: 0,
            output_tokens: (turn.text.len() / 4) as u64,
        }));
        events.push(ModelEvent::Stop(if turn.tool_calls.is_empty() {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        }));
        events
    }
}

/// Splits text into word-sized pieces that concatenate back to the text.
fn split_words(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        cur.push(c);
        if c == ' ' || c == '\n' {
            pieces.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        pieces.push(cur);
    }
    pieces
}

impl ModelClient for ScriptClient {
    fn for_subagent(&self, agent: &str, model: Option<&str>) -> Option<Arc<dyn ModelClient>> {
        let script = Script {
            model: model
                .map(str::to_string)
                .or_else(|| self.script.model.clone()),
            turns: self
                .script
                .subagents
                .get(agent)
                .cloned()
                .unwrap_or_default(),
            subagents: Default::default(),
        };
        Some(Arc::new(ScriptClient::new(script, &self.path)))
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            provider: ProviderKind::Script,
            model: self
                .script
                .model
                .clone()
                .unwrap_or_else(|| "script".to_string()),
            base_url: self.path.display().to_string(),
        }
    }

    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> ModelStream {
        let number = request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        let (turn, events) = match self.script.turns.get(number) {
            Some(turn) => (turn.clone(), self.events_for(turn, number)),
            None => (
                ScriptTurn::default(),
                vec![ModelEvent::Error(ProviderError::new(
                    ProviderErrorKind::Script,
                    format!(
                        "the script {} has no turn {}: it ends after {} turns",
                        self.path.display(),
                        number + 1,
                        self.script.turns.len()
                    ),
                ))],
            ),
        };
        let (tx, rx) = mpsc::channel(events.len().max(1));
        tokio::spawn(async move {
            if turn.delay_ms > 0 {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep(Duration::from_millis(turn.delay_ms)) => {}
                }
            }
            for e in events {
                if cancel.is_cancelled() || tx.send(e).await.is_err() {
                    return;
                }
            }
        });
        ModelStream::from_receiver(rx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_concatenate_back() {
        let t = "Hello there,\nworld  !";
        assert_eq!(split_words(t).concat(), t);
        assert!(split_words("").is_empty());
    }

    #[tokio::test]
    async fn turn_is_chosen_by_the_conversation() {
        let script: Script = serde_json::from_value(serde_json::json!({
            "turns": [{"text": "one", "tool_calls": [{"name": "read", "input": {"path": "a"}}]},
                      {"text": "two"}]
        }))
        .unwrap();
        let client = ScriptClient::new(script, Path::new("s.json"));
        let req = |messages| ModelRequest {
            system: String::new(),
            messages,
            tools: vec![],
            max_output_tokens: 10,
        };
        let mut s = client.stream(
            req(vec![
                Message::User { text: "hi".into() },
                Message::Assistant {
                    text: "one".into(),
                    tool_calls: vec![],
                },
            ]),
            CancellationToken::new(),
        );
        assert_eq!(
            s.next().await,
            Some(ModelEvent::TextDelta { text: "two".into() })
        );
        let mut s = client.stream(
            req(vec![
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![],
                };
                2
            ]),
            CancellationToken::new(),
        );
        match s.next().await {
            Some(ModelEvent::Error(e)) => assert!(e.message.contains("no turn 3"), "{e}"),
            other => panic!("{other:?}"),
        }
    }
}
