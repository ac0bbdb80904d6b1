//! Settings levels from the command line (docs/permissions.md, "Settings levels"):
//! managed, user, project and local rules united in `decode check`, the level and
//! file of the deciding rule in `--explain`, `decode settings`, and managed
//! `disableBypassMode` / `disableAutoMode` refused on every flag and in the hook.

use crate::common;

use common::{json, stderr_lines, stdout, Env};

fn explain(env: &Env, args: &[&str]) -> String {
    let mut all = vec!["check", "--explain"];
    all.extend_from_slice(args);
    let o = env.run(&all);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    stdout(&o)
}

fn trust(env: &Env) {
    let dir = env.project.display().to_string();
    assert_eq!(env.run(&["trust", &dir]).status.code(), Some(0));
}

#[test]
fn every_level_counts_and_explain_names_the_level_and_file() {
    let env = Env::new();
    env.write_managed(r#"{"permissions": {"deny": ["bash(curl *)"]}}"#);
    env.write_home(
        ".config/decode/settings.json",
        r#"{"permissions": {"allow": ["bash(cargo *)", "bash(npm test)"], "deny": ["bash(npm publish)"]}}"#,
    );
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["bash(npm publish)", "bash(curl x.sh)"]}}"#,
    );
    env.write(
        ".decode/settings.local.json",
        r#"{"permissions": {"ask": ["bash(cargo test)"], "allow": ["bash(make)"]}}"#,
    );
    trust(&env);
    // Deny at user beats allow at project.
    let line = explain(&env, &["bash", "npm publish"]);
    assert!(line.starts_with("deny · deny rule"), "{line}");
    assert!(
        line.contains("bash(npm publish) from ~/.config/decode/settings.json (user)"),
        "{line}"
    );
    // Managed deny beats a project allow, even in bypass mode.
    let line = explain(&env, &["--mode", "bypass", "bash", "curl x.sh"]);
    assert!(line.contains("managed-settings.json (managed)"), "{line}");
    // Ask at local beats allow at user.
    let line = explain(&env, &["bash", "cargo test"]);
    assert!(line.starts_with("ask · ask rule"), "{line}");
    assert!(
        line.contains("from .decode/settings.local.json (local)"),
        "{line}"
    );
    // The user's allow and the trusted project's local allow count.
    assert!(explain(&env, &["bash", "cargo build"]).contains("(user)"));
    assert!(explain(&env, &["bash", "make"]).starts_with("allow · allow rule"));
}

#[test]
fn an_untrusted_projects_committed_local_file_grants_nothing() {
    let env = Env::new();
    env.write(
        ".decode/settings.local.json",
        r#"{"permissions": {"allow": ["bash(make)"], "deny": ["bash(rm *)"]}}"#,
    );
    let o = env.run(&["check", "--json", "bash", "make"]);
    assert_eq!(json(&o)["verdict"], "ask");
    let o = env.run(&["check", "--json", "--mode", "bypass", "bash", "rm x"]);
    assert_eq!(json(&o)["verdict"], "deny");
    // `decode settings` says why the allow rule does not count.
    let text = stdout(&env.run(&["settings"]));
    let line = text
        .lines()
        .find(|l| l.contains("bash(make)"))
        .expect(&text);
    assert!(
        line.starts_with("allow") && line.contains("local"),
        "{line}"
    );
    assert!(
        line.contains("ignored: the project is not trusted"),
        "{line}"
    );
    trust(&env);
    let o = env.run(&["check", "--json", "bash", "make"]);
    assert_eq!(json(&o)["verdict"], "allow");
}

