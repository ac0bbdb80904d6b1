//! Settings loading and always-allow persistence (docs/permissions.md).

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use decode_core::settings::{append_allow_rules, settings_path, PersistError, Settings};

fn project_with(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join(".decode")).unwrap();
    fs::write(settings_path(dir.path()), text).unwrap();
    dir
}

fn rules(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn allow_list(root: &Path) -> Vec<String> {
    let (s, w) = Settings::load(root);
    assert!(w.is_empty(), "{w:?}");
    s.permissions.allow
}

#[test]
fn missing_file_is_empty_without_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (s, w) = Settings::load(dir.path());
    assert!(w.is_empty());
    assert!(s.permissions.is_empty());
    assert_eq!(s.sleep_max_seconds, 60);
    assert!(!settings_path(dir.path()).exists());
}

#[test]
fn malformed_file_warns_with_position_and_is_never_rewritten() {
    let text = "{\n  \"permissions\": {\n    \"allow\": [\"read\"\n  }\n}\n";
    let dir = project_with(text);
    let path = settings_path(dir.path());
    let (s, w) = Settings::load(dir.path());
    assert!(s.permissions.is_empty());
    assert_eq!(w.len(), 1);
    let shown = w[0].to_string();
    assert!(
        shown.starts_with(&format!("{}:4:", path.display())),
        "{shown}"
    );
    let parts: Vec<&str> = shown.rsplitn(2, ": ").collect();
    assert!(!parts[0].is_empty());
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn wrong_type_is_malformed_and_treated_as_empty() {
    let dir = project_with("{\"permissions\": {\"allow\": [\"read\"], \"deny\": \"bash\"}}");
    let (s, w) = Settings::load(dir.path());
    assert!(
        s.permissions.allow.is_empty(),
        "a malformed file counts as empty"
    );
    assert_eq!(w.len(), 1);
    assert!(w[0].to_string().contains("permissions.deny"), "{}", w[0]);
    assert_eq!(w[0].line, Some(1));
}

#[test]
fn append_keeps_unknown_keys_rules_and_order() {
    let text = r#"{
  "zeta": {"nested": [1, 2, {"b": 1, "a": 2}]},
  "permissions": {
    "deny": ["bash(rm -rf *)"],
    "allow": ["read", "bash(ls)"],
    "ask": ["bash(git push *)"],
    "x-custom": true
  },
  "alpha": "keep",
  "sleepMaxSeconds": 5
}"#;
    let dir = project_with(text);
    let out = append_allow_rules(
        dir.path(),
        &rules(&["bash(npm test)", "read", "bash(cargo build)"]),
    )
    .unwrap();
    assert_eq!(out.added, rules(&["bash(npm test)", "bash(cargo build)"]));
    assert_eq!(out.already_present, rules(&["read"]));

    let after = fs::read_to_string(settings_path(dir.path())).unwrap();
    let v: serde_json::Value = serde_json::from_str(&after).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["zeta", "permissions", "alpha", "sleepMaxSeconds"]);
    let pkeys: Vec<&String> = v["permissions"].as_object().unwrap().keys().collect();
    assert_eq!(pkeys, ["deny", "allow", "ask", "x-custom"]);
    let nested: Vec<&String> = v["zeta"]["nested"][2].as_object().unwrap().keys().collect();
    assert_eq!(nested, ["b", "a"]);
    assert_eq!(v["alpha"], "keep");
    assert_eq!(v["permissions"]["deny"][0], "bash(rm -rf *)");
    assert_eq!(v["permissions"]["ask"][0], "bash(git push *)");
    assert_eq!(
        allow_list(dir.path()),
        rules(&["read", "bash(ls)", "bash(npm test)", "bash(cargo build)"])
    );
    assert!(after.ends_with('\n'));
}

#[test]
fn append_creates_folder_file_and_structure() {
    let dir = tempfile::tempdir().unwrap();
    let out = append_allow_rules(dir.path(), &rules(&["bash(make)"])).unwrap();
    assert_eq!(out.path, settings_path(dir.path()));
    assert_eq!(allow_list(dir.path()), rules(&["bash(make)"]));

    let dir = project_with("{\"other\": 1}");
    append_allow_rules(dir.path(), &rules(&["read(src/*)"])).unwrap();
    let (s, _) = Settings::load(dir.path());
    assert_eq!(s.permissions.allow, rules(&["read(src/*)"]));
    assert_eq!(s.raw["other"], 1);
}

#[test]
fn nothing_new_means_no_write() {
    let text = "{\"permissions\":{\"allow\":[\"read\"]}}";
    let dir = project_with(text);
    let out = append_allow_rules(dir.path(), &rules(&["read"])).unwrap();
    assert!(out.added.is_empty());
    assert_eq!(fs::read_to_string(settings_path(dir.path())).unwrap(), text);
}

