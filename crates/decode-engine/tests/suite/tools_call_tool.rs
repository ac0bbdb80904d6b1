//! `call_tool`: the one gated path — allow, deny, ask (once, always, deny with
//! feedback, unavailable), capped calls, failed persistence, invalid input.

use crate::tools_support;

use decode_core::decision::{DecisionAnswer, DecisionRequest};
use decode_engine::tools::{call_tool, handler};
use decode_policy::{Mode, Tool, Verdict};
use serde_json::json;
use tools_support::{Project, Scripted};

#[tokio::test]
async fn allowed_calls_run_without_asking() {
    let p = Project::new();
    p.write("a.txt", "hi\n");
    let s = Scripted::new(vec![]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(handler(Tool::Read).as_ref(), json!({"path": "a.txt"}), &ctx).await;
    assert_eq!(o.decision.verdict, Verdict::Allow);
    assert!(o.ran);
    assert!(o.answer.is_none());
    assert_eq!(o.result.content, "     1\thi");
    assert!(s.asked().is_empty());
}

#[tokio::test]
async fn denied_calls_return_the_reason() {
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["bash(rm *)"]}}"#,
    );
    let s = Scripted::new(vec![]);
    let ctx = p.ctx_with(Mode::Bypass, s.clone());
    let o = call_tool(
        handler(Tool::Bash).as_ref(),
        json!({"command": "rm -rf x"}),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Deny);
    assert!(!o.ran);
    assert!(o.result.is_error);
    assert!(
        o.result
            .content
            .starts_with("denied by the permission gate:"),
        "{}",
        o.result.content
    );
    assert!(o.result.content.contains(&o.decision.reason));
    assert!(s.asked().is_empty());
}

#[tokio::test]
async fn plan_mode_denies_edits_with_the_plan_reason() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Plan);
    let o = call_tool(
        handler(Tool::Write).as_ref(),
        json!({"path": "x", "content": ""}),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Deny);
    assert!(
        o.result.content.contains("exit_plan_mode"),
        "{}",
        o.result.content
    );
    assert!(!p.path("x").exists());
}

#[tokio::test]
async fn an_ask_answered_once_runs_and_asks_again_next_time() {
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::AllowOnce, DecisionAnswer::AllowOnce]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let h = handler(Tool::Write);
    let o = call_tool(h.as_ref(), json!({"path": "n.txt", "content": "1\n"}), &ctx).await;
    assert_eq!(o.decision.verdict, Verdict::Ask);
    assert_eq!(o.answer, Some(DecisionAnswer::AllowOnce));
    assert!(o.ran && !o.result.is_error, "{}", o.result.content);
    assert_eq!(p.read("n.txt"), "1\n");
    let asked = s.asked();
    assert_eq!(asked.len(), 1);
    let DecisionRequest::Permission {
        tool,
        subject,
        input,
        decision,
        ..
    } = &asked[0]
    else {
        panic!("not a permission ask")
    };
    assert_eq!(*tool, Tool::Write);
    assert_eq!(subject, "n.txt");
    assert_eq!(input["content"], "1\n");
    assert_eq!(decision.verdict, Verdict::Ask);

    let o = call_tool(h.as_ref(), json!({"path": "n.txt", "content": "2\n"}), &ctx).await;
    assert_eq!(o.decision.verdict, Verdict::Ask);
    assert_eq!(s.asked().len(), 2);
    assert!(!p.path(".decode/settings.json").exists());
}

