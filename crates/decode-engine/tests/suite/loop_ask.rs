//! The ask path through the loop and the decision channel: allow once, always allow
//! (the rule lands in settings.json and the next identical call is not asked), deny
//! with feedback (it reaches the model), and the plan flow.

use crate::fake_model;

use std::sync::{Arc, Mutex};

use decode_core::decision::{DecisionAnswer, DecisionRequest};
use decode_core::state::ActiveState;
use decode_engine::agent_loop::{AgentLoop, LoopConfig, LoopEvent, Outcome};
use decode_engine::channel::{ChannelEvent, DecisionChannel};
use decode_engine::providers::ProviderKind;
use decode_policy::Mode;
use fake_model::*;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

/// A channel with one surface that answers every request with `answer(request)`;
/// returns the requests it saw.
fn bot(
    answer: impl Fn(&DecisionRequest) -> DecisionAnswer + Send + Sync + 'static,
) -> (Arc<DecisionChannel>, Arc<Mutex<Vec<DecisionRequest>>>) {
    let channel = Arc::new(DecisionChannel::new());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let weak = Arc::downgrade(&channel);
    let seen2 = Arc::clone(&seen);
    channel.subscribe(Box::new(move |e| {
        if let ChannelEvent::Pending { id, request, .. } = e {
            seen2.lock().unwrap().push(request.clone());
            if let Some(c) = weak.upgrade() {
                c.answer_by(*id, answer(request), "bot").unwrap();
            }
        }
    }));
    (channel, seen)
}

async fn fake(turns: Vec<String>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Seq::new(turns.into_iter().map(sse).collect()))
        .mount(&server)
        .await;
    server
}

async fn run(
    server: &MockServer,
    active: &Arc<ActiveState>,
    channel: Arc<DecisionChannel>,
    prompt: &str,
) -> (Outcome, Recorder) {
    let rec = Recorder::default();
    let mut agent = AgentLoop::new(
        client(ProviderKind::Openai, &server.uri(), fast_policy()),
        Arc::clone(active),
        channel,
        LoopConfig::default(),
    )
    .with_sink(rec.sink());
    let outcome = agent.run(Some(prompt), CancellationToken::new()).await;
    (outcome, rec)
}

