//! Model providers behind one trait (README, "Providers, config and keys").
//!
//! [`ModelClient::stream`] sends one model turn — the system prompt, the conversation
//! and the tools offered — and returns a [`ModelStream`] of provider-neutral
//! [`ModelEvent`]s: text deltas, tool calls (start, argument deltas, end), usage, the
//! stop reason, retry notices and at most one final error.
//!
//! The three HTTP providers (Gemini `streamGenerateContent` SSE, Anthropic Messages SSE,
//! OpenAI-compatible chat completions SSE) share one driver ([`http`]) that owns retries
//! ([`retry`]), timeouts and the translation of every failure into one sentence a person
//! understands ([`ProviderError`]). The [`script`] provider replays a file of turns for
//! tests and offline demos.

pub mod anthropic;
pub mod gemini;
mod http;
pub mod openai;
pub mod retry;
pub mod script;
pub mod sse;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::secret::ApiKey;
use decode_protocol::ErrorKind;
pub use decode_protocol::{Message, StopReason, ToolCall, ToolOutput, Usage};
pub use retry::RetryPolicy;

/// Which provider speaks to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Google Gemini (`streamGenerateContent?alt=sse`).
    Gemini,
    /// Anthropic Messages API.
    Anthropic,
    /// Any OpenAI-compatible chat-completions server: OpenAI, Ollama, llama.cpp server,
    /// LM Studio, vLLM, OpenRouter.
    Openai,
    /// Replays model turns from a JSON file (`--script FILE`).
    Script,
}

impl ProviderKind {
    /// Every provider, in the order the help text lists them.
    pub const ALL: [ProviderKind; 4] = [
        ProviderKind::Gemini,
        ProviderKind::Anthropic,
        ProviderKind::Openai,
        ProviderKind::Script,
    ];

    /// The name used on the command line, in the config and as the keyring user.
    pub fn name(self) -> &'static str {
        decode_policy::serde_name(&self)
    }

    /// Parses a provider name (any case; `openai-compatible`, `ollama` and `google` are
    /// accepted as aliases).
    pub fn from_name(name: &str) -> Option<ProviderKind> {
        match name.trim().to_ascii_lowercase().as_str() {
            "gemini" | "google" => Some(ProviderKind::Gemini),
            "anthropic" | "claude" => Some(ProviderKind::Anthropic),
            "openai" | "openai-compatible" | "ollama" => Some(ProviderKind::Openai),
            "script" => Some(ProviderKind::Script),
            _ => None,
        }
    }

    /// The provider's usual API-key environment variable (README, "Providers, config and keys").
    pub fn env_var(self) -> Option<&'static str> {
        match self {
            ProviderKind::Gemini => Some("GEMINI_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Openai => Some("OPENAI_API_KEY"),
            ProviderKind::Script => None,
        }
    }

    /// The model used when neither the config nor `--model` names one.
    pub fn default_model(self) -> Option<&'static str> {
        match self {
            ProviderKind::Gemini => Some("gemini-2.5-flash"),
            ProviderKind::Anthropic => Some("claude-sonnet-4-5"),
            ProviderKind::Openai => Some("gpt-4.1"),
            ProviderKind::Script => Some("script"),
        }
    }

    /// The base URL used when neither the config nor `--base-url` gives one.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Gemini => gemini::DEFAULT_BASE_URL,
            ProviderKind::Anthropic => anthropic::DEFAULT_BASE_URL,
            ProviderKind::Openai => openai::DEFAULT_BASE_URL,
            ProviderKind::Script => "",
        }
    }
}

impl From<decode_protocol::ProviderName> for ProviderKind {
    fn from(name: decode_protocol::ProviderName) -> ProviderKind {
        use decode_protocol::ProviderName as N;
        match name {
            N::Gemini => ProviderKind::Gemini,
            N::Anthropic => ProviderKind::Anthropic,
            N::Openai => ProviderKind::Openai,
            N::Script => ProviderKind::Script,
        }
    }
}

impl From<ProviderKind> for decode_protocol::ProviderName {
    fn from(kind: ProviderKind) -> decode_protocol::ProviderName {
        use decode_protocol::ProviderName as N;
        match kind {
            ProviderKind::Gemini => N::Gemini,
            ProviderKind::Anthropic => N::Anthropic,
            ProviderKind::Openai => N::Openai,
            ProviderKind::Script => N::Script,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ProviderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProviderKind::from_name(s).ok_or_else(|| {
            format!("unknown provider `{s}` (providers: gemini, anthropic, openai, script)")
        })
    }
}

/// Whether a base URL points at this machine (Ollama, llama.cpp, LM Studio, vLLM run
/// locally need no API key).
pub fn is_local_url(base_url: &str) -> bool {
    let rest = base_url
        .split_once("://")
        .map(|(_, r)| r)
        .unwrap_or(base_url);
    let host_port = rest.split('/').next().unwrap_or("");
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host == "::1"
        || host.starts_with("127.")
        || host == "0.0.0.0"
}

// ---------------------------------------------------------------------------------
// The conversation

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the input object.
    pub input_schema: Value,
}

