//! The agent loop end to end against fake model servers: multi-turn sessions with tool
//! calls (for each provider), parallel read-only calls, denials reaching the model,
//! malformed arguments, limits, cancellation, context shortening, mode switches.

use crate::fake_model;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use decode_core::decision::{DecisionSurface, NoSurface};
use decode_core::state::ActiveState;
use decode_engine::agent_loop::{AgentLoop, LoopConfig, LoopEvent, Outcome};
use decode_engine::providers::script::{Script, ScriptClient};
use decode_engine::providers::{ModelClient, ProviderKind};
use decode_policy::{Mode, Verdict};
use fake_model::*;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn no_surface() -> Arc<dyn DecisionSurface> {
    Arc::new(NoSurface {
        reason: "no terminal in this test".into(),
    })
}

async fn fake(kind: ProviderKind, turns: Vec<String>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(api_path(kind)))
        .respond_with(Seq::new(turns.into_iter().map(sse).collect()))
        .mount(&server)
        .await;
    server
}

async fn run(
    client: Arc<dyn ModelClient>,
    active: &Arc<ActiveState>,
    decisions: Arc<dyn DecisionSurface>,
    prompt: &str,
    config: LoopConfig,
) -> (Outcome, Recorder) {
    let rec = Recorder::default();
    let mut agent =
        AgentLoop::new(client, Arc::clone(active), decisions, config).with_sink(rec.sink());
    let outcome = agent.run(Some(prompt), CancellationToken::new()).await;
    (outcome, rec)
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(body_json)
        .collect()
}

/// Every text the model was sent in a request body, flattened (any provider).
fn sent_text(body: &Value) -> String {
    body.to_string()
}

async fn multi_turn(kind: ProviderKind) {
    let (dir, active) = project(Mode::Edit);
    let root = dir.path();
    write(root, "a.txt", "alpha\n");
    write(root, "b.txt", "beta\n");
    let server = fake(
        kind,
        vec![
            turn(
                kind,
                "I'll read both files. ",
                &[
                    ("call_1", "read", r#"{"path":"a.txt"}"#),
                    ("call_2", "read", r#"{"path":"b.txt"}"#),
                ],
            ),
            turn(
                kind,
                "Now the edit. ",
                &[(
                    "call_3",
                    "edit",
                    r#"{"path":"a.txt","old_string":"alpha","new_string":"ALPHA"}"#,
                )],
            ),
            turn(kind, "Done: a.txt now says ALPHA.", &[]),
        ],
    )
    .await;
    let (outcome, rec) = run(
        client(kind, &server.uri(), fast_policy()),
        &active,
        no_surface(),
        "uppercase alpha in a.txt",
        LoopConfig::default(),
    )
    .await;
    assert_eq!(outcome, Outcome::Completed, "{:#?}", rec.events());
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "ALPHA\n"
    );

    let events = rec.events();
    let starts: Vec<&LoopEvent> = events
        .iter()
        .filter(|e| matches!(e, LoopEvent::ToolCallStarted { .. }))
        .collect();
    assert_eq!(starts.len(), 3);
    for s in starts {
        let LoopEvent::ToolCallStarted { decision, .. } = s else {
            unreachable!()
        };
        assert_eq!(decision.as_ref().unwrap().verdict, Verdict::Allow);
    }
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, LoopEvent::TurnStart { .. }))
            .count(),
        3
    );
    assert!(matches!(
        events.last(),
        Some(LoopEvent::Done {
            outcome: Outcome::Completed,
            turns: 3
        })
    ));

    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 3);
    // The second turn sees both read results; the third sees the edit's result.
    let second = sent_text(&bodies[1]);
    assert!(
        second.contains("alpha") && second.contains("beta"),
        "{second}"
    );
    assert!(second.contains("uppercase alpha in a.txt"));
    let third = sent_text(&bodies[2]);
    assert!(third.contains("ALPHA"), "{third}");
    // Exactly the build agent's tools are offered.
    let tools = bodies[0].to_string();
    for t in ["read", "edit", "bash", "exit_plan_mode"] {
        assert!(tools.contains(&format!("\"{t}\"")), "{t} missing");
    }
}

#[tokio::test]
async fn multi_turn_session_openai() {
    multi_turn(ProviderKind::Openai).await;
}

#[tokio::test]
async fn multi_turn_session_anthropic() {
    multi_turn(ProviderKind::Anthropic).await;
}

