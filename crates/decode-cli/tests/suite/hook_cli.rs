//! `decode hook claude-code|gemini-cli` as each agent runs it: one event on stdin (the
//! fixtures under tests/data/hooks are the agents' documented shapes), the decision
//! JSON on stdout. `/home/user/my-project` in a fixture is replaced by the test's
//! project.

use crate::common;

use std::process::Output;

use common::{stderr, stdout, Env};
use serde_json::Value;

const PLACEHOLDER: &str = "/home/user/my-project";

fn fixture(agent: &str, name: &str) -> String {
    let path = format!(
        "{}/tests/data/hooks/{agent}/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A project with a git folder, a deny rule and an allow rule (the allow rule counts
/// only once the project is trusted).
fn project() -> Env {
    let env = Env::new();
    std::fs::create_dir_all(env.project.join(".git")).unwrap();
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["Bash(rm -rf:*)"], "allow": ["Bash(npm test)"]}}"#,
    );
    env.write("src/main.rs", "fn main() {}\n");
    env
}

fn hook(env: &Env, agent: &str, event: &str, extra: &[&str]) -> Output {
    let event = event.replace(PLACEHOLDER, env.project.to_str().unwrap());
    let mut args = vec!["hook", agent];
    args.extend_from_slice(extra);
    env.run_stdin(&args, &event)
}

/// Claude Code's decision and reason, or `None` for no decision (empty stdout).
fn claude(o: &Output) -> Option<(String, String)> {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    let out = stdout(o);
    if out.is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(&out).unwrap();
    let h = &v["hookSpecificOutput"];
    assert_eq!(h["hookEventName"], "PreToolUse", "{out}");
    Some((
        h["permissionDecision"].as_str().unwrap().to_string(),
        h["permissionDecisionReason"].as_str().unwrap().to_string(),
    ))
}

fn gemini(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).unwrap()
}

fn with_mode(event: &str, mode: &str) -> String {
    let mut v: Value = serde_json::from_str(event).unwrap();
    v["permission_mode"] = Value::String(mode.into());
    v.to_string()
}

#[test]
fn claude_code_every_tool_and_verdict() {
    let env = project();
    let cases = [
        // (fixture, permission_mode, expected decision)
        ("bash", "default", Some("ask")),
        ("bash", "bypassPermissions", Some("allow")),
        ("bash-destructive", "bypassPermissions", Some("deny")),
        ("read", "default", Some("allow")),
        ("glob", "default", Some("allow")),
        ("grep", "default", Some("allow")),
        ("webfetch", "default", Some("allow")),
        ("write", "default", Some("ask")),
        ("write", "acceptEdits", Some("allow")),
        ("write", "plan", Some("deny")),
        ("edit", "acceptEdits", Some("allow")),
        ("multiedit", "dontAsk", Some("ask")),
        ("multiedit", "acceptEdits", Some("allow")),
        // Never automatic, whatever the mode says.
        ("subagent-write", "bypassPermissions", Some("allow")),
        ("subagent-write", "acceptEdits", Some("ask")),
        ("mcp", "bypassPermissions", None),
    ];
    for (name, mode, expected) in cases {
        let event = with_mode(&fixture("claude-code", name), mode);
        let got = claude(&hook(&env, "claude-code", &event, &[]));
        assert_eq!(
            got.as_ref().map(|(d, _)| d.as_str()),
            expected,
            "{name} in {mode}: {got:?}"
        );
        if let Some((_, reason)) = got {
            assert!(reason.starts_with("Decode: "), "{reason}");
            assert!(!reason.contains('\n'), "{reason}");
        }
    }
    // The reason names what decided.
    let (_, reason) = claude(&hook(
        &env,
        "claude-code",
        &fixture("claude-code", "bash-destructive"),
        &[],
    ))
    .unwrap();
    assert!(reason.contains("deny rule"), "{reason}");
    assert!(reason.contains("bash(rm -rf:*)"), "{reason}");
}

#[test]
fn the_mode_comes_from_the_event_then_the_flag_then_the_agent() {
    let env = project();
    let bash = fixture("claude-code", "bash");
    // A mode Decode does not map (`auto`): the flag, else the agent's (default).
    let auto = with_mode(&bash, "auto");
    assert_eq!(
        claude(&hook(&env, "claude-code", &auto, &[])).unwrap().0,
        "ask"
    );
    assert_eq!(
        claude(&hook(&env, "claude-code", &auto, &["--mode", "bypass"]))
            .unwrap()
            .0,
        "allow"
    );
    // The event's own mode beats the flag.
    assert_eq!(
        claude(&hook(&env, "claude-code", &bash, &["--mode", "bypass"]))
            .unwrap()
            .0,
        "ask"
    );
    // The agent: plan denies a write.
    let write = with_mode(&fixture("claude-code", "write"), "auto");
    assert_eq!(
        claude(&hook(&env, "claude-code", &write, &["--agent", "plan"]))
            .unwrap()
            .0,
        "deny"
    );
}

