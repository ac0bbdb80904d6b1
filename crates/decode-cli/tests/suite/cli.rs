//! The `decode` binary's command line, run as a user would (docs/window.md; README): exit codes,
//! one-line usage errors, JSON output, trust and the agents listing. Every run gets an
//! isolated HOME and XDG folders.

use crate::common;

use common::{json, stderr, stderr_lines, stdout, Env};

#[test]
fn unknown_mode_is_one_line_naming_the_modes_and_exit_2() {
    let env = Env::new();
    let o = env.run(&["--mode", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    let lines = stderr_lines(&o);
    assert_eq!(lines.len(), 1, "{lines:?}");
    for m in ["default", "edit", "plan", "auto", "bypass"] {
        assert!(lines[0].contains(m), "{}", lines[0]);
    }
    assert!(o.stdout.is_empty());
}

#[test]
fn unknown_agent_is_one_line_naming_the_agents_and_exit_2() {
    let env = Env::new();
    let o = env.run(&["--agent", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    let lines = stderr_lines(&o);
    assert_eq!(lines.len(), 1, "{lines:?}");
    for a in ["build", "plan", "explore", "code-reviewer"] {
        assert!(lines[0].contains(a), "{}", lines[0]);
    }
}

#[test]
fn a_project_agent_is_a_valid_start_up_choice() {
    let env = Env::new();
    env.write(
        ".decode/agents/docs.md",
        "---\nname: docs\ndescription: Writes docs.\ntools: [read, edit]\nmode: edit\n---\nWrite docs.\n",
    );
    let o = env.run(&["check", "--agent", "docs", "--json", "edit", "README.md"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Untrusted, a project agent's `mode: edit` falls back to default: edits ask.
    assert_eq!(json(&o)["verdict"], "ask");
    let root = env.project.to_string_lossy().into_owned();
    assert_eq!(env.run(&["trust", &root]).status.code(), Some(0));
    let o = env.run(&["check", "--agent", "docs", "--json", "edit", "README.md"]);
    assert_eq!(json(&o)["verdict"], "allow");
}

#[test]
fn unknown_flag_is_one_line_and_exit_2() {
    let env = Env::new();
    let o = env.run(&["--frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr_lines(&o).len(), 1);
}

#[test]
fn check_json_has_verdict_reason_and_trace() {
    let env = Env::new();
    let o = env.run(&["check", "--json", "read", "README.md"]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    assert_eq!(v["verdict"], "allow");
    assert!(v["reason"].as_str().is_some_and(|r| !r.is_empty()));
    assert!(v["trace"].as_array().is_some_and(|t| !t.is_empty()));
}

#[test]
fn check_control_tools_are_never_gated() {
    let env = Env::new();
    for tool in ["sleep", "task"] {
        let o = env.run(&["check", "--json", tool, ""]);
        assert_eq!(o.status.code(), Some(0), "{tool}");
        assert_eq!(json(&o)["verdict"], "allow", "{tool}");
    }
}

#[test]
fn check_usage_errors_exit_2_with_one_line() {
    let env = Env::new();
    for args in [
        vec!["check", "frobnicate", "x"],
        vec!["check", "--mode", "nope", "bash", "ls"],
        vec!["check", "--agent", "nope", "bash", "ls"],
        vec!["check", "bash"],
    ] {
        let o = env.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(
            stderr_lines(&o).len(),
            1,
            "{args:?}: {:?}",
            stderr_lines(&o)
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn check_agent_without_mode_uses_the_agents_default_mode() {
    let env = Env::new();
    let o = env.run(&["check", "--agent", "plan", "--json", "bash", "ls"]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    // plan is not offered bash at all; explore with edit denied in plan mode below.
    assert_eq!(v["verdict"], "deny");
    let o = env.run(&["check", "--agent", "plan", "--json", "todo_write", ""]);
    assert_eq!(json(&o)["verdict"], "allow");
}

#[test]
fn check_with_malformed_settings_warns_on_stderr_and_keeps_stdout_json() {
    let env = Env::new();
    env.write(".decode/settings.json", "{\"permissions\": {\"allow\": [\n");
    let o = env.run(&["check", "--json", "read", "x"]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    assert_eq!(v["verdict"], "allow");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("settings.json:"), "{err}");
    assert_eq!(
        std::fs::read_to_string(env.project.as_path().join(".decode/settings.json")).expect("read"),
        "{\"permissions\": {\"allow\": [\n",
        "a malformed settings file is never rewritten"
    );
}

#[test]
fn check_batch_answers_one_json_line_per_request() {
    let env = Env::new();
    let input = concat!(
        "{\"tool\":\"read\",\"subject\":\"a.txt\"}\n",
        "{\"tool\":\"bash\",\"subject\":\"git status\",\"agent\":\"code-reviewer\"}\n",
        "not json\n",
        "{\"tool\":\"edit\",\"subject\":\"a.txt\",\"mode\":\"edit\"}\n",
        "{\"tool\":\"edit\",\"subject\":\"a.txt\",\"mode\":\"plan\"}\n",
    );
    let o = env.run_stdin(&["check", "--batch"], input);
    assert_eq!(o.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["verdict"], "allow");
    assert_eq!(
        lines[1]["verdict"], "allow",
        "code-reviewer allows bash(git *)"
    );
    assert!(lines[2]["error"]
        .as_str()
        .is_some_and(|e| e.contains("line 3")));
    assert_eq!(lines[3]["verdict"], "allow");
    assert_eq!(lines[4]["verdict"], "deny");
}

#[test]
fn trust_and_revoke_round_trip() {
    let env = Env::new();
    let dir = env.project.as_path().display().to_string();
    let o = env.run(&["trust", &dir]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let store = env.home.join(".local/share/decode/trust.json");
    let text = std::fs::read_to_string(&store).expect("trust store written");
    assert!(text.contains(&dir), "{text}");
    let o = env.run(&["trust", "--revoke", &dir]);
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&store).expect("trust store");
    assert!(!text.contains(&dir), "{text}");
}

#[test]
fn trust_of_a_missing_folder_is_a_usage_error() {
    let env = Env::new();
    let o = env.run(&["trust", "/definitely/not/here"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr_lines(&o).len(), 1);
}

#[test]
fn trusted_project_allow_rules_apply_and_untrusted_do_not() {
    let env = Env::new();
    env.write(
        ".decode/settings.json",
        "{\"permissions\": {\"allow\": [\"bash(npm test)\"]}}",
    );
    let o = env.run(&["check", "--json", "bash", "npm test"]);
    assert_eq!(
        json(&o)["verdict"],
        "ask",
        "untrusted: the project's allow rules are ignored"
    );
    let dir = env.project.as_path().display().to_string();
    assert_eq!(env.run(&["trust", &dir]).status.code(), Some(0));
    let o = env.run(&["check", "--json", "bash", "npm test"]);
    assert_eq!(json(&o)["verdict"], "allow");
}

#[test]
fn agents_lists_good_files_and_reports_the_broken_one() {
    let env = Env::new();
    env.write(
        ".decode/agents/a.md",
        "---\nname: alpha\ndescription: First.\ntools: [read]\nmode: default\n---\nAlpha.\n",
    );
    env.write(
        ".claude/agents/b.md",
        "---\nname: beta\ndescription: Second.\ntools: Read, Grep\n---\nBeta.\n",
    );
    env.write(
        ".decode/agents/broken.md",
        "---\nname: broken\ndescription: Bad.\ntools: [read]\nmode: sideways\n---\nBody.\n",
    );
    let o = env.run(&["agents"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("alpha") && out.contains("beta"), "{out}");
    assert!(!out.contains("broken  ("), "{out}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("broken.md:5") && err.contains("mode"), "{err}");

    let o = env.run(&["agents", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    let names: Vec<&str> = v["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert!(names.contains(&"alpha") && names.contains(&"beta") && names.contains(&"build"));
    assert_eq!(v["errors"].as_array().map(Vec::len), Some(1));
}

#[test]
fn agents_shows_the_mode_an_untrusted_agent_gets() {
    let env = Env::new();
    env.write(
        ".decode/agents/yolo.md",
        "---\nname: yolo\ndescription: Runs everything.\ntools: [bash]\nmode: bypass\nallow: [\"bash(curl *)\"]\n---\nGo.\n",
    );
    let o = env.run(&["agents"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("yolo  (mode default: it declares bypass, which an untrusted project's agent does not get)"),
        "{out}"
    );
    assert!(
        out.contains("allow: bash(curl *)   (ignored: the project is not trusted)"),
        "{out}"
    );
    let v = json(&env.run(&["agents", "--json"]));
    let yolo = v["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "yolo")
        .unwrap()
        .clone();
    assert_eq!(yolo["mode"], "default", "{yolo}");
    assert_eq!(yolo["declared_mode"], "bypass", "{yolo}");
    assert_eq!(yolo["allow_ignored"], true, "{yolo}");
    // Once trusted, it gets what it declares.
    let o = env.run(&["trust", env.project.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&env.run(&["agents"]));
    assert!(out.contains("yolo  (mode bypass)"), "{out}");
    assert!(!out.contains("ignored"), "{out}");
}

#[test]
fn agents_on_a_clean_project_exits_0() {
    let env = Env::new();
    let o = env.run(&["agents"]);
    assert_eq!(o.status.code(), Some(0));
    for a in ["build", "plan", "explore", "code-reviewer"] {
        assert!(stdout(&o).contains(a));
    }
}

/// Escape sequences in what the project wrote (agent names, descriptions, file
/// names) and in a checked subject never reach the terminal raw.
#[test]
fn terminal_injection_is_shown_escaped() {
    let env = Env::new();
    env.write(
        ".decode/agents/evil.md",
        "---\nname: \"evil\\e]0;pwned\\a\"\ndescription: \"x\\e]52;c;aGk=\\a\\r\\e[2Jclean\"\ntools: [read]\nmode: default\n---\nprompt\n",
    );
    env.write(".decode/agents/bad\x1b[31mname.md", "not an agent\n");
    let o = env.run(&["agents"]);
    let out = stdout(&o);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    for text in [&out, &err] {
        assert!(
            !text.contains('\x1b') && !text.contains('\x07') && !text.contains('\r'),
            "{text:?}"
        );
    }
    assert!(out.contains("evil\\x1b]0;pwned\\x07"), "{out}");
    assert!(
        out.contains("\\x1b]52;c;aGk=\\x07\\r\\x1b[2Jclean"),
        "{out}"
    );
    assert!(err.contains("bad\\x1b[31mname.md"), "{err}");
    // JSON stays JSON, with the escapes as JSON escapes.
    let o = env.run(&["agents", "--json"]);
    let v = json(&o);
    assert!(v["agents"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["name"] == "evil\x1b]0;pwned\x07"));

    let o = env.run(&["check", "bash", "echo \x1b]0;t\x07 \u{202e}x"]);
    let out = stdout(&o);
    assert!(
        !out.contains('\x1b') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    assert!(out.contains("\\x1b]0;t\\x07"), "{out}");
}

#[test]
fn tool_output_is_shown_escaped() {
    let env = Env::new();
    env.write("page.txt", "hello\x1b]52;c;ZXZpbA==\x07 \x1b[2J\rworld\n");
    let o = env.run(&["tool", "read", r#"{"path": "page.txt"}"#]);
    let out = stdout(&o);
    assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
    assert!(
        out.contains("hello\\x1b]52;c;ZXZpbA==\\x07 \\x1b[2J\\rworld"),
        "{out}"
    );
}

#[test]
fn batch_judges_every_line_and_names_bad_ones() {
    let env = Env::new();
    let mut input: Vec<u8> = Vec::new();
    input.extend_from_slice(b"{\"tool\":\"bash\",\"subject\":\"git status\"}\n");
    input.extend_from_slice(b"{\"tool\":\"bash\",\"subject\":\"ls \xff\xfe\"}\n");
    input.extend_from_slice(b"not json\n");
    input.extend_from_slice(b"\n");
    input.extend_from_slice(b"{\"tool\":\"nope\",\"subject\":\"x\"}\n");
    input.extend_from_slice(b"{\"tool\":\"read\",\"subject\":\"a\",\"mode\":\"auto\"}\n");
    let o = env.run_bytes(&["check", "--batch"], &input);
    assert_eq!(o.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(lines[0]["verdict"], "ask");
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap()
            .starts_with("line 2: not valid UTF-8"),
        "{:?}",
        lines[1]
    );
    assert!(
        lines[2]["error"].as_str().unwrap().starts_with("line 3:"),
        "{:?}",
        lines[2]
    );
    assert!(
        lines[3]["error"].as_str().unwrap().starts_with("line 5:"),
        "{:?}",
        lines[3]
    );
    assert_eq!(lines[4]["verdict"], "allow");
    // Many lines: every one answered, in order.
    let many: String = (0..3000)
        .map(|i| format!("{{\"tool\":\"bash\",\"subject\":\"echo {i}\",\"mode\":\"auto\"}}\n"))
        .collect();
    let o = env.run_stdin(&["check", "--batch"], &many);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3000);
    for (i, l) in lines.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["fragments"][0]["text"], format!("echo {i}"));
    }
    // Repeated requests (judged once) keep their place; the mode and tool
    // are part of what makes a request the same.
    let repeated: String = (0..2000)
        .map(|i| {
            let (tool, subject, mode) = match i % 4 {
                0 => ("bash", "git push", "auto"),
                1 => ("bash", "git push", "bypass"),
                2 => ("read", "git push", "auto"),
                // (`make`: an ordinary command; a read-only one runs in plan mode.)
                _ => ("bash", "make", "plan"),
            };
            format!("{{\"tool\":\"{tool}\",\"subject\":\"{subject}\",\"mode\":\"{mode}\"}}\n")
        })
        .collect();
    let o = env.run_stdin(&["check", "--batch"], &repeated);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let verdicts: Vec<String> = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["verdict"].to_string())
        .collect();
    assert_eq!(verdicts.len(), 2000);
    for (i, v) in verdicts.iter().enumerate() {
        let want = ["\"ask\"", "\"allow\"", "\"allow\"", "\"deny\""][i % 4];
        assert_eq!(v, want, "line {}", i + 1);
    }
}

/// `decode check net HOST` judges a host the way the proxy would
/// (docs/network.md): registries allowed on their ports, a deny rule over a registry, an unknown
/// host asking in auto mode too, private addresses and names that resolve to one
/// asking, bypass allowing.
#[test]
fn check_net_judges_hosts() {
    let env = Env::new();
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["net(domain:registry.npmjs.org)"]}}"#,
    );
    let verdict = |args: &[&str]| {
        let o = env.run(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        json(&o)
    };
    let v = verdict(&["check", "--json", "net", "static.crates.io:443"]);
    assert_eq!(v["verdict"], "allow", "{v}");
    // A registry on another port than its service's asks like an unruled host.
    let o = env.run(&["check", "net", "static.crates.io:25"]);
    assert!(
        stdout(&o).starts_with(
            "ask: connection to static.crates.io:25: a package registry is allowed by default on ports 443 and 80 only; no rule allows port 25"
        ),
        "{}",
        stdout(&o)
    );
    let o = env.run(&["check", "net", "static.crates.io:443"]);
    assert!(
        stdout(&o).starts_with(
            "allow: connection to static.crates.io:443: a package registry, allowed by default (ports 443 and 80)"
        ),
        "{}",
        stdout(&o)
    );
    let v = verdict(&["check", "--json", "net", "registry.npmjs.org"]);
    assert_eq!(v["verdict"], "deny", "{v}");
    let v = verdict(&[
        "check",
        "--mode",
        "auto",
        "--json",
        "net",
        "exfil.invalid:443",
    ]);
    assert_eq!(v["verdict"], "ask", "{v}");
    assert_eq!(v["always_allow_rules"][0], "net(domain:exfil.invalid)");
    let v = verdict(&[
        "check",
        "--mode",
        "bypass",
        "--json",
        "net",
        "exfil.invalid",
    ]);
    assert_eq!(v["verdict"], "allow", "{v}");
    for host in ["169.254.169.254", "[::1]:22"] {
        let v = verdict(&["check", "--mode", "auto", "--json", "net", host]);
        assert_eq!(v["verdict"], "ask", "{host}: {v}");
        assert!(
            v["reason"].as_str().unwrap().contains("address"),
            "{host}: {v}"
        );
    }
    // A name is judged by name first (no rule allows it: asked before any lookup).
    let v = verdict(&["check", "--mode", "auto", "--json", "net", "localhost:8080"]);
    assert_eq!(v["verdict"], "ask", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("no rule allows"),
        "{v}"
    );
    let o = env.run(&["check", "net", "crates.io"]);
    assert!(stdout(&o).starts_with("allow: "), "{}", stdout(&o));
}