#[test]
fn malformed_or_wrong_typed_file_is_refused_and_byte_identical() {
    for text in [
        "{\"permissions\": {\"allow\": [\"read\",]}}",
        "[\"read\"]",
        "{\"permissions\": []}",
        "{\"permissions\": {\"allow\": \"read\"}}",
        "{\"permissions\": {\"allow\": [1]}}",
        "{\"sleepMaxSeconds\": \"soon\"}",
        "{\"a\":1} trailing",
    ] {
        let dir = project_with(text);
        let err = append_allow_rules(dir.path(), &rules(&["bash(ls)"])).unwrap_err();
        assert!(
            matches!(err, PersistError::Malformed { .. }),
            "{text}: {err}"
        );
        let msg = err.to_string();
        assert!(msg.contains("settings.json:"), "{msg}");
        assert!(msg.ends_with("so the rule was not saved"), "{msg}");
        assert_eq!(
            fs::read(settings_path(dir.path())).unwrap(),
            text.as_bytes(),
            "{text}"
        );
    }
}

#[test]
fn invalid_rule_is_refused() {
    let dir = project_with("{}");
    let err = append_allow_rules(dir.path(), &rules(&["frob(x)"])).unwrap_err();
    assert!(matches!(err, PersistError::InvalidRule { .. }), "{err}");
    assert_eq!(fs::read_to_string(settings_path(dir.path())).unwrap(), "{}");
}

#[cfg(unix)]
#[test]
fn read_only_file_is_an_error_and_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let text = "{\"permissions\": {\"allow\": []}}";
    let dir = project_with(text);
    let path = settings_path(dir.path());
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let err = append_allow_rules(dir.path(), &rules(&["bash(ls)"])).unwrap_err();
    assert!(matches!(err, PersistError::ReadOnly { .. }), "{err}");
    assert!(err.to_string().contains("read-only"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o444
    );
}

#[cfg(unix)]
#[test]
fn read_only_folder_is_an_error() {
    use std::os::unix::fs::PermissionsExt;
    let text = "{}";
    let dir = project_with(text);
    let folder = dir.path().join(".decode");
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o555)).unwrap();
    let err = append_allow_rules(dir.path(), &rules(&["bash(ls)"]));
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o755)).unwrap();
    let err = err.unwrap_err();
    assert!(
        matches!(err, PersistError::ReadOnly { .. } | PersistError::Io { .. }),
        "{err}"
    );
    assert_eq!(fs::read_to_string(settings_path(dir.path())).unwrap(), text);
}