#[test]
fn project_rules_count_once_the_project_is_trusted() {
    let env = project();
    let bash = fixture("claude-code", "bash");
    assert_eq!(
        claude(&hook(&env, "claude-code", &bash, &[])).unwrap().0,
        "ask"
    );
    let o = env.run(&["trust", env.project.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (d, reason) = claude(&hook(&env, "claude-code", &bash, &[])).unwrap();
    assert_eq!(d, "allow", "{reason}");
    assert!(reason.contains("allow rule"), "{reason}");
    // From a subfolder too: the project is the nearest folder with .decode or .git.
    std::fs::create_dir_all(env.project.join("src/deep")).unwrap();
    let mut v: Value =
        serde_json::from_str(&bash.replace(PLACEHOLDER, env.project.to_str().unwrap())).unwrap();
    v["cwd"] = Value::String(env.project.join("src/deep").display().to_string());
    let o = env.run_stdin(&["hook", "claude-code"], &v.to_string());
    assert_eq!(claude(&o).unwrap().0, "allow");
}

#[test]
fn gemini_cli_every_tool_and_verdict() {
    let env = project();
    std::fs::create_dir_all(env.project.join("packages/core")).unwrap();
    let cases = [
        ("run_shell_command", None),
        ("run_shell_command-destructive", Some("deny")),
        ("read_file", Some("allow")),
        ("read_many_files", Some("allow")),
        ("glob", Some("allow")),
        ("grep_search", Some("allow")),
        ("list_directory", Some("allow")),
        ("web_fetch", Some("allow")),
        // Ask → no decision: Gemini CLI's own confirmation runs.
        ("write_file", None),
        ("replace", None),
        ("google_web_search", None),
        ("mcp_github_search_repositories", None),
    ];
    for (name, expected) in cases {
        let v = gemini(&hook(&env, "gemini-cli", &fixture("gemini-cli", name), &[]));
        assert_eq!(v["decision"].as_str(), expected, "{name}: {v}");
        if expected.is_none() {
            assert_eq!(v, serde_json::json!({}), "{name}");
        }
        if expected == Some("deny") {
            assert!(v["reason"].as_str().unwrap().contains("deny rule"), "{v}");
        }
    }
    // With edit mode, a write is allowed; a shell command run from a folder is judged there.
    let v = gemini(&hook(
        &env,
        "gemini-cli",
        &fixture("gemini-cli", "write_file"),
        &["--mode", "edit"],
    ));
    assert_eq!(v["decision"], "allow", "{v}");
    // A read outside the project in default mode: allowed as a read? No: asks (scope) →
    // no decision.
    let event = fixture("gemini-cli", "read_file").replace("src/main.rs", "/etc/shadow");
    let v = gemini(&hook(&env, "gemini-cli", &event, &[]));
    assert_eq!(v, serde_json::json!({}), "{v}");
}

#[test]
fn a_malformed_event_is_one_line_on_stderr_and_exit_1_never_an_allow() {
    let env = project();
    let bad = [
        "",
        "not json",
        "[1, 2]",
        r#"{"tool_name": "Bash", "cwd": "/tmp"}"#,
        r#"{"tool_name": "Bash", "tool_input": "ls", "cwd": "/tmp"}"#,
        r#"{"tool_input": {"command": "ls"}, "cwd": "/tmp"}"#,
        r#"{"tool_name": "Bash", "tool_input": {"command": "ls"}}"#,
        r#"{"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "rel/dir"}"#,
        r#"{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "/tmp"}"#,
    ];
    for (agent, shell) in [("claude-code", "Bash"), ("gemini-cli", "run_shell_command")] {
        // A known tool without what it needs.
        let empty = format!(r#"{{"tool_name": "{shell}", "tool_input": {{}}, "cwd": "/tmp"}}"#);
        for event in bad.iter().copied().chain([empty.as_str()]) {
            let o = env.run_stdin(&["hook", agent], event);
            assert_eq!(
                o.status.code(),
                Some(1),
                "{agent} {event:?}: {}",
                stdout(&o)
            );
            assert_eq!(stdout(&o), "", "{agent} {event:?}");
            let err = stderr(&o);
            assert_eq!(err.lines().count(), 1, "{agent} {event:?}: {err}");
            assert!(err.starts_with("decode hook: "), "{err}");
        }
    }
    // A Gemini CLI event is not a Claude Code one.
    let o = env.run_stdin(
        &["hook", "claude-code"],
        &fixture("gemini-cli", "read_file"),
    );
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn check_explain_is_one_line_naming_what_decided() {
    let env = project();
    let o = env.run(&["check", "--explain", "bash", "rm -rf build"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "deny · deny rule · denied by rule bash(rm -rf:*) from .decode/settings.json\n"
    );
    let o = env.run(&["check", "--explain", "--mode", "auto", "bash", "git push"]);
    assert_eq!(
        stdout(&o),
        "ask · cap: external effects · git push has external effects: asks every time\n"
    );
    let o = env.run(&["check", "--explain", "read", "src/main.rs"]);
    assert_eq!(stdout(&o), "allow · mode · read-only tools are allowed\n");
}
