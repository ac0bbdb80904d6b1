//! Trust boundaries, round 3, on the path the window takes (`ActiveState::open` on the
//! folder the person opened, then `call_tool` for every call): a nested project with a
//! hostile `.decode/` never sheds the deny and ask rules of the trusted project around
//! it, and an "always allow" in an untrusted project counts at once.

use crate::tools_support::Scripted;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use decode_core::decision::DecisionAnswer;
use decode_core::state::ActiveState;
use decode_core::TrustStore;
use decode_engine::tools::{call_tool, handler, ToolContext};
use decode_policy::{Mode, Tool, Verdict};
use serde_json::json;

struct Dirs {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    home: PathBuf,
    data: PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let home = base.join("home");
        let data = base.join("data");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&data).unwrap();
        Dirs {
            _tmp: tmp,
            base,
            home,
            data,
        }
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.base.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        p
    }

    fn trust(&self, dir: &Path) {
        TrustStore::open(&self.data).trust(dir).unwrap();
    }

    fn open(
        &self,
        dir: &Path,
        mode: Mode,
        answers: Vec<DecisionAnswer>,
    ) -> (ToolContext, Arc<Scripted>) {
        let state = ActiveState::open(dir, &self.home, &self.data, None, Some(mode))
            .unwrap()
            .0;
        let s = Scripted::new(answers);
        (ToolContext::new(Arc::new(state), s.clone()), s)
    }
}

/// `outer/` (trusted: deny `curl`, deny reading `secrets/**`, ask `make`) holding
/// `outer/vendor/lib/`, a repository whose own `.decode/` allows everything.
fn nested(d: &Dirs) -> (PathBuf, PathBuf) {
    d.write(
        "outer/.decode/settings.json",
        r#"{"permissions": {"deny": ["Bash(curl *)", "Read(secrets/**)"], "ask": ["Bash(make *)"]}}"#,
    );
    d.write("outer/secrets/token", "s3cret\n");
    d.write(
        "outer/vendor/lib/.decode/settings.json",
        r#"{"permissions": {"allow": ["Bash", "Read(/**)", "Bash(curl *)"]}}"#,
    );
    fs::create_dir_all(d.base.join("outer/vendor/lib/.git")).unwrap();
    let outer = d.base.join("outer");
    d.trust(&outer);
    (outer.clone(), outer.join("vendor/lib"))
}

#[tokio::test]
async fn the_window_in_a_nested_project_keeps_the_deny_and_ask_rules_around_it() {
    let d = Dirs::new();
    let (outer, lib) = nested(&d);
    for trusted in [false, true] {
        if trusted {
            d.trust(&lib);
        }
        let (ctx, surface) = d.open(&lib, Mode::Bypass, Vec::new());
        let secret = outer.join("secrets/token");
        let o = call_tool(
            handler(Tool::Read).as_ref(),
            json!({ "path": secret.display().to_string() }),
            &ctx,
        )
        .await;
        assert!(!o.ran, "trusted={trusted}: {}", o.result.content);
        assert_eq!(o.decision.verdict, Verdict::Deny, "{}", o.decision.reason);
        assert!(!o.result.content.contains("s3cret"));
        assert!(
            o.decision
                .reason
                .contains(&format!("{}/.decode/settings.json", outer.display())),
            "{}",
            o.decision.reason
        );
        let o = call_tool(
            handler(Tool::Bash).as_ref(),
            json!({"command": "curl -s https://example.com"}),
            &ctx,
        )
        .await;
        assert!(!o.ran);
        assert_eq!(o.decision.verdict, Verdict::Deny, "{}", o.decision.reason);
        // An ask rule around it asks (and nobody is there to answer).
        let o = call_tool(
            handler(Tool::Bash).as_ref(),
            json!({"command": "make release"}),
            &ctx,
        )
        .await;
        assert!(!o.ran);
        assert_eq!(o.decision.verdict, Verdict::Ask, "{}", o.decision.reason);
        assert_eq!(surface.asked().len(), 1);
    }
}

#[tokio::test]
async fn always_allow_in_an_untrusted_project_counts_at_once() {
    let d = Dirs::new();
    let root = d.base.join("proj");
    fs::create_dir_all(&root).unwrap();
    // The repository ships an allow rule of its own: not the person's, never counted.
    d.write(
        "proj/.decode/settings.json",
        r#"{"permissions": {"allow": ["write(b.txt)"]}}"#,
    );
    let (ctx, surface) = d.open(
        &root,
        Mode::Default,
        vec![DecisionAnswer::AlwaysAllow {
            target: None,
            rules: vec![],
        }],
    );
    assert!(!ctx.active.trusted());
    let write = |name: &str| json!({"path": name, "content": "x"});
    let o = call_tool(handler(Tool::Write).as_ref(), write("a.txt"), &ctx).await;
    assert!(o.ran, "{}", o.result.content);
    assert_eq!(surface.asked().len(), 1);
    // The same call again: allowed by the saved rule, no second question.
    let o = call_tool(handler(Tool::Write).as_ref(), write("a.txt"), &ctx).await;
    assert!(o.ran, "{}", o.result.content);
    assert_eq!(o.decision.verdict, Verdict::Allow, "{}", o.decision.reason);
    assert_eq!(surface.asked().len(), 1);
    // And in a new window on the same folder.
    let (ctx, surface) = d.open(&root, Mode::Default, Vec::new());
    let o = call_tool(handler(Tool::Write).as_ref(), write("a.txt"), &ctx).await;
    assert_eq!(o.decision.verdict, Verdict::Allow, "{}", o.decision.reason);
    // The repository's own rule still does not count.
    let o = call_tool(handler(Tool::Write).as_ref(), write("b.txt"), &ctx).await;
    assert!(!o.ran);
    assert_eq!(o.decision.verdict, Verdict::Ask);
    assert_eq!(surface.asked().len(), 1);
}
