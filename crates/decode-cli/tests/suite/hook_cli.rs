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
        // A fetch of a host name is never allowed on Decode's word (the agent resolves
        // the name again): left to Claude Code's own confirmation.
        ("webfetch", "default", None),
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
fn the_mode_comes_from_the_event_then_the_flag_then_auto() {
    let env = project();
    let bash = fixture("claude-code", "bash");
    // Claude Code's `auto` (its interactive default) is Decode's auto mode.
    let auto = with_mode(&bash, "auto");
    let (d, reason) = claude(&hook(&env, "claude-code", &auto, &[])).unwrap();
    assert_eq!(d, "allow", "{reason}");
    assert!(
        reason.contains("wildcard") || reason.contains("auto"),
        "{reason}"
    );
    let push = fixture("claude-code", "bash-push-auto");
    let (d, reason) = claude(&hook(&env, "claude-code", &push, &[])).unwrap();
    assert_eq!(d, "ask", "{reason}");
    assert!(reason.contains("external effects"), "{reason}");
    // A mode Decode does not map: the flag…
    let future = with_mode(&bash, "someFutureMode");
    assert_eq!(
        claude(&hook(&env, "claude-code", &future, &["--mode", "bypass"]))
            .unwrap()
            .0,
        "allow"
    );
    // …else auto, where Decode only adds what auto mode would not let through and
    // leaves the rest to Claude Code (no decision rather than an allow).
    assert_eq!(claude(&hook(&env, "claude-code", &future, &[])), None);
    let future_push = with_mode(&push, "someFutureMode");
    assert_eq!(
        claude(&hook(&env, "claude-code", &future_push, &[]))
            .unwrap()
            .0,
        "ask"
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
fn every_claude_code_permission_mode_is_mapped() {
    let env = project();
    // `git status` in a trusted-free project: what each mode does with a shell
    // command, and with a write.
    let bash = fixture("claude-code", "bash");
    let write = fixture("claude-code", "write");
    let cases = [
        ("default", "ask", "ask"),
        ("dontAsk", "ask", "ask"),
        ("acceptEdits", "ask", "allow"),
        ("plan", "deny", "deny"),
        ("auto", "allow", "allow"),
        ("bypassPermissions", "allow", "allow"),
    ];
    for (mode, for_bash, for_write) in cases {
        let got = claude(&hook(&env, "claude-code", &with_mode(&bash, mode), &[]));
        assert_eq!(
            got.as_ref().map(|g| g.0.as_str()),
            Some(for_bash),
            "{mode}: {got:?}"
        );
        let got = claude(&hook(&env, "claude-code", &with_mode(&write, mode), &[]));
        assert_eq!(
            got.as_ref().map(|g| g.0.as_str()),
            Some(for_write),
            "{mode}: {got:?}"
        );
    }
}

#[test]
fn reasons_name_the_agents_own_tools() {
    let env = project();
    let write = with_mode(&fixture("claude-code", "write"), "plan");
    let (d, reason) = claude(&hook(&env, "claude-code", &write, &[])).unwrap();
    assert_eq!(d, "deny");
    assert!(reason.contains("`Write`"), "{reason}");
    assert!(reason.contains("ExitPlanMode"), "{reason}");
    assert!(!reason.contains("exit_plan_mode"), "{reason}");
    let multi = with_mode(&fixture("claude-code", "multiedit"), "plan");
    let (_, reason) = claude(&hook(&env, "claude-code", &multi, &[])).unwrap();
    assert!(reason.contains("`MultiEdit`"), "{reason}");
    let v = gemini(&hook(
        &env,
        "gemini-cli",
        &fixture("gemini-cli", "write_file"),
        &["--mode", "plan"],
    ));
    assert_eq!(v["decision"], "deny", "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("`write_file`"), "{reason}");
    assert!(reason.contains("exit_plan_mode"), "{reason}");
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
    // No mode in Gemini CLI's events: auto mode, where Decode answers only what auto
    // mode would not let through; the rest is left to Gemini CLI (`{}`).
    let cases = [
        ("run_shell_command", None),
        ("run_shell_command-destructive", Some("deny")),
        ("run_shell_command-push", Some("ask")),
        // The project denies `rm -rf` (see below for a project that does not).
        ("run_shell_command-rm-home", Some("deny")),
        ("read_file", None),
        ("read_many_files", None),
        ("glob", None),
        ("grep_search", None),
        ("list_directory", None),
        ("web_fetch", None),
        ("write_file", None),
        ("write_file-settings", Some("ask")),
        ("replace", None),
        ("google_web_search", None),
        ("mcp_github_search_repositories", None),
    ];
    for (name, expected) in cases {
        let v = gemini(&hook(&env, "gemini-cli", &fixture("gemini-cli", name), &[]));
        assert_eq!(v["decision"].as_str(), expected, "{name}: {v}");
        match expected {
            None => assert_eq!(v, serde_json::json!({}), "{name}"),
            Some(d) => {
                // The shape Gemini CLI reads: `decision`, the reason for the model and
                // the message its confirmation shows.
                let reason = v["reason"].as_str().unwrap();
                assert!(reason.starts_with("Decode: "), "{name}: {v}");
                assert_eq!(v["systemMessage"], v["reason"], "{name}: {v}");
                let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
                assert_eq!(keys.len(), 3, "{name}: {v}");
                if d == "deny" {
                    assert!(reason.contains("deny rule"), "{v}");
                }
            }
        }
    }
    // The ask shape is the fixture's.
    let v = gemini(&hook(
        &env,
        "gemini-cli",
        &fixture("gemini-cli", "run_shell_command-push"),
        &[],
    ));
    let want: Value = serde_json::from_str(&fixture("gemini-cli", "decisions/ask")).unwrap();
    assert_eq!(v, want);
    // `--mode default`: a write asks, a shell command asks; a read outside the
    // project asks (scope). Never an allow, in any mode.
    for (name, mode, expected) in [
        ("write_file", "default", Some("ask")),
        ("run_shell_command", "default", Some("ask")),
        ("write_file", "edit", None),
        ("read_file", "bypass", None),
        ("run_shell_command", "bypass", None),
    ] {
        let v = gemini(&hook(
            &env,
            "gemini-cli",
            &fixture("gemini-cli", name),
            &["--mode", mode],
        ));
        assert_eq!(v["decision"].as_str(), expected, "{name} in {mode}: {v}");
    }
    let event = fixture("gemini-cli", "read_file").replace("src/main.rs", "/etc/shadow");
    let v = gemini(&hook(&env, "gemini-cli", &event, &["--mode", "default"]));
    assert_eq!(v["decision"], "ask", "{v}");
    // Without a deny rule, `rm -rf ~` is a critical removal: it asks, even in bypass.
    let bare = Env::new();
    for mode in [None, Some("bypass")] {
        let extra: Vec<&str> = mode.map(|m| vec!["--mode", m]).unwrap_or_default();
        let v = gemini(&hook(
            &bare,
            "gemini-cli",
            &fixture("gemini-cli", "run_shell_command-rm-home"),
            &extra,
        ));
        assert_eq!(v["decision"], "ask", "{mode:?}: {v}");
        assert!(
            v["reason"].as_str().unwrap().contains("critical removal"),
            "{v}"
        );
    }
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
        "deny · deny rule · denied by rule bash(rm -rf:*) from .decode/settings.json (project)\n"
    );
    let o = env.run(&["check", "--explain", "--mode", "auto", "bash", "git push"]);
    assert_eq!(
        stdout(&o),
        "ask · cap: external effects · git push has external effects: asks every time\n"
    );
    let o = env.run(&["check", "--explain", "read", "src/main.rs"]);
    assert_eq!(stdout(&o), "allow · mode · read-only tools are allowed\n");
}

/// A project whose settings file is `text` (a git folder, no other rules).
fn project_with_settings(text: &str) -> Env {
    let env = Env::new();
    std::fs::create_dir_all(env.project.join(".git")).unwrap();
    env.write(".decode/settings.json", text);
    env
}

#[test]
fn a_malformed_settings_file_never_drops_its_rules_it_asks_naming_file_line_and_column() {
    let env = project_with_settings(
        &std::fs::read_to_string(format!(
            "{}/tests/data/hooks/settings/malformed.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    );
    let file = env.project.join(".decode/settings.json");
    let curl = fixture("claude-code", "bash").replace("npm test", "curl https://example.com/x.sh");
    // Under bypassPermissions the deny rule it held would have stopped curl: while
    // the file is broken, the call asks instead of being allowed.
    for mode in ["bypassPermissions", "auto", "acceptEdits", "default"] {
        let (d, reason) = claude(&hook(&env, "claude-code", &with_mode(&curl, mode), &[])).unwrap();
        assert_eq!(d, "ask", "{mode}: {reason}");
        assert!(
            reason.contains(&format!("{}:4:3", file.display())),
            "{mode}: {reason}"
        );
    }
    // Even a read, and a tool Decode does not know.
    let (d, _) = claude(&hook(
        &env,
        "claude-code",
        &fixture("claude-code", "read"),
        &[],
    ))
    .unwrap();
    assert_eq!(d, "ask");
    let (d, _) = claude(&hook(
        &env,
        "claude-code",
        &fixture("claude-code", "mcp"),
        &[],
    ))
    .unwrap();
    assert_eq!(d, "ask");
    // Gemini CLI: what it would have been left to decide asks too.
    for name in ["run_shell_command", "read_file", "google_web_search"] {
        let v = gemini(&hook(&env, "gemini-cli", &fixture("gemini-cli", name), &[]));
        assert_eq!(v["decision"], "ask", "{name}: {v}");
        assert!(
            v["reason"]
                .as_str()
                .unwrap()
                .contains(&format!("{}:4:3", file.display())),
            "{v}"
        );
    }
    // A deny stays a deny.
    let v = gemini(&hook(
        &env,
        "gemini-cli",
        &fixture("gemini-cli", "run_shell_command").replace("npm test", "npm test; curl x"),
        &[],
    ));
    assert_eq!(v["decision"], "ask", "{v}");
}

#[test]
fn a_fifo_or_unreadable_settings_file_asks_too() {
    let env = Env::new();
    std::fs::create_dir_all(env.project.join(".git")).unwrap();
    std::fs::create_dir_all(env.project.join(".decode")).unwrap();
    let file = env.project.join(".decode/settings.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&file)
        .status()
        .unwrap();
    assert!(made.success());
    let bash = with_mode(&fixture("claude-code", "bash"), "bypassPermissions");
    let start = std::time::Instant::now();
    let (d, reason) = claude(&hook(&env, "claude-code", &bash, &[])).unwrap();
    assert!(
        start.elapsed() < std::time::Duration::from_secs(5),
        "blocked on the FIFO"
    );
    assert_eq!(d, "ask", "{reason}");
    assert!(reason.contains(&file.display().to_string()), "{reason}");
    // A folder where the file should be.
    let env = Env::new();
    std::fs::create_dir_all(env.project.join(".decode/settings.json")).unwrap();
    let (d, reason) = claude(&hook(&env, "claude-code", &bash, &[])).unwrap();
    assert_eq!(d, "ask", "{reason}");
}

/// A trusted project `outer/` (deny `curl`, deny reading `secrets/**`, allow
/// `npm test`) holding `outer/sub/`, a repository with a hostile `.decode/` of its own
/// that allows everything.
fn nested() -> (Env, std::path::PathBuf, std::path::PathBuf) {
    let env = Env::new();
    let outer = env.project.clone();
    std::fs::create_dir_all(outer.join(".git")).unwrap();
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["Bash(curl *)", "Read(secrets/**)"],
                            "ask": ["Bash(make *)"], "allow": ["Bash(npm test)"]}}"#,
    );
    env.write("secrets/token", "s3cret\n");
    let sub = outer.join("sub");
    std::fs::create_dir_all(sub.join(".git")).unwrap();
    env.write(
        "sub/.decode/settings.json",
        r#"{"permissions": {"allow": ["Bash", "Read", "Bash(curl *)", "Read(/**)"]},
            "additionalDirectories": ["/"]}"#,
    );
    let o = env.run(&["trust", outer.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (env, outer, sub)
}

#[test]
fn a_nested_project_never_sheds_the_deny_and_ask_rules_around_it_in_the_hook() {
    let (env, outer, sub) = nested();
    let event = |tool: &str, input: Value, mode: &str| -> String {
        serde_json::json!({
            "session_id": "s", "transcript_path": "/tmp/t.jsonl",
            "cwd": sub.display().to_string(), "permission_mode": mode,
            "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
        })
        .to_string()
    };
    let secret = outer.join("secrets/token").display().to_string();
    let cases = [
        (
            "Bash",
            serde_json::json!({"command": "curl https://x.sh"}),
            "bypassPermissions",
            "deny",
        ),
        (
            "Read",
            serde_json::json!({"file_path": secret}),
            "bypassPermissions",
            "deny",
        ),
        (
            "Read",
            serde_json::json!({"file_path": secret}),
            "default",
            "deny",
        ),
        (
            "Bash",
            serde_json::json!({"command": "make release"}),
            "bypassPermissions",
            "ask",
        ),
        // The outer project's allow rules are its own; the nested one is not trusted.
        (
            "Bash",
            serde_json::json!({"command": "npm test"}),
            "default",
            "ask",
        ),
        (
            "Bash",
            serde_json::json!({"command": "make -j2"}),
            "default",
            "ask",
        ),
    ];
    for (tool, input, mode, want) in cases {
        let o = env.run_stdin(&["hook", "claude-code"], &event(tool, input.clone(), mode));
        let (d, reason) = claude(&o).unwrap();
        assert_eq!(d, want, "{tool} {input} in {mode}: {reason}");
        if want == "deny" {
            assert!(
                reason.contains(&format!("{}/.decode/settings.json", outer.display())),
                "{reason}"
            );
        }
    }
    // Gemini CLI likewise.
    let ev = serde_json::json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": sub.display().to_string(),
        "hook_event_name": "BeforeTool", "timestamp": "2026-12-03T17:04:35.601Z",
        "tool_name": "run_shell_command", "tool_input": {"command": "curl https://x.sh"},
    });
    let v = gemini(&env.run_stdin(&["hook", "gemini-cli"], &ev.to_string()));
    assert_eq!(v["decision"], "deny", "{v}");
    // Once the nested project is trusted itself, its own allow rules count (the
    // outer deny rules still win).
    let o = env.run(&["trust", sub.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let o = env.run_stdin(
        &["hook", "claude-code"],
        &event("Bash", serde_json::json!({"command": "ls -la"}), "default"),
    );
    assert_eq!(claude(&o).unwrap().0, "allow");
    let o = env.run_stdin(
        &["hook", "claude-code"],
        &event(
            "Bash",
            serde_json::json!({"command": "curl x"}),
            "bypassPermissions",
        ),
    );
    assert_eq!(claude(&o).unwrap().0, "deny");
}

#[test]
fn a_broken_settings_file_around_the_project_asks_in_the_hook() {
    let (env, outer, sub) = nested();
    env.write(
        ".decode/settings.json",
        "{\"permissions\": {\"deny\": [\"Bash(curl *)\"]",
    );
    let ev = serde_json::json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": sub.display().to_string(),
        "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "curl https://x.sh"},
    });
    let (d, reason) = claude(&env.run_stdin(&["hook", "claude-code"], &ev.to_string())).unwrap();
    assert_eq!(d, "ask", "{reason}");
    assert!(
        reason.contains(&format!("{}/.decode/settings.json:1:", outer.display())),
        "{reason}"
    );
}

#[test]
fn a_nested_project_never_sheds_the_rules_around_it_in_check_and_tool() {
    let (env, outer, sub) = nested();
    let sub_s = sub.to_str().unwrap();
    let secret = outer.join("secrets/token").display().to_string();
    for (args, want) in [
        (
            vec!["--mode", "bypass", "bash", "curl https://x.sh"],
            "deny",
        ),
        (vec!["--mode", "bypass", "read", secret.as_str()], "deny"),
        (vec!["--mode", "bypass", "bash", "make x"], "ask"),
        (vec!["bash", "npm test"], "ask"),
    ] {
        let mut a = vec!["check", "--project", sub_s, "--explain"];
        a.extend(args.iter().copied());
        let o = env.run(&a);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).starts_with(want), "{args:?}: {}", stdout(&o));
    }
    // `decode tool` reads nothing the folder around it denies.
    let input = serde_json::json!({ "path": secret }).to_string();
    let o = env.run(&[
        "tool",
        "--project",
        sub_s,
        "--mode",
        "bypass",
        "read",
        &input,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(!stdout(&o).contains("s3cret"), "{}", stdout(&o));
    assert!(stderr(&o).contains("denied"), "{}", stderr(&o));
}

#[test]
fn exit_codes_are_documented_ones() {
    let env = project();
    let bash = fixture("claude-code", "bash");
    // A usage error: 2, which both agents take as "block this call".
    for extra in [&["--agent", "nosuch"][..], &["--mode", "warp"][..]] {
        let o = hook(&env, "claude-code", &bash, extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), "");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    // A malformed event or a project that cannot be opened: 1 (a hook error).
    let o = env.run_stdin(&["hook", "gemini-cli"], "{");
    assert_eq!(o.status.code(), Some(1));
    let o = hook(
        &env,
        "claude-code",
        &bash,
        &["--project", "/nonexistent/decode-test"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // Answered: 0.
    assert_eq!(hook(&env, "claude-code", &bash, &[]).status.code(), Some(0));
}

#[test]
fn doctor_says_whether_the_hooks_are_installed_and_where_they_point() {
    let env = Env::new();
    let o = env.run(&["doctor"]);
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "claude-code hook     not installed in {}",
            env.home.join(".claude/settings.json").display()
        )),
        "{out}"
    );
    assert!(
        out.contains("gemini-cli hook      not installed in"),
        "{out}"
    );
    let decode = env!("CARGO_BIN_EXE_decode");
    env.write_home(
        ".claude/settings.json",
        &serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": format!("{decode} hook claude-code"), "timeout": 30}]}]}})
        .to_string(),
    );
    env.write_home(
        ".gemini/settings.json",
        &serde_json::json!({"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [
            {"name": "decode", "type": "command", "command": "decode hook claude-code"}]}]}})
        .to_string(),
    );
    let o = env.run(&["doctor"]);
    let out = stdout(&o);
    assert!(
        out.contains(&format!("runs {decode} (this decode)")),
        "{out}"
    );
    for warning in [
        "it answers as claude-code in gemini-cli's settings",
        "`decode` is found through PATH",
        "its matcher `run_shell_command` sends only some tools to Decode",
    ] {
        assert!(out.contains(warning), "{warning}: {out}");
    }
    let o = env.run(&["doctor", "--json"]);
    let v = common::json(&o);
    assert_eq!(v["hooks"][0]["agent"], "claude-code");
    assert_eq!(v["hooks"][0]["hooks"][0]["this_decode"], true, "{v}");
    assert_eq!(v["hooks"][1]["hooks"][0]["this_decode"], false, "{v}");
}

