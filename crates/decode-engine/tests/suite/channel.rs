//! The decision channel: one FIFO queue, one request current at a time, first answer
//! wins, every surface told, cancellation and withdrawn requests.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use decode_core::decision::{DecisionAnswer, DecisionRequest, DecisionSurface};
use decode_engine::channel::{AlreadyAnswered, AnswerRefused, ChannelEvent, DecisionChannel};
use decode_policy::{Decision, Mode, Tool, Verdict};

fn question(q: &str) -> DecisionRequest {
    DecisionRequest::Question {
        question: q.into(),
        options: vec![],
    }
}

#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn listener(&self, name: &'static str) -> Box<dyn Fn(&ChannelEvent) + Send + Sync> {
        let log = self.0.clone();
        Box::new(move |e| {
            let line = match e {
                ChannelEvent::Pending { id, request, .. } => match request {
                    DecisionRequest::Question { question, .. } => {
                        format!("{name}: pending {id} {question}")
                    }
                    _ => format!("{name}: pending {id}"),
                },
                ChannelEvent::Resolved { id, by, .. } => format!("{name}: resolved {id} by {by}"),
                // Announcements of queued requests are checked on their own below.
                ChannelEvent::Queued { .. } => return,
            };
            log.lock().unwrap().push(line);
        })
    }

    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(30)).await;
}

#[tokio::test]
async fn requests_are_asked_one_at_a_time_in_order() {
    let channel = Arc::new(DecisionChannel::new());
    let log = Log::default();
    channel.subscribe(log.listener("ui"));
    let mut askers = Vec::new();
    for q in ["first", "second", "third"] {
        let c = Arc::clone(&channel);
        askers.push(tokio::spawn(async move { c.ask(question(q)).await }));
        settle().await;
    }
    assert_eq!(log.lines(), ["ui: pending 1 first"]);
    assert_eq!(channel.pending().len(), 3);
    assert_eq!(channel.current().unwrap().0, 1);

    channel
        .answer_by(1, DecisionAnswer::Answer { text: "a1".into() }, "window")
        .unwrap();
    channel
        .answer_by(2, DecisionAnswer::Answer { text: "a2".into() }, "dialog")
        .unwrap();
    channel
        .answer_by(3, DecisionAnswer::Answer { text: "a3".into() }, "window")
        .unwrap();
    let answers: Vec<DecisionAnswer> = futures_util::future::join_all(askers)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        answers,
        ["a1", "a2", "a3"].map(|t| DecisionAnswer::Answer { text: t.into() })
    );
    assert_eq!(
        log.lines(),
        [
            "ui: pending 1 first",
            "ui: resolved 1 by window",
            "ui: pending 2 second",
            "ui: resolved 2 by dialog",
            "ui: pending 3 third",
            "ui: resolved 3 by window",
        ]
    );
    assert!(channel.current().is_none());
}

#[tokio::test]
async fn the_first_answer_wins_and_every_surface_is_told() {
    let channel = Arc::new(DecisionChannel::new());
    let log = Log::default();
    channel.subscribe(log.listener("modal"));
    channel.subscribe(log.listener("native"));
    let c = Arc::clone(&channel);
    let asker = tokio::spawn(async move { c.ask(question("ok?")).await });
    settle().await;
    let yes = DecisionAnswer::Answer { text: "yes".into() };
    assert_eq!(channel.answer_by(1, yes.clone(), "native"), Ok(()));
    assert_eq!(
        channel.answer_by(1, DecisionAnswer::Deny { feedback: None }, "modal"),
        Err(AlreadyAnswered { id: 1 }.into())
    );
    assert_eq!(asker.await.unwrap(), yes);
    assert_eq!(
        log.lines(),
        [
            "modal: pending 1 ok?",
            "native: pending 1 ok?",
            "modal: resolved 1 by native",
            "native: resolved 1 by native",
        ]
    );
    assert_eq!(
        channel.answer(99, DecisionAnswer::AllowOnce),
        Err(AnswerRefused::AlreadyAnswered(AlreadyAnswered { id: 99 }))
    );
}

