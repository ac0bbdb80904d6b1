//! `ChatSession`: the window's chat — a prompt runs the loop on a new transcript (the
//! JSONL `decode run --resume` reads), usage adds up, a second prompt while one runs
//! is refused, Stop ends it, and without a provider the chat says how to set one up.

use crate::fake_model;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use decode_engine::agent_loop::{LoopConfig, LoopEvent, Outcome};
use decode_engine::channel::DecisionChannel;
use decode_engine::chat::{ChatSession, ChatSetup};
use decode_engine::providers::script::{Script, ScriptClient};
use decode_engine::providers::ModelClient;
use decode_engine::session::SessionStore;
use decode_policy::Mode;
use decode_protocol::{ChatStatus, ErrorKind};
use fake_model::{project, TempProject};
use serde_json::{json, Value};

fn script(turns: Value) -> Arc<dyn ModelClient> {
    let script: Script = serde_json::from_value(json!({ "turns": turns })).unwrap();
    Arc::new(ScriptClient::new(script, Path::new("test-script.json")))
}

fn chat(
    client: Option<Arc<dyn ModelClient>>,
    mode: Mode,
) -> (TempProject, tempfile::TempDir, Arc<ChatSession>) {
    let (dir, active) = project(mode);
    let data = tempfile::tempdir().unwrap();
    let setup = match client {
        Some(client) => ChatSetup::Ready {
            client,
            config: LoopConfig::default(),
        },
        None => ChatSetup::Missing {
            cause: String::new(),
            problem: "No model provider is configured: start Decode with --provider".into(),
        },
    };
    let chat = ChatSession::new(
        active,
        Arc::new(DecisionChannel::new()),
        SessionStore::new(data.path()),
        setup,
        None,
    );
    (dir, data, Arc::new(chat))
}

type Events = Arc<Mutex<Vec<LoopEvent>>>;

fn recorder() -> (Events, decode_engine::agent_loop::EventSink) {
    let events: Events = Arc::default();
    let e = Arc::clone(&events);
    (
        events,
        Arc::new(move |ev: &LoopEvent| e.lock().unwrap().push(ev.clone())),
    )
}

#[tokio::test]
async fn a_prompt_runs_on_a_transcript_that_decode_run_can_resume() {
    let (_dir, data, chat) = chat(
        Some(script(
            json!([{"text": "Hello there."}, {"text": "Again."}]),
        )),
        Mode::Default,
    );
    let statuses: Arc<Mutex<Vec<ChatStatus>>> = Arc::default();
    let s = Arc::clone(&statuses);
    chat.on_status(Arc::new(move |st: &ChatStatus| {
        s.lock().unwrap().push(st.clone())
    }));
    assert_eq!(chat.status().provider.as_deref(), Some("script"));

    let (events, sink) = recorder();
    let run = chat.start("hi", sink).unwrap();
    assert!(chat.running());
    assert_eq!(run.await, Outcome::Completed);
    assert!(!chat.running());
    let texts: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            LoopEvent::TextDelta { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(texts.concat(), "Hello there.");

    let id = chat.status().session_id.expect("a session id");
    let seen = statuses.lock().unwrap().clone();
    assert!(seen.iter().any(|s| s.running));
    assert!(!seen.last().unwrap().running);

    // A second prompt continues the same conversation and transcript.
    let (_events, sink) = recorder();
    assert_eq!(chat.start("more", sink).unwrap().await, Outcome::Completed);
    assert_eq!(chat.status().session_id.as_deref(), Some(id.as_str()));
    drop(chat);
    let resumed = SessionStore::new(data.path()).open(&id).unwrap();
    assert_eq!(resumed.messages.len(), 4, "{:?}", resumed.messages);
}

#[tokio::test]
async fn a_second_prompt_while_one_runs_is_refused_and_stop_ends_it() {
    let (_dir, _data, chat) = chat(
        Some(script(
            json!([{"tool_calls": [{"name": "sleep", "input": {"seconds": 30}}]}, {"text": "slept"}]),
        )),
        Mode::Default,
    );
    let (_events, sink1) = recorder();
    let run = tokio::spawn(chat.start("sleep please", sink1).unwrap());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_e, sink2) = recorder();
    let err = chat.start("again", sink2).err().unwrap();
    assert_eq!(err.kind, ErrorKind::Busy);
    assert!(chat.stop());
    let outcome = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome, Outcome::Cancelled);
    assert!(!chat.running());
    assert!(!chat.stop(), "nothing runs any more");
}

#[tokio::test]
async fn without_a_provider_the_chat_says_how_to_set_one_up() {
    let (_dir, _data, chat) = chat(None, Mode::Default);
    let status = chat.status();
    assert!(status.provider.is_none());
    assert!(status.setup_problem.unwrap().contains("--provider"));
    let (_e, sink) = recorder();
    let err = chat.start("hello", sink).err().unwrap();
    assert_eq!(err.kind, ErrorKind::NoProvider);
    assert!(!chat.running());
    let (_e, sink) = recorder();
    assert_eq!(
        chat.start("   ", sink).err().unwrap().kind,
        ErrorKind::InvalidInput
    );
}