#[tokio::test]
async fn always_allow_saves_the_rule_and_the_next_call_is_not_asked() {
    let p = Project::new();
    p.write(".decode/settings.json", "{\"model\": \"keep me\"}\n");
    let s = Scripted::new(vec![DecisionAnswer::AlwaysAllow {
        target: Some(decode_protocol::SaveTarget::Project),
        rules: vec!["bash(echo hello)".into()],
    }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let h = handler(Tool::Bash);
    let o = call_tool(h.as_ref(), json!({"command": "echo hello"}), &ctx).await;
    assert_eq!(o.decision.verdict, Verdict::Ask);
    assert!(o.ran, "{}", o.result.content);
    assert_eq!(o.result.content, "hello");
    let note = o.note.unwrap();
    assert!(note.contains("bash(echo hello)"), "{note}");

    let saved: serde_json::Value = serde_json::from_str(&p.read(".decode/settings.json")).unwrap();
    assert_eq!(saved["permissions"]["allow"], json!(["bash(echo hello)"]));
    assert_eq!(saved["model"], "keep me");

    let o = call_tool(h.as_ref(), json!({"command": "echo hello"}), &ctx).await;
    assert_eq!(o.decision.verdict, Verdict::Allow);
    assert!(o.ran);
    assert_eq!(
        s.asked().len(),
        1,
        "the second identical call was not asked"
    );
}

#[tokio::test]
async fn always_allow_uses_the_gates_rules_when_none_are_given() {
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::AlwaysAllow {
        target: None,
        rules: vec![],
    }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(
        handler(Tool::Bash).as_ref(),
        json!({"command": "echo hi"}),
        &ctx,
    )
    .await;
    assert!(o.ran);
    let expected = o.decision.always_allow_rules.clone();
    assert!(!expected.is_empty());
    // By default: this project, only me.
    assert!(!p.path(".decode/settings.json").exists());
    let saved: serde_json::Value =
        serde_json::from_str(&p.read(".decode/settings.local.json")).unwrap();
    assert_eq!(saved["permissions"]["allow"], json!(expected));
}

#[tokio::test]
async fn a_malformed_settings_file_degrades_always_to_once() {
    let p = Project::new();
    let broken = "{\"permissions\": {\"allow\": [\n";
    p.write(".decode/settings.local.json", broken);
    let s = Scripted::new(vec![DecisionAnswer::AlwaysAllow {
        target: None,
        rules: vec!["bash(echo hi)".into()],
    }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(
        handler(Tool::Bash).as_ref(),
        json!({"command": "echo hi"}),
        &ctx,
    )
    .await;
    assert!(o.ran, "it runs once anyway");
    assert_eq!(o.result.content, "hi");
    let note = o.note.unwrap();
    assert!(note.contains("not saved"), "{note}");
    assert!(note.contains("allowed once"), "{note}");
    assert_eq!(
        p.read(".decode/settings.local.json"),
        broken,
        "nothing in the file is lost"
    );
}

#[tokio::test]
async fn a_denial_carries_the_persons_feedback() {
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::Deny {
        feedback: Some("use the staging folder".into()),
    }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(
        handler(Tool::Write).as_ref(),
        json!({"path": "x.txt", "content": "x"}),
        &ctx,
    )
    .await;
    assert!(!o.ran);
    assert!(o.result.is_error);
    assert!(
        o.result.content.starts_with("denied by the person: "),
        "{}",
        o.result.content
    );
    assert!(o.result.content.contains("use the staging folder"));
    assert!(!p.path("x.txt").exists());
}

#[tokio::test]
async fn nobody_to_answer_says_how_to_allow_it() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Default);
    let o = call_tool(
        handler(Tool::Write).as_ref(),
        json!({"path": "x.txt", "content": "x"}),
        &ctx,
    )
    .await;
    assert!(!o.ran);
    assert!(o.result.is_error);
    assert!(matches!(o.answer, Some(DecisionAnswer::Unavailable { .. })));
    let text = &o.result.content;
    assert!(text.contains("no one is here in tests"), "{text}");
    assert!(text.contains("edit mode"), "{text}");
    assert!(text.contains("permissions.allow"), "{text}");
    for rule in &o.decision.always_allow_rules {
        assert!(text.contains(rule.as_str()), "{text}");
    }
    assert!(!p.path("x.txt").exists());
}

#[tokio::test]
async fn capped_calls_never_save_a_rule() {
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::AlwaysAllow {
        target: None,
        rules: vec!["bash(git push)".into()],
    }]);
    let ctx = p.ctx_with(Mode::Edit, s.clone());
    // `git push` is capped (external effects): allow once only.
    let o = call_tool(
        handler(Tool::Bash).as_ref(),
        json!({"command": "git push 2>/dev/null; true"}),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Ask);
    assert!(o.decision.capped);
    assert!(o.ran);
    assert!(o.note.unwrap().contains("capped"));
    assert!(!p.path(".decode/settings.json").exists());

    let o = call_tool(
        handler(Tool::Bash).as_ref(),
        json!({"command": "git push"}),
        &p.ctx(Mode::Edit),
    )
    .await;
    assert!(o.result.content.contains("capped"), "{}", o.result.content);
}

