//! Repositories a command created (docs/sandbox.md, "Protected paths"): `git init`
//! and `git clone` keep working in the sandbox, so a command can make a repository
//! and, in the same breath, put a hook or a program-running config key into it —
//! which would run outside the sandbox at the person's next commit there. Protected
//! paths are read-only from the next command on (the walk after each command finds
//! the new `.git`); what the creating command put there is disarmed when it ends:
//! hooks other than git's own samples are moved to the quarantine folder, and the
//! config keys whose values git runs are removed.

use std::path::{Path, PathBuf};

/// The git folders of `now` that `before` did not have.
pub(crate) fn created(before: &[PathBuf], now: &[PathBuf]) -> Vec<PathBuf> {
    now.iter()
        .filter(|g| !before.contains(g))
        .cloned()
        .collect()
}

/// Whether `p` was made (or, where the file system keeps no birth time, last
/// changed) since `started`. File times come from a coarse clock, a few
/// milliseconds behind: 50 ms of margin.
fn made_since(p: &Path, started: std::time::SystemTime) -> bool {
    let since = started - std::time::Duration::from_millis(50);
    std::fs::symlink_metadata(p)
        .and_then(|m| m.created().or_else(|_| m.modified()))
        .is_ok_and(|t| t >= since)
}

/// Folders the command made unreadable (`chmod 000`) that the walk `now` could not
/// enter and `before` could: given their owner's read and search rights back, so
/// that what the command hid there is walked. Returns one note each.
pub(crate) fn reopen(before: &super::Scan, now: &super::Scan) -> Vec<String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let me = nix::unistd::geteuid().as_raw();
    // Decode's own placeholder for hidden folders is unreadable on purpose (met
    // when the home folder is walked).
    let ours = decode_core::dirs::data_dir()
        .ok()
        .map(|d| d.join("sandbox").join("hidden-folder"))
        .and_then(|d| std::fs::canonicalize(d).ok());
    let mut notes = Vec::new();
    for d in created(&before.unreadable, &now.unreadable) {
        if ours
            .as_ref()
            .is_some_and(|o| std::fs::canonicalize(&d).is_ok_and(|c| &c == o))
        {
            continue;
        }
        let Ok(m) = std::fs::symlink_metadata(&d) else {
            continue;
        };
        if !m.is_dir() || m.uid() != me {
            continue;
        }
        let mode = m.permissions().mode() & 0o7777;
        if std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode | 0o700)).is_ok() {
            notes.push(format!(
                "{}: the command made this folder unreadable; Decode gave its owner the rights back to check what is in it",
                d.display()
            ));
        }
    }
    notes
}

/// Disarms what a command created between the walks `before` and `now` (made
/// since `started`): each new git folder (a `.git` folder or a bare repository),
/// the git folder a new `.git` file points to, and takes away the new protected
/// files and folders elsewhere than the project root (a nested project's
/// `.decode`, `.claude`, `.mcp.json`, an `.envrc`, `.vscode`, `.idea`). What the
/// person made meanwhile (older than the command) is left alone. One note per
/// thing taken away.
pub(crate) fn disarm_created(
    before: &super::Scan,
    now: &super::Scan,
    started: std::time::SystemTime,
) -> Vec<String> {
    let quarantine = crate::running_commands::quarantine_folder();
    let mut notes = Vec::new();
    for g in created(&before.git_dirs, &now.git_dirs) {
        if made_since(&g, started) {
            notes.extend(disarm(&g, &quarantine));
        }
    }
    for f in created(&before.git_files, &now.git_files) {
        let Some(target) = super::plan::read_git_pointer(&f, "gitdir:")
            .and_then(|t| std::fs::canonicalize(t).ok())
        else {
            continue;
        };
        if made_since(&target, started) && !now.git_dirs.contains(&target) {
            notes.extend(disarm(&target, &quarantine));
        }
    }
    let mut planted = created(&before.permission, &now.permission);
    planted.extend(created(&before.others, &now.others));
    planted.retain(|p| made_since(p, started));
    for p in planted {
        for how in
            decode_core::running_commands::take_back(std::slice::from_ref(&p), &[], &quarantine)
        {
            notes.push(format!(
                "{} is protected by Decode and did not exist before: {how}",
                p.display()
            ));
        }
    }
    notes
}

