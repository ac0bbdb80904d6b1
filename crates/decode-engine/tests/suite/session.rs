//! Session transcripts: written per event, listed, resumed (the model sees the earlier
//! conversation), a cut last line skipped with a warning, one writer at a time.

use crate::fake_model;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use decode_core::decision::NoSurface;
use decode_engine::agent_loop::{AgentLoop, LoopConfig, LoopEvent, Outcome};
use decode_engine::providers::script::{Script, ScriptClient};
use decode_engine::providers::{Message, ToolCall};
use decode_engine::session::{conversation, SessionError, SessionStore, INTERRUPTED_RESULT};
use decode_policy::Mode;
use fake_model::*;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn a_run_is_written_event_by_event_and_resumed_with_its_conversation() {
    let data = tempfile::tempdir().unwrap();
    let store = SessionStore::new(data.path());
    let (dir, active) = project(Mode::Default);
    write(dir.path(), "notes.md", "remember the milk\n");
    let script: Script = serde_json::from_value(json!({"turns": [
        {"text": "Reading.", "tool_calls": [{"name": "read", "input": {"path": "notes.md"}}]},
        {"text": "It says: remember the milk."},
        {"text": "You asked about the milk."}
    ]}))
    .unwrap();
    let client = Arc::new(ScriptClient::new(script, Path::new("s.json")));
    let session = store
        .create(active.project_root(), "build", "default", "script/script")
        .unwrap();
    let id = session.id().to_string();
    let path = session.path().to_path_buf();
    let mut agent = AgentLoop::new(
        client.clone(),
        Arc::clone(&active),
        Arc::new(NoSurface {
            reason: "none".into(),
        }),
        LoopConfig::default(),
    )
    .with_transcript(session);
    assert_eq!(
        agent
            .run(Some("what do my notes say?"), CancellationToken::new())
            .await,
        Outcome::Completed
    );
    drop(agent);

    let recs = lines(&path);
    assert_eq!(recs[0]["type"], "session");
    assert_eq!(recs[0]["id"], id.as_str());
    assert_eq!(recs[1]["type"], "user_prompt");
    assert!(recs
        .iter()
        .all(|r| r["type"] == "session" || r["ts"].is_u64()));
    for t in [
        "turn_start",
        "text_delta",
        "assistant_message",
        "tool_call_started",
        "tool_result",
        "turn_end",
        "done",
    ] {
        assert!(recs.iter().any(|r| r["type"] == t), "no {t} record");
    }

    let list = store.list();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].id, id);
    assert_eq!(list[0].first_prompt, "what do my notes say?");
    assert_eq!(list[0].project, active.project_root());

    // Resume: the model sees the earlier conversation.
    let resumed = store.open(&id).unwrap();
    assert!(resumed.warnings.is_empty());
    assert_eq!(resumed.messages.len(), 4);
    assert_eq!(
        resumed.messages[0],
        Message::User {
            text: "what do my notes say?".into()
        }
    );
    let mut agent = AgentLoop::new(
        client,
        Arc::clone(&active),
        Arc::new(NoSurface {
            reason: "none".into(),
        }),
        LoopConfig::default(),
    )
    .with_history(resumed.messages)
    .with_transcript(resumed.session);
    // The script picks turn 3 because the conversation already holds two model turns.
    assert_eq!(
        agent
            .run(Some("and what did I ask?"), CancellationToken::new())
            .await,
        Outcome::Completed
    );
    match agent.messages().last() {
        Some(Message::Assistant { text, .. }) => assert_eq!(text, "You asked about the milk."),
        other => panic!("{other:?}"),
    }
    drop(agent);
    let again = store.open(&id).unwrap();
    assert_eq!(again.messages.len(), 6);
}

#[test]
fn a_cut_last_line_is_skipped_with_a_warning_and_appending_goes_on() {
    let data = tempfile::tempdir().unwrap();
    let store = SessionStore::new(data.path());
    let mut s = store
        .create(Path::new("/p"), "build", "default", "m")
        .unwrap();
    s.append(&LoopEvent::UserPrompt { text: "hi".into() })
        .unwrap();
    let id = s.id().to_string();
    let path = s.path().to_path_buf();
    drop(s);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"type":"assistant_message","text":"hal"#)
        .unwrap();
    drop(f);

    let mut resumed = store.open(&id).unwrap();
    assert_eq!(resumed.warnings.len(), 1);
    assert!(
        resumed.warnings[0].contains("last line was cut off"),
        "{:?}",
        resumed.warnings
    );
    assert_eq!(resumed.messages, vec![Message::User { text: "hi".into() }]);
    resumed
        .session
        .append(&LoopEvent::UserPrompt {
            text: "again".into(),
        })
        .unwrap();
    drop(resumed);
    let again = store.open(&id).unwrap();
    assert_eq!(again.messages.len(), 2, "{:?}", again.messages);
    assert_eq!(again.warnings.len(), 1);
    assert!(again.warnings[0].contains("line 3"), "{:?}", again.warnings);
}

#[test]
fn calls_that_never_finished_get_an_interrupted_result() {
    let call = |id: &str| ToolCall {
        id: id.into(),
        name: "bash".into(),
        input: json!({"command": "sleep 100"}),
        invalid_input: None,
        signature: None,
    };
    let events = vec![
        LoopEvent::UserPrompt { text: "go".into() },
        LoopEvent::AssistantMessage {
            text: String::new(),
            tool_calls: vec![call("a"), call("b")],
        },
        LoopEvent::ToolResult {
            id: "b".into(),
            name: "bash".into(),
            content: "done".into(),
            is_error: false,
            ran: true,
            verdict: None,
            answer: None,
            note: None,
            diff: None,
            edited_command: None,
            sandboxed: None,
            exit_code: None,
            duration_ms: None,
            stopped: false,
        },
    ];
    let messages = conversation(&events);
    assert_eq!(messages.len(), 3);
    let Message::Tool { results } = &messages[2] else {
        panic!()
    };
    assert_eq!(results[0].call_id, "a");
    assert_eq!(results[0].content, INTERRUPTED_RESULT);
    assert!(results[0].is_error);
    assert_eq!(results[1].content, "done");
}

#[test]
fn one_writer_at_a_time_and_clear_errors() {
    let data = tempfile::tempdir().unwrap();
    let store = SessionStore::new(data.path());
    let s = store
        .create(Path::new("/p"), "build", "default", "m")
        .unwrap();
    let id = s.id().to_string();
    assert!(matches!(store.open(&id), Err(SessionError::Busy { .. })));
    drop(s);
    assert!(store.open(&id).is_ok());
    assert!(matches!(
        store.open("../x"),
        Err(SessionError::BadId { .. })
    ));
    let e = store.open("20990101-000000-000-0000").unwrap_err();
    assert!(matches!(e, SessionError::NotFound { .. }));
    assert!(e
        .to_string()
        .starts_with("no session `20990101-000000-000-0000`"));
}

#[test]
fn ids_sort_by_creation_time() {
    let data = tempfile::tempdir().unwrap();
    let store = SessionStore::new(data.path());
    let a = store
        .create(Path::new("/p"), "b", "d", "m")
        .unwrap()
        .id()
        .to_string();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let b = store
        .create(Path::new("/p"), "b", "d", "m")
        .unwrap()
        .id()
        .to_string();
    assert!(b > a, "{a} {b}");
    assert_eq!(store.list().len(), 2);
}