#[tokio::test]
async fn control_tools_are_not_gated() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Plan);
    let o = call_tool(handler(Tool::Sleep).as_ref(), json!({"seconds": 0}), &ctx).await;
    assert_eq!(o.decision.verdict, Verdict::Allow);
    assert!(o.ran && !o.result.is_error);
}

#[tokio::test]
async fn tools_outside_the_agent_are_denied() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Default);
    ctx.active.select_agent("explore").unwrap();
    let o = call_tool(handler(Tool::Bash).as_ref(), json!({"command": "ls"}), &ctx).await;
    assert_eq!(o.decision.verdict, Verdict::Deny);
    assert!(
        o.result.content.contains("not available"),
        "{}",
        o.result.content
    );
}

#[tokio::test]
async fn invalid_input_is_not_run_nor_asked() {
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::AllowOnce]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(
        handler(Tool::Write).as_ref(),
        json!({"path": "x.txt"}),
        &ctx,
    )
    .await;
    assert!(!o.ran);
    assert!(o.result.is_error);
    assert!(o.result.content.contains("content"), "{}", o.result.content);
    assert!(s.asked().is_empty());
}

#[tokio::test]
async fn the_gate_judges_bash_in_the_sessions_working_directory() {
    // After a `cd .git` that stays in the session, `hooks/pre-commit` names git
    // internals: never automatic, even in auto mode (the gate resolves relative paths
    // against the session's directory, not the project root).
    let p = Project::new();
    std::fs::create_dir_all(p.path(".git/hooks")).expect("mkdir");
    let s = Scripted::new(vec![DecisionAnswer::Deny { feedback: None }]);
    let ctx = p.ctx_with(Mode::Auto, s.clone());
    ctx.session.set_cwd(p.path(".git"));
    let o = call_tool(
        handler(Tool::Bash).as_ref(),
        json!({"command": "echo x > hooks/pre-commit"}),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Ask, "{}", o.decision.reason);
    assert!(o.decision.capped);
    assert!(!o.ran);
    assert!(!p.path(".git/hooks/pre-commit").exists());
}