#[test]
fn the_agent_cannot_shed_the_rules_by_moving_its_working_folder() {
    let (env, outer, _sub) = nested();
    let ev = |cwd: &std::path::Path| {
        serde_json::json!({
            "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": cwd.display().to_string(),
            "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "curl https://x.sh"},
        })
        .to_string()
    };
    // Through a link inside the project to a folder elsewhere with a `.decode/` of its own.
    let elsewhere = env.home.join("elsewhere");
    std::fs::create_dir_all(elsewhere.join(".decode")).unwrap();
    std::fs::write(
        elsewhere.join(".decode/settings.json"),
        r#"{"permissions": {"allow": ["Bash"]}}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(&elsewhere, outer.join("link")).unwrap();
    for cwd in [outer.join("link"), outer.join("link/deeper")] {
        let (d, reason) = claude(&env.run_stdin(&["hook", "claude-code"], &ev(&cwd))).unwrap();
        assert_eq!(d, "deny", "{}: {reason}", cwd.display());
    }
    // A working folder the agent removed: judged from the nearest folder still there.
    let gone = outer.join("sub/made-then-removed/x");
    let (d, reason) = claude(&env.run_stdin(&["hook", "claude-code"], &ev(&gone))).unwrap();
    assert_eq!(d, "deny", "{reason}");
}

#[test]
fn another_agents_search_that_could_reach_denied_files_asks() {
    let env = Env::new();
    std::fs::create_dir_all(env.project.join(".git")).unwrap();
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["Read(secrets/**)"]}}"#,
    );
    env.write("secrets/token", "s3cret\n");
    env.write("src/main.rs", "fn main() {}\n");
    let ev = |tool: &str, input: Value| {
        serde_json::json!({
            "session_id": "s", "transcript_path": "/tmp/t.jsonl",
            "cwd": env.project.display().to_string(), "permission_mode": "bypassPermissions",
            "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
        })
        .to_string()
    };
    let answer = |tool: &str, input: Value| {
        claude(&env.run_stdin(&["hook", "claude-code"], &ev(tool, input))).unwrap()
    };
    // Claude Code's Grep and Glob return what they find: Decode cannot leave the
    // denied files out as its own tools do, so a search that could reach them asks.
    let (d, reason) = answer("Grep", serde_json::json!({"pattern": "s3cret"}));
    assert_eq!(d, "ask", "{reason}");
    assert!(
        reason.contains("search reach") && reason.contains("read(secrets/**)"),
        "{reason}"
    );
    let (d, _) = answer("Glob", serde_json::json!({"pattern": "**/*"}));
    assert_eq!(d, "ask");
    // A search that cannot reach them is judged as before.
    let (d, reason) = answer("Grep", serde_json::json!({"pattern": "x", "path": "src"}));
    assert_eq!(d, "allow", "{reason}");
    let (d, reason) = answer("Glob", serde_json::json!({"pattern": "src/**/*.rs"}));
    assert_eq!(d, "allow", "{reason}");
    let (d, _) = answer(
        "Grep",
        serde_json::json!({"pattern": "x", "path": "secrets"}),
    );
    assert_eq!(d, "deny");
    // Gemini CLI's searches likewise.
    let gem = |tool: &str, input: Value| {
        let e = serde_json::json!({
            "session_id": "s", "transcript_path": "/tmp/t.jsonl",
            "cwd": env.project.display().to_string(), "hook_event_name": "BeforeTool",
            "timestamp": "2026-12-03T17:04:35.601Z", "tool_name": tool, "tool_input": input,
        });
        gemini(&env.run_stdin(&["hook", "gemini-cli"], &e.to_string()))
    };
    assert_eq!(
        gem("read_many_files", serde_json::json!({"include": ["**/*"]}))["decision"],
        "ask"
    );
    assert_eq!(
        gem("grep_search", serde_json::json!({"pattern": "s3cret"}))["decision"],
        "ask"
    );
    // An entry naming a folder reads everything under it, however it is spelled.
    let secrets = env.project.join("secrets").display().to_string();
    for folder in ["secrets", "secrets/", "./secrets", secrets.as_str()] {
        assert_eq!(
            gem("read_many_files", serde_json::json!({"include": [folder]}))["decision"],
            "deny",
            "{folder}"
        );
    }
    for around in [".", "./"] {
        assert_eq!(
            gem("read_many_files", serde_json::json!({"include": [around]}))["decision"],
            "ask",
            "{around}"
        );
    }
    assert_eq!(
        gem(
            "read_many_files",
            serde_json::json!({"include": ["src/**/*.rs"]})
        ),
        serde_json::json!({})
    );
    // Nothing the rule covers is there: nothing to reach.
    std::fs::remove_dir_all(env.project.join("secrets")).unwrap();
    let (d, reason) = answer("Grep", serde_json::json!({"pattern": "s3cret"}));
    assert_eq!(d, "allow", "{reason}");
}