/// One model turn to send.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRequest {
    /// The system prompt (the active agent's prompt, with AGENTS.md/CLAUDE.md).
    pub system: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Exactly the tools the active agent offers.
    pub tools: Vec<ToolSpec>,
    /// The most output tokens the model may produce in this turn.
    pub max_output_tokens: u32,
}

/// The default `max_output_tokens` of a turn.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8192;

// ---------------------------------------------------------------------------------
// Events

/// What a model stream reports.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// Text for the person.
    TextDelta { text: String },
    /// A tool call begins. `index` identifies it among this turn's calls.
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
        signature: Option<String>,
    },
    /// More of a tool call's JSON arguments.
    ToolCallDelta { index: usize, json: String },
    /// A tool call is complete.
    ToolCallEnd { index: usize },
    /// Token usage (may come more than once; the later counts win).
    Usage(Usage),
    /// The turn ended normally.
    Stop(StopReason),
    /// A request failed and will be tried again after `delay_ms`.
    Retrying {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    /// The turn failed; nothing follows.
    Error(ProviderError),
}

/// A stream of [`ModelEvent`]s for one turn. Ends after [`ModelEvent::Stop`] (and any
/// usage that follows it), after [`ModelEvent::Error`], or when the turn is cancelled.
pub struct ModelStream {
    rx: mpsc::Receiver<ModelEvent>,
}

impl ModelStream {
    /// A stream fed by the other end of a channel.
    pub fn from_receiver(rx: mpsc::Receiver<ModelEvent>) -> ModelStream {
        ModelStream { rx }
    }

    /// A stream of exactly these events.
    pub fn from_events(events: Vec<ModelEvent>) -> ModelStream {
        let (tx, rx) = mpsc::channel(events.len().max(1));
        for e in events {
            // The channel is big enough for every event.
            let _ = tx.try_send(e);
        }
        ModelStream { rx }
    }

    /// The next event; `None` when the turn is over.
    pub async fn next(&mut self) -> Option<ModelEvent> {
        self.rx.recv().await
    }
}

/// Identifies a model client: provider, model and where it is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelInfo {
    pub provider: ProviderKind,
    pub model: String,
    /// The base URL (the script file for the script provider).
    pub base_url: String,
}

/// A model provider.
pub trait ModelClient: Send + Sync {
    /// Provider, model and base URL.
    fn info(&self) -> ModelInfo;

    /// How many tokens the model's context holds (estimated when not configured).
    fn context_tokens(&self) -> usize {
        let info = self.info();
        default_context_tokens(info.provider, &info.model)
    }

    /// Starts one model turn. Never blocks: failures arrive as [`ModelEvent::Error`].
    /// Cancelling `cancel` ends the stream (and the HTTP request) at once.
    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> ModelStream;

    /// The same client trying once, with a short wait for each chunk (for "Test
    /// connection": a failure is reported at once, not after every retry). `None`
    /// when it has nothing to retry.
    fn single_try(&self) -> Option<Arc<dyn ModelClient>> {
        None
    }

    /// The client a subagent of the catalog agent `agent` uses, asking for `model`
    /// (`None`: this client's model), when this provider decides it itself (the
    /// script provider replays the subagent's own turns). `None`: the agent loop
    /// decides (this client, or the same provider configuration with `model`).
    fn for_subagent(&self, agent: &str, model: Option<&str>) -> Option<Arc<dyn ModelClient>> {
        let _ = (agent, model);
        None
    }
}