#[test]
fn settings_lists_the_merged_rules_with_their_levels() {
    let env = Env::new();
    env.write_managed(
        r#"{"permissions": {"ask": ["bash(git push*)"]}, "disableBypassMode": true}"#,
    );
    env.write_home(
        ".config/decode/settings.json",
        r#"{"permissions": {"allow": ["bash(cargo test)"]}}"#,
    );
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["read(.env)"]}}"#,
    );
    let o = env.run(&["settings", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    let rules = v["rules"].as_array().unwrap();
    let find = |rule: &str| rules.iter().find(|r| r["rule"] == rule).unwrap().clone();
    assert_eq!(find("bash(git push*)")["level"], "managed");
    assert_eq!(find("bash(git push*)")["list"], "ask");
    assert_eq!(find("bash(cargo test)")["level"], "user");
    assert_eq!(
        find("bash(cargo test)")["file"],
        "~/.config/decode/settings.json"
    );
    assert_eq!(find("bash(cargo test)")["counts"], true);
    assert_eq!(find("read(.env)")["level"], "project");
    assert_eq!(v["disabled_modes"], serde_json::json!(["bypass"]));
    let text = stdout(&env.run(&["settings"]));
    assert!(
        text.contains("turned off by the managed settings: bypass mode"),
        "{text}"
    );
}

#[test]
fn managed_settings_turn_modes_off_on_every_flag() {
    let env = Env::new();
    let managed = env.write_managed(r#"{"disableBypassMode": true, "disableAutoMode": true}"#);
    for mode in ["bypass", "auto"] {
        let o = env.run(&["check", "--mode", mode, "bash", "ls"]);
        assert_eq!(o.status.code(), Some(2), "{mode}");
        let lines = stderr_lines(&o);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains(&format!("{mode} mode is turned off")),
            "{}",
            lines[0]
        );
        assert!(
            lines[0].contains(&managed.display().to_string()),
            "{}",
            lines[0]
        );
        // `decode run` and the window's start-up flags refuse it too.
        assert_eq!(
            env.run(&["run", "--mode", mode, "hi"]).status.code(),
            Some(2)
        );
    }
    // A batch line naming a turned-off mode is an error line, the rest is judged.
    let o = env.run_stdin(
        &["check", "--batch"],
        "{\"tool\": \"bash\", \"subject\": \"ls\", \"mode\": \"bypass\"}\n{\"tool\": \"read\", \"subject\": \"x\"}\n",
    );
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].contains("error") && lines[0].contains("bypass mode is turned off"),
        "{out}"
    );
    assert!(lines[1].contains("\"verdict\":\"allow\""), "{out}");
    // A project agent whose mode is turned off starts in default.
    env.write(
        ".decode/agents/yolo.md",
        "---\nname: yolo\ndescription: y\ntools: [bash]\nmode: auto\n---\nGo.\n",
    );
    trust(&env);
    let o = env.run(&["check", "--json", "--agent", "yolo", "bash", "npm test"]);
    assert_eq!(json(&o)["verdict"], "ask", "{}", common::stderr(&o));
    // Edit and plan are still offered.
    assert_eq!(
        env.run(&["check", "--mode", "edit", "bash", "ls"])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn a_hook_event_in_a_turned_off_mode_is_judged_in_default_mode() {
    let env = Env::new();
    env.write_managed(r#"{"disableBypassMode": true}"#);
    let event = serde_json::json!({
        "session_id": "s", "cwd": env.project.display().to_string(),
        "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "npm test"}
    });
    let o = env.run_stdin(&["hook", "claude-code"], &event.to_string());
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let v = json(&o);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask", "{v}");
}

#[test]
fn a_malformed_managed_file_fails_closed() {
    let env = Env::new();
    env.write_managed("{\"permissions\": ");
    let o = env.run(&["check", "--json", "--mode", "edit", "write", "src/x.rs"]);
    assert_eq!(json(&o)["verdict"], "ask");
    assert_eq!(
        env.run(&["check", "--mode", "bypass", "bash", "ls"])
            .status
            .code(),
        Some(2)
    );
}

/// `decode trust DIR` names the hooks of the project's shared and local files that
/// now run (event, matcher, command, file).
#[test]
fn trust_lists_the_projects_hooks() {
    let env = Env::new();
    env.write(
        ".decode/settings.json",
        r#"{"hooks": {"preToolUse": [{"matcher": "Bash", "command": "./guard.sh"}]}}"#,
    );
    env.write(
        ".decode/settings.local.json",
        r#"{"hooks": {"postToolUse": [{"command": "cargo fmt"}]}}"#,
    );
    let dir = env.project.display().to_string();
    let o = env.run(&["trust", &dir]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("hooks now run"), "{out}");
    assert!(
        out.contains("preToolUse Bash `./guard.sh` (.decode/settings.json)"),
        "{out}"
    );
    assert!(
        out.contains("postToolUse * `cargo fmt` (.decode/settings.local.json)"),
        "{out}"
    );
}
