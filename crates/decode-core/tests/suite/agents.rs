//! Agents catalog: loader errors, Claude Code files, precedence and overrides.

use std::fs;
use std::path::{Path, PathBuf};

use decode_core::agents::{AgentErrorKind, AgentSource, Catalog, Instructions};
use decode_policy::{Mode, Tool};

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, text).unwrap();
    p
}

/// Loads a project holding only `.decode/agents/bad.md` with `text`, expects exactly
/// one error and returns it with its display.
fn one_error(text: &str) -> (decode_core::AgentError, String, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), ".decode/agents/bad.md", text);
    let c = Catalog::load(dir.path());
    assert_eq!(c.errors().len(), 1, "{:?}", c.errors());
    assert_eq!(c.names(), vec!["build", "plan", "explore", "code-reviewer"]);
    let e = c.errors()[0].clone();
    let s = e.to_string();
    assert_eq!(e.file, path);
    assert!(s.starts_with(&path.display().to_string()), "{s}");
    (e, s, path)
}

const GOOD: &str = "---\nname: good\ndescription: A good agent.\ntools: [read, grep]\nmode: default\n---\nYou are good.\n";

#[test]
fn missing_frontmatter() {
    let (e, s, path) = one_error("name: x\n---\nbody\n");
    assert_eq!(e.kind, AgentErrorKind::MissingFrontmatter);
    assert_eq!(e.line, Some(1));
    assert!(s.starts_with(&format!("{}:1: ", path.display())), "{s}");
    assert!(s.contains("---"), "{s}");
}

#[test]
fn unclosed_frontmatter() {
    let (e, s, _) = one_error("---\nname: x\ndescription: y\n");
    assert_eq!(e.kind, AgentErrorKind::UnclosedFrontmatter);
    assert!(s.contains("never closed"), "{s}");
}

#[test]
fn bad_yaml_reports_the_file_line() {
    // Line 4 of the file holds the broken flow sequence.
    let (e, s, path) =
        one_error("---\nname: x\ndescription: y\ntools: [read, grep\nmode: default\n---\nbody\n");
    assert!(matches!(e.kind, AgentErrorKind::Yaml(_)), "{:?}", e.kind);
    let line = e.line.unwrap();
    assert!((4..=6).contains(&line), "line {line}: {s}");
    assert!(
        s.starts_with(&format!("{}:{line}: ", path.display())),
        "{s}"
    );
    assert!(s.contains("not valid YAML"), "{s}");
    assert!(!s.contains(" at line "), "{s}");
}

#[test]
fn bad_yaml_tab_indentation() {
    let (e, s, _) =
        one_error("---\nname: x\ndescription: y\ntools:\n\t- read\nmode: default\n---\n");
    assert!(matches!(e.kind, AgentErrorKind::Yaml(_)), "{s}");
    assert!(e.line.unwrap() >= 4, "{s}");
}

#[test]
fn frontmatter_not_a_mapping() {
    let (e, _, _) = one_error("---\n- a\n- b\n---\n");
    assert_eq!(e.kind, AgentErrorKind::NotAMapping);
    assert_eq!(e.line, Some(2));
}

#[test]
fn missing_required_keys_in_decode_format() {
    for (key, text) in [
        (
            "name",
            "---\ndescription: d\ntools: [read]\nmode: default\n---\n",
        ),
        (
            "description",
            "---\nname: a\ntools: [read]\nmode: default\n---\n",
        ),
        (
            "tools",
            "---\nname: a\ndescription: d\nmode: default\n---\n",
        ),
        ("mode", "---\nname: a\ndescription: d\ntools: [read]\n---\n"),
    ] {
        let (e, s, _) = one_error(text);
        assert_eq!(e.kind, AgentErrorKind::MissingKey(key), "{s}");
        assert_eq!(e.key, Some(key));
        assert_eq!(e.line, Some(1));
        assert!(s.contains(&format!("`{key}`")), "{s}");
        assert!(s.contains("missing"), "{s}");
    }
}

#[test]
fn empty_frontmatter_misses_name() {
    let (e, _, _) = one_error("---\n---\nbody\n");
    assert_eq!(e.kind, AgentErrorKind::MissingKey("name"));
}