#[tokio::test]
async fn always_allow_lands_in_the_local_file_kept_out_of_git_by_default() {
    let p = Project::new();
    std::fs::create_dir_all(p.path(".git/info")).unwrap();
    std::fs::write(
        p.path(".git/info/exclude"),
        "# git ls-files --others\n*.log",
    )
    .unwrap();
    p.write(
        ".decode/settings.json",
        "{\"permissions\": {\"deny\": [\"bash(rm *)\"]}}\n",
    );
    let shared_before = p.read(".decode/settings.json");
    let s = Scripted::new(vec![DecisionAnswer::AlwaysAllow {
        target: None,
        rules: vec!["bash(echo hello)".into()],
    }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let h = handler(Tool::Bash);
    let o = call_tool(h.as_ref(), json!({"command": "echo hello"}), &ctx).await;
    assert!(o.ran, "{}", o.result.content);
    let note = o.note.unwrap();
    assert!(note.contains("settings.local.json"), "{note}");
    let saved: serde_json::Value =
        serde_json::from_str(&p.read(".decode/settings.local.json")).unwrap();
    assert_eq!(saved["permissions"]["allow"], json!(["bash(echo hello)"]));
    assert_eq!(
        p.read(".decode/settings.json"),
        shared_before,
        "the team's file is untouched"
    );
    assert_eq!(
        p.read(".git/info/exclude"),
        "# git ls-files --others\n*.log\n/.decode/settings.local.json\n"
    );
    // The local rule counts at once; the next identical call is not asked.
    let o = call_tool(h.as_ref(), json!({"command": "echo hello"}), &ctx).await;
    assert_eq!(o.decision.verdict, Verdict::Allow, "{}", o.decision.reason);
    assert!(
        o.decision.reason.contains("(local)"),
        "{}",
        o.decision.reason
    );
    assert_eq!(s.asked().len(), 1);
}

#[tokio::test]
async fn always_allow_to_the_shared_file_when_the_person_chose_it() {
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::AlwaysAllow {
        target: Some(decode_protocol::SaveTarget::Project),
        rules: vec!["bash(echo hi)".into()],
    }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(
        handler(Tool::Bash).as_ref(),
        json!({"command": "echo hi"}),
        &ctx,
    )
    .await;
    assert!(o.ran);
    assert!(!p.path(".decode/settings.local.json").exists());
    assert!(p.read(".decode/settings.json").contains("bash(echo hi)"));
}

#[tokio::test]
async fn an_edit_that_would_fail_is_not_put_to_the_person() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let s = Scripted::new(vec![DecisionAnswer::AllowOnce]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let edit = json!({"path": "a.txt", "old_string": "one", "new_string": "two"});
    // Not read in this session: the edit would fail, so nobody is asked.
    let o = call_tool(handler(Tool::Edit).as_ref(), edit.clone(), &ctx).await;
    assert!(!o.ran && o.result.is_error);
    assert!(
        o.result.content.contains("has not been read"),
        "{}",
        o.result.content
    );
    assert!(s.asked().is_empty());
    // Read, then the same edit is asked about and the approval is used.
    let r = call_tool(handler(Tool::Read).as_ref(), json!({"path": "a.txt"}), &ctx).await;
    assert!(r.ran);
    let o = call_tool(handler(Tool::Edit).as_ref(), edit, &ctx).await;
    assert_eq!(s.asked().len(), 1);
    assert!(o.ran && !o.result.is_error, "{}", o.result.content);
    assert_eq!(p.read("a.txt"), "two\n");
    // A text that is not in the file is not asked about either.
    let o = call_tool(
        handler(Tool::Edit).as_ref(),
        json!({"path": "a.txt", "old_string": "absent", "new_string": "x"}),
        &ctx,
    )
    .await;
    assert!(
        o.result.content.contains("was not found"),
        "{}",
        o.result.content
    );
    assert_eq!(s.asked().len(), 1);
}

#[tokio::test]
async fn a_write_over_a_file_changed_since_it_was_read_is_not_put_to_the_person() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let s = Scripted::new(vec![]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    call_tool(handler(Tool::Read).as_ref(), json!({"path": "a.txt"}), &ctx).await;
    p.write("a.txt", "changed by someone else\n");
    let o = call_tool(
        handler(Tool::Write).as_ref(),
        json!({"path": "a.txt", "content": "mine\n"}),
        &ctx,
    )
    .await;
    assert!(!o.ran);
    assert!(
        o.result.content.contains("changed on disk"),
        "{}",
        o.result.content
    );
    assert!(s.asked().is_empty());
    assert_eq!(p.read("a.txt"), "changed by someone else\n");
}

#[tokio::test]
async fn an_ask_shows_the_agents_description_of_the_command() {
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::AllowOnce]);
    let ctx = p
        .ctx_with(Mode::Default, s.clone())
        .with_intent(Some("I will check the folder.".into()));
    let o = call_tool(
        handler(Tool::Bash).as_ref(),
        json!({"command": "echo hi", "description": "Say hello"}),
        &ctx,
    )
    .await;
    assert!(o.ran, "{}", o.result.content);
    assert_eq!(o.result.exit_code, Some(0));
    assert!(o.result.duration_ms.is_some());
    let DecisionRequest::Permission { intent, .. } = &s.asked()[0] else {
        panic!("not a permission ask")
    };
    // The call's own description first; the agent's last sentence otherwise.
    assert_eq!(intent.as_deref(), Some("Say hello"));
    let s2 = Scripted::new(vec![DecisionAnswer::AllowOnce]);
    let ctx = p
        .ctx_with(Mode::Default, s2.clone())
        .with_intent(Some("I will check the folder.".into()));
    let o = call_tool(
        handler(Tool::Bash).as_ref(),
        json!({"command": "exit 3"}),
        &ctx,
    )
    .await;
    assert_eq!(o.result.exit_code, Some(3));
    let DecisionRequest::Permission { intent, .. } = &s2.asked()[0] else {
        panic!("not a permission ask")
    };
    assert_eq!(intent.as_deref(), Some("I will check the folder."));
}

