//! todo_write, ask_user, enter/exit_plan_mode, sleep; the registry.

use crate::tools_support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use decode_core::decision::{DecisionAnswer, DecisionRequest};
use decode_engine::tools::{self, for_agent, registry, TodoStatus};
use decode_policy::{Mode, Tool};
use serde_json::json;
use tools_support::{exec, Project, Scripted};

#[test]
fn registry_has_every_tool_and_for_agent_keeps_order() {
    let all = registry();
    let names: Vec<Tool> = all.iter().map(|h| h.tool()).collect();
    assert_eq!(names, Tool::ALL.to_vec());
    for h in &all {
        let schema = h.input_schema();
        assert_eq!(schema["type"], "object", "{}", h.tool());
        assert!(!h.description().is_empty());
    }
    let some = for_agent(&[Tool::Grep, Tool::Read, Tool::AskUser]);
    let names: Vec<Tool> = some.iter().map(|h| h.tool()).collect();
    assert_eq!(names, [Tool::Grep, Tool::Read, Tool::AskUser]);
}

#[tokio::test]
async fn todo_write_keeps_the_list_and_tells_observers() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Default);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = Arc::clone(&seen);
    ctx.session.subscribe_todos(Box::new(move |items| {
        seen2.lock().unwrap().push(items.to_vec());
    }));
    let r = exec(
        &ctx,
        Tool::TodoWrite,
        json!({"todos": [
            {"content": "read the code", "status": "done"},
            {"content": "write the fix", "status": "in_progress"},
            {"content": "run the tests", "status": "pending"}
        ]}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(
        r.content,
        "Todo list (1/3 done):\n[x] read the code\n[~] write the fix  (in progress)\n[ ] run the tests"
    );
    let list = ctx.session.todos();
    assert_eq!(list.len(), 3);
    assert_eq!(list[1].status, TodoStatus::InProgress);
    assert_eq!(seen.lock().unwrap().len(), 1);

    let bad = exec(
        &ctx,
        Tool::TodoWrite,
        json!({"todos": [{"content": "x", "status": "later"}]}),
    )
    .await;
    assert!(bad.is_error);
    assert_eq!(ctx.session.todos().len(), 3, "a bad call changes nothing");
}

#[tokio::test]
async fn ask_user_returns_the_answer_or_says_nobody_can() {
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::Answer {
        text: "use tabs".into(),
    }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let r = exec(
        &ctx,
        Tool::AskUser,
        json!({"question": "Tabs or spaces?", "options": ["tabs", "spaces"]}),
    )
    .await;
    assert!(!r.is_error);
    assert_eq!(r.content, "use tabs");
    let DecisionRequest::Question { question, options } = &s.asked()[0] else {
        panic!("not a question")
    };
    assert_eq!(question, "Tabs or spaces?");
    assert_eq!(options, &["tabs", "spaces"]);

    let r = exec(
        &p.ctx(Mode::Default),
        Tool::AskUser,
        json!({"question": "Anyone?"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("nobody can answer"), "{}", r.content);
}

#[tokio::test]
async fn plan_mode_round_trip() {
    let p = Project::new();
    let s = Scripted::new(vec![
        DecisionAnswer::PlanRejected {
            feedback: Some("also update the docs".into()),
        },
        DecisionAnswer::PlanApproved { mode: Mode::Edit },
    ]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let r = exec(&ctx, Tool::EnterPlanMode, json!({})).await;
    assert!(!r.is_error);
    assert!(r.content.contains("Plan mode is on"), "{}", r.content);
    assert_eq!(ctx.active.mode(), Mode::Plan);

    let r = exec(&ctx, Tool::ExitPlanMode, json!({"plan": "1. fix\n2. test"})).await;
    assert!(r.is_error);
    assert!(
        r.content
            .contains("refine the plan and call exit_plan_mode again")
            || r.content
                .contains("Refine the plan and call exit_plan_mode again"),
        "{}",
        r.content
    );
    assert!(r.content.contains("also update the docs"));
    assert_eq!(ctx.active.mode(), Mode::Plan);

    let r = exec(
        &ctx,
        Tool::ExitPlanMode,
        json!({"plan": "1. fix\n2. test\n3. docs"}),
    )
    .await;
    assert!(!r.is_error);
    assert!(r.content.starts_with("approved"), "{}", r.content);
    assert_eq!(ctx.active.mode(), Mode::Edit);
    let DecisionRequest::PlanApproval { plan, .. } = &s.asked()[1] else {
        panic!("not a plan approval")
    };
    assert!(plan.contains("3. docs"));
}

#[tokio::test]
async fn the_person_may_pick_another_mode_and_nobody_means_stay() {
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::PlanApproved { mode: Mode::Auto }]);
    let ctx = p.ctx_with(Mode::Plan, s);
    let r = exec(&ctx, Tool::ExitPlanMode, json!({"plan": "do it"})).await;
    assert!(r.content.starts_with("approved"));
    assert_eq!(ctx.active.mode(), Mode::Auto);

    let ctx = p.ctx(Mode::Plan);
    let r = exec(&ctx, Tool::ExitPlanMode, json!({"plan": "do it"})).await;
    assert!(r.is_error);
    assert_eq!(ctx.active.mode(), Mode::Plan);
}

/// A plan offers edit, auto and default: an answer naming bypass (or plan) from any
/// surface leaves the agent in plan mode.
#[tokio::test]
async fn a_plan_approved_into_a_mode_it_does_not_offer_changes_nothing() {
    let p = Project::new();
    for mode in [Mode::Bypass, Mode::Plan] {
        let s = Scripted::new(vec![DecisionAnswer::PlanApproved { mode }]);
        let ctx = p.ctx_with(Mode::Plan, s.clone());
        let r = exec(&ctx, Tool::ExitPlanMode, json!({"plan": "do it"})).await;
        assert!(r.is_error, "{}", r.content);
        assert!(r.content.contains("does not offer"), "{}", r.content);
        assert_eq!(ctx.active.mode(), Mode::Plan);
        let DecisionRequest::PlanApproval { modes, .. } = &s.asked()[0] else {
            panic!("not a plan approval")
        };
        assert_eq!(modes, &[Mode::Edit, Mode::Auto, Mode::Default]);
    }
}

#[tokio::test]
async fn sleep_waits_caps_and_refuses_negatives() {
    let p = Project::new();
    p.write(".decode/settings.json", r#"{"sleepMaxSeconds": 1}"#);
    let ctx = p.ctx(Mode::Default);
    let started = Instant::now();
    let r = exec(&ctx, Tool::Sleep, json!({"seconds": 0.2})).await;
    assert!(!r.is_error);
    assert!(started.elapsed() >= Duration::from_millis(200));

    let started = Instant::now();
    let r = exec(&ctx, Tool::Sleep, json!({"seconds": 30})).await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(950) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert!(r.content.contains("capped"), "{}", r.content);
    assert!(r.content.contains("sleepMaxSeconds"), "{}", r.content);

    let r = exec(&ctx, Tool::Sleep, json!({"seconds": -1})).await;
    assert!(r.is_error);
    assert!(r.content.contains("negative"), "{}", r.content);
}

#[tokio::test]
async fn sleep_is_cancellable() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Default);
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let r = tools::handler(Tool::Sleep)
        .execute(json!({"seconds": 30}), &ctx)
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(r.is_error);
    assert!(r.content.contains("cancelled"));
}