#[test]
fn unknown_tool_names_key_and_line() {
    let (e, s, path) = one_error(
        "---\nname: a\ndescription: d\ntools:\n  - read\n  - fetch_url\nmode: default\n---\n",
    );
    assert!(matches!(&e.kind, AgentErrorKind::UnknownTool { tool, .. } if tool == "fetch_url"));
    assert_eq!(e.key, Some("tools"));
    assert_eq!(e.line, Some(6));
    assert!(s.starts_with(&format!("{}:6: ", path.display())), "{s}");
    assert!(
        s.contains("`tools`") && s.contains("fetch_url") && s.contains("web_fetch"),
        "{s}"
    );

    // Comma-separated form: the key's line.
    let (e, _, _) =
        one_error("---\nname: a\ndescription: d\ntools: Read, Frobnicate\nmode: default\n---\n");
    assert_eq!(e.line, Some(4));
}

#[test]
fn bad_mode() {
    let (e, s, _) = one_error("---\nname: a\ndescription: d\ntools: [read]\nmode: yolo\n---\n");
    assert_eq!(
        e.kind,
        AgentErrorKind::BadMode {
            mode: "yolo".into()
        }
    );
    assert_eq!(e.line, Some(5));
    assert!(
        s.contains("`mode`")
            && s.contains("yolo")
            && s.contains("default, edit, plan, auto, bypass"),
        "{s}"
    );
}

#[test]
fn rule_that_does_not_parse() {
    let (e, s, _) = one_error(
        "---\nname: a\ndescription: d\ntools: [read, bash]\nmode: default\nallow:\n  - bash(git *)\ndeny:\n  - bash(rm *\n---\n",
    );
    assert!(
        matches!(&e.kind, AgentErrorKind::BadRule { key, rule, .. } if *key == "deny" && rule == "bash(rm *"),
        "{s}"
    );
    assert_eq!(e.key, Some("deny"));
    assert_eq!(e.line, Some(9));
    assert!(s.contains("`deny`") && s.contains("bash(rm *"), "{s}");

    let (e, _, _) = one_error(
        "---\nname: a\ndescription: d\ntools: [read]\nmode: default\nask: [\"frob(x)\"]\n---\n",
    );
    assert_eq!(e.key, Some("ask"));
    assert_eq!(e.line, Some(6));
}

#[test]
fn empty_name() {
    let (e, s, _) =
        one_error("---\nname: \"  \"\ndescription: d\ntools: [read]\nmode: default\n---\n");
    assert_eq!(e.kind, AgentErrorKind::EmptyName);
    assert_eq!(e.line, Some(2));
    assert!(s.contains("`name`"), "{s}");
}

#[test]
fn wrong_types() {
    let (e, s, _) =
        one_error("---\nname: [a]\ndescription: d\ntools: [read]\nmode: default\n---\n");
    assert!(
        matches!(&e.kind, AgentErrorKind::WrongType { key, .. } if *key == "name"),
        "{s}"
    );
    assert_eq!(e.line, Some(2));
    let (e, _, _) =
        one_error("---\nname: a\ndescription: d\ntools: {read: true}\nmode: default\n---\n");
    assert_eq!(e.key, Some("tools"));
    assert_eq!(e.line, Some(4));
    let (e, _, _) =
        one_error("---\nname: a\ndescription: d\ntools: [read]\nmode: default\nallow: 5\n---\n");
    assert_eq!(e.key, Some("allow"));
    let (e, _, _) =
        one_error("---\nname: a\ndescription: d\ntools: [read, 3]\nmode: default\n---\n");
    assert_eq!(e.key, Some("tools"));
}

#[test]
fn too_large_and_not_utf8() {
    let mut big =
        String::from("---\nname: big\ndescription: d\ntools: [read]\nmode: default\n---\n");
    big.push_str(&"x".repeat(1024 * 1024));
    let (e, s, _) = one_error(&big);
    assert_eq!(e.kind, AgentErrorKind::TooLarge);
    assert!(s.contains("1 MiB"), "{s}");

    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(".decode/agents/bin.md");
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, b"---\nname: a\xff\n---\n").unwrap();
    let c = Catalog::load(dir.path());
    assert_eq!(c.errors().len(), 1);
    assert_eq!(c.errors()[0].kind, AgentErrorKind::NotUtf8);
    assert_eq!(c.errors()[0].line, Some(2));
}

#[test]
fn unknown_keys_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".decode/agents/x.md",
        "---\nname: x\ndescription: d\ntools: [read]\nmode: edit\ncolor: blue\nfuture:\n  nested: [1, 2]\n---\nPrompt.\n",
    );
    let c = Catalog::load(dir.path());
    assert!(c.errors().is_empty(), "{:?}", c.errors());
    let a = c.get("x").unwrap();
    assert_eq!(a.mode, Mode::Edit);
    assert_eq!(a.prompt, "Prompt.");
}

