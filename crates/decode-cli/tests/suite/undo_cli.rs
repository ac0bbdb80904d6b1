//! `decode undo` as a user runs it, after a real `decode run` (the script provider)
//! changed the project: a dry run shows the files and diffs and changes nothing; the
//! undo puts them back; a file changed since is kept unless named; exit codes.

use serde_json::json;

use crate::common;

use common::{stderr, stdout, Env};

/// Runs the agent headless in auto mode with a script of model turns; returns the
/// session id.
fn run_script(env: &Env, name: &str, turns: serde_json::Value) -> String {
    let script = env.write(name, &json!({ "turns": turns }).to_string());
    let script = script.to_string_lossy().into_owned();
    let out = env.run(&[
        "run",
        "--mode",
        "auto",
        "--provider",
        "script",
        "--script",
        &script,
        "--json",
        "-p",
        "change the notes",
    ]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let first = stdout(&out).lines().next().unwrap_or_default().to_string();
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    v["id"].as_str().unwrap().to_string()
}

#[test]
fn a_run_is_undone_from_the_command_line_and_conflicts_are_kept() {
    let env = Env::new();
    env.write("notes.txt", "first\n");
    env.write("gone.txt", "to be deleted\n");
    let session = run_script(
        &env,
        ".script1.json",
        json!([
            {"tool_calls": [
                {"name": "write", "input": {"path": "notes.txt", "content": "changed\n"}},
                {"name": "bash", "input": {"command": "echo new > made.txt && rm gone.txt"}}
            ]},
            {"text": "Done."}
        ]),
    );
    assert_eq!(env.read("notes.txt").as_deref(), Some("changed\n"));

    // A dry run shows what would be undone and changes nothing.
    let out = env.run(&["undo", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("undo turn 1 of session {session}")),
        "{text}"
    );
    assert!(text.contains("modified     notes.txt"), "{text}");
    assert!(text.contains("created      made.txt"), "{text}");
    assert!(text.contains("deleted      gone.txt"), "{text}");
    assert!(
        text.contains("-first") && text.contains("+changed"),
        "{text}"
    );
    assert!(text.contains("dry run: nothing was changed"), "{text}");
    assert_eq!(env.read("notes.txt").as_deref(), Some("changed\n"));

    let out = env.run(&["undo", "--json", "--dry-run"]);
    let plan: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(plan["files"].as_array().unwrap().len(), 3);

    let out = env.run(&["undo"]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("undone: 2 restored, 1 removed, 0 kept, 0 failed"),
        "{}",
        stdout(&out)
    );
    assert_eq!(env.read("notes.txt").as_deref(), Some("first\n"));
    assert_eq!(env.read("gone.txt").as_deref(), Some("to be deleted\n"));
    assert_eq!(env.read("made.txt"), None);

    // Nothing left to undo: exit 1; a turn that never changed anything: exit 2.
    let out = env.run(&["undo"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("nothing to undo"), "{}", stderr(&out));
    let out = env.run(&["undo", "--session", &session, "--turn", "7"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));

    let out = env.run(&["undo", "--list", "--json"]);
    let turns: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(turns[0]["session"], json!(session));
    assert!(turns[0]["undone"].is_u64());

    // A second run; the person edits its file afterwards: kept unless named.
    run_script(
        &env,
        ".script2.json",
        json!([
            {"tool_calls": [
                {"name": "bash", "input": {"command": "echo agent >> notes.txt && echo x > other.txt"}}
            ]},
            {"text": "Done."}
        ]),
    );
    std::fs::write(env.project.join("notes.txt"), "first\nagent\nmine\n").unwrap();
    let out = env.run(&["undo"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("kept notes.txt"), "{}", stdout(&out));
    assert_eq!(
        env.read("notes.txt").as_deref(),
        Some("first\nagent\nmine\n")
    );
    assert_eq!(env.read("other.txt"), None);
    let out = env.run(&["undo", "--overwrite", "notes.txt"]);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(env.read("notes.txt").as_deref(), Some("first\n"));
}
