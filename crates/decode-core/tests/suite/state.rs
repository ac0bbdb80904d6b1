//! The active state: agent selection, modes, gate rebuilds, observers, start-up.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use decode_core::state::{ActiveState, Diagnostic, StateError};
use decode_core::TrustStore;
use decode_policy::{Call, Mode, Tool, Verdict};

struct Env {
    project: tempfile::TempDir,
    home: tempfile::TempDir,
    data: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            project: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
        }
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.project.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn trust(&self) {
        TrustStore::open(self.data.path())
            .trust(self.project.path())
            .unwrap();
    }

    fn open(
        &self,
        agent: Option<&str>,
        mode: Option<Mode>,
    ) -> Result<(ActiveState, Vec<Diagnostic>), StateError> {
        ActiveState::open(
            self.project.path(),
            self.home.path(),
            self.data.path(),
            agent,
            mode,
        )
    }
}

fn bash(state: &ActiveState, cmd: &str) -> Verdict {
    state.decide(&Call::new(Tool::Bash, cmd)).verdict
}

#[test]
fn open_defaults_to_build_in_default_mode() {
    let env = Env::new();
    let (s, diags) = env.open(None, None).unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    let snap = s.snapshot();
    assert_eq!(snap.agent, "build");
    assert_eq!(snap.mode, Mode::Default);
    assert_eq!(
        snap.agents
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>(),
        ["build", "plan", "explore", "code-reviewer"]
    );
    assert_eq!(
        Path::new(&snap.project),
        env.project.path().canonicalize().unwrap()
    );
    assert!(!s.trusted());
}

#[test]
fn open_with_agent_uses_its_default_mode_unless_mode_given() {
    let env = Env::new();
    let (s, _) = env.open(Some("plan"), None).unwrap();
    assert_eq!(s.mode(), Mode::Plan);
    let (s, _) = env.open(Some("plan"), Some(Mode::Edit)).unwrap();
    assert_eq!(s.mode(), Mode::Edit);
    assert_eq!(s.agent().name, "plan");
}

#[test]
fn open_unknown_agent_is_one_friendly_line() {
    let env = Env::new();
    let err = env.open(Some("wizard"), None).unwrap_err();
    let msg = err.to_string();
    assert_eq!(
        msg,
        "unknown agent `wizard` (available agents: build, plan, explore, code-reviewer)"
    );
    assert!(!msg.contains('\n'));
    assert_eq!(err.kind(), "unknown_agent");
}

#[test]
fn open_missing_project_is_an_error() {
    let env = Env::new();
    let err = ActiveState::open(
        &env.project.path().join("nope"),
        env.home.path(),
        env.data.path(),
        None,
        None,
    )
    .unwrap_err();
    assert!(matches!(err, StateError::Project { .. }), "{err}");
}

#[test]
fn open_reports_diagnostics_without_failing() {
    let env = Env::new();
    env.write(".decode/settings.json", "{ nope");
    env.write(".decode/agents/bad.md", "no frontmatter");
    fs::write(env.data.path().join("trust.json"), "[").unwrap();
    let (s, diags) = env.open(None, None).unwrap();
    let kinds: Vec<&str> = diags.iter().map(|d| d.kind()).collect();
    assert!(kinds.contains(&"settings"), "{kinds:?}");
    assert!(kinds.contains(&"agent"), "{kinds:?}");
    assert!(kinds.contains(&"trust"), "{kinds:?}");
    assert!(!s.trusted());
    for d in &diags {
        assert!(!d.to_string().contains('\n'), "{d}");
    }
}

