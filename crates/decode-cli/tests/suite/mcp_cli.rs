//! `decode mcp` and MCP tools in `decode check` / `decode tool` (docs/mcp.md), with the
//! hostile test server of decode-engine (tests/data/hostile_mcp.py, Python's standard
//! library only).

use crate::common;

use common::{json, stderr, stdout, Env};

fn hostile() -> String {
    format!(
        "{}/../decode-engine/tests/data/hostile_mcp.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn check_judges_an_mcp_tool_like_any_tool() {
    let env = Env::new();
    let o = env.run(&["check", "--json", "mcp__git__status", r#"{"b":1,"a":2}"#]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["verdict"], "ask");
    assert_eq!(v["fragments"][0]["text"], r#"{"a":2,"b":1}"#);
    let o = env.run(&[
        "check",
        "--json",
        "--mode",
        "plan",
        "mcp__git__status",
        "{}",
    ]);
    assert_eq!(json(&o)["verdict"], "deny");
    let o = env.run(&[
        "check",
        "--json",
        "--agent",
        "explore",
        "mcp__git__status",
        "{}",
    ]);
    assert_eq!(json(&o)["verdict"], "deny");
    let o = env.run(&["check", "mcp__bad name", "{}"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("mcp__SERVER__TOOL"), "{}", stderr(&o));
}

#[test]
fn add_list_tool_and_remove_a_server() {
    let env = Env::new();
    let script = hostile();
    let o = env.run(&["mcp", "add", "h", "--", "python3", &script]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(&["mcp", "list", "--json"]);
    let v = json(&o);
    assert_eq!(v["servers"][0]["name"], "h");
    assert_eq!(v["servers"][0]["status"], "stopped");
    // A call through the gate: bypass runs it, the result is escaped.
    let o = env.run(&["tool", "--mode", "bypass", "mcp__h__escapes", "{}"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stdout(&o).contains('\u{1b}'));
    assert!(stdout(&o).contains("\\x1b[2J"), "{}", stdout(&o));
    // No terminal to ask: default mode does not run it.
    let o = env.run(&["tool", "mcp__h__wipe", r#"{"target":"x"}"#]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("readOnlyTools"), "{}", stderr(&o));
    // The person marks it read-only in their own settings: it runs.
    env.write_home(
        ".config/decode/settings.json",
        r#"{"mcp": {"h": {"readOnlyTools": ["wipe"]}}}"#,
    );
    let o = env.run(&["tool", "mcp__h__wipe", r#"{"target":"x"}"#]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "wiped x");
    let o = env.run(&["mcp", "tools", "h"]);
    assert!(
        stdout(&o)
            .contains("mcp__h__wipe  [read-only (your mark); server says read-only (not trusted)]"),
        "{}",
        stdout(&o)
    );
    let o = env.run(&["mcp", "remove", "h"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(&["mcp", "list", "--json"]);
    assert_eq!(json(&o)["servers"].as_array().unwrap().len(), 0);
}

#[test]
fn a_project_server_waits_for_trust_and_approval() {
    let env = Env::new();
    env.write(
        ".mcp.json",
        &format!(
            r#"{{"mcpServers": {{"p": {{"command": "python3", "args": ["{}"]}}}}}}"#,
            hostile()
        ),
    );
    let o = env.run(&["mcp", "list", "--json"]);
    assert_eq!(json(&o)["servers"][0]["status"], "untrusted");
    let project = env.project.to_string_lossy().to_string();
    assert!(env.run(&["trust", &project]).status.success());
    let o = env.run(&["mcp", "list", "--json"]);
    assert_eq!(json(&o)["servers"][0]["status"], "needs_approval");
    let o = env.run(&["tool", "--mode", "bypass", "mcp__p__wipe", "{}"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("approve"), "{}", stderr(&o));
    assert!(env.run(&["mcp", "approve", "p"]).status.success());
    let o = env.run(&[
        "tool",
        "--mode",
        "bypass",
        "mcp__p__wipe",
        r#"{"target":"y"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "wiped y");
}