/// Disarms the repository whose git folder is `git_dir`: returns one note per
/// thing taken away.
pub(crate) fn disarm(git_dir: &Path, quarantine: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    let hooks = git_dir.join("hooks");
    let mut planted: Vec<PathBuf> = Vec::new();
    match std::fs::symlink_metadata(&hooks) {
        Ok(m) if m.is_dir() => {
            if let Ok(rd) = std::fs::read_dir(&hooks) {
                for e in rd.flatten().take(10_000) {
                    let sample = e.file_name().to_string_lossy().ends_with(".sample")
                        && e.file_type().is_ok_and(|t| t.is_file());
                    if !sample {
                        planted.push(e.path());
                    }
                }
            } else {
                // Unreadable: nothing in it can be told from a sample.
                planted.push(hooks.clone());
            }
        }
        Ok(_) => planted.push(hooks.clone()),
        Err(_) => {}
    }
    let config = git_dir.join("config");
    match std::fs::symlink_metadata(&config) {
        Ok(m) if m.is_file() => {
            for key in program_keys(&config) {
                if unset(&config, &key) {
                    notes.push(format!(
                        "{}: the key `{key}` (git runs its value) was removed from a repository the command created",
                        config.display()
                    ));
                } else {
                    planted.push(config.clone());
                    break;
                }
            }
        }
        // A link (or anything but a file): git would read what it points to.
        Ok(_) => planted.push(config.clone()),
        Err(_) => {}
    }
    planted.dedup();
    for p in &planted {
        for how in
            decode_core::running_commands::take_back(std::slice::from_ref(p), &[], quarantine)
        {
            notes.push(format!(
                "{}: made in a repository the command created, where git would run it outside the sandbox: {how}",
                p.display()
            ));
        }
    }
    if !notes.is_empty() {
        tracing::warn!(git_dir = %git_dir.display(), ?notes, "disarmed a repository a sandboxed command created");
    }
    notes
}

/// The keys of `config` (its own, not what it includes) whose values git runs.
fn program_keys(config: &Path) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["config", "--no-includes", "--list", "--name-only", "--file"])
        .arg(config)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let Ok(out) = out else {
        return Vec::new();
    };
    if !out.status.success() {
        // Not a config git can read: it reads none of it either, but one it can
        // read later must not carry a program — taken away whole.
        return vec!["(unreadable)".to_string()];
    }
    let mut keys: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|k| decode_policy::git_config_key_runs(k))
        .map(str::to_string)
        .collect();
    keys.dedup();
    keys
}

/// Removes every value of `key` from `config`; `false` when git could not.
fn unset(config: &Path, key: &str) -> bool {
    if key == "(unreadable)" {
        return false;
    }
    std::process::Command::new("git")
        .args(["config", "--unset-all", "--file"])
        .arg(config)
        .arg(key)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_new_git_folders_are_created_ones() {
        let a = PathBuf::from("/p/.git");
        let b = PathBuf::from("/p/sub/.git");
        let before = vec![a.clone()];
        assert_eq!(created(&before, &[a.clone(), b.clone()]), [b]);
        assert!(created(&before, &[a]).is_empty());
    }

    #[test]
    fn samples_stay_planted_hooks_and_program_keys_go() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("r");
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(&repo)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap();
        assert!(ok.success());
        let g = repo.join(".git");
        std::fs::write(g.join("hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
        let cfg = std::fs::read_to_string(g.join("config")).unwrap();
        std::fs::write(
            g.join("config"),
            format!(
                "{cfg}[core]\n\tfsmonitor = ./evil\n[alias]\n\tst = !evil\n[user]\n\tname = me\n"
            ),
        )
        .unwrap();
        let q = d.path().join("quarantine");
        let notes = disarm(&g, &q);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(!g.join("hooks/pre-commit").exists());
        assert!(g.join("hooks/pre-commit.sample").exists());
        let cfg = std::fs::read_to_string(g.join("config")).unwrap();
        assert!(!cfg.contains("fsmonitor") && !cfg.contains("evil"), "{cfg}");
        assert!(cfg.contains("name = me"), "{cfg}");
        assert_eq!(std::fs::read_dir(&q).unwrap().count(), 1);
    }
}
