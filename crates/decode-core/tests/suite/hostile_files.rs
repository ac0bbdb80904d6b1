//! A cloned repository is hostile input: settings, agent and instruction files
//! are read only when they are regular files of at most 1 MiB, without ever
//! blocking, and nesting deeper than 64 levels is refused before a parser sees
//! it. A bad file is reported like a malformed one and costs milliseconds.

use std::path::Path;

use decode_core::agents::{AgentErrorKind, Catalog};
use decode_core::settings::Settings;
use decode_core::state::ActiveState;

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join(".decode/agents")).unwrap();
    d
}

fn mkfifo(p: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn settings_linked_to_a_device_or_a_fifo_are_refused_at_once() {
    let d = project();
    let settings = d.path().join(".decode/settings.json");
    std::os::unix::fs::symlink("/dev/zero", &settings).unwrap();
    let (s, warnings) = Settings::load(d.path());
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].message.contains("not a regular file"),
        "{}",
        warnings[0]
    );
    assert!(s.permissions.allow.is_empty());

    std::fs::remove_file(&settings).unwrap();
    mkfifo(&settings);
    let (_, warnings) = Settings::load(d.path());
    assert!(
        warnings[0].message.contains("not a regular file"),
        "{}",
        warnings[0]
    );

    std::fs::remove_file(&settings).unwrap();
    std::fs::write(&settings, vec![b' '; 2 << 20]).unwrap();
    let (_, warnings) = Settings::load(d.path());
    assert!(
        warnings[0].message.contains("larger than"),
        "{}",
        warnings[0]
    );
}

#[test]
fn deeply_nested_settings_are_refused_before_parsing() {
    let d = project();
    let deep = format!("{{\"x\": {}1{}}}", "[".repeat(100_000), "]".repeat(100_000));
    std::fs::write(d.path().join(".decode/settings.json"), &deep).unwrap();
    let (_, warnings) = Settings::load(d.path());
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].message.contains("deeper than 64"),
        "{}",
        warnings[0]
    );
    // 64 levels are fine.
    let ok = format!("{{\"x\": {}1{}}}", "[".repeat(60), "]".repeat(60));
    std::fs::write(d.path().join(".decode/settings.json"), &ok).unwrap();
    let (_, warnings) = Settings::load(d.path());
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn agent_files_that_are_fifos_devices_or_deep_are_errors_not_hangs() {
    let d = project();
    let agents = d.path().join(".decode/agents");
    mkfifo(&agents.join("fifo.md"));
    std::os::unix::fs::symlink("/dev/zero", agents.join("zero.md")).unwrap();
    let deep = format!(
        "---\nname: deep\ndescription: x\ntools: [read]\nmode: default\nz: {}1{}\n---\nprompt\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    std::fs::write(agents.join("deep.md"), &deep).unwrap();
    let block = format!(
        "---\nname: block\ndescription: x\ntools: [read]\nmode: default\n{}\n---\nprompt\n",
        (0..200)
            .map(|i| format!("{}k{i}:", "  ".repeat(i)))
            .collect::<Vec<_>>()
            .join("\n")
    );
    std::fs::write(agents.join("block.md"), &block).unwrap();
    std::fs::write(
        agents.join("fine.md"),
        "---\nname: fine\ndescription: ok\ntools: [read]\nmode: default\n---\nprompt\n",
    )
    .unwrap();
    let catalog = Catalog::load(d.path());
    let kinds: Vec<(String, AgentErrorKind)> = catalog
        .errors()
        .iter()
        .map(|e| {
            (
                e.file.file_name().unwrap().to_string_lossy().into_owned(),
                e.kind.clone(),
            )
        })
        .collect();
    assert!(
        kinds.contains(&("fifo.md".into(), AgentErrorKind::NotRegular)),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("zero.md".into(), AgentErrorKind::NotRegular)),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("deep.md".into(), AgentErrorKind::TooDeep)),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("block.md".into(), AgentErrorKind::TooDeep)),
        "{kinds:?}"
    );
    assert!(catalog.get("fine").is_some());
}