#[test]
fn select_agent_resets_mode_and_rules() {
    let env = Env::new();
    env.trust();
    let (s, _) = env.open(None, None).unwrap();
    assert_eq!(bash(&s, "git status"), Verdict::Ask);

    s.set_mode(Mode::Edit);
    let snap = s.select_agent("code-reviewer").unwrap();
    assert_eq!(snap.agent, "code-reviewer");
    assert_eq!(snap.mode, Mode::Default);
    assert_eq!(
        s.offered_tools(),
        vec![
            Tool::Read,
            Tool::Glob,
            Tool::Grep,
            Tool::WebFetch,
            Tool::Bash,
            Tool::AskUser
        ]
    );
    assert_eq!(bash(&s, "git status"), Verdict::Allow);
    assert_eq!(
        s.gate()
            .decide(&Call::new(Tool::Bash, "git status"), Mode::Default)
            .verdict,
        Verdict::Allow
    );
    // Not offered to the reviewer.
    assert_eq!(
        s.decide(&Call::new(Tool::Write, "src/x.rs")).verdict,
        Verdict::Deny
    );

    s.select_agent("build").unwrap();
    assert_eq!(bash(&s, "git status"), Verdict::Ask);

    s.select_agent("plan").unwrap();
    assert_eq!(s.mode(), Mode::Plan);
    assert_eq!(
        s.decide(&Call::new(Tool::Read, "README.md")).verdict,
        Verdict::Allow
    );
}

#[test]
fn select_unknown_agent_lists_valid_names_and_changes_nothing() {
    let env = Env::new();
    let (s, _) = env.open(None, None).unwrap();
    s.set_mode(Mode::Edit);
    let err = s.select_agent("ghost").unwrap_err();
    assert!(
        err.to_string()
            .contains("build, plan, explore, code-reviewer"),
        "{err}"
    );
    assert_eq!(s.agent().name, "build");
    assert_eq!(s.mode(), Mode::Edit);
}

#[test]
fn cycle_order() {
    let env = Env::new();
    let (s, _) = env.open(None, None).unwrap();
    let seen: Vec<Mode> = (0..5).map(|_| s.cycle_mode().mode).collect();
    assert_eq!(
        seen,
        [
            Mode::Edit,
            Mode::Plan,
            Mode::Auto,
            Mode::Bypass,
            Mode::Default
        ]
    );
}

#[test]
fn observers_are_called_once_per_actual_change() {
    let env = Env::new();
    let (s, _) = env.open(None, None).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = Arc::clone(&log);
    let id = s.subscribe(Box::new(move |snap| {
        l.lock().unwrap().push((snap.agent.clone(), snap.mode));
    }));

    s.set_mode(Mode::Default); // no change
    s.set_mode(Mode::Auto); // 1
    s.set_mode(Mode::Auto); // no change
    s.cycle_mode(); // 2: bypass
    s.select_agent("explore").unwrap(); // 3: explore, default
    s.select_agent("explore").unwrap(); // no change
    s.select_agent("build").unwrap(); // 4: build, default
    let _ = s.select_agent("nobody"); // error: no change
    s.reload_settings(); // settings are not part of the snapshot
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            ("build".to_string(), Mode::Auto),
            ("build".to_string(), Mode::Bypass),
            ("explore".to_string(), Mode::Default),
            ("build".to_string(), Mode::Default),
        ]
    );

    assert!(s.unsubscribe(id));
    assert!(!s.unsubscribe(id));
    s.cycle_mode();
    assert_eq!(log.lock().unwrap().len(), 4);
}

