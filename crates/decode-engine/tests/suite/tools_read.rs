//! `read`: numbered lines, windows, caps, refusals.

use crate::tools_support;

use decode_policy::{Mode, Tool};
use serde_json::json;
use tools_support::{exec, Project};

#[tokio::test]
async fn numbers_lines_like_cat_n() {
    let p = Project::new();
    p.write("a.txt", "alpha\nbeta\n\ngamma");
    let r = exec(&p.ctx(Mode::Default), Tool::Read, json!({"path": "a.txt"})).await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(
        r.content,
        "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"
    );
}

#[tokio::test]
async fn absolute_and_file_path_alias_work() {
    let p = Project::new();
    let abs = p.write("d/b.txt", "x\n");
    let ctx = p.ctx(Mode::Default);
    let r = exec(
        &ctx,
        Tool::Read,
        json!({"file_path": abs.to_str().unwrap()}),
    )
    .await;
    assert_eq!(r.content, "     1\tx");
}

#[tokio::test]
async fn offset_and_limit_page_through() {
    let p = Project::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    p.write("ten.txt", &text);
    let ctx = p.ctx(Mode::Default);
    let r = exec(
        &ctx,
        Tool::Read,
        json!({"path": "ten.txt", "offset": 4, "limit": 3}),
    )
    .await;
    assert!(!r.is_error);
    let lines: Vec<&str> = r.content.lines().collect();
    assert_eq!(lines[0], "     4\tline 4");
    assert_eq!(lines[2], "     6\tline 6");
    assert!(
        lines[3].contains("showing lines 4-6 of 10"),
        "{}",
        r.content
    );
    assert!(lines[3].contains("offset 7"), "{}", r.content);

    let past = exec(&ctx, Tool::Read, json!({"path": "ten.txt", "offset": 50})).await;
    assert!(!past.is_error);
    assert!(past.content.contains("past the end"), "{}", past.content);
    assert!(past.content.contains("10 lines"), "{}", past.content);
}

#[tokio::test]
async fn caps_long_files_and_long_lines() {
    let p = Project::new();
    let text: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    p.write("big.txt", &text);
    let mut long = "x".repeat(5000);
    long.push('\n');
    p.write("wide.txt", &long);
    let ctx = p.ctx(Mode::Default);

    let r = exec(&ctx, Tool::Read, json!({"path": "big.txt"})).await;
    assert_eq!(r.content.lines().filter(|l| l.contains('\t')).count(), 2000);
    assert!(
        r.content.contains("showing lines 1-2000 of 2500"),
        "{}",
        &r.content[r.content.len() - 200..]
    );

    let w = exec(&ctx, Tool::Read, json!({"path": "wide.txt"})).await;
    let first = w.content.lines().next().unwrap();
    assert!(first.len() < 2100, "line not cut: {}", first.len());
    assert!(first.contains("[line cut]"));
    assert!(w.content.contains("longer than 2000 characters"));
}

#[tokio::test]
async fn refuses_binary_missing_and_folders() {
    let p = Project::new();
    std::fs::write(p.path("img.bin"), [0x89, b'P', b'N', b'G', 0, 0, 1, 2]).unwrap();
    std::fs::create_dir_all(p.path("dir")).unwrap();
    let ctx = p.ctx(Mode::Default);

    let b = exec(&ctx, Tool::Read, json!({"path": "img.bin"})).await;
    assert!(b.is_error);
    assert!(b.content.contains("binary"), "{}", b.content);

    let m = exec(&ctx, Tool::Read, json!({"path": "nope.txt"})).await;
    assert!(m.is_error);
    assert!(m.content.contains("does not exist"), "{}", m.content);

    let d = exec(&ctx, Tool::Read, json!({"path": "dir"})).await;
    assert!(d.is_error);
    assert!(d.content.contains("folder"), "{}", d.content);
}

#[tokio::test]
async fn empty_file_says_so() {
    let p = Project::new();
    p.write("empty.txt", "");
    let r = exec(
        &p.ctx(Mode::Default),
        Tool::Read,
        json!({"path": "empty.txt"}),
    )
    .await;
    assert!(!r.is_error);
    assert!(r.content.contains("empty"), "{}", r.content);
}

#[tokio::test]
async fn home_is_expanded_like_the_gate_does() {
    let p = Project::new();
    std::fs::write(p.home.join("notes.txt"), "from home\n").unwrap();
    let r = exec(
        &p.ctx(Mode::Default),
        Tool::Read,
        json!({"path": "~/notes.txt"}),
    )
    .await;
    assert_eq!(r.content, "     1\tfrom home");
}

#[tokio::test]
async fn invalid_input_is_an_error() {
    let p = Project::new();
    let ctx = p.ctx(Mode::Default);
    let r = exec(&ctx, Tool::Read, json!({"offset": 1})).await;
    assert!(r.is_error);
    assert!(r.content.contains("path"), "{}", r.content);
    let r = exec(&ctx, Tool::Read, json!({"path": "a", "limit": 0})).await;
    assert!(r.is_error);
}

#[tokio::test]
async fn pipes_and_devices_are_refused_without_blocking() {
    let p = Project::new();
    let made = std::process::Command::new("mkfifo")
        .arg(p.path("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    let ctx = p.ctx(Mode::Default);
    let r = exec(&ctx, Tool::Read, json!({"path": "fifo"})).await;
    assert!(r.is_error);
    assert!(r.content.contains("not a regular file"), "{}", r.content);
    let r = exec(&ctx, Tool::Grep, json!({"pattern": "x", "path": "fifo"})).await;
    assert!(r.is_error);
}
