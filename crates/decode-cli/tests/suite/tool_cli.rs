//! `decode tool` (README, "Command line") run as a user would: one call through the gate, the
//! result printed, exit codes 0 / 1 / 2, `--json`. Every run gets an isolated HOME and
//! XDG folders and no terminal (stdin is /dev/null), so asks are denied.

use crate::common;

use common::{json, stderr, stderr_lines, stdout, Env};

#[test]
fn read_prints_numbered_lines() {
    let env = Env::new();
    env.write("notes.txt", "first\nsecond\n");
    let o = env.run(&["tool", "read", r#"{"path":"notes.txt"}"#]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "     1\tfirst\n     2\tsecond\n");
}

#[test]
fn project_flag_and_claude_names_work() {
    let env = Env::new();
    env.write("src/a.rs", "fn alpha() {}\n");
    let dir = env.project.to_str().unwrap();
    let o = env.run(&[
        "tool",
        "--project",
        dir,
        "Grep",
        r#"{"pattern":"alpha","output_mode":"content"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "src/a.rs:1:fn alpha() {}\n");
}

#[test]
fn write_in_default_mode_without_a_terminal_is_denied() {
    let env = Env::new();
    let o = env.run(&["tool", "write", r#"{"path":"out.txt","content":"x\n"}"#]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("no terminal"), "{err}");
    assert!(err.contains("edit mode"), "{err}");
    assert!(err.contains("write(out.txt)"), "{err}");
    assert!(env.read("out.txt").is_none(), "nothing was written");
    assert!(env.read(".decode/settings.json").is_none());
}

#[test]
fn write_in_edit_mode_works_and_prints_the_diff() {
    let env = Env::new();
    let o = env.run(&[
        "tool",
        "--mode",
        "edit",
        "write",
        r#"{"path":"d/out.txt","content":"x\n"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(env.read("d/out.txt").as_deref(), Some("x\n"));
    let out = stdout(&o);
    assert!(out.contains("Created d/out.txt"), "{out}");
    assert!(out.contains("+++ b/d/out.txt"), "{out}");
}

#[test]
fn json_has_verdict_result_and_is_error() {
    let env = Env::new();
    let o = env.run(&[
        "tool",
        "--mode",
        "edit",
        "--json",
        "write",
        r#"{"path":"j.txt","content":"x"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["verdict"], "allow");
    assert_eq!(v["is_error"], false);
    assert!(v["result"].as_str().unwrap().contains("j.txt"));
    assert!(v.get("answer").is_none());

    // Asked and nobody there: the answer is part of the JSON.
    // (`make hi`: an ordinary command; `echo hi` is read-only and runs.)
    let o = env.run(&["tool", "--json", "bash", r#"{"command":"make hi"}"#]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["verdict"], "ask");
    assert_eq!(v["is_error"], true);
    assert_eq!(v["answer"]["kind"], "unavailable");
    assert!(v["result"].as_str().unwrap().contains("bash(make hi)"));

    // Denied by the gate.
    let o = env.run(&[
        "tool",
        "--mode",
        "plan",
        "--json",
        "write",
        r#"{"path":"p.txt","content":"x"}"#,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["verdict"], "deny");
    assert!(v["result"].as_str().unwrap().contains("exit_plan_mode"));
}

#[test]
fn a_failing_tool_exits_1() {
    let env = Env::new();
    let o = env.run(&["tool", "read", r#"{"path":"missing.txt"}"#]);
    assert_eq!(o.status.code(), Some(1));
    let o = env.run(&[
        "tool",
        "--mode",
        "bypass",
        "bash",
        r#"{"command":"echo out; exit 4"}"#,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("out"));
    assert!(stdout(&o).contains("[exit code 4]"));
}

#[test]
fn edit_from_the_command_line_needs_no_prior_read() {
    let env = Env::new();
    env.write("e.txt", "hello world\n");
    let o = env.run(&[
        "tool",
        "--mode",
        "edit",
        "edit",
        r#"{"path":"e.txt","old_string":"world","new_string":"there"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(env.read("e.txt").as_deref(), Some("hello there\n"));
    assert!(
        stdout(&o).contains("-hello world\n+hello there"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn usage_errors_are_one_line_and_exit_2() {
    let env = Env::new();
    for args in [
        vec!["tool", "read", r#"{"path":"#],
        vec!["tool", "read", r#"["path"]"#],
        vec!["tool", "read", r#"{"offset":1}"#],
        vec!["tool", "bash", r#"{"command":"ls","timeout_s":-1}"#],
        vec!["tool", "frobnicate", "{}"],
        vec!["tool", "--mode", "warp", "read", r#"{"path":"x"}"#],
        vec!["tool", "--agent", "nobody", "read", r#"{"path":"x"}"#],
        vec!["tool", "read"],
    ] {
        let o = env.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr_lines(&o).len(), 1, "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn tools_outside_the_agent_are_denied() {
    let env = Env::new();
    let o = env.run(&["tool", "--agent", "explore", "bash", r#"{"command":"ls"}"#]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not available"), "{}", stderr(&o));
}