#[test]
fn observers_from_many_threads_see_every_change_once() {
    let env = Env::new();
    let (s, _) = env.open(None, None).unwrap();
    let s = Arc::new(s);
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    s.subscribe(Box::new(move |_| {
        c.fetch_add(1, Ordering::SeqCst);
    }));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let s = Arc::clone(&s);
            std::thread::spawn(move || {
                for _ in 0..50 {
                    s.cycle_mode();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // Every cycle is a change.
    assert_eq!(count.load(Ordering::SeqCst), 200);
    // 200 steps of a 5-cycle from default ends at default.
    assert_eq!(s.mode(), Mode::Default);
}

#[test]
fn untrusted_project_agent_with_auto_falls_back_to_default() {
    let env = Env::new();
    env.write(
        ".decode/agents/yolo.md",
        "---\nname: yolo\ndescription: Runs everything.\ntools: [read, bash]\nmode: auto\nallow: [\"bash(curl *)\"]\n---\nGo.\n",
    );
    let (s, _) = env.open(Some("yolo"), None).unwrap();
    assert_eq!(s.mode(), Mode::Default);
    s.select_agent("build").unwrap();
    assert_eq!(s.select_agent("yolo").unwrap().mode, Mode::Default);

    // Trusted: the agent's own mode applies.
    env.trust();
    let (s, _) = env.open(Some("yolo"), None).unwrap();
    assert!(s.trusted());
    assert_eq!(s.mode(), Mode::Auto);
}

#[test]
fn untrusted_project_agent_with_edit_mode_falls_back_to_default_too() {
    let env = Env::new();
    env.write(
        ".decode/agents/build.md",
        "---\nname: build\ndescription: Edits freely.\ntools: [read, write, edit]\nmode: edit\n---\nGo.\n",
    );
    let (s, _) = env.open(Some("build"), None).unwrap();
    assert_eq!(s.mode(), Mode::Default);
    assert_eq!(
        s.decide(&decode_policy::Call::new(
            decode_policy::Tool::Write,
            "src/x.rs"
        ))
        .verdict,
        Verdict::Ask
    );
    // Plan stays plan; trusted, the agent's own mode applies.
    env.write(
        ".decode/agents/planner.md",
        "---\nname: planner\ndescription: Plans.\ntools: [read]\nmode: plan\n---\nPlan.\n",
    );
    let (s, _) = env.open(Some("planner"), None).unwrap();
    assert_eq!(s.mode(), Mode::Plan);
    env.trust();
    let (s, _) = env.open(Some("build"), None).unwrap();
    assert_eq!(s.mode(), Mode::Edit);
}

#[test]
fn untrusted_project_bypass_also_falls_back_but_explicit_mode_wins() {
    let env = Env::new();
    env.write(
        ".claude/agents/cc.md",
        "---\nname: cc\ndescription: cc\nmode: bypass\n---\n",
    );
    let (s, _) = env.open(Some("cc"), None).unwrap();
    assert_eq!(s.mode(), Mode::Default);
    // The person may still choose a mode explicitly.
    let (s, _) = env.open(Some("cc"), Some(Mode::Bypass)).unwrap();
    assert_eq!(s.mode(), Mode::Bypass);
}

#[test]
fn reload_settings_rebuilds_the_gate() {
    let env = Env::new();
    env.trust();
    let (s, _) = env.open(None, None).unwrap();
    assert_eq!(bash(&s, "make lint"), Verdict::Ask);
    let old_gate = s.gate();
    decode_core::append_allow_rules(s.project_root(), &["bash(make lint)".to_string()]).unwrap();
    let diags = s.reload_settings();
    assert!(diags.is_empty(), "{diags:?}");
    assert!(!Arc::ptr_eq(&old_gate, &s.gate()));
    assert_eq!(bash(&s, "make lint"), Verdict::Allow);
    assert_eq!(s.settings().permissions.allow, vec!["bash(make lint)"]);
}

#[test]
fn set_trusted_rebuilds_the_gate() {
    let env = Env::new();
    env.write(
        ".decode/settings.json",
        r#"{"permissions":{"allow":["bash(make lint)"]}}"#,
    );
    let (s, _) = env.open(None, None).unwrap();
    assert_eq!(
        bash(&s, "make lint"),
        Verdict::Ask,
        "untrusted: project allow rules ignored"
    );
    // As the trust dialog does: the store first, then the state.
    env.trust();
    s.set_trusted(true);
    assert_eq!(bash(&s, "make lint"), Verdict::Allow);
}

#[test]
fn reload_catalog_picks_up_new_agents_and_keeps_the_mode() {
    let env = Env::new();
    let (s, _) = env.open(None, None).unwrap();
    s.set_mode(Mode::Edit);
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    s.subscribe(Box::new(move |_| {
        c.fetch_add(1, Ordering::SeqCst);
    }));
    env.write(
        ".decode/agents/docs.md",
        "---\nname: docs\ndescription: Writes docs.\ntools: [read, write]\nmode: edit\n---\nWrite docs.\n",
    );
    let diags = s.reload_catalog();
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert_eq!(s.snapshot().agents.len(), 5);
    assert_eq!(s.mode(), Mode::Edit);
    s.reload_catalog();
    assert_eq!(count.load(Ordering::SeqCst), 1, "nothing changed");
}

#[test]
fn system_prompt_includes_project_instructions() {
    let env = Env::new();
    let (s, _) = env.open(Some("explore"), None).unwrap();
    assert!(!s.system_prompt().contains("Project instructions"));
    env.write("AGENTS.md", "Always cite paths.");
    let p = s.system_prompt();
    assert!(p.starts_with(&s.agent().prompt));
    assert!(
        p.contains("# Project instructions (AGENTS.md)") && p.contains("Always cite paths."),
        "{p}"
    );
}

#[test]
fn instructions_are_read_only_where_a_read_would_be_allowed_without_asking() {
    let env = Env::new();
    let secret = env.home.path().join(".ssh/id_rsa");
    fs::create_dir_all(secret.parent().unwrap()).unwrap();
    fs::write(&secret, "PRIVATE KEY").unwrap();
    let outside = env.data.path().join("notes.md");
    fs::write(&outside, "OUTSIDE NOTES").unwrap();
    env.write(
        ".decode/settings.json",
        r#"{"permissions":{"deny":["read(~/.ssh/**)","read(private/**)"],"ask":["read(CLAUDE.md)"]}}"#,
    );
    env.write(
        ".decode/agents/runner.md",
        "---\nname: runner\ndescription: d\ntools: [bash]\nmode: default\n---\nRun.\n",
    );
    env.write("private/plan.md", "PRIVATE PLAN");
    env.write("docs/guide.md", "Cite paths.");
    let (s, _) = env.open(None, None).unwrap();
    let agents = env.project.path().join("AGENTS.md");
    let link = |target: &Path| {
        let _ = fs::remove_file(&agents);
        std::os::unix::fs::symlink(target, &agents).unwrap();
    };

    // A link to a denied secret, to a file outside the project (no rule), to a
    // denied file inside the project: never read, in any mode.
    for target in [
        &secret,
        &outside,
        &env.project.path().join("private/plan.md"),
    ] {
        link(target);
        for mode in [Mode::Default, Mode::Auto, Mode::Bypass, Mode::Plan] {
            s.set_mode(mode);
            let p = s.system_prompt();
            assert!(
                !p.contains("PRIVATE") && !p.contains("OUTSIDE"),
                "{mode}: {}",
                target.display()
            );
        }
    }
    // A relative link that climbs out and back in is fine; one that climbs
    // out is not.
    link(
        Path::new("../")
            .join(env.project.path().file_name().unwrap())
            .join("docs/guide.md")
            .as_path(),
    );
    assert!(s.system_prompt().contains("Cite paths."));
    link(Path::new("docs/guide.md"));
    s.set_mode(Mode::Default);
    assert!(s
        .system_prompt()
        .contains("# Project instructions (AGENTS.md)"));
    // An agent without the read tool still gets them (the rules decide, not
    // the tool list).
    s.select_agent("runner").unwrap();
    assert!(s.system_prompt().contains("Cite paths."));

    // AGENTS.md refused: CLAUDE.md is next, and an ask rule on it keeps it out.
    link(&secret);
    env.write("CLAUDE.md", "CLAUDE TEXT");
    assert!(!s.system_prompt().contains("CLAUDE TEXT"));
    env.write(
        ".decode/settings.json",
        r#"{"permissions":{"deny":["read(~/.ssh/**)"]}}"#,
    );
    s.reload_settings();
    assert!(s
        .system_prompt()
        .contains("# Project instructions (CLAUDE.md)"));
}

/// Writes `text` to `rel` in place (same inode, truncated and rewritten), as an editor
/// that does not rename would.
fn write_in_place(env: &Env, rel: &str, text: &str) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(env.project.path().join(rel))
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// Replaces `rel` by a rename (a new inode), as most editors and `git pull` do.
fn replace(env: &Env, rel: &str, text: &str) {
    let p = env.project.path().join(rel);
    let tmp = p.with_extension("new");
    fs::write(&tmp, text).unwrap();
    fs::rename(&tmp, &p).unwrap();
}

/// The gate decides with the settings on disk now: a deny rule added in an editor while
/// the window is open applies to the very next call, however the file was changed.
#[test]
fn the_gate_follows_the_settings_file_on_disk() {
    let env = Env::new();
    env.trust();
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["bash(curl *)"]}}"#,
    );
    let (state, _) = env.open(None, Some(Mode::Default)).unwrap();
    assert_eq!(bash(&state, "curl example.com"), Verdict::Allow);

    // Replaced by a rename: the allow became a deny.
    replace(
        &env,
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["bash(curl *)"]}}"#,
    );
    assert_eq!(bash(&state, "curl example.com"), Verdict::Deny);

    // Written in place, the same length as before, at once after the last change.
    write_in_place(
        &env,
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["bash(curl *)"]}}"#,
    );
    assert_eq!(bash(&state, "curl example.com"), Verdict::Allow);
    write_in_place(
        &env,
        ".decode/settings.json",
        r#"{"permissions": {"deny":  ["bash(curl *)"]}}"#,
    );
    assert_eq!(bash(&state, "curl example.com"), Verdict::Deny);

    // A new allow rule counts at once too.
    replace(
        &env,
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["bash(wget *)"]}}"#,
    );
    assert_eq!(bash(&state, "wget example.com"), Verdict::Allow);
    assert_eq!(bash(&state, "curl example.com"), Verdict::Ask);

    // Deleted: no rule at all.
    fs::remove_file(env.project.path().join(".decode/settings.json")).unwrap();
    assert_eq!(bash(&state, "wget example.com"), Verdict::Ask);
}