#[tokio::test]
async fn without_a_surface_the_answer_is_unavailable_at_once() {
    let channel = DecisionChannel::new();
    match channel.ask(question("anyone?")).await {
        DecisionAnswer::Unavailable { reason } => assert!(reason.contains("no window")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn cancelling_resolves_every_pending_request_as_unavailable() {
    let channel = Arc::new(DecisionChannel::new());
    let log = Log::default();
    channel.subscribe(log.listener("ui"));
    let mut askers = Vec::new();
    for q in ["a", "b"] {
        let c = Arc::clone(&channel);
        askers.push(tokio::spawn(async move { c.ask(question(q)).await }));
    }
    settle().await;
    channel.cancel_all("the run was stopped");
    for a in askers {
        assert_eq!(
            a.await.unwrap(),
            DecisionAnswer::Unavailable {
                reason: "the run was stopped".into()
            }
        );
    }
    assert!(channel.pending().is_empty());
    assert!(log
        .lines()
        .contains(&"ui: resolved 2 by cancel".to_string()));
}

#[tokio::test]
async fn a_withdrawn_request_leaves_the_queue_and_the_next_is_asked() {
    let channel = Arc::new(DecisionChannel::new());
    let log = Log::default();
    channel.subscribe(log.listener("ui"));
    let c = Arc::clone(&channel);
    let first = tokio::spawn(async move {
        tokio::time::timeout(Duration::from_millis(50), c.ask(question("gone"))).await
    });
    settle().await;
    let c = Arc::clone(&channel);
    let second = tokio::spawn(async move { c.ask(question("stays")).await });
    assert!(first.await.unwrap().is_err());
    settle().await;
    assert_eq!(channel.current().unwrap().0, 2);
    let ok = DecisionAnswer::Answer { text: "ok".into() };
    channel.answer(2, ok.clone()).unwrap();
    assert_eq!(second.await.unwrap(), ok);
    let lines = log.lines();
    assert!(
        lines.contains(&"ui: resolved 1 by gone".to_string()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"ui: pending 2 stays".to_string()),
        "{lines:?}"
    );
}

#[tokio::test]
async fn a_late_surface_sees_the_current_request_and_can_answer_from_its_callback() {
    let channel = Arc::new(DecisionChannel::new());
    let first = channel.subscribe(Box::new(|_| {}));
    let c = Arc::clone(&channel);
    let asker = tokio::spawn(async move { c.ask(question("late?")).await });
    settle().await;
    // A surface subscribing now is told at once, and answers re-entrantly.
    let weak = Arc::downgrade(&channel);
    channel.subscribe(Box::new(move |e| {
        if let ChannelEvent::Pending { id, .. } = e {
            if let Some(c) = weak.upgrade() {
                let _ = c.answer_by(*id, DecisionAnswer::Answer { text: "yes".into() }, "bot");
            }
        }
    }));
    assert_eq!(
        asker.await.unwrap(),
        DecisionAnswer::Answer { text: "yes".into() }
    );
    assert!(channel.unsubscribe(first));
    assert_eq!(channel.surfaces(), 1);
}

#[tokio::test]
async fn requests_behind_the_current_one_are_announced_as_queued() {
    let channel = Arc::new(DecisionChannel::new());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = Arc::clone(&seen);
    channel.subscribe(Box::new(move |e| {
        let line = match e {
            ChannelEvent::Pending { id, .. } => format!("pending {id}"),
            ChannelEvent::Queued { id, .. } => format!("queued {id}"),
            ChannelEvent::Resolved { id, .. } => format!("resolved {id}"),
        };
        seen2.lock().unwrap().push(line);
    }));
    let mut askers = Vec::new();
    for q in ["first", "second", "third"] {
        let c = Arc::clone(&channel);
        askers.push(tokio::spawn(async move { c.ask(question(q)).await }));
        settle().await;
    }
    channel
        .answer(1, DecisionAnswer::Answer { text: "a".into() })
        .unwrap();
    channel.cancel_all("stopped");
    for a in askers {
        a.await.unwrap();
    }
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "pending 1",
            "queued 2",
            "queued 3",
            "resolved 1",
            "pending 2",
            "resolved 2",
            "resolved 3"
        ]
    );
}

fn permission(command: &str, capped: bool) -> DecisionRequest {
    DecisionRequest::Permission {
        tool: Tool::Bash,
        subject: command.into(),
        intent: None,
        input: serde_json::json!({ "command": command }),
        decision: Decision {
            verdict: Verdict::Ask,
            reason: "default mode asks before running shell commands".into(),
            trace: Vec::new(),
            fragments: Vec::new(),
            capped,
            origin: None,
            always_allow_rules: vec![format!("bash({command})")],
        },
        cwd: None,
        diff: None,
        suggested_rules: Vec::new(),
        edited: false,
        mcp: None,
    }
}

/// A request waiting behind the current one has not been shown to the person as the
/// thing to decide: an answer for it (a double-click's second click, a direct call)
/// is refused, and it stays pending until it is current.
#[tokio::test]
async fn only_the_request_shown_now_can_be_answered() {
    let channel = Arc::new(DecisionChannel::new());
    let log = Log::default();
    channel.subscribe(log.listener("ui"));
    let mut askers = Vec::new();
    for cmd in ["cat ~/other.txt", "cat ~/secret.txt"] {
        let c = Arc::clone(&channel);
        askers.push(tokio::spawn(
            async move { c.ask(permission(cmd, false)).await },
        ));
        settle().await;
    }
    assert_eq!(
        channel.answer_by(2, DecisionAnswer::AllowOnce, "window"),
        Err(AnswerRefused::NotShown { id: 2 })
    );
    assert_eq!(
        channel.pending().len(),
        2,
        "the refused request still waits"
    );
    channel
        .answer_by(1, DecisionAnswer::AllowOnce, "window")
        .unwrap();
    // Now it is shown (current), and can be answered.
    assert_eq!(channel.current().unwrap().0, 2);
    channel
        .answer_by(2, DecisionAnswer::Deny { feedback: None }, "window")
        .unwrap();
    let answers: Vec<DecisionAnswer> = futures_util::future::join_all(askers)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        answers,
        [
            DecisionAnswer::AllowOnce,
            DecisionAnswer::Deny { feedback: None }
        ]
    );
}

