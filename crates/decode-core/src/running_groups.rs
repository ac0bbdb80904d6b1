//! Commands running outside the sandbox (the person approved that very call), recorded
//! so that none of them outlives a Decode that was killed (docs/sandbox.md, "Nothing
//! outlives Decode").
//!
//! A sandboxed command dies with Decode by itself (bubblewrap's `--die-with-parent`
//! takes its pid namespace along). A command approved to run outside has no such
//! namespace: it runs in a process group of its own, watched by a small process that
//! kills that group as soon as Decode's end of a pipe closes (decode-engine
//! `tools/bash.rs`). If even that watcher is gone, this record is the last line: each
//! such group leaves a file in Decode's data folder, locked while its Decode lives.
//! The next Decode to start finds records whose lock is free and kills what is left of
//! those groups — only if the group's leader is still the same process (its start time
//! and the boot match), never a group whose number was reused since.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// What identifies a process group across a Decode's death.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupRecord {
    /// The process group (its leader's pid).
    pub pgid: i32,
    /// The leader's start time in clock ticks since boot (`/proc/PID/stat`, field 22).
    pub start_ticks: u64,
    /// `/proc/sys/kernel/random/boot_id`: ticks of another boot mean nothing.
    pub boot_id: String,
}

/// A running group's record; removed (and its lock released) when dropped.
#[derive(Debug)]
pub struct RunningGroup {
    path: PathBuf,
    _file: File,
}

impl Drop for RunningGroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn folder() -> Option<PathBuf> {
    crate::dirs::Dirs::from_env()
        .ok()
        .map(|d| d.data.join("running-groups"))
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The start time of process `pid` in clock ticks since boot.
fn start_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields after it
    // are counted from its last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// The record of a group that has just started (led by `pgid`). `None` (logged) when
/// it cannot be written.
pub fn register(pgid: i32) -> Option<RunningGroup> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = folder()?;
    let record = GroupRecord {
        pgid,
        start_ticks: start_ticks(pgid)?,
        boot_id: boot_id(),
    };
    let result = (|| -> std::io::Result<RunningGroup> {
        std::fs::create_dir_all(&dir)?;
        let name = format!(
            "{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        // Locked before it gets its name: a reader never sees it unlocked or half written.
        let tmp = dir.join(format!(".{name}"));
        let mut file = File::create(&tmp)?;
        file.lock()?;
        file.write_all(&serde_json::to_vec(&record).map_err(std::io::Error::other)?)?;
        let path = dir.join(format!("{name}.json"));
        std::fs::rename(&tmp, &path)?;
        Ok(RunningGroup { path, _file: file })
    })();
    match result {
        Ok(r) => Some(r),
        Err(e) => {
            tracing::warn!(folder = %dir.display(), error = %e, "cannot record a running command");
            None
        }
    }
}

/// Kills what is left of the groups whose Decode died (their record's lock is free)
/// and removes those records. Returns the groups killed.
pub fn reap_orphans() -> Vec<i32> {
    let Some(dir) = folder() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let boot = boot_id();
    let mut killed = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Ok(file) = File::open(&path) else {
            continue;
        };
        if file.try_lock().is_err() {
            // Its Decode lives (or the lock cannot be checked): not ours to touch.
            continue;
        }
        let record: Option<GroupRecord> = crate::fsutil::read_regular(&path, 1024 * 1024)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if let Some(r) = record.filter(|r| r.boot_id == boot && r.pgid > 1) {
            // The group is the one recorded if its leader is the same process, or if
            // its leader is gone but members remain (a group's number is not given to
            // a new process while any member still has it).
            let pgid = nix::unistd::Pid::from_raw(r.pgid);
            let same_group = match start_ticks(r.pgid) {
                Some(t) => t == r.start_ticks,
                None => nix::sys::signal::killpg(pgid, None).is_ok(),
            };
            if same_group {
                match nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL) {
                    Ok(()) => {
                        tracing::warn!(
                            pgid = r.pgid,
                            "a command whose Decode died was still running: killed"
                        );
                        killed.push(r.pgid);
                    }
                    Err(e) => {
                        tracing::debug!(pgid = r.pgid, error = %e, "could not kill a left-over command")
                    }
                }
            }
        }
        let _ = std::fs::remove_file(&path);
    }
    killed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_ticks_read_past_a_name_with_spaces_and_parentheses() {
        let me = std::process::id() as i32;
        let t = start_ticks(me).expect("this process has a start time");
        assert!(t > 0);
        assert_eq!(start_ticks(me), Some(t));
        assert_eq!(start_ticks(i32::MAX), None);
    }
}
