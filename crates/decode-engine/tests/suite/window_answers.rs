//! The answers the window adds to the ask path: allow for this session (in memory,
//! never written), an edited command (judged again from the start), and the check of
//! rules a person edits before "always allow" saves them.

use crate::tools_support;

use std::path::Path;

use decode_core::decision::{DecisionAnswer, DecisionRequest};
use decode_engine::rule_check::{check_rules, suggest_broader};
use decode_engine::tools::{call_tool, handler};
use decode_policy::{Call, Mode, Tool, Verdict};
use serde_json::json;
use tools_support::{Project, Scripted};

fn bash(command: &str) -> serde_json::Value {
    json!({ "command": command })
}

#[tokio::test]
async fn allow_for_session_covers_the_same_call_in_this_session_and_writes_nothing() {
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::AllowForSession { rules: vec![] }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let h = handler(Tool::Bash);

    let first = call_tool(h.as_ref(), bash("echo one"), &ctx).await;
    assert!(first.ran, "{}", first.result.content);
    assert!(first
        .note
        .as_deref()
        .unwrap()
        .contains("allowed for this session"));
    assert_eq!(ctx.session_rules.list(), ["bash(echo one)"]);

    let second = call_tool(h.as_ref(), bash("echo one"), &ctx).await;
    assert!(second.ran);
    assert_eq!(second.decision.verdict, Verdict::Ask);
    assert!(second.answer.is_none(), "asked again: {:?}", second.answer);
    assert_eq!(s.asked().len(), 1);
    assert!(!p.path(".decode/settings.json").exists());

    // Another command still asks; another session knows nothing of the rule.
    let other = call_tool(h.as_ref(), bash("echo two"), &ctx).await;
    assert!(!other.ran);
    assert_eq!(s.asked().len(), 2);
    let fresh = p.ctx_with(Mode::Default, Scripted::new(vec![]));
    assert!(!call_tool(h.as_ref(), bash("echo one"), &fresh).await.ran);
}

