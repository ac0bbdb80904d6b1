//! `bash`: output, exit codes, working folder, timeouts and cancellation that leave
//! no process behind, streaming, truncation.

use crate::tools_support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use decode_engine::tools::{ToolContext, ToolProgress, MAX_OUTPUT_CHARS};
use decode_policy::{Mode, Tool};
use nix::errno::Errno;
use nix::sys::signal::killpg;
use nix::unistd::Pid;
use serde_json::json;
use tools_support::{exec, Project};

/// The same context for a call the person approved: it runs outside the sandbox,
/// where the pids the command prints are the host's (the sandbox has its own pid
/// namespace; tests/sandbox.rs checks what it leaves behind by other means).
fn outside(ctx: ToolContext) -> ToolContext {
    ToolContext {
        approved_by_person: true,
        ..ctx
    }
}

/// Whether any process of the group is left (zombies included), waiting up to 5 s
/// for the kernel to finish tearing it down.
fn group_gone(pgid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match killpg(Pid::from_raw(pgid), None) {
            Err(Errno::ESRCH) => return true,
            _ if Instant::now() > deadline => return false,
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn pid_gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match nix::sys::signal::kill(Pid::from_raw(pid), None) {
            Err(Errno::ESRCH) => return true,
            _ if Instant::now() > deadline => return false,
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Reads `KEY=<number>` from the streamed output.
fn number_after(text: &str, key: &str) -> i32 {
    let start = text
        .find(key)
        .unwrap_or_else(|| panic!("no {key} in {text:?}"))
        + key.len();
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect::<String>()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn runs_and_reports_output_and_exit_code() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Bypass);
    let r = exec(
        &ctx,
        Tool::Bash,
        json!({"command": "echo out; echo err >&2"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert!(
        r.content.contains("out") && r.content.contains("err"),
        "{}",
        r.content
    );

    let r = exec(&ctx, Tool::Bash, json!({"command": "echo failing; exit 3"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("failing"), "{}", r.content);
    assert!(r.content.ends_with("[exit code 3]"), "{}", r.content);

    let r = exec(&ctx, Tool::Bash, json!({"command": "true"})).await;
    assert_eq!(r.content, "(no output)");

    let r = exec(&ctx, Tool::Bash, json!({"command": "cat; echo done"})).await;
    assert_eq!(r.content, "done", "stdin must be empty");
}

#[tokio::test]
async fn the_working_folder_persists_inside_the_project() {
    let p = Project::new();
    std::fs::create_dir_all(p.path("sub/dir")).unwrap();
    let ctx = p.ctx(Mode::Bypass);
    let r = exec(&ctx, Tool::Bash, json!({"command": "pwd"})).await;
    assert_eq!(r.content, p.root.to_str().unwrap());
    exec(&ctx, Tool::Bash, json!({"command": "cd sub/dir"})).await;
    let r = exec(&ctx, Tool::Bash, json!({"command": "pwd"})).await;
    assert_eq!(r.content, p.path("sub/dir").to_str().unwrap());
    assert_eq!(ctx.session.cwd(), p.path("sub/dir"));
    // Even a failing command that changed folder first keeps the change.
    exec(&ctx, Tool::Bash, json!({"command": "cd ..; false"})).await;
    assert_eq!(ctx.session.cwd(), p.path("sub"));
}

#[tokio::test]
async fn leaving_the_project_resets_the_working_folder() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Bypass);
    let r = exec(&ctx, Tool::Bash, json!({"command": "cd /"})).await;
    assert!(
        r.content.contains("reset to the project root"),
        "{}",
        r.content
    );
    let r = exec(&ctx, Tool::Bash, json!({"command": "pwd"})).await;
    assert_eq!(r.content, p.root.to_str().unwrap());
}

#[tokio::test]
async fn a_deleted_working_folder_falls_back_to_the_root() {
    let p = Project::new();
    std::fs::create_dir_all(p.path("gone")).unwrap();
    let ctx = p.ctx(Mode::Bypass);
    exec(&ctx, Tool::Bash, json!({"command": "cd gone"})).await;
    std::fs::remove_dir(p.path("gone")).unwrap();
    let r = exec(&ctx, Tool::Bash, json!({"command": "pwd"})).await;
    assert!(
        r.content.starts_with(p.root.to_str().unwrap()),
        "{}",
        r.content
    );
    assert!(r.content.contains("no longer exists"), "{}", r.content);
}

#[tokio::test]
async fn timeout_kills_the_whole_group_including_background_children() {
    let p = Project::new();
    let seen = Arc::new(Mutex::new(String::new()));
    let seen2 = Arc::clone(&seen);
    let ctx = outside(p.ctx(Mode::Bypass)).with_progress(Arc::new(move |ev| {
        if let ToolProgress::Stdout { text } = ev {
            seen2.lock().unwrap().push_str(&text);
        }
    }));
    let started = Instant::now();
    let r = exec(
        &ctx,
        Tool::Bash,
        json!({"command": "echo PGID=$$; sleep 100 & echo BG=$!; sleep 100", "timeout_s": 1}),
    )
    .await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(r.is_error);
    assert!(r.content.contains("timed out after 1 s"), "{}", r.content);
    let text = seen.lock().unwrap().clone();
    let pgid = number_after(&text, "PGID=");
    let bg = number_after(&text, "BG=");
    assert!(group_gone(pgid), "process group {pgid} is still there");
    assert!(pid_gone(bg), "background child {bg} is still there");
}

#[tokio::test]
async fn cancellation_kills_at_once() {
    let p = Project::new();
    let seen = Arc::new(Mutex::new(String::new()));
    let seen2 = Arc::clone(&seen);
    let ctx = outside(p.ctx(Mode::Bypass)).with_progress(Arc::new(move |ev| {
        if let ToolProgress::Stdout { text } = ev {
            seen2.lock().unwrap().push_str(&text);
        }
    }));
    let cancel = ctx.cancel.clone();
    let watcher = {
        let seen = Arc::clone(&seen);
        tokio::spawn(async move {
            // Cancel as soon as the command has printed its group.
            loop {
                if seen.lock().unwrap().contains("BG=") {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            cancel.cancel();
        })
    };
    let started = Instant::now();
    let r = exec(
        &ctx,
        Tool::Bash,
        json!({"command": "echo PGID=$$; (sleep 100; echo never) & echo BG=$!; wait"}),
    )
    .await;
    watcher.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(r.is_error);
    assert!(r.content.contains("cancelled"), "{}", r.content);
    assert!(!r.content.contains("never"));
    let text = seen.lock().unwrap().clone();
    assert!(group_gone(number_after(&text, "PGID=")));
    assert!(pid_gone(number_after(&text, "BG=")));
}

#[tokio::test]
async fn background_jobs_end_with_the_command() {
    let p = Project::new();
    let ctx = outside(p.ctx(Mode::Bypass));
    let started = Instant::now();
    let r = exec(
        &ctx,
        Tool::Bash,
        json!({"command": "sleep 100 & echo BG=$!; echo PGID=$$"}),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!r.is_error, "{}", r.content);
    assert!(pid_gone(number_after(&r.content, "BG=")));
    assert!(group_gone(number_after(&r.content, "PGID=")));
}

#[tokio::test]
async fn output_streams_as_it_comes() {
    let p = Project::new();
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev2 = Arc::clone(&events);
    let ctx = p.ctx(Mode::Bypass).with_progress(Arc::new(move |ev| {
        ev2.lock().unwrap().push((Instant::now(), ev));
    }));
    let started = Instant::now();
    exec(
        &ctx,
        Tool::Bash,
        json!({"command": "echo first; sleep 1; echo second >&2"}),
    )
    .await;
    let events = events.lock().unwrap();
    let first = events
        .iter()
        .find(|(_, e)| matches!(e, ToolProgress::Stdout { text } if text.contains("first")))
        .expect("stdout event");
    assert!(
        first.0 - started < Duration::from_millis(900),
        "first came late"
    );
    assert!(events
        .iter()
        .any(|(_, e)| matches!(e, ToolProgress::Stderr { text } if text.contains("second"))));
}

#[tokio::test]
async fn long_output_keeps_the_tail_with_a_notice() {
    let p = Project::new();
    let r = exec(
        &p.ctx(Mode::Bypass),
        Tool::Bash,
        json!({"command": "for i in $(seq 1 20000); do echo line$i; done"}),
    )
    .await;
    assert!(!r.is_error);
    assert!(
        r.content.starts_with("[output truncated"),
        "{}",
        &r.content[..200]
    );
    assert!(r.content.ends_with("line20000"));
    let body = r.content.split_once('\n').unwrap().1;
    assert!(body.chars().count() <= MAX_OUTPUT_CHARS);
}

#[tokio::test]
async fn bad_timeouts_and_empty_commands_are_errors() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Bypass);
    let r = exec(
        &ctx,
        Tool::Bash,
        json!({"command": "true", "timeout_s": -1}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("timeout_s"), "{}", r.content);
    let r = exec(&ctx, Tool::Bash, json!({"command": "  "})).await;
    assert!(r.is_error);
    let r = exec(
        &ctx,
        Tool::Bash,
        json!({"command": "echo hi", "timeout_s": 100000}),
    )
    .await;
    assert!(!r.is_error);
    assert!(r.content.contains("capped at 600"), "{}", r.content);
}

#[tokio::test]
async fn dropping_the_call_kills_the_group_too() {
    let p = Project::new();
    let seen = Arc::new(Mutex::new(String::new()));
    let seen2 = Arc::clone(&seen);
    let ctx = outside(p.ctx(Mode::Bypass)).with_progress(Arc::new(move |ev| {
        if let ToolProgress::Stdout { text } = ev {
            seen2.lock().unwrap().push_str(&text);
        }
    }));
    let task = tokio::spawn(async move {
        exec(
            &ctx,
            Tool::Bash,
            json!({"command": "echo PGID=$$; sleep 100 & echo BG=$!; wait"}),
        )
        .await
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen.lock().unwrap().contains("BG=") {
        assert!(Instant::now() < deadline, "the command never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    task.abort();
    let _ = task.await;
    let text = seen.lock().unwrap().clone();
    assert!(group_gone(number_after(&text, "PGID=")));
    assert!(pid_gone(number_after(&text, "BG=")));
}

/// A command in the sandbox inherits no key or token; one the person approved to run
/// outside keeps their tokens (a push needs them) but never the keys Decode reads
/// (names unique to this test, so no other test sees them).
#[tokio::test]
async fn secrets_in_decodes_environment_never_reach_a_command() {
    std::env::set_var("DECODE_TEST_SCRUB_TOKEN", "tok-123");
    std::env::set_var("decode_test_scrub_api_key", "key-456");
    std::env::set_var("DECODE_TEST_SCRUB_PLAIN", "visible");
    let p = Project::new();
    let script = json!({"command": "env; echo \"[${DECODE_TEST_SCRUB_TOKEN-unset}]\""});
    let r = exec(&p.ctx(Mode::Bypass), Tool::Bash, script.clone()).await;
    assert!(!r.is_error, "{}", r.content);
    assert!(!r.content.contains("tok-123"), "{}", r.content);
    assert!(!r.content.contains("key-456"), "{}", r.content);
    assert!(r.content.contains("[unset]"), "{}", r.content);
    assert!(
        r.content.contains("DECODE_TEST_SCRUB_PLAIN=visible"),
        "{}",
        r.content
    );
    let r = exec(&outside(p.ctx(Mode::Bypass)), Tool::Bash, script).await;
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.contains("[tok-123]"), "{}", r.content);
}
