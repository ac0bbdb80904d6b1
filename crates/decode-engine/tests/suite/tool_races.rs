//! Check-to-use races: while file tool calls are judged and run, another
//! thread swaps a folder of the project with a link to a protected or
//! denied folder (an atomic `renameat2` exchange), thousands of times. No
//! write may land in `.decode/` or `~/.ssh/`, and no read may return a file a
//! deny rule covers (docs/permissions.md, "One path for gate and tool").
//!
//! `DECODE_RACE_TRIES=N` sets the calls per scenario (default 300, the CI
//! smoke; a few minutes locally: 20000). Each scenario prints its counts.
#![allow(clippy::print_stderr)]

use crate::tools_support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use decode_engine::tools::{call_tool, handler};
use decode_policy::{Mode, Tool};
use nix::fcntl::{renameat2, RenameFlags, AT_FDCWD};
use serde_json::json;
use tools_support::Project;

fn tries() -> usize {
    std::env::var("DECODE_RACE_TRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

/// Exchanges `a` and `b` (a folder and a link) until stopped; counts swaps.
struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    fn start(a: PathBuf, b: PathBuf) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicUsize::new(0));
        let (s, n) = (stop.clone(), swaps.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if renameat2(AT_FDCWD, &a, AT_FDCWD, &b, RenameFlags::RENAME_EXCHANGE).is_ok() {
                    n.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Swapper {
            stop,
            swaps,
            thread: Some(thread),
        }
    }

    /// Stops, leaving the folder under its own name; returns the swap count.
    fn finish(mut self, folder: &Path, link: &Path) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
        if folder.is_symlink() {
            renameat2(
                AT_FDCWD,
                folder,
                AT_FDCWD,
                link,
                RenameFlags::RENAME_EXCHANGE,
            )
            .unwrap();
        }
        self.swaps.load(Ordering::Relaxed)
    }
}