#[tokio::test]
async fn usage_adds_up_over_turns() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(fake_model::sse(fake_model::openai_turn("Hi.", &[])))
        .mount(&server)
        .await;
    let client = fake_model::client(
        decode_engine::providers::ProviderKind::Openai,
        &server.uri(),
        fake_model::fast_policy(),
    );
    let (_dir, _data, chat) = chat(Some(client), Mode::Default);
    for _ in 0..2 {
        let (_e, sink) = recorder();
        chat.start("hi", sink).unwrap().await;
    }
    let usage = chat.status().usage;
    assert_eq!((usage.input_tokens, usage.output_tokens), (240, 60));
}

struct NoKeys;

impl decode_engine::config::SecretStore for NoKeys {
    fn get(
        &self,
        _: decode_engine::providers::ProviderKind,
    ) -> Result<Option<decode_engine::config::ApiKey>, decode_engine::config::KeyError> {
        Ok(None)
    }
    fn set(
        &self,
        _: decode_engine::providers::ProviderKind,
        _: &decode_engine::config::ApiKey,
    ) -> Result<(), decode_engine::config::KeyError> {
        Ok(())
    }
    fn delete(
        &self,
        _: decode_engine::providers::ProviderKind,
    ) -> Result<bool, decode_engine::config::KeyError> {
        Ok(false)
    }
}

#[test]
fn the_setup_comes_from_the_config_and_the_flags_or_says_how_to_fix_it() {
    use decode_engine::config::Overrides;
    use decode_engine::providers::ProviderKind;
    let dir = tempfile::tempdir().unwrap();
    let none = |_: &str| None;
    let problem = |s: ChatSetup| match s {
        ChatSetup::Missing { problem, .. } => problem,
        ChatSetup::Ready { .. } => panic!("expected no provider"),
    };

    let p = problem(ChatSetup::resolve(
        dir.path(),
        &Overrides::default(),
        &none,
        &NoKeys,
    ));
    assert!(p.contains("--provider openai --base-url"), "{p}");
    assert!(p.contains("config.json"), "{p}");

    // A remote provider without a key says which variable to set.
    let flags = Overrides {
        provider: Some(ProviderKind::Anthropic),
        ..Overrides::default()
    };
    let p = problem(ChatSetup::resolve(dir.path(), &flags, &none, &NoKeys));
    assert!(p.contains("ANTHROPIC_API_KEY"), "{p}");

    // A malformed config is named with its line, and left alone.
    std::fs::write(dir.path().join("config.json"), "{\"provider\": ").unwrap();
    let p = problem(ChatSetup::resolve(
        dir.path(),
        &Overrides::default(),
        &none,
        &NoKeys,
    ));
    assert!(p.contains("config.json:1:"), "{p}");

    // A local OpenAI-compatible server needs no key.
    std::fs::write(
        dir.path().join("config.json"),
        r#"{"provider": "openai", "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "maxTurns": 7}"#,
    )
    .unwrap();
    match ChatSetup::resolve(dir.path(), &Overrides::default(), &none, &NoKeys) {
        ChatSetup::Ready { client, config } => {
            assert_eq!(client.info().model, "m");
            assert_eq!(config.max_turns, 7);
        }
        ChatSetup::Missing { problem, .. } => panic!("{problem}"),
    }
}

#[tokio::test]
async fn a_released_chat_lets_go_of_its_transcript_and_takes_it_back_when_reopened() {
    let (_dir, data, chat) = chat(
        Some(script(
            json!([{"text": "One."}, {"text": "Two, still the same session."}]),
        )),
        Mode::Default,
    );
    let (_, sink) = recorder();
    chat.start("first", sink).unwrap().await;
    let id = chat.session_id().unwrap();
    let store = SessionStore::new(data.path());
    assert!(store.open(&id).is_err(), "the transcript is in use");

    assert!(chat.try_release());
    // Nothing starts on a released chat; its transcript is free for another.
    let (_, sink) = recorder();
    let refused = chat.start("lost?", sink).err().unwrap();
    assert_eq!(refused.kind, ErrorKind::Busy);
    let other = store.open(&id).unwrap();
    drop(other);

    // The switch failed: the chat is back, on the same transcript and history.
    chat.reopen();
    let (events, sink) = recorder();
    chat.start("second", sink).unwrap().await;
    assert_eq!(chat.session_id().as_deref(), Some(id.as_str()));
    let texts: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            LoopEvent::TextDelta { text } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(
        texts.concat().contains("Two, still the same session."),
        "{texts:?}"
    );
    assert_eq!(store.list().len(), 1);
}

#[tokio::test]
async fn a_running_chat_is_not_released() {
    let (_dir, _data, chat) = chat(
        Some(script(json!([{"text": "slow", "delay_ms": 5000}]))),
        Mode::Default,
    );
    let (_, sink) = recorder();
    let run = chat.start("go", sink).unwrap();
    let handle = tokio::spawn(run);
    assert!(!chat.try_release());
    chat.stop();
    let _ = handle.await;
    assert!(chat.try_release());
}
