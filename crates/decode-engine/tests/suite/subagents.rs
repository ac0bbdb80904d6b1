//! Subagents (docs/agents.md, "Subagents"): the `task` tool runs a catalog agent in
//! a loop of its own — through the same gate, in a mode never looser than the
//! parent's, its asks labelled with its name, its answer the task's result.

use crate::fake_model;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use decode_core::agents::Catalog;
use decode_core::decision::{DecisionAnswer, DecisionRequest};
use decode_core::settings::Settings;
use decode_core::state::ActiveState;
use decode_engine::agent_loop::{AgentLoop, LoopConfig, LoopEvent, Outcome};
use decode_engine::channel::{ChannelEvent, DecisionChannel};
use decode_engine::providers::script::{Script, ScriptClient};
use decode_engine::providers::{Message, ModelClient};
use decode_policy::{Mode, Verdict};
use fake_model::*;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

type Seen = Arc<Mutex<Vec<(Option<String>, DecisionRequest)>>>;

/// A channel with one surface answering every request with `answer`; returns the
/// requests it saw with the subagent that asked each.
fn bot(answer: DecisionAnswer) -> (Arc<DecisionChannel>, Seen) {
    let channel = Arc::new(DecisionChannel::new());
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let weak = Arc::downgrade(&channel);
    let seen2 = Arc::clone(&seen);
    channel.subscribe(Box::new(move |e| {
        if let ChannelEvent::Pending {
            id, request, agent, ..
        } = e
        {
            seen2.lock().unwrap().push((agent.clone(), request.clone()));
            if let Some(c) = weak.upgrade() {
                c.answer_by(*id, answer.clone(), "bot").unwrap();
            }
        }
    }));
    (channel, seen)
}

/// A trusted temp project with these files (agents among them), the build agent
/// in `mode`.
fn project_with(mode: Mode, files: &[(&str, &str)]) -> (TempProject, Arc<ActiveState>) {
    let tmp = TempProject::new().unwrap();
    let root = tmp.project.clone();
    for (rel, text) in files {
        write(&root, rel, text);
    }
    let (mut settings, _) = Settings::load(&root);
    settings.read_only_commands.get_or_insert(false);
    let (state, _) = ActiveState::new(&root, Catalog::load(&root), settings, true, &tmp.home);
    state.set_mode(mode);
    (tmp, Arc::new(state))
}

fn script(turns: Value, subagents: Value) -> Arc<dyn ModelClient> {
    let script: Script =
        serde_json::from_value(json!({ "turns": turns, "subagents": subagents })).unwrap();
    Arc::new(ScriptClient::new(script, Path::new("test-script.json")))
}

fn task(id: &str, agent: &str, prompt: &str) -> Value {
    json!({"id": id, "name": "task", "input": {"agent": agent, "description": "look around", "prompt": prompt}})
}

async fn run(
    client: Arc<dyn ModelClient>,
    active: &Arc<ActiveState>,
    channel: Arc<DecisionChannel>,
    cancel: CancellationToken,
) -> (Outcome, Recorder, Vec<Message>) {
    let rec = Recorder::default();
    let mut agent = AgentLoop::new(client, Arc::clone(active), channel, LoopConfig::default())
        .with_sink(rec.sink());
    let outcome = agent.run(Some("go"), cancel).await;
    (outcome, rec, agent.messages().to_vec())
}

/// The subagent events under the `task` call `parent`.
fn nested(rec: &Recorder, parent: &str) -> Vec<LoopEvent> {
    rec.events()
        .into_iter()
        .filter_map(|e| match e {
            LoopEvent::Subagent {
                parent_id, event, ..
            } if parent_id == parent => Some(*event),
            _ => None,
        })
        .collect()
}

