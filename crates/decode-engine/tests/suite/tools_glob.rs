//! `glob`: patterns, .gitignore, newest first, caps.

use crate::tools_support;

use std::time::{Duration, SystemTime};

use decode_policy::{Mode, Tool};
use serde_json::json;
use tools_support::{exec, Project};

fn set_mtime(p: &std::path::Path, secs_ago: u64) {
    let t = SystemTime::now() - Duration::from_secs(secs_ago);
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(t).unwrap();
}

#[tokio::test]
async fn matches_newest_first_and_respects_gitignore() {
    let p = Project::new();
    p.write(".gitignore", "target/\n*.log\n");
    let old = p.write("src/old.rs", "");
    let new = p.write("src/deep/new.rs", "");
    let top = p.write("top.rs", "");
    p.write("target/debug/gen.rs", "");
    p.write("notes.log", "");
    p.write("README.md", "");
    p.write(".hidden/h.rs", "");
    p.write(".git/x.rs", "");
    set_mtime(&old, 300);
    set_mtime(&top, 200);
    set_mtime(&new, 100);
    set_mtime(&p.path(".hidden/h.rs"), 400);

    let ctx = p.ctx(Mode::Default);
    let r = exec(&ctx, Tool::Glob, json!({"pattern": "**/*.rs"})).await;
    assert!(!r.is_error, "{}", r.content);
    let lines: Vec<&str> = r.content.lines().collect();
    assert_eq!(
        lines,
        ["src/deep/new.rs", "top.rs", "src/old.rs", ".hidden/h.rs"]
    );

    let logs = exec(&ctx, Tool::Glob, json!({"pattern": "**/*.log"})).await;
    assert!(
        logs.content.starts_with("No files match"),
        "{}",
        logs.content
    );
}

#[tokio::test]
async fn star_stays_in_one_folder_and_path_narrows() {
    let p = Project::new();
    p.write("a.rs", "");
    p.write("src/b.rs", "");
    p.write("src/x/c.rs", "");
    let ctx = p.ctx(Mode::Default);

    let r = exec(&ctx, Tool::Glob, json!({"pattern": "*.rs"})).await;
    assert_eq!(r.content, "a.rs");
    let r = exec(&ctx, Tool::Glob, json!({"pattern": "src/*.rs"})).await;
    assert_eq!(r.content, "src/b.rs");
    let mut r: Vec<String> = exec(&ctx, Tool::Glob, json!({"pattern": "*.rs", "path": "src"}))
        .await
        .content
        .lines()
        .map(str::to_string)
        .collect();
    r.sort();
    assert_eq!(r, ["src/b.rs"]);
    let r = exec(
        &ctx,
        Tool::Glob,
        json!({"pattern": "**/*.{rs,md}", "path": "src/x"}),
    )
    .await;
    assert_eq!(r.content, "src/x/c.rs");
    let none = exec(&ctx, Tool::Glob, json!({"pattern": "*.py"})).await;
    assert!(!none.is_error);
    assert!(none.content.contains("try `**/*.py`"), "{}", none.content);
}

#[tokio::test]
async fn caps_the_list_and_counts_the_rest() {
    let p = Project::new();
    for i in 0..130 {
        p.write(&format!("f/{i:03}.txt"), "");
    }
    let r = exec(
        &p.ctx(Mode::Default),
        Tool::Glob,
        json!({"pattern": "**/*.txt"}),
    )
    .await;
    let lines: Vec<&str> = r.content.lines().collect();
    assert_eq!(lines.len(), 101);
    assert!(lines[100].contains("30 more"), "{}", lines[100]);
}

#[tokio::test]
async fn bad_patterns_and_roots_are_errors() {
    let p = Project::new();
    p.write("file.txt", "");
    let ctx = p.ctx(Mode::Default);
    let r = exec(&ctx, Tool::Glob, json!({"pattern": "a[b"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("not a valid glob"), "{}", r.content);
    let r = exec(&ctx, Tool::Glob, json!({"pattern": "*", "path": "missing"})).await;
    assert!(r.is_error);
    let r = exec(
        &ctx,
        Tool::Glob,
        json!({"pattern": "*", "path": "file.txt"}),
    )
    .await;
    assert!(r.is_error);
}