/// A settings file turned malformed while the window is open is treated as empty, as
/// at start-up, and reported; fixed again, its rules apply again.
#[test]
fn a_settings_file_turned_malformed_is_reported_and_treated_as_empty() {
    let env = Env::new();
    env.trust();
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["bash(curl *)"]}}"#,
    );
    let (state, _) = env.open(None, Some(Mode::Default)).unwrap();
    assert_eq!(bash(&state, "curl example.com"), Verdict::Allow);
    replace(
        &env,
        ".decode/settings.json",
        "{\"permissions\": {\"allow\": [\"bash(curl *)\",]}}",
    );
    assert_eq!(
        bash(&state, "curl example.com"),
        Verdict::Ask,
        "the old allow rule is gone"
    );
    let problem = state
        .settings_problems()
        .first()
        .map(|w| w.to_string())
        .expect("the problem is reported");
    assert!(problem.contains("settings.json:1:"), "{problem}");
    replace(
        &env,
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["bash(curl *)"]}}"#,
    );
    assert_eq!(bash(&state, "curl example.com"), Verdict::Allow);
    assert!(state.settings_problems().is_empty());
}

/// Trust given or revoked by another Decode (`decode trust` in a terminal), and agent
/// files added or edited in place, are followed too.
#[test]
fn the_trust_store_and_agent_files_are_followed() {
    let env = Env::new();
    env.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["bash(make *)"]}}"#,
    );
    let (state, _) = env.open(None, Some(Mode::Default)).unwrap();
    assert_eq!(
        bash(&state, "make test"),
        Verdict::Ask,
        "untrusted: its allow rules do not count"
    );
    env.trust();
    assert_eq!(bash(&state, "make test"), Verdict::Allow);
    assert!(state.snapshot().trusted);
    TrustStore::open(env.data.path())
        .revoke(env.project.path())
        .unwrap();
    assert_eq!(bash(&state, "make test"), Verdict::Ask);
    env.trust();

    let agent = "---\nname: checker\ndescription: Checks.\ntools: [read, bash]\nmode: default\ndeny: [\"bash(rm *)\"]\n---\nCheck.\n";
    env.write(".decode/agents/checker.md", agent);
    assert!(state.snapshot().agents.iter().all(|a| a.name != "checker"));
    state.decide(&Call::new(Tool::Read, "x"));
    assert!(state.snapshot().agents.iter().any(|a| a.name == "checker"));
    state.select_agent("checker").unwrap();
    assert_eq!(bash(&state, "rm x"), Verdict::Deny);
    write_in_place(
        &env,
        ".decode/agents/checker.md",
        &agent.replace("bash(rm *)", "bash(mv *)"),
    );
    assert_eq!(bash(&state, "rm x"), Verdict::Ask);
    assert_eq!(bash(&state, "mv a b"), Verdict::Deny);
}