#[test]
fn a_reason_never_carries_escape_sequences_to_the_agents_terminal() {
    let env = project();
    let event = serde_json::json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl",
        "cwd": env.project.display().to_string(), "permission_mode": "acceptEdits",
        "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": format!("{}/.git/hooks/x\u{1b}]0;pwned\u{7}\u{202e}", env.project.display()), "content": "x"},
    });
    let (d, reason) = claude(&env.run_stdin(&["hook", "claude-code"], &event.to_string())).unwrap();
    assert_eq!(d, "ask", "{reason}");
    assert!(
        !reason.contains('\u{1b}') && !reason.contains('\u{7}') && !reason.contains('\u{202e}'),
        "{reason:?}"
    );
    assert!(reason.contains("\\x1b]0;pwned\\x07"), "{reason}");
}

#[test]
fn an_agent_never_rewrites_its_own_hook_settings_unasked() {
    let env = Env::new();
    std::fs::create_dir_all(env.project.join(".git")).unwrap();
    let home = env.home.display().to_string();
    let write = |path: String, mode: &str| {
        serde_json::json!({
            "session_id": "s", "transcript_path": "/tmp/t.jsonl",
            "cwd": env.project.display().to_string(), "permission_mode": mode,
            "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": path, "content": "{}"},
        })
        .to_string()
    };
    for path in [
        format!("{home}/.claude/settings.json"),
        format!("{home}/.claude.json"),
        format!("{}/.claude/settings.local.json", env.project.display()),
    ] {
        let (d, reason) =
            claude(&env.run_stdin(&["hook", "claude-code"], &write(path.clone(), "auto"))).unwrap();
        assert_eq!(d, "ask", "{path}: {reason}");
        assert!(reason.contains("agent settings"), "{reason}");
    }
    // Gemini CLI (auto mode): its own settings and trusted folders.
    for (tool, input) in [
        (
            "write_file",
            serde_json::json!({"file_path": format!("{home}/.gemini/settings.json"), "content": "{}"}),
        ),
        (
            "replace",
            serde_json::json!({"file_path": format!("{}/.gemini/settings.json", env.project.display()), "old_string": "a", "new_string": "b"}),
        ),
        (
            "run_shell_command",
            serde_json::json!({"command": "echo '{}' > ~/.gemini/settings.json"}),
        ),
        (
            "write_file",
            serde_json::json!({"file_path": format!("{home}/.gemini/trustedFolders.json"), "content": "{}"}),
        ),
    ] {
        let e = serde_json::json!({
            "session_id": "s", "transcript_path": "/tmp/t.jsonl",
            "cwd": env.project.display().to_string(), "hook_event_name": "BeforeTool",
            "timestamp": "2026-12-03T17:04:35.601Z", "tool_name": tool, "tool_input": input,
        });
        let v = gemini(&env.run_stdin(&["hook", "gemini-cli"], &e.to_string()));
        assert_eq!(v["decision"], "ask", "{tool} {input}: {v}");
    }
    // An ordinary write in auto mode is still left alone.
    let (d, _) = claude(&env.run_stdin(
        &["hook", "claude-code"],
        &write(format!("{}/src/x.rs", env.project.display()), "auto"),
    ))
    .unwrap();
    assert_eq!(d, "allow");
}

