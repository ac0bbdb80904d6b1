//! `edit`: exact replacement, uniqueness, staleness, diffs.

use crate::tools_support;

use decode_policy::{Mode, Tool};
use serde_json::json;
use tools_support::{exec, Project};

const SRC: &str = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";

#[tokio::test]
async fn replaces_a_unique_string_and_returns_the_diff() {
    let p = Project::new();
    p.write("src/main.rs", SRC);
    let ctx = p.ctx(Mode::Edit);
    exec(&ctx, Tool::Read, json!({"path": "src/main.rs"})).await;
    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "src/main.rs", "old_string": "let x = 1;", "new_string": "let x = 2;"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(
        p.read("src/main.rs"),
        SRC.replace("let x = 1;", "let x = 2;")
    );
    assert!(
        r.content.contains("replaced 1 occurrence (line 2)"),
        "{}",
        r.content
    );
    assert!(
        r.content.contains("     2\t    let x = 2;"),
        "{}",
        r.content
    );
    let diff = r.diff.unwrap();
    assert!(diff.contains("-    let x = 1;\n+    let x = 2;"), "{diff}");
    assert!(
        diff.starts_with("--- a/src/main.rs\n+++ b/src/main.rs\n@@"),
        "{diff}"
    );

    // A second edit needs no new read: the session saw its own write.
    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "src/main.rs", "old_string": "let x = 2;", "new_string": "let x = 3;"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
}

#[tokio::test]
async fn not_found_and_not_unique_fail_clearly() {
    let p = Project::new();
    p.write("t.txt", "a\nb\na\n");
    let ctx = p.ctx(Mode::Edit);
    exec(&ctx, Tool::Read, json!({"path": "t.txt"})).await;

    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "t.txt", "old_string": "zzz", "new_string": "y"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("not found"), "{}", r.content);

    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "t.txt", "old_string": "a", "new_string": "c"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("occurs 2 times"), "{}", r.content);
    assert!(r.content.contains("lines 1, 3"), "{}", r.content);
    assert!(r.content.contains("replace_all"), "{}", r.content);
    assert_eq!(p.read("t.txt"), "a\nb\na\n");

    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "t.txt", "old_string": "a", "new_string": "c", "replace_all": true}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert!(
        r.content.contains("replaced 2 occurrences"),
        "{}",
        r.content
    );
    assert_eq!(p.read("t.txt"), "c\nb\nc\n");
}

#[tokio::test]
async fn refuses_a_file_never_read_in_the_session() {
    let p = Project::new();
    p.write("t.txt", "hello\n");
    let ctx = p.ctx(Mode::Edit);
    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "t.txt", "old_string": "hello", "new_string": "bye"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("has not been read"), "{}", r.content);
    assert_eq!(p.read("t.txt"), "hello\n");
}

#[tokio::test]
async fn one_shot_sessions_do_not_require_a_read() {
    let p = Project::new();
    p.write("t.txt", "hello\n");
    let ctx = p.one_shot_ctx(Mode::Edit);
    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "t.txt", "old_string": "hello", "new_string": "bye"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(p.read("t.txt"), "bye\n");
}

#[tokio::test]
async fn refuses_a_file_changed_on_disk_since_read() {
    let p = Project::new();
    p.write("t.txt", "hello\n");
    let ctx = p.ctx(Mode::Edit);
    exec(&ctx, Tool::Read, json!({"path": "t.txt"})).await;
    p.write("t.txt", "hello world\n");
    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "t.txt", "old_string": "hello", "new_string": "bye"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("changed on disk"), "{}", r.content);
    assert_eq!(p.read("t.txt"), "hello world\n");

    // Touching without changing the contents is not a change.
    exec(&ctx, Tool::Read, json!({"path": "t.txt"})).await;
    p.write("t.txt", "hello world\n");
    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "t.txt", "old_string": "world", "new_string": "there"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
}

#[tokio::test]
async fn a_partial_read_counts_as_a_read() {
    let p = Project::new();
    let text: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    p.write("t.txt", &text);
    let ctx = p.ctx(Mode::Edit);
    exec(
        &ctx,
        Tool::Read,
        json!({"path": "t.txt", "offset": 1, "limit": 2}),
    )
    .await;
    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "t.txt", "old_string": "line 40\n", "new_string": "forty\n"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
}

#[tokio::test]
async fn windows_line_endings_are_matched() {
    let p = Project::new();
    p.write("w.txt", "one\r\ntwo\r\nthree\r\n");
    let ctx = p.one_shot_ctx(Mode::Edit);
    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(p.read("w.txt"), "1\r\n2\r\nthree\r\n");
}

#[tokio::test]
async fn empty_old_string_creates_a_missing_file_only() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Edit);
    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "new/n.txt", "old_string": "", "new_string": "hi\n"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(p.read("new/n.txt"), "hi\n");
    assert!(r.diff.unwrap().contains("/dev/null"));

    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "new/n.txt", "old_string": "", "new_string": "x"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("empty"), "{}", r.content);

    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "missing.txt", "old_string": "a", "new_string": "b"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("does not exist"), "{}", r.content);
}

#[tokio::test]
async fn same_strings_and_binary_files_are_refused() {
    let p = Project::new();
    std::fs::write(p.path("b.bin"), b"ab\0cd").unwrap();
    let ctx = p.one_shot_ctx(Mode::Edit);
    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "b.bin", "old_string": "ab", "new_string": "xy"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("binary"), "{}", r.content);
    let r = exec(
        &ctx,
        Tool::Edit,
        json!({"path": "b.bin", "old_string": "ab", "new_string": "ab"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("the same"), "{}", r.content);
}
