//! Tools never reach past the gate: searches hide files a read deny rule
//! covers and skip (counting) those an ask rule covers; a glob pattern
//! cannot leave its root unjudged; a padded path is used exactly as judged.

use crate::tools_support;

use decode_engine::tools::{call_tool, handler};
use decode_policy::{Mode, Tool, Verdict};
use serde_json::json;
use tools_support::{exec, Project, Scripted};

fn rules(p: &Project, ask: &[&str], deny: &[&str]) {
    p.write(
        ".decode/settings.json",
        &json!({"permissions": {"ask": ask, "deny": deny}}).to_string(),
    );
}

#[tokio::test]
async fn grep_never_shows_a_denied_file() {
    let p = Project::new();
    p.write(".env", "TOKEN=hunter2\n");
    p.write("secrets/key.txt", "TOKEN=key\n");
    p.write("notes/todo.md", "TOKEN=later\n");
    p.write("src/main.rs", "// TOKEN is read from the environment\n");
    rules(&p, &["read(notes/**)"], &["read(.env)", "read(secrets/**)"]);
    for mode in ["content", "files", "count"] {
        let ctx = p.ctx(Mode::Auto);
        let r = exec(
            &ctx,
            Tool::Grep,
            json!({"pattern": "TOKEN", "output_mode": mode}),
        )
        .await;
        assert!(!r.is_error, "{}", r.content);
        assert!(!r.content.contains("hunter2"), "{mode}: {}", r.content);
        assert!(!r.content.contains(".env"), "{mode}: {}", r.content);
        assert!(!r.content.contains("secrets"), "{mode}: {}", r.content);
        assert!(!r.content.contains("later"), "{mode}: {}", r.content);
        assert!(r.content.contains("src/main.rs"), "{mode}: {}", r.content);
        assert!(
            r.content.contains("1 file not searched"),
            "{mode}: {}",
            r.content
        );
    }
    // Searching the denied file itself is denied by the gate.
    let ctx = p.ctx(Mode::Auto);
    let o = call_tool(
        handler(Tool::Grep).as_ref(),
        json!({"pattern": "TOKEN", "path": ".env"}),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Deny);
}

#[tokio::test]
async fn glob_never_lists_a_denied_file() {
    let p = Project::new();
    p.write("secrets/a.key", "");
    p.write("secrets/b.key", "");
    p.write("keys/c.key", "");
    p.write("notes/d.key", "");
    rules(
        &p,
        &["read(notes/**)"],
        &["read(secrets/**)", "read(**/c.key)"],
    );
    let ctx = p.ctx(Mode::Auto);
    let r = exec(&ctx, Tool::Glob, json!({"pattern": "**/*.key"})).await;
    assert!(!r.is_error, "{}", r.content);
    assert!(!r.content.contains("secrets"), "{}", r.content);
    assert!(!r.content.contains("c.key"), "{}", r.content);
    assert!(!r.content.contains("d.key"), "{}", r.content);
    assert!(
        r.content.contains("1 matching file not listed"),
        "{}",
        r.content
    );
    // Globbing inside the denied folder is denied outright.
    let o = call_tool(
        handler(Tool::Glob).as_ref(),
        json!({"pattern": "secrets/*"}),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Deny);
}

#[tokio::test]
async fn glob_patterns_outside_the_root_are_judged_as_reads_of_their_folder() {
    let p = Project::new();
    p.write("src/a.rs", "");
    let s = Scripted::new(vec![]);
    let ctx = p.ctx_with(Mode::Default, s.clone());
    for pattern in ["/etc/pass*", "../../etc/pass*", "../*"] {
        let o = call_tool(
            handler(Tool::Glob).as_ref(),
            json!({"pattern": pattern}),
            &ctx,
        )
        .await;
        assert_eq!(
            o.decision.verdict,
            Verdict::Ask,
            "{pattern}: {}",
            o.decision.reason
        );
        assert!(!o.ran, "{pattern}");
    }
    assert_eq!(s.asked().len(), 3);
    // Inside the root: allowed, and the tool searches exactly that folder.
    let o = call_tool(
        handler(Tool::Glob).as_ref(),
        json!({"pattern": "src/*.rs"}),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Allow);
    assert_eq!(o.result.content, "src/a.rs");
}

#[tokio::test]
async fn a_padded_path_is_used_exactly_as_judged() {
    let p = Project::new();
    let ctx = p.one_shot_ctx(Mode::Auto);
    let o = call_tool(
        handler(Tool::Write).as_ref(),
        json!({"path": " ~/.bashrc", "content": "x\n"}),
        &ctx,
    )
    .await;
    assert!(o.ran, "{}", o.decision.reason);
    assert!(!p.home.join(".bashrc").exists());
    assert_eq!(
        std::fs::read_to_string(p.root.join(" ~/.bashrc")).unwrap(),
        "x\n"
    );
    // The untrimmed path asks (a shell start-up file).
    let o = call_tool(
        handler(Tool::Write).as_ref(),
        json!({"path": "~/.bashrc", "content": "x\n"}),
        &ctx,
    )
    .await;
    assert_eq!(o.decision.verdict, Verdict::Ask);
    assert!(!o.ran);
    assert!(!p.home.join(".bashrc").exists());
}