/// A fetch of a name that resolves to the host's loopback (or a metadata address)
/// asks like the address itself: the hook resolves the name the policy lets through.
#[test]
fn a_fetch_of_a_name_that_resolves_to_loopback_asks() {
    let env = project();
    let event = fixture("claude-code", "webfetch")
        .replace("https://example.com", "http://localhost:9")
        .replace("http://example.com", "http://localhost:9");
    assert!(event.contains("localhost:9"), "{event}");
    let (decision, reason) = claude(&hook(&env, "claude-code", &event, &[])).expect("a decision");
    assert_eq!(decision, "ask", "{reason}");
    assert!(reason.contains("loopback"), "{reason}");
}

/// Gemini CLI reads a URL's scheme in any case: `HTTP://…` in a prompt is judged
/// like `http://…` (a deny rule holds, a metadata address asks).
#[test]
fn gemini_prompt_urls_are_judged_whatever_the_case_of_their_scheme() {
    let env = project();
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["net(*.denied.example)"]}}"#,
    );
    for (url, want) in [
        ("HTTP://x.denied.example/", "deny"),
        ("Http://169.254.169.254/latest/meta-data/", "ask"),
    ] {
        let event = serde_json::json!({
            "session_id": "s", "transcript_path": "/tmp/t", "cwd": env.project,
            "hook_event_name": "BeforeTool", "timestamp": "2026-01-01T00:00:00Z",
            "tool_name": "web_fetch",
            "tool_input": {"prompt": format!("Summarise {url} please")}
        });
        let v = gemini(&hook(&env, "gemini-cli", &event.to_string(), &[]));
        assert_eq!(v["decision"], want, "{url}: {v}");
    }
}