#[cfg(unix)]
#[test]
fn keeps_file_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = project_with("{}");
    let path = settings_path(dir.path());
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    append_allow_rules(dir.path(), &rules(&["bash(ls)"])).unwrap();
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn concurrent_appends_from_threads_all_land() {
    let dir = project_with("{\"keep\": true, \"permissions\": {\"allow\": [\"read\"]}}");
    let root = dir.path().to_path_buf();
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let root = root.clone();
            std::thread::spawn(move || {
                for i in 0..10 {
                    append_allow_rules(&root, &[format!("bash(echo t{t}-{i})")]).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let allow = allow_list(&root);
    assert_eq!(allow.len(), 81);
    for t in 0..8 {
        for i in 0..10 {
            assert!(allow.contains(&format!("bash(echo t{t}-{i})")));
        }
    }
    let (s, _) = Settings::load(&root);
    assert_eq!(s.raw["keep"], true);
}

/// Run as a child process by `concurrent_appends_from_processes_all_land`; does
/// nothing in a normal test run.
#[test]
fn child_appender() {
    let (Ok(root), Ok(tag)) = (
        std::env::var("DECODE_TEST_APPEND_ROOT"),
        std::env::var("DECODE_TEST_APPEND_TAG"),
    ) else {
        return;
    };
    for i in 0..15 {
        append_allow_rules(Path::new(&root), &[format!("bash(echo {tag}-{i})")]).unwrap();
    }
}

#[test]
fn concurrent_appends_from_processes_all_land() {
    let dir = project_with("{\"permissions\": {\"deny\": [\"bash(rm *)\"]}}");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..4)
        .map(|p| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "suite::settings::child_appender",
                    "--test-threads",
                    "1",
                ])
                .env("DECODE_TEST_APPEND_ROOT", dir.path())
                .env("DECODE_TEST_APPEND_TAG", format!("p{p}"))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // This process appends at the same time.
    for i in 0..15 {
        append_allow_rules(dir.path(), &[format!("bash(echo parent-{i})")]).unwrap();
    }
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "child failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let allow = allow_list(dir.path());
    assert_eq!(allow.len(), 75, "{allow:?}");
    for tag in ["p0", "p1", "p2", "p3", "parent"] {
        for i in 0..15 {
            assert!(
                allow.contains(&format!("bash(echo {tag}-{i})")),
                "{tag}-{i}"
            );
        }
    }
    let (s, _) = Settings::load(dir.path());
    assert_eq!(s.permissions.deny, rules(&["bash(rm *)"]));
    // No temp files left behind.
    let leftovers: Vec<_> = fs::read_dir(dir.path().join(".decode"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn the_writer_never_writes_through_a_link() {
    // A `.decode` folder that links to another project's.
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(other.path().join(".decode")).unwrap();
    std::fs::write(other.path().join(".decode/settings.json"), "{}\n").unwrap();
    let p = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(other.path().join(".decode"), p.path().join(".decode")).unwrap();
    let err = append_allow_rules(p.path(), &["bash(make lint)".to_string()]).unwrap_err();
    assert!(matches!(err, PersistError::Linked { .. }), "{err}");
    assert!(err.to_string().contains("is a link"), "{err}");
    assert_eq!(
        std::fs::read_to_string(other.path().join(".decode/settings.json")).unwrap(),
        "{}\n"
    );

    // A settings file that is a link.
    let p = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(p.path().join(".decode")).unwrap();
    std::os::unix::fs::symlink(
        other.path().join(".decode/settings.json"),
        p.path().join(".decode/settings.json"),
    )
    .unwrap();
    let err = append_allow_rules(p.path(), &["bash(make lint)".to_string()]).unwrap_err();
    assert!(matches!(err, PersistError::Linked { .. }), "{err}");

    // A dangling lock link shipped by the repository: nothing is created where it points.
    let p = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(p.path().join(".decode")).unwrap();
    let target = other.path().join("created-by-the-lock");
    std::os::unix::fs::symlink(&target, p.path().join(".decode/settings.json.lock")).unwrap();
    let err = append_allow_rules(p.path(), &["bash(make lint)".to_string()]).unwrap_err();
    assert!(matches!(err, PersistError::Linked { .. }), "{err}");
    assert!(!target.exists());
    assert!(!p.path().join(".decode/settings.json").exists());
}

#[test]
fn every_writable_level_is_written_by_the_same_careful_writer() {
    use decode_core::settings::{
        add_rule_to, append_allow_rules_to, remove_rule_from, WriteTarget,
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    let config = dir.path().join("config/decode");
    fs::create_dir_all(&root).unwrap();
    // The person's own file: created with its folder, other keys kept.
    let user = WriteTarget::User(config.clone());
    append_allow_rules_to(&user, &rules(&["bash(cargo test)"])).unwrap();
    fs::write(
        config.join("settings.json"),
        "{\"sandbox\": {\"writable\": [\"~/x\"]}, \"permissions\": {\"allow\": [\"bash(cargo test)\"]}}",
    )
    .unwrap();
    assert!(add_rule_to(&user, "deny", "bash(curl *)").unwrap());
    let v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(config.join("settings.json")).unwrap()).unwrap();
    assert_eq!(v["sandbox"]["writable"][0], "~/x");
    assert_eq!(v["permissions"]["deny"][0], "bash(curl *)");
    assert!(remove_rule_from(&user, "deny", "bash(curl *)").unwrap());
    // A malformed file at any level is never rewritten.
    let local = WriteTarget::Local(root.clone());
    fs::create_dir_all(root.join(".decode")).unwrap();
    fs::write(root.join(".decode/settings.local.json"), "{oops").unwrap();
    assert!(matches!(
        append_allow_rules_to(&local, &rules(&["read"])),
        Err(PersistError::Malformed { .. })
    ));
    assert_eq!(
        fs::read_to_string(root.join(".decode/settings.local.json")).unwrap(),
        "{oops"
    );
    // A local file that links out of the project is refused.
    fs::remove_file(root.join(".decode/settings.local.json")).unwrap();
    let outside = dir.path().join("outside.json");
    fs::write(&outside, "{}").unwrap();
    std::os::unix::fs::symlink(&outside, root.join(".decode/settings.local.json")).unwrap();
    assert!(matches!(
        append_allow_rules_to(&local, &rules(&["read"])),
        Err(PersistError::Linked { .. })
    ));
    assert_eq!(fs::read_to_string(&outside).unwrap(), "{}");
    // Without a repository there is nothing to exclude, and no `.git` appears.
    fs::remove_file(root.join(".decode/settings.local.json")).unwrap();
    append_allow_rules_to(&local, &rules(&["read"])).unwrap();
    assert!(!root.join(".git").exists());
}

#[test]
fn a_new_local_file_is_excluded_in_a_worktree_too() {
    use decode_core::settings::{append_allow_rules_to, WriteTarget};
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    // main repository `repo/.git`, worktree `wt/` whose `.git` file names
    // `repo/.git/worktrees/wt`, whose `commondir` is `../..`.
    let common = base.join("repo/.git");
    let wt_git = common.join("worktrees/wt");
    fs::create_dir_all(&wt_git).unwrap();
    fs::write(wt_git.join("commondir"), "../..\n").unwrap();
    let wt = base.join("wt");
    fs::create_dir_all(wt.join("sub")).unwrap();
    fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
    // The project is a subfolder of the worktree.
    append_allow_rules_to(&WriteTarget::Local(wt.join("sub")), &rules(&["read"])).unwrap();
    let exclude = fs::read_to_string(wt_git.join("../../info/exclude")).unwrap();
    assert_eq!(exclude, "/sub/.decode/settings.local.json\n");
    // Saving again adds nothing.
    append_allow_rules_to(&WriteTarget::Local(wt.join("sub")), &rules(&["glob"])).unwrap();
    assert_eq!(
        fs::read_to_string(common.join("info/exclude")).unwrap(),
        exclude
    );
}