/// A rough context size per model when the config does not give `contextTokens`.
pub fn default_context_tokens(provider: ProviderKind, model: &str) -> usize {
    let m = model.to_ascii_lowercase();
    match provider {
        ProviderKind::Anthropic => 200_000,
        ProviderKind::Gemini => 1_000_000,
        ProviderKind::Script => 200_000,
        ProviderKind::Openai => {
            if m.contains("gpt-4.1") {
                1_000_000
            } else if m.contains("gpt-5") {
                400_000
            } else if m.starts_with("o1") || m.starts_with("o3") || m.starts_with("o4") {
                200_000
            } else if m.contains("gpt-4o") || m.contains("gpt-4-turbo") {
                128_000
            } else if m.contains("claude") {
                200_000
            } else if m.contains("gemini") {
                1_000_000
            } else {
                // Local models (Ollama, llama.cpp, …): a conservative guess.
                32_768
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Errors

/// What kind of failure a [`ProviderError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderErrorKind {
    /// 401/403 or an invalid key.
    Auth,
    /// 404: unknown model or wrong base URL.
    NotFound,
    /// 429 after every retry.
    RateLimited,
    /// 5xx (or the provider's "overloaded") after every retry.
    Server,
    /// 400 and other client errors.
    BadRequest,
    /// The server could not be reached.
    Connect,
    /// The server stopped answering.
    Timeout,
    /// The stream broke in the middle of the answer.
    StreamCut,
    /// The response could not be read.
    BadResponse,
    /// Missing key, bad base URL, unreadable script: fixed by the person's setup.
    Config,
    /// The script provider ran out of turns or replayed an error turn.
    Script,
}

/// A provider failure, as one sentence for the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderError {
    pub kind: ProviderErrorKind,
    /// The HTTP status, when there was one.
    pub status: Option<u16>,
    /// One sentence.
    pub message: String,
}

impl ProviderError {
    pub fn new(kind: ProviderErrorKind, message: impl Into<String>) -> ProviderError {
        ProviderError {
            kind,
            status: None,
            message: message.into(),
        }
    }

    /// The kind as the surfaces know it (one enum for every error crossing to the UI).
    pub fn error_kind(&self) -> ErrorKind {
        match self.kind {
            ProviderErrorKind::Auth => ErrorKind::Auth,
            ProviderErrorKind::NotFound => ErrorKind::NotFound,
            ProviderErrorKind::RateLimited => ErrorKind::RateLimited,
            ProviderErrorKind::Server => ErrorKind::Server,
            ProviderErrorKind::BadRequest => ErrorKind::BadRequest,
            ProviderErrorKind::Connect => ErrorKind::Connect,
            ProviderErrorKind::Timeout => ErrorKind::Timeout,
            ProviderErrorKind::StreamCut => ErrorKind::StreamCut,
            ProviderErrorKind::BadResponse => ErrorKind::BadResponse,
            ProviderErrorKind::Config => ErrorKind::Config,
            ProviderErrorKind::Script => ErrorKind::Script,
        }
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ProviderError {}

// ---------------------------------------------------------------------------------
// Building a client

/// Everything needed to connect to a provider.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    pub kind: ProviderKind,
    pub model: String,
    /// Base URL including the API version (`…/v1`, `…/v1beta`).
    pub base_url: String,
    /// The API key, when the provider needs one.
    pub api_key: Option<ApiKey>,
    /// The script file (script provider only).
    pub script: Option<PathBuf>,
    /// Retries, backoff and timeouts.
    pub retry: RetryPolicy,
    /// The configured context size (`contextTokens`), if any.
    pub context_tokens: Option<usize>,
}

impl ProviderSettings {
    /// Settings for `kind` with its default model and base URL and no key.
    pub fn new(kind: ProviderKind) -> ProviderSettings {
        ProviderSettings {
            kind,
            model: kind.default_model().unwrap_or_default().to_string(),
            base_url: kind.default_base_url().to_string(),
            api_key: None,
            script: None,
            retry: RetryPolicy::default(),
            context_tokens: None,
        }
    }
}

/// Builds the client for `settings`. Fails (one sentence) when the setup is incomplete:
/// a script provider without a readable script, a bad base URL.
pub fn connect(settings: &ProviderSettings) -> Result<Arc<dyn ModelClient>, ProviderError> {
    match settings.kind {
        ProviderKind::Script => {
            let path = settings.script.as_ref().ok_or_else(|| {
                ProviderError::new(
                    ProviderErrorKind::Config,
                    "the script provider needs a script file: pass --script FILE",
                )
            })?;
            Ok(Arc::new(script::ScriptClient::load(path)?))
        }
        ProviderKind::Openai => Ok(Arc::new(http::HttpClient::new(
            openai::OpenAiWire::new(settings),
            settings,
        )?)),
        ProviderKind::Anthropic => Ok(Arc::new(http::HttpClient::new(
            anthropic::AnthropicWire::new(settings),
            settings,
        )?)),
        ProviderKind::Gemini => Ok(Arc::new(http::HttpClient::new(
            gemini::GeminiWire::new(settings),
            settings,
        )?)),
    }
}

/// Collects the tool calls of one turn from the stream's start/delta/end events.
#[derive(Debug, Default)]
pub struct ToolCallAssembler {
    calls: Vec<(usize, PartialCall)>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    json: String,
    signature: Option<String>,
    ended: bool,
}

impl ToolCallAssembler {
    /// Feeds one event; returns true when it was a tool-call event.
    pub fn feed(&mut self, event: &ModelEvent) -> bool {
        match event {
            ModelEvent::ToolCallStart {
                index,
                id,
                name,
                signature,
            } => {
                let call = self.entry(*index);
                call.id.clone_from(id);
                call.name.clone_from(name);
                call.signature.clone_from(signature);
                true
            }
            ModelEvent::ToolCallDelta { index, json } => {
                self.entry(*index).json.push_str(json);
                true
            }
            ModelEvent::ToolCallEnd { index } => {
                self.entry(*index).ended = true;
                true
            }
            _ => false,
        }
    }

    fn entry(&mut self, index: usize) -> &mut PartialCall {
        let pos = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(p) => p,
            None => {
                self.calls.push((index, PartialCall::default()));
                self.calls.len() - 1
            }
        };
        &mut self.calls[pos].1
    }

    /// Whether a call was started but not ended.
    pub fn has_open_call(&self) -> bool {
        self.calls.iter().any(|(_, c)| !c.ended)
    }

    /// The calls in the order they started. Arguments that are not a JSON object are
    /// kept in [`ToolCall::invalid_input`] (with `input` null) so the loop can tell the
    /// model; empty arguments mean `{}`.
    pub fn finish(self) -> Vec<ToolCall> {
        self.calls
            .into_iter()
            .map(|(i, c)| {
                let id = if c.id.is_empty() {
                    synthetic_call_id(i)
                } else {
                    c.id
                };
                let trimmed = c.json.trim();
                let (input, invalid_input) = if trimmed.is_empty() {
                    (Value::Object(Default::default()), None)
                } else {
                    match serde_json::from_str::<Value>(trimmed) {
                        Ok(v @ Value::Object(_)) => (v, None),
                        _ => (Value::Null, Some(c.json)),
                    }
                };
                ToolCall {
                    id,
                    name: c.name,
                    input,
                    invalid_input,
                    signature: c.signature,
                }
            })
            .collect()
    }
}

/// The prefix of call ids Decode invents for providers that send none.
pub const SYNTHETIC_ID_PREFIX: &str = "decode_call_";

/// A call id for a provider that sends none (unique enough within a conversation).
pub fn synthetic_call_id(index: usize) -> String {
    format!("{SYNTHETIC_ID_PREFIX}{:08x}_{index}", fastrand::u32(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_urls() {
        assert!(is_local_url("http://localhost:11434/v1"));
        assert!(is_local_url("http://127.0.0.1:8080/v1"));
        assert!(is_local_url("http://[::1]:8000/v1"));
        assert!(!is_local_url("https://api.openai.com/v1"));
        assert!(!is_local_url("https://openrouter.ai/api/v1"));
    }

    #[test]
    fn provider_names() {
        assert_eq!(
            ProviderKind::from_name("OpenAI"),
            Some(ProviderKind::Openai)
        );
        assert_eq!(
            ProviderKind::from_name("ollama"),
            Some(ProviderKind::Openai)
        );
        assert!("nope".parse::<ProviderKind>().is_err());
        for k in ProviderKind::ALL {
            assert_eq!(ProviderKind::from_name(k.name()), Some(k));
        }
    }

    #[test]
    fn assembler_keeps_order_and_flags_bad_json() {
        let mut a = ToolCallAssembler::default();
        for e in [
            ModelEvent::ToolCallStart {
                index: 3,
                id: "a".into(),
                name: "read".into(),
                signature: None,
            },
            ModelEvent::ToolCallStart {
                index: 1,
                id: "".into(),
                name: "bash".into(),
                signature: None,
            },
            ModelEvent::ToolCallDelta {
                index: 3,
                json: "{\"path\":".into(),
            },
            ModelEvent::ToolCallDelta {
                index: 3,
                json: "\"x\"}".into(),
            },
            ModelEvent::ToolCallDelta {
                index: 1,
                json: "{oops".into(),
            },
            ModelEvent::ToolCallEnd { index: 3 },
        ] {
            assert!(a.feed(&e));
        }
        assert!(a.has_open_call());
        let calls = a.finish();
        assert_eq!(calls[0].name, "read");
        assert_eq!(calls[0].input, serde_json::json!({"path": "x"}));
        assert_eq!(calls[1].input, Value::Null);
        assert_eq!(calls[1].invalid_input.as_deref(), Some("{oops"));
        assert!(calls[1].id.starts_with(SYNTHETIC_ID_PREFIX));
    }
}