#[tokio::test]
async fn multi_turn_session_gemini() {
    multi_turn(ProviderKind::Gemini).await;
}

#[tokio::test]
async fn read_only_calls_of_one_turn_run_in_parallel() {
    // The fake web server is on loopback: a rule names it (docs/network.md).
    let (_dir, active) = project_with_settings(
        Mode::Default,
        r#"{"permissions": {"allow": ["net(domain:127.0.0.1)"]}}"#,
    );
    let web = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw("slow page", "text/plain")
                .set_delay(Duration::from_millis(800)),
        )
        .mount(&web)
        .await;
    let a = json!({"url": format!("{}/one", web.uri())}).to_string();
    let b = json!({"url": format!("{}/two", web.uri())}).to_string();
    let server = fake(
        ProviderKind::Openai,
        vec![
            openai_turn("", &[("c1", "web_fetch", &a), ("c2", "web_fetch", &b)]),
            openai_turn("fetched", &[]),
        ],
    )
    .await;
    let start = Instant::now();
    let (outcome, rec) = run(
        client(ProviderKind::Openai, &server.uri(), fast_policy()),
        &active,
        no_surface(),
        "fetch both",
        LoopConfig::default(),
    )
    .await;
    assert_eq!(outcome, Outcome::Completed);
    assert!(
        start.elapsed() < Duration::from_millis(1500),
        "{:?}",
        start.elapsed()
    );
    let kinds: Vec<&str> = rec
        .events()
        .iter()
        .filter_map(|e| match e {
            LoopEvent::ToolCallStarted { .. } => Some("start"),
            LoopEvent::ToolResult { .. } => Some("result"),
            _ => None,
        })
        .collect::<Vec<_>>()
        .into_iter()
        .collect();
    assert_eq!(kinds, ["start", "start", "result", "result"]);
}