/// Managed settings that turn bypass and auto off, for a state built in memory.
fn managed_off(root: &Path, base: &Path) -> decode_core::Levels {
    let managed = base.join("managed.json");
    fs::write(
        &managed,
        r#"{"disableBypassMode": true, "disableAutoMode": true, "permissions": {"deny": ["bash(curl *)"]}}"#,
    )
    .unwrap();
    let (levels, w) =
        decode_core::Levels::load_from(root, base, &managed, &base.join("config/decode"));
    assert!(w.is_empty(), "{w:?}");
    levels
}

#[test]
fn turned_off_modes_are_skipped_by_shift_tab_and_refused_by_every_setter() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("proj");
    fs::create_dir_all(&root).unwrap();
    let (s, _) = ActiveState::new(
        &root,
        decode_core::Catalog::builtin(),
        decode_core::Settings::empty(&root),
        true,
        &base,
    );
    s.set_mode(Mode::Bypass);
    assert_eq!(s.mode(), Mode::Bypass);
    // The managed settings arrive: the mode falls back to default at once.
    s.set_levels(managed_off(&root, &base));
    assert_eq!(s.mode(), Mode::Default);
    assert_eq!(s.snapshot().disabled_modes, [Mode::Auto, Mode::Bypass]);
    let json = serde_json::to_value(s.snapshot()).unwrap();
    assert_eq!(
        json["disabled_modes"],
        serde_json::json!(["auto", "bypass"])
    );
    // Shift+Tab: default → edit → plan → default.
    let seen: Vec<Mode> = (0..3).map(|_| s.cycle_mode().mode).collect();
    assert_eq!(seen, [Mode::Edit, Mode::Plan, Mode::Default]);
    // Setting it: refused with the file named; `set_mode` keeps the mode.
    let e = s.try_set_mode(Mode::Auto).unwrap_err();
    assert!(matches!(
        e,
        StateError::ModeDisabled {
            mode: Mode::Auto,
            ..
        }
    ));
    assert!(e.to_string().contains("managed.json"), "{e}");
    assert_eq!(s.set_mode(Mode::Bypass).mode, Mode::Default);
    assert!(s.try_set_mode(Mode::Edit).is_ok());
    // The managed deny rule applies, named with its level.
    let d = s.decide(&Call::new(Tool::Bash, "curl x"));
    assert_eq!(d.verdict, Verdict::Deny);
    assert!(d.reason.contains("(managed)"), "{}", d.reason);
}