/// A folder `name` and a link `name-link` to `target`, to be exchanged.
fn pair(p: &Project, name: &str, target: &Path) -> (PathBuf, PathBuf) {
    let folder = p.path(name);
    std::fs::create_dir_all(&folder).unwrap();
    let link = p.path(&format!("{name}-link"));
    std::os::unix::fs::symlink(target, &link).unwrap();
    (folder, link)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_never_land_in_permission_files_through_a_swapped_folder() {
    let p = Project::new();
    let settings = r#"{"permissions": {"deny": ["read(secret/**)"]}}"#;
    p.write(".decode/settings.json", settings);
    let (folder, link) = pair(&p, "d", &p.path(".decode"));
    let swapper = Swapper::start(folder.clone(), link.clone());
    let (mut ran, mut refused) = (0, 0);
    for i in 0..tries() {
        let ctx = p.ctx(Mode::Auto);
        let tool = if i % 2 == 0 { Tool::Write } else { Tool::Edit };
        let input = if tool == Tool::Write {
            json!({"path": "d/settings.json", "content": "{\"permissions\":{\"allow\":[\"bash\"]}}"})
        } else {
            json!({"path": "d/settings.json", "old_string": "", "new_string": "{}"})
        };
        let o = call_tool(handler(tool).as_ref(), input, &ctx).await;
        if o.ran && !o.result.is_error {
            ran += 1;
        } else {
            refused += 1;
        }
    }
    let swaps = swapper.finish(&folder, &link);
    assert_eq!(p.read(".decode/settings.json"), settings);
    eprintln!("write race: {swaps} swaps, {ran} writes ran, {refused} refused or asked");
    assert!(swaps > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_never_return_a_denied_file_through_a_swapped_folder() {
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["read(secret/**)"]}}"#,
    );
    p.write("secret/key", "SECRET-VALUE\n");
    let (folder, link) = pair(&p, "r", &p.path("secret"));
    std::fs::write(folder.join("key"), "public\n").unwrap();
    let swapper = Swapper::start(folder.clone(), link.clone());
    let (mut shown, mut refused) = (0, 0);
    for _ in 0..tries() {
        let ctx = p.ctx(Mode::Auto);
        let o = call_tool(handler(Tool::Read).as_ref(), json!({"path": "r/key"}), &ctx).await;
        assert!(
            !o.result.content.contains("SECRET-VALUE"),
            "a denied file was read: {}",
            o.result.content
        );
        if o.ran && !o.result.is_error {
            shown += 1;
        } else {
            refused += 1;
        }
    }
    let swaps = swapper.finish(&folder, &link);
    eprintln!("read race: {swaps} swaps, {shown} reads shown, {refused} refused or denied");
    assert!(swaps > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_mode_writes_never_reach_the_home_folder_through_a_swapped_folder() {
    let p = Project::new();
    std::fs::create_dir_all(p.home.join(".ssh")).unwrap();
    let keys = p.home.join(".ssh/authorized_keys");
    std::fs::write(&keys, "ssh-ed25519 mine\n").unwrap();
    let (folder, link) = pair(&p, "e", &p.home.join(".ssh"));
    let swapper = Swapper::start(folder.clone(), link.clone());
    for i in 0..tries() {
        let ctx = p.ctx(Mode::Edit);
        let tool = if i % 2 == 0 { Tool::Write } else { Tool::Edit };
        let input = if tool == Tool::Write {
            json!({"path": "e/authorized_keys", "content": "ssh-ed25519 attacker\n"})
        } else {
            json!({"path": "e/authorized_keys", "old_string": "", "new_string": "x"})
        };
        call_tool(handler(tool).as_ref(), input, &ctx).await;
    }
    let swaps = swapper.finish(&folder, &link);
    assert_eq!(
        std::fs::read_to_string(&keys).unwrap(),
        "ssh-ed25519 mine\n"
    );
    eprintln!("edit-mode race: {swaps} swaps");
    assert!(swaps > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_never_show_a_denied_file_through_a_swapped_folder() {
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["read(secret/**)", "read(~/.ssh/**)"]}}"#,
    );
    p.write("secret/key", "SECRET-VALUE\n");
    p.write("secret/hidden-name.txt", "x\n");
    std::fs::create_dir_all(p.home.join(".ssh")).unwrap();
    std::fs::write(p.home.join(".ssh/id_rsa"), "SECRET-VALUE ssh\n").unwrap();
    let (folder, link) = pair(&p, "s", &p.path("secret"));
    std::fs::write(folder.join("key"), "public\n").unwrap();
    let (home_folder, home_link) = pair(&p, "h", &p.home.join(".ssh"));
    std::fs::write(home_folder.join("notes"), "public\n").unwrap();
    let swapper = Swapper::start(folder.clone(), link.clone());
    let home_swapper = Swapper::start(home_folder.clone(), home_link.clone());
    let mut shown = 0;
    for i in 0..tries() {
        let ctx = p.ctx(Mode::Default);
        let (tool, input) = match i % 4 {
            0 => (
                Tool::Grep,
                json!({"pattern": "SECRET", "output_mode": "content"}),
            ),
            1 => (
                Tool::Grep,
                json!({"pattern": "SECRET", "path": "s", "output_mode": "content"}),
            ),
            2 => (
                Tool::Grep,
                json!({"pattern": "SECRET", "path": "s/key", "output_mode": "content"}),
            ),
            _ => (Tool::Glob, json!({"pattern": "**/*"})),
        };
        let o = call_tool(handler(tool).as_ref(), input, &ctx).await;
        let c = &o.result.content;
        assert!(
            !c.contains("SECRET-VALUE") && !c.contains("hidden-name") && !c.contains("id_rsa"),
            "a search showed a denied file: {c}"
        );
        if o.ran && !o.result.is_error {
            shown += 1;
        }
    }
    let swaps = swapper.finish(&folder, &link) + home_swapper.finish(&home_folder, &home_link);
    eprintln!("search race: {swaps} swaps, {shown} searches ran");
    assert!(swaps > 0);
}

#[test]
fn always_allow_never_lands_in_another_project_through_a_swapped_decode_folder() {
    // An untrusted project's `.decode` exchanged, while rules are saved, for
    // a link to a trusted project's `.decode`.
    let p = Project::new();
    let other = tempfile::tempdir().unwrap();
    let theirs = other.path().join(".decode");
    std::fs::create_dir_all(&theirs).unwrap();
    let their_settings = r#"{"permissions": {"allow": ["read"]}}"#;
    std::fs::write(theirs.join("settings.json"), their_settings).unwrap();
    p.write(".decode/settings.json", "{}");
    let folder = p.path(".decode");
    let link = p.path(".decode-link");
    std::os::unix::fs::symlink(&theirs, &link).unwrap();
    let swapper = Swapper::start(folder.clone(), link.clone());
    let (mut saved, mut refused) = (0, 0);
    for i in 0..tries() {
        let rule = format!("bash(echo {i})");
        match decode_core::settings::append_allow_rules(&p.root, &[rule]) {
            Ok(_) => saved += 1,
            Err(_) => refused += 1,
        }
    }
    let swaps = swapper.finish(&folder, &link);
    assert_eq!(
        std::fs::read_to_string(theirs.join("settings.json")).unwrap(),
        their_settings,
        "a rule landed in the other project's settings"
    );
    assert!(
        !theirs.join("settings.json.lock").exists(),
        "a lock file was made in the other project"
    );
    // Every save that said so is in this project's file.
    let ours = p.read(".decode/settings.json");
    let kept = (0..tries())
        .filter(|i| ours.contains(&format!("\"bash(echo {i})\"")))
        .count();
    eprintln!("settings race: {swaps} swaps, {saved} saved, {refused} refused, {kept} kept");
    assert_eq!(kept, saved, "a save that reported success is missing");
    assert!(swaps > 0);
}
