//! Test support for the providers and the loop: fake model servers (wiremock on
//! 127.0.0.1) speaking each provider's real streaming format (the formats themselves
//! are in `decode_test_support::wire`), temp projects, event recorders.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use decode_core::agents::Catalog;
use decode_core::settings::Settings;
use decode_core::state::ActiveState;
use decode_engine::agent_loop::{EventSink, LoopEvent};
use decode_engine::config::ApiKey;
use decode_engine::providers::{
    self, ModelClient, ModelEvent, ModelStream, ProviderKind, ProviderSettings, RetryPolicy,
};
use decode_policy::Mode;

pub(crate) use decode_test_support::wire::{
    anthropic_turn, body_json, gemini_turn, openai_turn, sse, Call, Seq,
};
pub(crate) use decode_test_support::TempProject;

/// A turn in the wire format of `kind`.
pub(crate) fn turn(kind: ProviderKind, text: &str, calls: &[Call<'_>]) -> String {
    match kind {
        ProviderKind::Openai => openai_turn(text, calls),
        ProviderKind::Anthropic => anthropic_turn(text, calls),
        ProviderKind::Gemini => gemini_turn(text, calls),
        ProviderKind::Script => unreachable!("the script provider has no wire format"),
    }
}

/// The request path of `kind` on a fake server.
pub(crate) fn api_path(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Openai => "/v1/chat/completions",
        ProviderKind::Anthropic => "/v1/messages",
        ProviderKind::Gemini => "/v1beta/models/gemini-test:streamGenerateContent",
        ProviderKind::Script => unreachable!(),
    }
}

/// The base URL of `kind` on a fake server.
pub(crate) fn base_url(kind: ProviderKind, server_uri: &str) -> String {
    match kind {
        ProviderKind::Gemini => format!("{server_uri}/v1beta"),
        _ => format!("{server_uri}/v1"),
    }
}

// ---------------------------------------------------------------------------------
// Clients

/// Retries that do not make tests slow.
pub(crate) fn fast_policy() -> RetryPolicy {
    RetryPolicy {
        max_tries: 5,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        max_retry_after: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(2),
    }
}

/// A client of `kind` for a fake server.
pub(crate) fn client(
    kind: ProviderKind,
    server_uri: &str,
    policy: RetryPolicy,
) -> Arc<dyn ModelClient> {
    let mut s = ProviderSettings::new(kind);
    s.base_url = base_url(kind, server_uri);
    s.model = match kind {
        ProviderKind::Gemini => "gemini-test".into(),
        ProviderKind::Anthropic => "claude-test".into(),
        _ => "gpt-test".into(),
    };
    s.api_key = Some(ApiKey::new("sk-test-key"));
    s.retry = policy;
    providers::connect(&s).expect("client")
}

/// Every event of a stream.
pub(crate) async fn collect(mut stream: ModelStream) -> Vec<ModelEvent> {
    let mut out = Vec::new();
    while let Some(e) = stream.next().await {
        out.push(e);
    }
    out
}

/// The text of the events.
pub(crate) fn text_of(events: &[ModelEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// Projects and events

/// A temp project (trusted) with the build agent in `mode`.
pub(crate) fn project(mode: Mode) -> (TempProject, Arc<ActiveState>) {
    let tmp = TempProject::new().unwrap();
    let root = tmp.project.clone();
    let (mut settings, _) = Settings::load(&root);
    // These tests ask about ordinary commands such as `echo hi`: read-only
    // commands (which run without asking) are off unless the settings turn
    // them on.
    settings.read_only_commands.get_or_insert(false);
    let (state, _) = ActiveState::new(&root, Catalog::load(&root), settings, true, &tmp.home);
    state.set_mode(mode);
    (tmp, Arc::new(state))
}

/// A temp project (trusted) whose `.decode/settings.json` holds `settings`.
pub(crate) fn project_with_settings(mode: Mode, settings: &str) -> (TempProject, Arc<ActiveState>) {
    let tmp = TempProject::new().unwrap();
    let root = tmp.project.clone();
    write(&root, ".decode/settings.json", settings);
    let (mut settings, _) = Settings::load(&root);
    // These tests ask about ordinary commands such as `echo hi`: read-only
    // commands (which run without asking) are off unless the settings turn
    // them on.
    settings.read_only_commands.get_or_insert(false);
    let (state, _) = ActiveState::new(&root, Catalog::load(&root), settings, true, &tmp.home);
    state.set_mode(mode);
    (tmp, Arc::new(state))
}

/// Writes a file in the project.
pub(crate) fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Collects loop events.
#[derive(Clone, Default)]
pub(crate) struct Recorder(pub Arc<Mutex<Vec<LoopEvent>>>);

impl Recorder {
    pub(crate) fn sink(&self) -> EventSink {
        let inner = Arc::clone(&self.0);
        Arc::new(move |e: &LoopEvent| inner.lock().unwrap().push(e.clone()))
    }

    pub(crate) fn events(&self) -> Vec<LoopEvent> {
        self.0.lock().unwrap().clone()
    }

    pub(crate) fn results(&self) -> Vec<LoopEvent> {
        self.events()
            .into_iter()
            .filter(|e| matches!(e, LoopEvent::ToolResult { .. }))
            .collect()
    }

    pub(crate) fn notices(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                LoopEvent::Notice { text } => Some(text),
                _ => None,
            })
            .collect()
    }
}