fn tool_contents(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn allow_once_runs_the_call_and_saves_nothing() {
    let (dir, active) = project(Mode::Default);
    let (channel, seen) = bot(|_| DecisionAnswer::AllowOnce);
    let server = fake(vec![
        openai_turn(
            "",
            &[("c1", "bash", r#"{"command":"echo hello-from-bash"}"#)],
        ),
        openai_turn("It printed hello.", &[]),
    ])
    .await;
    let (outcome, rec) = run(&server, &active, channel, "say hello").await;
    assert_eq!(outcome, Outcome::Completed);
    assert_eq!(seen.lock().unwrap().len(), 1);
    let LoopEvent::ToolResult { ran, answer, .. } = &rec.results()[0] else {
        unreachable!()
    };
    assert!(ran);
    assert_eq!(answer, &Some(DecisionAnswer::AllowOnce));
    let body = body_json(&server.received_requests().await.unwrap()[1]);
    assert!(tool_contents(&body)[0].contains("hello-from-bash"));
    assert!(!dir.path().join(".decode/settings.json").exists());
}

#[tokio::test]
async fn always_allow_saves_the_rule_and_the_next_identical_call_is_not_asked() {
    let (dir, active) = project(Mode::Default);
    let (channel, seen) = bot(|_| DecisionAnswer::AlwaysAllow {
        target: None,
        rules: vec![],
    });
    let call = r#"{"command":"echo twice"}"#;
    let server = fake(vec![
        openai_turn("", &[("c1", "bash", call)]),
        openai_turn("", &[("c2", "bash", call)]),
        openai_turn("Ran it twice.", &[]),
    ])
    .await;
    let (outcome, rec) = run(&server, &active, channel, "run echo twice").await;
    assert_eq!(outcome, Outcome::Completed);
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "the second call was asked again"
    );
    let settings = std::fs::read_to_string(dir.path().join(".decode/settings.local.json")).unwrap();
    let v: Value = serde_json::from_str(&settings).unwrap();
    assert_eq!(v["permissions"]["allow"][0], "bash(echo twice)");
    let results = rec.results();
    let LoopEvent::ToolResult { note, .. } = &results[0] else {
        unreachable!()
    };
    assert!(note.as_deref().unwrap().contains("bash(echo twice)"));
    let LoopEvent::ToolResult { ran, answer, .. } = &results[1] else {
        unreachable!()
    };
    assert!(ran);
    assert!(answer.is_none());
}

#[tokio::test]
async fn deny_with_feedback_reaches_the_model() {
    let (dir, active) = project(Mode::Default);
    std::fs::write(dir.path().join("a.txt"), "keep\n").unwrap();
    let (channel, _) = bot(|_| DecisionAnswer::Deny {
        feedback: Some("use git clean instead".into()),
    });
    let server = fake(vec![
        openai_turn("", &[("c1", "bash", r#"{"command":"rm a.txt"}"#)]),
        openai_turn("Understood, I will not delete it.", &[]),
    ])
    .await;
    let (outcome, _) = run(&server, &active, channel, "delete a.txt").await;
    assert_eq!(outcome, Outcome::Denied);
    assert!(dir.path().join("a.txt").exists());
    let body = body_json(&server.received_requests().await.unwrap()[1]);
    let content = &tool_contents(&body)[0];
    assert!(content.starts_with("denied by the person"), "{content}");
    assert!(content.contains("use git clean instead"), "{content}");
}

#[tokio::test]
async fn plan_flow_approved_switches_to_edit() {
    let (dir, active) = project(Mode::Default);
    std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
    let (channel, seen) = bot(|r| match r {
        DecisionRequest::PlanApproval { .. } => DecisionAnswer::PlanApproved { mode: Mode::Edit },
        _ => DecisionAnswer::Deny { feedback: None },
    });
    let edit = r#"{"path":"a.txt","old_string":"old","new_string":"new"}"#;
    let server = fake(vec![
        openai_turn("", &[("c1", "enter_plan_mode", "{}")]),
        openai_turn("", &[("c2", "read", r#"{"path":"a.txt"}"#)]),
        openai_turn("", &[("c3", "edit", edit)]),
        openai_turn(
            "",
            &[("c4", "exit_plan_mode", r#"{"plan":"1. change old to new"}"#)],
        ),
        openai_turn("", &[("c5", "edit", edit)]),
        openai_turn("Changed.", &[]),
    ])
    .await;
    let (outcome, rec) = run(&server, &active, channel, "plan, then change a.txt").await;
    assert_eq!(outcome, Outcome::Completed, "{:#?}", rec.results());
    assert_eq!(active.mode(), Mode::Edit);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "new\n"
    );
    // The edit in plan mode was denied (not asked); only the plan was asked.
    assert_eq!(seen.lock().unwrap().len(), 1);
    let modes: Vec<Mode> = rec
        .events()
        .iter()
        .filter_map(|e| match e {
            LoopEvent::TurnStart { mode, .. } => Some(*mode),
            _ => None,
        })
        .collect();
    assert_eq!(
        modes,
        [
            Mode::Default,
            Mode::Plan,
            Mode::Plan,
            Mode::Plan,
            Mode::Edit,
            Mode::Edit
        ]
    );
    let results = rec.results();
    let LoopEvent::ToolResult { content, .. } = &results[2] else {
        unreachable!()
    };
    assert!(content.contains("exit_plan_mode"), "{content}");
    let LoopEvent::ToolResult { content, .. } = &results[3] else {
        unreachable!()
    };
    assert!(content.starts_with("approved"), "{content}");
}

#[tokio::test]
async fn plan_flow_rejected_stays_in_plan() {
    let (_dir, active) = project(Mode::Plan);
    let (channel, _) = bot(|_| DecisionAnswer::PlanRejected {
        feedback: Some("also update the tests".into()),
    });
    let server = fake(vec![
        openai_turn("", &[("c1", "exit_plan_mode", r#"{"plan":"just do it"}"#)]),
        openai_turn("I will refine the plan.", &[]),
    ])
    .await;
    let (outcome, _) = run(&server, &active, channel, "plan it").await;
    assert_eq!(outcome, Outcome::Completed);
    assert_eq!(active.mode(), Mode::Plan);
    let body = body_json(&server.received_requests().await.unwrap()[1]);
    let content = &tool_contents(&body)[0];
    assert!(content.contains("Refine the plan"), "{content}");
    assert!(content.contains("also update the tests"), "{content}");
}