/// Every answer is bound to what its request offered.
#[tokio::test]
async fn an_answer_that_does_not_fit_its_request_is_refused_and_the_request_stays() {
    let channel = Arc::new(DecisionChannel::new());
    channel.subscribe(Log::default().listener("ui"));
    let c = Arc::clone(&channel);
    let plan = tokio::spawn(async move {
        c.ask(DecisionRequest::PlanApproval {
            plan: "1. edit".into(),
            modes: vec![Mode::Edit, Mode::Default],
        })
        .await
    });
    settle().await;
    for bad in [
        DecisionAnswer::PlanApproved { mode: Mode::Bypass },
        DecisionAnswer::PlanApproved { mode: Mode::Auto },
        DecisionAnswer::PlanApproved { mode: Mode::Plan },
        DecisionAnswer::AllowOnce,
        DecisionAnswer::AlwaysAllow {
            target: None,
            rules: vec!["bash(*)".into()],
        },
        DecisionAnswer::Answer { text: "x".into() },
    ] {
        assert!(
            matches!(
                channel.answer(1, bad.clone()),
                Err(AnswerRefused::Misfit { id: 1, .. })
            ),
            "{bad:?}"
        );
    }
    channel
        .answer(
            1,
            DecisionAnswer::PlanApproved {
                mode: Mode::Default,
            },
        )
        .unwrap();
    assert_eq!(
        plan.await.unwrap(),
        DecisionAnswer::PlanApproved {
            mode: Mode::Default
        }
    );

    // A capped call offers only "allow once"; only a command can be edited.
    let c = Arc::clone(&channel);
    let capped = tokio::spawn(async move { c.ask(permission("git push", true)).await });
    settle().await;
    let id = channel.current().unwrap().0;
    for bad in [
        DecisionAnswer::AlwaysAllow {
            target: None,
            rules: vec!["bash(git push)".into()],
        },
        DecisionAnswer::AllowForSession {
            rules: vec!["bash(git push)".into()],
        },
        DecisionAnswer::PlanApproved { mode: Mode::Edit },
    ] {
        assert!(matches!(
            channel.answer(id, bad),
            Err(AnswerRefused::Misfit { .. })
        ));
    }
    channel
        .answer(
            id,
            DecisionAnswer::EditCommand {
                command: "git status".into(),
            },
        )
        .unwrap();
    assert!(matches!(
        capped.await.unwrap(),
        DecisionAnswer::EditCommand { .. }
    ));
}
