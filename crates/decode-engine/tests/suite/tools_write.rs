//! `write`: parents, atomicity, permissions, diffs, staleness.

use crate::tools_support;

use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use decode_policy::{Mode, Tool};
use serde_json::json;
use tools_support::{exec, Project};

#[tokio::test]
async fn creates_parents_and_diffs_against_nothing() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Edit);
    let r = exec(
        &ctx,
        Tool::Write,
        json!({"path": "a/b/c.txt", "content": "one\ntwo\n"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(p.read("a/b/c.txt"), "one\ntwo\n");
    assert!(r.content.contains("Created a/b/c.txt"), "{}", r.content);
    let diff = r.diff.unwrap();
    assert!(diff.contains("--- /dev/null"), "{diff}");
    assert!(diff.contains("+++ b/a/b/c.txt"), "{diff}");
    assert!(diff.contains("+one\n+two"), "{diff}");
}

#[tokio::test]
async fn replaces_with_a_unified_diff_and_keeps_permissions() {
    let p = Project::new();
    let path = p.write("run.sh", "#!/bin/sh\necho old\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
    let ctx = p.ctx(Mode::Edit);
    let r = exec(
        &ctx,
        Tool::Write,
        json!({"path": "run.sh", "content": "#!/bin/sh\necho new\n"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    let diff = r.diff.unwrap();
    assert!(diff.contains("--- a/run.sh\n+++ b/run.sh\n"), "{diff}");
    assert!(diff.contains("-echo old\n+echo new"), "{diff}");
    assert!(r.content.contains("+1 -1"), "{}", r.content);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
    // No temp files left behind.
    let names: Vec<_> = std::fs::read_dir(&p.root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[tokio::test]
async fn same_content_changes_nothing() {
    let p = Project::new();
    p.write("same.txt", "x\n");
    let r = exec(
        &p.ctx(Mode::Edit),
        Tool::Write,
        json!({"path": "same.txt", "content": "x\n"}),
    )
    .await;
    assert!(!r.is_error);
    assert!(r.diff.is_none());
    assert!(r.content.contains("nothing changed"), "{}", r.content);
}

#[tokio::test]
async fn refuses_a_file_changed_since_it_was_read() {
    let p = Project::new();
    p.write("f.txt", "v1\n");
    let ctx = p.ctx(Mode::Edit);
    exec(&ctx, Tool::Read, json!({"path": "f.txt"})).await;
    p.write("f.txt", "v2 from someone else\n");
    let r = exec(
        &ctx,
        Tool::Write,
        json!({"path": "f.txt", "content": "mine\n"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("changed on disk"), "{}", r.content);
    assert_eq!(p.read("f.txt"), "v2 from someone else\n");
    // After reading again, the write goes through.
    exec(&ctx, Tool::Read, json!({"path": "f.txt"})).await;
    let r = exec(
        &ctx,
        Tool::Write,
        json!({"path": "f.txt", "content": "mine\n"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
}

#[tokio::test]
async fn writes_through_a_symlink_land_on_the_target() {
    let p = Project::new();
    let target = p.write("real/t.txt", "old\n");
    std::os::unix::fs::symlink(&target, p.path("link.txt")).unwrap();
    let r = exec(
        &p.ctx(Mode::Edit),
        Tool::Write,
        json!({"path": "link.txt", "content": "new\n"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert!(std::fs::symlink_metadata(p.path("link.txt"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(p.read("real/t.txt"), "new\n");
}

#[tokio::test]
async fn a_folder_is_not_a_file() {
    let p = Project::new();
    std::fs::create_dir_all(p.path("d")).unwrap();
    let r = exec(
        &p.ctx(Mode::Edit),
        Tool::Write,
        json!({"path": "d", "content": "x"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("folder"), "{}", r.content);
}

/// A reader never sees a half-written file while writes loop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_never_see_a_partial_write() {
    let p = Project::new();
    let a = "A".repeat(256 * 1024);
    let b = "B".repeat(384 * 1024);
    p.write("big.txt", &a);
    let path = p.path("big.txt");
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let stop = Arc::clone(&stop);
        let (a, b) = (a.clone(), b.clone());
        std::thread::spawn(move || {
            let mut reads = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let text = std::fs::read_to_string(&path).expect("the file is always there");
                assert!(
                    text == a || text == b,
                    "saw a partial file of {} bytes",
                    text.len()
                );
                reads += 1;
            }
            reads
        })
    };
    let ctx = p.one_shot_ctx(Mode::Edit);
    for i in 0..60 {
        let content = if i % 2 == 0 { &b } else { &a };
        let r = exec(
            &ctx,
            Tool::Write,
            json!({"path": "big.txt", "content": content}),
        )
        .await;
        assert!(!r.is_error, "{}", r.content);
    }
    stop.store(true, Ordering::Relaxed);
    let reads = reader.join().expect("reader saw only whole files");
    assert!(reads > 0);
}