#[test]
fn claude_code_files() {
    let dir = tempfile::tempdir().unwrap();
    let p1 = write(
        dir.path(),
        ".claude/agents/reviewer.md",
        "---\nname: cc-reviewer\ndescription: Claude Code reviewer\ntools: Read, Grep, Glob, Bash, WebFetch, TodoWrite\nmodel: sonnet\n---\nReview things.\n",
    );
    write(
        dir.path(),
        ".claude/agents/helper.md",
        "---\nname: cc-helper\ndescription: No tools key\ncolor: green\n---\nHelp.\n",
    );
    let c = Catalog::load(dir.path());
    assert!(c.errors().is_empty(), "{:?}", c.errors());
    let r = c.get("cc-reviewer").unwrap();
    assert_eq!(
        r.tools,
        vec![
            Tool::Read,
            Tool::Grep,
            Tool::Glob,
            Tool::Bash,
            Tool::WebFetch,
            Tool::TodoWrite
        ]
    );
    assert_eq!(r.mode, Mode::Default);
    assert_eq!(r.model.as_deref(), Some("sonnet"));
    assert_eq!(r.source, AgentSource::ClaudeProject(p1));
    assert!(r.from_project());
    let h = c.get("cc-helper").unwrap();
    assert_eq!(h.tools, Tool::ALL.to_vec());
    assert_eq!(h.mode, Mode::Default);

    // Claude Code still requires name and description.
    write(
        dir.path(),
        ".claude/agents/nodesc.md",
        "---\nname: nodesc\n---\n",
    );
    let c = Catalog::load(dir.path());
    assert_eq!(c.errors().len(), 1);
    assert_eq!(
        c.errors()[0].kind,
        AgentErrorKind::MissingKey("description")
    );
}

#[test]
fn precedence_and_override_reporting() {
    let dir = tempfile::tempdir().unwrap();
    let claude_build = write(
        dir.path(),
        ".claude/agents/build.md",
        "---\nname: build\ndescription: Claude build\n---\nClaude.\n",
    );
    let decode_build = write(
        dir.path(),
        ".decode/agents/build.md",
        "---\nname: build\ndescription: Decode build\ntools: [read]\nmode: edit\n---\nDecode.\n",
    );
    let claude_only = write(
        dir.path(),
        ".claude/agents/shared.md",
        "---\nname: shared\ndescription: from claude\n---\n",
    );
    let decode_shared = write(
        dir.path(),
        ".decode/agents/shared.md",
        "---\nname: shared\ndescription: from decode\ntools: [grep]\nmode: plan\n---\n",
    );
    let explore = write(
        dir.path(),
        ".claude/agents/explore.md",
        "---\nname: explore\ndescription: my explore\ntools: [Read]\n---\n",
    );
    let c = Catalog::load(dir.path());
    assert!(c.errors().is_empty(), "{:?}", c.errors());
    assert_eq!(
        c.names(),
        vec!["build", "plan", "explore", "code-reviewer", "shared"]
    );

    let b = c.get("build").unwrap();
    assert_eq!(b.description, "Decode build");
    assert_eq!(b.source, AgentSource::DecodeProject(decode_build));
    assert_eq!(
        b.overrides.as_deref(),
        Some(claude_build.display().to_string().as_str())
    );
    assert_eq!(b.tools, vec![Tool::Read]);
    assert_eq!(b.mode, Mode::Edit);

    let s = c.get("shared").unwrap();
    assert_eq!(s.source, AgentSource::DecodeProject(decode_shared));
    assert_eq!(
        s.overrides.as_deref(),
        Some(claude_only.display().to_string().as_str())
    );

    let e = c.get("explore").unwrap();
    assert_eq!(e.source, AgentSource::ClaudeProject(explore));
    assert_eq!(e.overrides.as_deref(), Some("built-in"));

    assert!(c.get("plan").unwrap().overrides.is_none());
}