#[tokio::test]
async fn a_denial_reaches_the_model_and_ends_as_denied() {
    let (dir, active) = project(Mode::Auto);
    write(
        dir.path(),
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["bash(rm *)"]}}"#,
    );
    active.reload_settings();
    write(dir.path(), "build/out.o", "x");
    let server = fake(
        ProviderKind::Openai,
        vec![
            openai_turn("", &[("c1", "bash", r#"{"command":"rm -rf build"}"#)]),
            openai_turn("I am not allowed to delete build/.", &[]),
        ],
    )
    .await;
    let (outcome, rec) = run(
        client(ProviderKind::Openai, &server.uri(), fast_policy()),
        &active,
        no_surface(),
        "clean the build",
        LoopConfig::default(),
    )
    .await;
    assert_eq!(outcome, Outcome::Denied);
    assert_eq!(outcome.exit_code(), 3);
    assert!(dir.path().join("build/out.o").exists());
    let bodies = bodies(&server).await;
    let tool_msg = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(tool_msg["tool_call_id"], "c1");
    let content = tool_msg["content"].as_str().unwrap();
    assert!(
        content.starts_with("denied by the permission gate:"),
        "{content}"
    );
    assert!(content.contains("rm *"), "{content}");
    let LoopEvent::ToolResult { ran, verdict, .. } = &rec.results()[0] else {
        unreachable!()
    };
    assert!(!ran);
    assert_eq!(*verdict, Some(Verdict::Deny));
}

#[tokio::test]
async fn a_denial_the_model_gets_around_completes() {
    let (dir, active) = project(Mode::Default);
    write(dir.path(), "notes.md", "hello\n");
    let server = fake(
        ProviderKind::Openai,
        vec![
            openai_turn("", &[("c1", "bash", r#"{"command":"cat notes.md"}"#)]),
            openai_turn("", &[("c2", "read", r#"{"path":"notes.md"}"#)]),
            openai_turn("It says hello.", &[]),
        ],
    )
    .await;
    let (outcome, rec) = run(
        client(ProviderKind::Openai, &server.uri(), fast_policy()),
        &active,
        no_surface(),
        "what do the notes say?",
        LoopConfig::default(),
    )
    .await;
    assert_eq!(outcome, Outcome::Completed);
    // Nobody could answer the ask: the model was told why and how to allow it.
    let LoopEvent::ToolResult { content, ran, .. } = &rec.results()[0] else {
        unreachable!()
    };
    assert!(!ran);
    assert!(content.contains("no terminal in this test"), "{content}");
}

#[tokio::test]
async fn malformed_tool_arguments_are_a_tool_error_not_a_crash() {
    let (_dir, active) = project(Mode::Default);
    let server = fake(
        ProviderKind::Openai,
        vec![
            openai_turn("", &[("c1", "read", r#"{"path": "a.txt"#)]),
            openai_turn("", &[("c2", "frobnicate", r#"{}"#)]),
            openai_turn("Sorry about that.", &[]),
        ],
    )
    .await;
    let (outcome, rec) = run(
        client(ProviderKind::Openai, &server.uri(), fast_policy()),
        &active,
        no_surface(),
        "read a.txt",
        LoopConfig::default(),
    )
    .await;
    assert_eq!(outcome, Outcome::Completed);
    let bodies = bodies(&server).await;
    let msgs = bodies[1]["messages"].as_array().unwrap();
    // The bad arguments are sent back as they were, with an error result.
    assert_eq!(
        msgs[2]["tool_calls"][0]["function"]["arguments"],
        r#"{"path": "a.txt"#
    );
    let content = msgs[3]["content"].as_str().unwrap();
    assert!(content.contains("not valid JSON"), "{content}");
    let unknown = bodies[2]["messages"].as_array().unwrap()[5]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        unknown.contains("there is no tool `frobnicate`"),
        "{unknown}"
    );
    assert_eq!(rec.results().len(), 2);
}

fn script(turns: Value) -> Arc<dyn ModelClient> {
    let script: Script = serde_json::from_value(json!({ "turns": turns })).unwrap();
    Arc::new(ScriptClient::new(script, Path::new("test-script.json")))
}

#[tokio::test]
async fn the_turn_limit_stops_the_loop() {
    let (_dir, active) = project(Mode::Default);
    let t = json!({"tool_calls": [{"name": "todo_write", "input": {"todos": []}}]});
    let client = script(json!([t, t, t, t]));
    let config = LoopConfig {
        max_turns: 2,
        ..LoopConfig::default()
    };
    let (outcome, rec) = run(client, &active, no_surface(), "loop", config).await;
    assert_eq!(outcome, Outcome::MaxTurns);
    assert!(rec
        .notices()
        .iter()
        .any(|n| n.contains("stopped after 2 model turns")));
}

#[tokio::test]
async fn cancel_stops_a_running_tool_at_once() {
    let (_dir, active) = project(Mode::Auto);
    let client = script(json!([
        {"text": "Waiting.", "tool_calls": [{"name": "bash", "input": {"command": "sleep 30"}}]},
        {"text": "never"}
    ]));
    let rec = Recorder::default();
    let mut agent = AgentLoop::new(
        client,
        Arc::clone(&active),
        no_surface(),
        LoopConfig::default(),
    )
    .with_sink(rec.sink());
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    let rec2 = rec.clone();
    tokio::spawn(async move {
        // Cancel once the command is running.
        for _ in 0..100 {
            if rec2
                .events()
                .iter()
                .any(|e| matches!(e, LoopEvent::ToolCallStarted { .. }))
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        c2.cancel();
    });
    let start = Instant::now();
    let outcome = agent.run(Some("wait"), cancel).await;
    assert_eq!(outcome, Outcome::Cancelled);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    // The conversation stays valid: the call has a result.
    assert!(matches!(
        agent.messages().last(),
        Some(decode_engine::providers::Message::Tool { .. })
    ));
}

#[tokio::test]
async fn old_tool_outputs_are_shortened_near_the_context_limit() {
    let (dir, active) = project(Mode::Default);
    let big: String = (0..300)
        .map(|i| format!("line {i:04} {}\n", "x".repeat(50)))
        .collect();
    write(dir.path(), "big.txt", &big);
    write(dir.path(), "small.txt", "small\n");
    let prompt = format!("look at the files {}", "please ".repeat(40));
    let server = fake(
        ProviderKind::Openai,
        vec![
            openai_turn("", &[("c1", "read", r#"{"path":"big.txt"}"#)]),
            openai_turn("", &[("c2", "read", r#"{"path":"small.txt"}"#)]),
            openai_turn("Seen both.", &[]),
        ],
    )
    .await;
    let config = LoopConfig {
        context_tokens: Some(8_000),
        ..LoopConfig::default()
    };
    let (outcome, rec) = run(
        client(ProviderKind::Openai, &server.uri(), fast_policy()),
        &active,
        no_surface(),
        &prompt,
        config,
    )
    .await;
    assert_eq!(outcome, Outcome::Completed);
    assert!(
        rec.notices()
            .iter()
            .any(|n| n.contains("shortened 1 old tool output")),
        "{:?}",
        rec.notices()
    );
    let bodies = bodies(&server).await;
    let last = bodies[2]["messages"].as_array().unwrap();
    let first_result = last[3]["content"].as_str().unwrap();
    assert!(
        first_result.contains("Decode shortened this old tool output"),
        "{first_result}"
    );
    assert!(first_result.len() < 1000);
    // The person's message is never shortened.
    assert_eq!(last[1]["content"], prompt);
    assert!(last[5]["content"].as_str().unwrap().contains("small"));
}

/// A conversation over the model's context even after shortening is said once a turn,
/// not after every tool call of it.
#[tokio::test]
async fn a_conversation_over_the_context_is_said_once_a_turn() {
    let (dir, active) = project(Mode::Default);
    write(dir.path(), "a.txt", "a\n");
    let client = script(json!([
        {"tool_calls": [{"name": "read", "input": {"path": "a.txt"}}]},
        {"tool_calls": [{"name": "read", "input": {"path": "a.txt"}}]},
        {"tool_calls": [{"name": "read", "input": {"path": "a.txt"}}]},
        {"text": "ok"}
    ]));
    let config = LoopConfig {
        context_tokens: Some(100),
        ..LoopConfig::default()
    };
    let prompt = "a long question ".repeat(100);
    let (outcome, rec) = run(client, &active, no_surface(), &prompt, config).await;
    assert_eq!(outcome, Outcome::Completed);
    let over: Vec<String> = rec
        .notices()
        .into_iter()
        .filter(|n| n.contains("larger than the model's context"))
        .collect();
    assert_eq!(over.len(), 1, "{over:?}");
}

#[tokio::test]
async fn a_mode_switch_applies_at_the_next_gate_call() {
    let (dir, active) = project(Mode::Edit);
    write(dir.path(), "a.txt", "one\n");
    let client = script(json!([
        {"tool_calls": [{"name": "read", "input": {"path": "a.txt"}}]},
        {"tool_calls": [{"name": "edit", "input": {"path": "a.txt", "old_string": "one", "new_string": "two"}}]},
        {"text": "ok"}
    ]));
    let rec = Recorder::default();
    let inner = rec.sink();
    let switch_to = Arc::clone(&active);
    let sink: decode_engine::agent_loop::EventSink = Arc::new(move |e: &LoopEvent| {
        if let LoopEvent::ToolResult { name, .. } = e {
            if name == "read" {
                switch_to.set_mode(Mode::Plan);
            }
        }
        inner(e);
    });
    let mut agent = AgentLoop::new(
        client,
        Arc::clone(&active),
        no_surface(),
        LoopConfig::default(),
    )
    .with_sink(sink);
    let outcome = agent.run(Some("edit"), CancellationToken::new()).await;
    assert_eq!(outcome, Outcome::Denied);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n"
    );
    let events = rec.events();
    let mode_of_turn2 = events.iter().find_map(|e| match e {
        LoopEvent::TurnStart { turn: 2, mode, .. } => Some(*mode),
        _ => None,
    });
    assert_eq!(mode_of_turn2, Some(Mode::Plan));
    let LoopEvent::ToolResult { content, .. } = &rec.results()[1] else {
        unreachable!()
    };
    assert!(content.contains("exit_plan_mode"), "{content}");
}

#[tokio::test]
async fn a_provider_failure_is_one_error_event() {
    let (_dir, active) = project(Mode::Default);
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401).set_body_string(r#"{"error":{"message":"bad key"}}"#),
        )
        .mount(&server)
        .await;
    let (outcome, rec) = run(
        client(ProviderKind::Openai, &server.uri(), fast_policy()),
        &active,
        no_surface(),
        "hi",
        LoopConfig::default(),
    )
    .await;
    assert_eq!(outcome, Outcome::ProviderFailed);
    assert_eq!(outcome.exit_code(), 1);
    let errors: Vec<String> = rec
        .events()
        .into_iter()
        .filter_map(|e| match e {
            LoopEvent::Error { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("the API key was rejected by"),
        "{}",
        errors[0]
    );
}
