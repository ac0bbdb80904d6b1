//! `grep`: modes, filters, .gitignore, caps.

use crate::tools_support;

use decode_policy::{Mode, Tool};
use serde_json::json;
use tools_support::{exec, Project};

fn project() -> Project {
    let p = Project::new();
    p.write(".gitignore", "build/\nsecret.txt\n");
    p.write(
        "src/lib.rs",
        "pub fn alpha() {}\n// TODO: beta\nfn gamma() { alpha(); }\n",
    );
    p.write("src/main.rs", "fn main() {\n    lib::alpha();\n}\n");
    p.write("docs/guide.md", "Alpha and ALPHA\n");
    p.write("build/out.rs", "fn alpha() {}\n");
    p.write("secret.txt", "alpha\n");
    std::fs::write(p.path("blob.bin"), b"alpha\0\x01\x02").unwrap();
    p
}

fn sorted(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.lines().map(str::to_string).collect();
    v.sort();
    v
}

#[tokio::test]
async fn files_mode_respects_gitignore_and_skips_binaries() {
    let p = project();
    let ctx = p.ctx(Mode::Default);
    let r = exec(&ctx, Tool::Grep, json!({"pattern": "alpha"})).await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(sorted(&r.content), ["src/lib.rs", "src/main.rs"]);
}

#[tokio::test]
async fn case_insensitive_glob_and_type_filters() {
    let p = project();
    let ctx = p.ctx(Mode::Default);
    let r = exec(
        &ctx,
        Tool::Grep,
        json!({"pattern": "alpha", "case_insensitive": true}),
    )
    .await;
    assert_eq!(
        sorted(&r.content),
        ["docs/guide.md", "src/lib.rs", "src/main.rs"]
    );

    let r = exec(
        &ctx,
        Tool::Grep,
        json!({"pattern": "alpha", "case_insensitive": true, "glob": "*.md"}),
    )
    .await;
    assert_eq!(r.content, "docs/guide.md");

    let r = exec(
        &ctx,
        Tool::Grep,
        json!({"pattern": "alpha", "glob": "!*.rs", "case_insensitive": true}),
    )
    .await;
    assert_eq!(r.content, "docs/guide.md");

    let r = exec(
        &ctx,
        Tool::Grep,
        json!({"pattern": "alpha", "type": "rust"}),
    )
    .await;
    assert_eq!(sorted(&r.content), ["src/lib.rs", "src/main.rs"]);

    let r = exec(
        &ctx,
        Tool::Grep,
        json!({"pattern": "alpha", "type": "nosuchtype"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("unknown file type"), "{}", r.content);
}

#[tokio::test]
async fn content_mode_numbers_lines_with_context() {
    let p = project();
    let ctx = p.ctx(Mode::Default);
    let r = exec(
        &ctx,
        Tool::Grep,
        json!({"pattern": "TODO", "output_mode": "content"}),
    )
    .await;
    assert_eq!(r.content, "src/lib.rs:2:// TODO: beta");

    let r = exec(
        &ctx,
        Tool::Grep,
        json!({"pattern": "TODO", "output_mode": "content", "context": 1, "path": "src/lib.rs"}),
    )
    .await;
    assert_eq!(
        r.content,
        "src/lib.rs-1-pub fn alpha() {}\nsrc/lib.rs:2:// TODO: beta\nsrc/lib.rs-3-fn gamma() { alpha(); }"
    );
}

#[tokio::test]
async fn count_mode_counts_matching_lines() {
    let p = project();
    let r = exec(
        &p.ctx(Mode::Default),
        Tool::Grep,
        json!({"pattern": "alpha", "output_mode": "count", "path": "src"}),
    )
    .await;
    assert_eq!(
        r.content,
        "src/lib.rs:2\nsrc/main.rs:1\n(3 matching lines in 2 files)"
    );
}

#[tokio::test]
async fn no_match_is_not_an_error_but_a_bad_regex_is() {
    let p = project();
    let ctx = p.ctx(Mode::Default);
    let r = exec(&ctx, Tool::Grep, json!({"pattern": "zebra"})).await;
    assert!(!r.is_error);
    assert!(r.content.starts_with("No matches"), "{}", r.content);
    let r = exec(&ctx, Tool::Grep, json!({"pattern": "fn ("})).await;
    assert!(r.is_error);
    assert!(
        r.content.contains("not a valid regular expression"),
        "{}",
        r.content
    );
    let r = exec(&ctx, Tool::Grep, json!({"pattern": "x", "path": "missing"})).await;
    assert!(r.is_error);
}

#[tokio::test]
async fn content_output_is_capped_with_a_notice() {
    let p = Project::new();
    let text: String = (0..2000).map(|i| format!("match {i}\n")).collect();
    p.write("many.txt", &text);
    let r = exec(
        &p.ctx(Mode::Default),
        Tool::Grep,
        json!({"pattern": "match", "output_mode": "content"}),
    )
    .await;
    let last = r.content.lines().last().unwrap();
    assert!(
        last.starts_with("[output capped: 500 of 2000 matching lines shown"),
        "{last}"
    );
    assert_eq!(r.content.lines().count(), 501);
}

#[tokio::test]
async fn multiline_patterns_span_lines() {
    let p = project();
    let r = exec(
        &p.ctx(Mode::Default),
        Tool::Grep,
        json!({"pattern": "main\\(\\) \\{\\n\\s+lib", "multiline": true, "output_mode": "content"}),
    )
    .await;
    assert_eq!(
        r.content,
        "src/main.rs:1:fn main() {\nsrc/main.rs:2:    lib::alpha();"
    );
}