#[test]
fn one_broken_two_good() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".decode/agents/a-good.md", GOOD);
    let bad = write(
        dir.path(),
        ".decode/agents/b-bad.md",
        "---\nname: bad\ndescription: d\ntools: [read, teleport]\nmode: default\n---\n",
    );
    write(
        dir.path(),
        ".decode/agents/c-good.md",
        "---\nname: good2\ndescription: d\ntools: [bash]\nmode: auto\n---\n",
    );
    write(dir.path(), ".decode/agents/notes.txt", "not an agent");
    fs::create_dir_all(dir.path().join(".decode/agents/dir.md")).unwrap();
    let c = Catalog::load(dir.path());
    assert_eq!(
        c.names(),
        vec!["build", "plan", "explore", "code-reviewer", "good", "good2"]
    );
    assert_eq!(c.errors().len(), 1);
    let shown = c.errors()[0].to_string();
    assert_eq!(
        shown,
        format!(
            "{}:4: the key `tools` names an unknown tool `teleport` (known tools: read, glob, grep, web_fetch, todo_write, write, edit, bash, ask_user, enter_plan_mode, exit_plan_mode, sleep, task, and MCP tools as mcp__SERVER__TOOL, mcp__SERVER__* or mcp__*)",
            bad.display()
        )
    );
}

#[test]
fn duplicate_name_in_one_folder_keeps_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let first = write(dir.path(), ".decode/agents/a.md", GOOD);
    let second = write(dir.path(), ".decode/agents/b.md", GOOD);
    let c = Catalog::load(dir.path());
    assert_eq!(
        c.get("good").unwrap().source,
        AgentSource::DecodeProject(first.clone())
    );
    assert_eq!(c.errors().len(), 1);
    let e = &c.errors()[0];
    assert_eq!(e.file, second);
    assert_eq!(e.line, Some(2));
    assert!(e.to_string().contains(&first.display().to_string()));
}

#[test]
fn get_is_exact_then_case_insensitive() {
    let c = Catalog::load(tempfile::tempdir().unwrap().path());
    assert_eq!(c.get("Code-Reviewer").unwrap().name, "code-reviewer");
    assert!(c.get("nope").is_none());
}

#[test]
fn system_prompt_appends_project_instructions() {
    let dir = tempfile::tempdir().unwrap();
    let c = Catalog::load(dir.path());
    let build = c.get("build").unwrap();
    assert_eq!(build.system_prompt(None), build.prompt);
    let ins = Instructions {
        name: "CLAUDE.md",
        text: "Use tabs.\n".into(),
    };
    let p = build.system_prompt(Some(&ins));
    assert!(p.starts_with(&build.prompt));
    assert!(
        p.contains("# Project instructions (CLAUDE.md)") && p.ends_with("Use tabs.\n"),
        "{p}"
    );
    let blank = Instructions {
        name: "AGENTS.md",
        text: " \n\n".into(),
    };
    assert_eq!(build.system_prompt(Some(&blank)), build.prompt);
}

/// A cheap stand-in for the fuzz target that runs with `cargo test`: mutated agent
/// files never panic the parser.
#[test]
fn mutated_files_never_panic() {
    use decode_core::agents::{parse_agent, AgentFormat, BUILTIN_FILES};
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let pieces: [&[u8]; 12] = [
        b"---\n", b"\n", b": ", b"[", b"]", b"- ", b"\t", b"&a ", b"*a", b"\xff", b"tools: ", b"\"",
    ];
    for round in 0..3000 {
        let (_, base) = BUILTIN_FILES[round % BUILTIN_FILES.len()];
        let mut bytes = base.as_bytes()[..base.len().min(400)].to_vec();
        for _ in 0..(next() % 6) {
            let pos = (next() as usize) % (bytes.len() + 1);
            match next() % 3 {
                0 => {
                    let p = pieces[(next() as usize) % pieces.len()];
                    bytes.splice(pos..pos, p.iter().copied());
                }
                1 if pos < bytes.len() => {
                    bytes.remove(pos);
                }
                _ => {
                    if pos < bytes.len() {
                        bytes[pos] = next() as u8;
                    }
                }
            }
        }
        for format in [AgentFormat::Decode, AgentFormat::Claude] {
            if let Err(e) = parse_agent(&bytes, Path::new("m.md"), format, AgentSource::Builtin) {
                assert!(e.to_string().starts_with("m.md"));
            }
        }
    }
}

#[test]
fn duplicate_key_points_at_the_repeat() {
    let (e, s, _) =
        one_error("---\nname: a\ndescription: d\nname: b\ntools: [read]\nmode: default\n---\n");
    assert!(matches!(e.kind, AgentErrorKind::Yaml(_)), "{s}");
    assert_eq!(e.line, Some(4), "{s}");
    assert!(s.contains("duplicate") && s.contains("name"), "{s}");
}