/// The top-level result of the call `id`: (content, is_error).
fn result_of(rec: &Recorder, id: &str) -> (String, bool) {
    rec.results()
        .into_iter()
        .find_map(|e| match e {
            LoopEvent::ToolResult {
                id: i,
                content,
                is_error,
                ..
            } if i == id => Some((content, is_error)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
}

/// The results the parent's model read.
fn parent_tool_texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { results } => Some(results.iter().map(|r| r.content.clone())),
            _ => None,
        })
        .flatten()
        .collect()
}

#[tokio::test]
async fn explore_from_a_default_parent_reads_freely_and_its_answer_is_the_result() {
    let (dir, active) = project_with(Mode::Default, &[("README.md", "the answer is 42\n")]);
    let (channel, seen) = bot(DecisionAnswer::AllowOnce);
    let client = script(
        json!([
            {"text": "Asking explore.", "tool_calls": [task("t1", "explore", "What does README.md say?")]},
            {"text": "Explore says 42."}
        ]),
        json!({"explore": [
            {"text": "Reading.", "tool_calls": [{"id": "r1", "name": "read", "input": {"path": "README.md"}}]},
            {"text": "README.md says the answer is 42."}
        ]}),
    );
    let (outcome, rec, messages) = run(client, &active, channel, CancellationToken::new()).await;
    assert_eq!(outcome, Outcome::Completed);
    // The read ran without asking anyone.
    assert!(seen.lock().unwrap().is_empty());
    let inner = nested(&rec, "t1");
    assert!(inner.iter().any(|e| matches!(
        e,
        LoopEvent::ToolResult { id, ran: true, verdict: Some(Verdict::Allow), content, .. }
            if id == "r1" && content.contains("the answer is 42")
    )));
    // It saw only its prompt, in its own mode and agent.
    assert!(inner.iter().any(|e| matches!(
        e,
        LoopEvent::UserPrompt { text } if text == "What does README.md say?"
    )));
    assert!(inner.iter().any(|e| matches!(
        e,
        LoopEvent::TurnStart { agent, mode: Mode::Default, .. } if agent == "explore"
    )));
    // Its final text is the task's result, which the parent's model read.
    let (content, is_error) = result_of(&rec, "t1");
    assert_eq!(content, "README.md says the answer is 42.");
    assert!(!is_error);
    assert!(parent_tool_texts(&messages).contains(&content));
    // Its steps never enter the parent's conversation.
    assert!(!parent_tool_texts(&messages)
        .iter()
        .any(|t| t.contains("the answer is 42\n")));
    drop(dir);
}

#[tokio::test]
async fn a_subagent_bash_call_asks_labelled_with_its_name_and_its_deny_feedback_reaches_it() {
    let (dir, active) = project_with(Mode::Default, &[]);
    let (channel, seen) = bot(DecisionAnswer::Deny {
        feedback: Some("use git log instead".into()),
    });
    let client = script(
        json!([
            {"tool_calls": [task("t1", "code-reviewer", "Review the last change.")]},
            {"text": "Done."}
        ]),
        json!({"code-reviewer": [
            {"tool_calls": [{"id": "b1", "name": "bash", "input": {"command": "echo hi > out.txt"}}]},
            {"text": "I was told to use git log; nothing to review."}
        ]}),
    );
    let (_outcome, rec, messages) = run(client, &active, channel, CancellationToken::new()).await;
    // One ask, for the subagent's command, labelled with its name.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0.as_deref(), Some("code-reviewer"));
    assert!(matches!(
        &seen[0].1,
        DecisionRequest::Permission { subject, .. } if subject == "echo hi > out.txt"
    ));
    assert!(!dir.project.join("out.txt").exists());
    // The denial with its feedback went back to the subagent…
    let inner = nested(&rec, "t1");
    assert!(inner.iter().any(|e| matches!(
        e,
        LoopEvent::ToolResult { id, ran: false, is_error: true, content, .. }
            if id == "b1" && content.contains("Their feedback: use git log instead")
    )));
    // …not to the parent, whose model reads the subagent's answer only.
    let texts = parent_tool_texts(&messages);
    assert!(
        !texts.iter().any(|t| t.contains("Their feedback")),
        "{texts:?}"
    );
    assert_eq!(
        result_of(&rec, "t1").0,
        "I was told to use git log; nothing to review."
    );
}