/// `readOnlyCommands`: a command the gate proves read-only runs without
/// asking in default mode, unless a settings level (project, managed, …)
/// sets it to `false`.
#[test]
fn read_only_commands_follow_the_setting_at_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("proj");
    fs::create_dir_all(&root).unwrap();
    fs::write(root.join("README.md"), "hi\n").unwrap();
    let state = |settings: decode_core::Settings| {
        let (s, _) = ActiveState::new(
            &root,
            decode_core::Catalog::builtin(),
            settings,
            true,
            &base,
        );
        s.set_mode(Mode::Default);
        s
    };
    let ls = Call::new(Tool::Bash, "cat README.md");
    let s = state(decode_core::Settings::empty(&root));
    assert_eq!(s.decide(&ls).verdict, Verdict::Allow);
    assert_eq!(
        s.decide(&Call::new(Tool::Bash, "make")).verdict,
        Verdict::Ask
    );
    let off = decode_core::Settings::parse(
        &root.join(".decode/settings.json"),
        br#"{"readOnlyCommands": false}"#,
    )
    .unwrap();
    assert_eq!(off.read_only_commands, Some(false));
    assert_eq!(state(off).decide(&ls).verdict, Verdict::Ask);
    // The managed level turns it off too.
    let managed = base.join("managed.json");
    fs::write(&managed, r#"{"readOnlyCommands": false}"#).unwrap();
    let (levels, w) =
        decode_core::Levels::load_from(&root, &base, &managed, &base.join("config/decode"));
    assert!(w.is_empty(), "{w:?}");
    let s = state(decode_core::Settings::empty(&root));
    s.set_levels(levels);
    assert_eq!(s.decide(&ls).verdict, Verdict::Ask);
}