#[tokio::test]
async fn session_rules_never_lift_a_capped_call() {
    let p = Project::new();
    let s = Scripted::new(vec![]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    ctx.session_rules.add(&["bash(git *)".to_string()]);
    let o = call_tool(handler(Tool::Bash).as_ref(), bash("git push"), &ctx).await;
    assert!(o.decision.capped);
    assert!(!o.ran);
    assert_eq!(s.asked().len(), 1, "a capped call must be asked");
    // An uncapped one is lifted.
    let o = call_tool(handler(Tool::Bash).as_ref(), bash("git status"), &ctx).await;
    assert!(o.ran);
    assert_eq!(s.asked().len(), 1);
}

#[tokio::test]
async fn an_edited_command_is_judged_again_and_runs_as_edited() {
    let p = Project::new();
    let s = Scripted::new(vec![
        DecisionAnswer::EditCommand {
            command: "echo edited".into(),
        },
        DecisionAnswer::AllowOnce,
    ]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(handler(Tool::Bash).as_ref(), bash("echo original"), &ctx).await;
    assert!(o.ran, "{}", o.result.content);
    assert_eq!(o.edited_command.as_deref(), Some("echo edited"));
    assert!(
        o.result.content.contains("edited your command"),
        "{}",
        o.result.content
    );
    assert!(o.result.content.contains("edited\n") || o.result.content.ends_with("edited"));
    assert!(!o.result.content.contains("original\n"));
    let asked = s.asked();
    assert_eq!(asked.len(), 2);
    let DecisionRequest::Permission {
        subject,
        edited,
        cwd,
        ..
    } = &asked[1]
    else {
        panic!("not a permission ask")
    };
    assert_eq!(subject, "echo edited");
    assert!(*edited);
    assert_eq!(cwd.as_deref(), Some(p.root.to_str().unwrap()));
}

#[tokio::test]
async fn an_edit_into_a_denied_command_is_denied_without_asking_again() {
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["bash(rm *)"]}}"#,
    );
    let s = Scripted::new(vec![DecisionAnswer::EditCommand {
        command: "rm -rf build".into(),
    }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(handler(Tool::Bash).as_ref(), bash("ls"), &ctx).await;
    assert!(!o.ran);
    assert_eq!(o.decision.verdict, Verdict::Deny);
    assert!(o.result.content.contains("denied by the permission gate"));
    assert_eq!(s.asked().len(), 1);
}

#[tokio::test]
async fn always_allow_refuses_runner_wildcards_and_rules_that_do_not_cover() {
    for rules in [vec!["bash(sh *)"], vec!["bash(ls)"], vec!["bash(echo"]] {
        let p = Project::new();
        let s = Scripted::new(vec![DecisionAnswer::AlwaysAllow {
            target: None,
            rules: rules.iter().map(|r| r.to_string()).collect(),
        }]);
        let ctx = p.ctx_with(Mode::Default, s);
        let o = call_tool(handler(Tool::Bash).as_ref(), bash("echo hi"), &ctx).await;
        assert!(o.ran, "the person allowed it: it runs once");
        let note = o.note.unwrap();
        assert!(note.starts_with("not saved"), "{rules:?}: {note}");
        assert!(
            !p.path(".decode/settings.json").exists()
                && !p.path(".decode/settings.local.json").exists(),
            "{rules:?} was saved"
        );
    }
}

#[tokio::test]
async fn always_allow_saves_a_broader_rule_that_passes_the_check() {
    let p = Project::new();
    let s = Scripted::new(vec![DecisionAnswer::AlwaysAllow {
        target: None,
        rules: vec!["bash(npm run *)".into()],
    }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    let o = call_tool(
        handler(Tool::Bash).as_ref(),
        bash("npm run lint --if-present"),
        &ctx,
    )
    .await;
    assert!(o.note.unwrap().starts_with("saved"));
    assert!(p
        .read(".decode/settings.local.json")
        .contains("bash(npm run *)"));
    let DecisionRequest::Permission {
        suggested_rules, ..
    } = &s.asked()[0]
    else {
        panic!()
    };
    assert_eq!(suggested_rules, &["bash(npm run *)"]);
}

#[tokio::test]
async fn a_write_ask_carries_the_diff_it_would_make() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let s = Scripted::new(vec![DecisionAnswer::Deny { feedback: None }]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    call_tool(
        handler(Tool::Write).as_ref(),
        json!({"path": "a.txt", "content": "two\n"}),
        &ctx,
    )
    .await;
    let DecisionRequest::Permission { diff, cwd, .. } = &s.asked()[0] else {
        panic!()
    };
    let diff = diff.as_deref().unwrap();
    assert!(diff.contains("-one") && diff.contains("+two"), "{diff}");
    assert!(cwd.is_none());
}

#[test]
fn the_rule_check_covers_only_what_was_uncovered() {
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["bash(git *)"]}}"#,
    );
    let state = p.state(Mode::Default);
    let call = Call::new(Tool::Bash, "git status && npm test");
    let d = state.decide_in(&call, &p.root);
    assert_eq!(d.always_allow_rules, ["bash(npm test)"]);
    let check = |rules: &[&str]| {
        let rules: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
        check_rules(&state, &call, Path::new(&p.root), &d, &rules)
    };
    assert!(check(&["bash(npm test)"]).ok);
    assert!(check(&["bash(npm *)"]).ok);
    let c = check(&["bash(npm install)"]);
    assert!(!c.ok);
    assert!(c.problems[0].contains("`npm test`"), "{:?}", c.problems);
    let c = check(&["bash(sudo *)", "bash(npm test)"]);
    assert!(!c.ok && c.problems[0].contains("sudo"), "{:?}", c.problems);
    assert!(!check(&[]).ok);
    assert!(!check(&["bash(npm test"]).ok);
}

#[test]
fn a_scope_ask_is_lifted_only_by_a_rule_naming_the_path() {
    let p = Project::new();
    let state = p.state(Mode::Default);
    let call = Call::new(Tool::Read, "/etc/hostname");
    let d = state.decide_in(&call, &p.root);
    assert_eq!(d.verdict, Verdict::Ask);
    let rules = d.always_allow_rules.clone();
    assert!(check_rules(&state, &call, &p.root, &d, &rules).ok);
    // A rule anchored outside the project lifts the scope (the gate's own rule)...
    assert!(check_rules(&state, &call, &p.root, &d, &["read(/etc/*)".to_string()]).ok);
    // ...one for another file does not.
    assert!(
        !check_rules(
            &state,
            &call,
            &p.root,
            &d,
            &["read(/etc/hosts)".to_string()]
        )
        .ok
    );
}

#[test]
fn broader_suggestions_are_safe_or_absent() {
    let p = Project::new();
    let state = p.state(Mode::Default);
    let suggest = |cmd: &str| {
        let call = Call::new(Tool::Bash, cmd);
        let d = state.decide_in(&call, &p.root);
        suggest_broader(&state, &call, &p.root, &d)
    };
    assert_eq!(suggest("npm run build"), ["bash(npm run *)"]);
    assert_eq!(suggest("cargo test -p core"), ["bash(cargo test *)"]);
    assert!(suggest("python3 x.py").is_empty());
    assert!(suggest("ls").is_empty());
    assert!(suggest("git push").is_empty(), "capped: nothing to keep");
}