#[tokio::test]
async fn a_plan_parent_cannot_edit_through_an_edit_mode_subagent() {
    let fixer = "---\nname: fixer\ndescription: Fixes files.\ntools: [read, edit, write]\nmode: edit\n---\nYou fix files.\n";
    let (dir, active) = project_with(
        Mode::Plan,
        &[(".decode/agents/fixer.md", fixer), ("a.txt", "old\n")],
    );
    let (channel, seen) = bot(DecisionAnswer::AllowOnce);
    let client = script(
        json!([
            {"tool_calls": [task("t1", "fixer", "Change old to new in a.txt.")]},
            {"text": "It could not."}
        ]),
        json!({"fixer": [
            {"tool_calls": [{"id": "w1", "name": "write", "input": {"path": "a.txt", "content": "new\n"}}]},
            {"text": "The write was denied."}
        ]}),
    );
    let (_outcome, rec, _messages) = run(client, &active, channel, CancellationToken::new()).await;
    let inner = nested(&rec, "t1");
    // Its own mode (edit) was clamped to the parent's (plan)…
    assert!(inner.iter().any(|e| matches!(
        e,
        LoopEvent::TurnStart { agent, mode: Mode::Plan, .. } if agent == "fixer"
    )));
    // …so plan denied the write, without asking anyone.
    assert!(inner.iter().any(|e| matches!(
        e,
        LoopEvent::ToolResult { id, ran: false, verdict: Some(Verdict::Deny), .. } if id == "w1"
    )));
    assert!(seen.lock().unwrap().is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.project.join("a.txt")).unwrap(),
        "old\n"
    );
    // The parent's mode did not move.
    assert_eq!(active.mode(), Mode::Plan);
}

#[tokio::test]
async fn a_subagent_asking_for_task_is_refused() {
    let (_dir, active) = project_with(Mode::Default, &[]);
    let (channel, _seen) = bot(DecisionAnswer::AllowOnce);
    let client = script(
        json!([
            {"tool_calls": [task("t1", "explore", "Find main.")]},
            {"text": "ok"}
        ]),
        json!({"explore": [
            {"tool_calls": [task("t2", "explore", "Nested.")]},
            {"text": "I could not start another."}
        ]}),
    );
    let (outcome, rec, _) = run(client, &active, channel, CancellationToken::new()).await;
    assert_eq!(outcome, Outcome::Completed);
    let inner = nested(&rec, "t1");
    assert!(inner.iter().any(|e| matches!(
        e,
        LoopEvent::ToolResult { id, ran: false, is_error: true, content, .. }
            if id == "t2" && content.contains("a subagent cannot start subagents")
    )));
    // No subagent ran under the refused call.
    assert!(nested(&rec, "t2").is_empty());
    assert_eq!(result_of(&rec, "t1").0, "I could not start another.");
}

#[tokio::test]
async fn an_unknown_agent_is_an_error_result_not_a_crash() {
    let nodesc = "---\nname: quiet\ndescription: \"\"\ntools: [read]\nmode: default\n---\nx\n";
    let (_dir, active) = project_with(Mode::Default, &[(".decode/agents/quiet.md", nodesc)]);
    let (channel, _seen) = bot(DecisionAnswer::AllowOnce);
    let client = script(
        json!([
            {"tool_calls": [task("t1", "nope", "x"), task("t2", "quiet", "x")]},
            {"text": "ok"}
        ]),
        json!({}),
    );
    let (outcome, rec, _) = run(client, &active, channel, CancellationToken::new()).await;
    assert_eq!(outcome, Outcome::Completed);
    for id in ["t1", "t2"] {
        let (content, is_error) = result_of(&rec, id);
        assert!(is_error);
        assert!(
            content.contains("that can be started as a subagent"),
            "{content}"
        );
        assert!(content.contains("explore"), "{content}");
    }
}