#[test]
fn the_last_sentence_is_what_the_agent_is_about_to_do() {
    use decode_engine::tools::last_sentence;
    assert_eq!(
        last_sentence("The tests failed. Let me run them again with logs.").as_deref(),
        Some("Let me run them again with logs.")
    );
    assert_eq!(
        last_sentence("First paragraph.\n\nNow I'll install it:").as_deref(),
        Some("Now I'll install it:")
    );
    assert_eq!(last_sentence("   ").as_deref(), None);
    let long = "word ".repeat(200);
    assert!(last_sentence(&long).unwrap().chars().count() <= 301);
}

/// The call's start is told its verdict once, from the tool's own judging (the one
/// the run acts on): an edited command judged again is not a second start, and a
/// fetch of a name is reported with what its host resolved to.
#[tokio::test]
async fn the_start_is_told_the_first_verdict_once() {
    use std::sync::{Arc, Mutex};
    let p = Project::new();
    let told: Arc<Mutex<Vec<(Verdict, String)>>> = Arc::default();
    let tell = {
        let told = Arc::clone(&told);
        Arc::new(move |d: &decode_policy::Decision| {
            told.lock().unwrap().push((d.verdict, d.reason.clone()));
        })
    };
    let s = Scripted::new(vec![
        DecisionAnswer::EditCommand {
            command: "echo edited".into(),
        },
        DecisionAnswer::AllowOnce,
    ]);
    let ctx = p
        .ctx_with(Mode::Default, s.clone())
        .with_on_judged(tell.clone());
    let o = call_tool(
        handler(Tool::Bash).as_ref(),
        json!({"command": "echo original"}),
        &ctx,
    )
    .await;
    assert!(o.ran, "{}", o.result.content);
    assert_eq!(s.asked().len(), 2);
    assert_eq!(told.lock().unwrap().len(), 1);
    assert_eq!(told.lock().unwrap()[0].0, Verdict::Ask);

    told.lock().unwrap().clear();
    let s = Scripted::new(vec![DecisionAnswer::Deny { feedback: None }]);
    let ctx = p.ctx_with(Mode::Auto, s.clone()).with_on_judged(tell);
    let o = call_tool(
        handler(Tool::WebFetch).as_ref(),
        json!({"url": "http://localhost:9/x"}),
        &ctx,
    )
    .await;
    assert!(!o.ran);
    let told = told.lock().unwrap();
    assert_eq!(told.len(), 1);
    assert_eq!(told[0].0, Verdict::Ask);
    assert!(told[0].1.contains("resolves to"), "{}", told[0].1);
}