#[test]
fn instructions_that_are_not_regular_files_are_skipped() {
    let d = project();
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (state, _) = ActiveState::open(d.path(), home.path(), data.path(), None, None).unwrap();
    mkfifo(&d.path().join("AGENTS.md"));
    assert!(!state.system_prompt().contains("Project instructions"));
    let problems = state.instruction_problems();
    assert!(
        problems.len() == 1 && problems[0].contains("AGENTS.md: not read: not a regular file"),
        "{problems:?}"
    );
    std::fs::remove_file(d.path().join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.path().join("AGENTS.md")).unwrap();
    assert!(!state.system_prompt().contains("Project instructions"));
    std::fs::remove_file(d.path().join("AGENTS.md")).unwrap();
    std::fs::write(d.path().join("AGENTS.md"), vec![b'x'; 2 << 20]).unwrap();
    assert!(!state.system_prompt().contains("Project instructions"));
    assert!(state.instruction_problems()[0].contains("larger than"));
    std::fs::write(d.path().join("AGENTS.md"), "Fine.").unwrap();
    assert!(state.instruction_problems().is_empty());
}

#[test]
fn an_instruction_file_with_other_hard_links_is_not_read() {
    let d = project();
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // A file outside the project (the person's notes, say) hard-linked in as AGENTS.md.
    let outside = home.path().join("private-notes.md");
    std::fs::write(&outside, "TOKEN=hunter2").unwrap();
    std::fs::hard_link(&outside, d.path().join("AGENTS.md")).unwrap();
    let (state, _) = ActiveState::open(d.path(), home.path(), data.path(), None, None).unwrap();
    assert!(!state.system_prompt().contains("hunter2"));
    let problems = state.instruction_problems();
    assert!(
        problems.len() == 1 && problems[0].contains("AGENTS.md: not read: it has other hard links"),
        "{problems:?}"
    );
    // CLAUDE.md is read instead when it is a plain file.
    std::fs::write(d.path().join("CLAUDE.md"), "Use tabs.").unwrap();
    assert!(state.system_prompt().contains("Use tabs."));
}

fn agent(name: &str, body_bytes: usize) -> String {
    format!(
        "---\nname: {name}\ndescription: x\ntools: [read]\nmode: default\n---\n{}\n",
        "b".repeat(body_bytes)
    )
}

#[test]
fn a_folder_of_agent_files_is_read_up_to_200_files_and_4_mib() {
    let d = project();
    let dir = d.path().join(".decode/agents");
    for i in 0..250 {
        std::fs::write(
            dir.join(format!("a{i:03}.md")),
            agent(&format!("a{i:03}"), 10),
        )
        .unwrap();
    }
    let start = std::time::Instant::now();
    let catalog = Catalog::load(d.path());
    let took = start.elapsed();
    assert!(catalog.get("a199").is_some());
    assert!(catalog.get("a200").is_none());
    let bounded: Vec<_> = catalog
        .errors()
        .iter()
        .filter(|e| matches!(e.kind, AgentErrorKind::FolderTooLarge { .. }))
        .collect();
    assert_eq!(bounded.len(), 1, "{:?}", catalog.errors());
    let text = bounded[0].to_string();
    assert!(
        text.contains("50 file(s) from `a200.md` on were not read"),
        "{text}"
    );
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");

    // 4 MiB in all: ten files of 900 KiB — only the first four are read.
    let d = project();
    let dir = d.path().join(".decode/agents");
    for i in 0..10 {
        std::fs::write(
            dir.join(format!("b{i}.md")),
            agent(&format!("b{i}"), 900 * 1024),
        )
        .unwrap();
    }
    let catalog = Catalog::load(d.path());
    assert!(catalog.get("b3").is_some());
    assert!(catalog.get("b4").is_none(), "{:?}", catalog.errors());
    assert!(
        catalog
            .errors()
            .iter()
            .any(|e| e.to_string().contains("6 file(s) from `b4.md` on")),
        "{:?}",
        catalog.errors()
    );
}

#[test]
fn an_agent_file_with_other_hard_links_is_not_read() {
    let d = project();
    let elsewhere = tempfile::tempdir().unwrap();
    let src = elsewhere.path().join("x.md");
    std::fs::write(&src, agent("linked", 1)).unwrap();
    std::fs::hard_link(&src, d.path().join(".decode/agents/linked.md")).unwrap();
    let catalog = Catalog::load(d.path());
    assert!(catalog.get("linked").is_none());
    assert!(catalog
        .errors()
        .iter()
        .any(|e| e.to_string().contains("other hard links")));
}