#[tokio::test]
async fn stop_ends_two_parallel_subagents_and_their_commands() {
    let runner = "---\nname: runner\ndescription: Runs commands.\ntools: [bash]\nmode: default\n---\nYou run commands.\n";
    let (dir, active) = project_with(
        Mode::Default,
        &[
            (".decode/agents/runner.md", runner),
            (
                ".decode/settings.json",
                r#"{"permissions": {"allow": ["bash(sleep *)"]}}"#,
            ),
        ],
    );
    let (channel, _seen) = bot(DecisionAnswer::AllowOnce);
    let client = script(
        json!([
            {"tool_calls": [task("t1", "runner", "wait"), task("t2", "runner", "wait")]},
            {"text": "never"}
        ]),
        json!({"runner": [
            {"tool_calls": [{"id": "s1", "name": "bash", "input": {"command": "sleep 47.25"}}]},
            {"text": "never"}
        ]}),
    );
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    let rec = Recorder::default();
    let watch = rec.clone();
    tokio::spawn(async move {
        // Stop once both commands run.
        for _ in 0..200 {
            let started = watch
                .events()
                .iter()
                .filter(|e| matches!(e, LoopEvent::Subagent { event, .. } if matches!(**event, LoopEvent::ToolCallStarted { .. })))
                .count();
            if started >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let started = Instant::now();
    let mut agent = AgentLoop::new(client, Arc::clone(&active), channel, LoopConfig::default())
        .with_sink(rec.sink());
    let outcome = agent.run(Some("go"), cancel).await;
    assert_eq!(outcome, Outcome::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    for id in ["t1", "t2"] {
        let (content, is_error) = result_of(&rec, id);
        assert!(is_error, "{id}: {content}");
        let inner = nested(&rec, id);
        assert!(
            inner
                .iter()
                .any(|e| matches!(e, LoopEvent::ToolCallStarted { id, .. } if id == "s1")),
            "{id} never started its command"
        );
        assert!(inner.iter().any(|e| matches!(
            e,
            LoopEvent::Done {
                outcome: Outcome::Cancelled,
                ..
            }
        )));
    }
    // Neither command is still running.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ps = std::process::Command::new("ps")
        .args(["-eo", "args"])
        .output()
        .unwrap();
    let ps = String::from_utf8_lossy(&ps.stdout);
    assert!(
        !ps.lines().any(|l| l.trim() == "sleep 47.25"),
        "a subagent's command survived Stop"
    );
    drop(dir);
}

#[tokio::test]
async fn tokens_are_counted_per_subagent() {
    let (_dir, active) = project_with(Mode::Default, &[]);
    let (channel, _seen) = bot(DecisionAnswer::AllowOnce);
    let client = script(
        json!([
            {"tool_calls": [task("t1", "explore", "x")]},
            {"text": "ok"}
        ]),
        json!({"explore": [{"text": "a fairly long answer of forty characters"}]}),
    );
    let (_outcome, rec, _) = run(client, &active, channel, CancellationToken::new()).await;
    let note = rec
        .results()
        .into_iter()
        .find_map(|e| match e {
            LoopEvent::ToolResult { id, note, .. } if id == "t1" => note,
            _ => None,
        })
        .unwrap();
    assert!(note.contains("subagent explore: 1 model turn"), "{note}");
    assert!(note.contains("10 out"), "{note}");
    // The subagent's turn is in the events, so totals include it.
    let total: u64 = rec
        .events()
        .iter()
        .filter_map(LoopEvent::turn_usage)
        .map(|u| u.output_tokens)
        .sum();
    assert!(total >= 10);
}

#[tokio::test]
async fn at_most_four_subagents_run_at_once() {
    let napper =
        "---\nname: napper\ndescription: Naps.\ntools: [sleep]\nmode: default\n---\nYou nap.\n";
    let (_dir, active) = project_with(Mode::Default, &[(".decode/agents/napper.md", napper)]);
    let (channel, _seen) = bot(DecisionAnswer::AllowOnce);
    let ids = ["t1", "t2", "t3", "t4", "t5"];
    let calls: Vec<Value> = ids.iter().map(|id| task(id, "napper", "nap")).collect();
    let client = script(
        json!([{"tool_calls": calls}, {"text": "rested"}]),
        json!({"napper": [
            {"tool_calls": [{"name": "sleep", "input": {"seconds": 0.3}}]},
            {"text": "napped"}
        ]}),
    );
    let (outcome, rec, _) = run(client, &active, channel, CancellationToken::new()).await;
    assert_eq!(outcome, Outcome::Completed);
    // Walk the events: a subagent runs from its prompt to its end.
    let (mut running, mut most) = (0usize, 0usize);
    for e in rec.events() {
        if let LoopEvent::Subagent { event, .. } = e {
            match *event {
                LoopEvent::UserPrompt { .. } => running += 1,
                LoopEvent::Done { .. } => running -= 1,
                _ => {}
            }
            most = most.max(running);
        }
    }
    assert_eq!(most, 4, "subagents at once");
    for id in ids {
        assert_eq!(result_of(&rec, id).0, "napped");
    }
}

#[tokio::test]
async fn the_model_key_picks_the_subagents_model() {
    let scout = "---\nname: scout\ndescription: Scouts.\ntools: [read]\nmode: default\nmodel: tiny-model\n---\nYou scout.\n";
    let (_dir, active) = project_with(Mode::Default, &[(".decode/agents/scout.md", scout)]);
    let (channel, _seen) = bot(DecisionAnswer::AllowOnce);
    let client = script(
        json!([
            {"tool_calls": [task("t1", "scout", "x"), task("t2", "explore", "y")]},
            {"text": "ok"}
        ]),
        json!({"scout": [{"text": "scouted"}], "explore": [{"text": "explored"}]}),
    );
    let (_outcome, rec, _) = run(client, &active, channel, CancellationToken::new()).await;
    let model_of = |id: &str| {
        nested(&rec, id)
            .into_iter()
            .find_map(|e| match e {
                LoopEvent::TurnStart { model, .. } => Some(model),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(model_of("t1"), "script/tiny-model");
    // No `model` key: the parent's.
    assert_eq!(model_of("t2"), "script/script");
}

#[tokio::test]
async fn another_model_uses_the_same_provider_configuration() {
    use decode_engine::providers::ProviderKind;
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer};

    let scout = "---\nname: scout\ndescription: Scouts.\ntools: [read]\nmode: default\nmodel: gpt-small\n---\nYou scout.\n";
    let (_dir, active) = project_with(Mode::Default, &[(".decode/agents/scout.md", scout)]);
    let server = MockServer::start().await;
    let input = r#"{"agent":"scout","description":"scout","prompt":"look"}"#;
    Mock::given(method("POST"))
        .respond_with(Seq::new(vec![
            sse(openai_turn("", &[("t1", "task", input)])),
            sse(openai_turn("scouted", &[])),
            sse(openai_turn("done", &[])),
        ]))
        .mount(&server)
        .await;
    let (channel, _seen) = bot(DecisionAnswer::AllowOnce);
    let client = client(ProviderKind::Openai, &server.uri(), fast_policy());
    let (outcome, rec, _) = run(client, &active, channel, CancellationToken::new()).await;
    assert_eq!(outcome, Outcome::Completed);
    let requests = server.received_requests().await.unwrap();
    let models: Vec<String> = requests
        .iter()
        .map(|r| body_json(r)["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ["gpt-test", "gpt-small", "gpt-test"]);
    // Same server, same key.
    assert!(requests.iter().all(|r| r
        .headers
        .get("authorization")
        .is_some_and(|v| v.to_str().unwrap() == "Bearer sk-test-key")));
    assert_eq!(result_of(&rec, "t1").0, "scouted");
}
