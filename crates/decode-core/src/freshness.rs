//! Whether the files the gate was compiled from changed on disk since they were read
//! (docs/permissions.md, "Rules on disk now").
//!
//! A window or a `decode run` lives for hours while the person, their editor or a
//! `git pull` edits the settings, the trust store or the agent files. The gate must
//! decide with the rules on disk *now*: before each decision the state stats every file
//! it was built from and reloads when one changed. A [`Stamp`] is what `stat` says of a
//! path (device, inode, size, modification and change times in nanoseconds, kind), so
//! a file replaced by a rename (a new inode), written in place (new times, maybe a new
//! size), deleted or created is seen at the next decision.
//!
//! Timestamps advance in clock ticks, not nanoseconds: two writes within one tick can
//! leave size and times alike. As git does with its "racily clean" index entries, a
//! file whose change time is not clearly older than the moment its stamps were taken
//! is treated as changed at the next check, which reads it again; once it has settled
//! the stamps alone decide.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A file changed within this long before its stamps were taken may change again
/// without its stamps showing it (a coarse timestamp tick is a few milliseconds).
const RACY: Duration = Duration::from_millis(50);

/// What `stat` says of one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// Nothing there.
    Missing,
    /// `stat` failed otherwise (permission, a loop of links): compared by error kind.
    Unreadable(std::io::ErrorKind),
    /// A file, folder or other node.
    Present {
        dev: u64,
        ino: u64,
        size: u64,
        mtime_ns: i128,
        ctime_ns: i128,
        mode: u32,
    },
}

fn nanos(secs: i64, nsec: i64) -> i128 {
    i128::from(secs) * 1_000_000_000 + i128::from(nsec)
}

impl Stamp {
    /// The stamp of `path` now (following links: a link retargeted elsewhere stamps
    /// its new target, which differs).
    pub fn of(path: &Path) -> Stamp {
        match std::fs::metadata(path) {
            Ok(m) => Stamp::Present {
                dev: m.dev(),
                ino: m.ino(),
                size: m.size(),
                mtime_ns: nanos(m.mtime(), m.mtime_nsec()),
                ctime_ns: nanos(m.ctime(), m.ctime_nsec()),
                mode: m.mode(),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Stamp::Missing,
            Err(e) => Stamp::Unreadable(e.kind()),
        }
    }

    fn changed_ns(&self) -> Option<i128> {
        match self {
            Stamp::Present {
                mtime_ns, ctime_ns, ..
            } => Some((*mtime_ns).max(*ctime_ns)),
            _ => None,
        }
    }
}

/// The stamps of a set of paths, taken at one moment.
#[derive(Debug, Clone)]
pub struct Watch {
    entries: Vec<(PathBuf, Stamp)>,
    /// When the stamps were taken (nanoseconds since the epoch).
    taken_ns: i128,
}

fn now_ns() -> i128 {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i128::from(d.as_secs()) * 1_000_000_000 + i128::from(d.subsec_nanos())
}

impl Watch {
    /// Takes the stamps of `paths` now. Take them *before* reading the files, so a
    /// change made while they are read shows at the next check.
    pub fn take(paths: impl IntoIterator<Item = PathBuf>) -> Watch {
        let taken_ns = now_ns();
        let entries = paths
            .into_iter()
            .map(|p| {
                let s = Stamp::of(&p);
                (p, s)
            })
            .collect();
        Watch { entries, taken_ns }
    }

    /// A watch that is always stale (nothing was read yet).
    pub fn stale() -> Watch {
        Watch {
            entries: Vec::new(),
            taken_ns: i128::MIN,
        }
    }

    /// The paths watched.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.entries.iter().map(|(p, _)| p.as_path())
    }

    /// The first path whose stamp changed since the watch was taken, or that changed
    /// too close to that moment to be trusted (see the module docs).
    pub fn changed(&self) -> Option<&Path> {
        if self.taken_ns == i128::MIN {
            return Some(Path::new(""));
        }
        let racy = self.taken_ns - RACY.as_nanos() as i128;
        self.entries.iter().find_map(|(path, old)| {
            let now = Stamp::of(path);
            let moved = now != *old;
            let unsettled = old.changed_ns().is_some_and(|t| t >= racy);
            (moved || unsettled).then_some(path.as_path())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled(dir: &Path) -> Watch {
        // Stamps taken well after the last change (past the racy window).
        std::thread::sleep(RACY + Duration::from_millis(20));
        Watch::take([
            dir.join("settings.json"),
            dir.join("agents"),
            dir.join("none"),
        ])
    }

    #[test]
    fn an_unchanged_settled_file_is_fresh() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("settings.json"), "{}").unwrap();
        std::fs::create_dir(d.path().join("agents")).unwrap();
        let w = settled(d.path());
        assert_eq!(w.changed(), None);
        assert_eq!(w.changed(), None);
    }

    #[test]
    fn every_kind_of_change_is_seen() {
        type Change = fn(&Path);
        let changes: [(&str, Change); 6] = [
            ("in-place write, same size", |d| {
                std::fs::write(d.join("settings.json"), "[]").unwrap()
            }),
            ("replaced by a rename", |d| {
                std::fs::write(d.join("new"), "{}").unwrap();
                std::fs::rename(d.join("new"), d.join("settings.json")).unwrap();
            }),
            ("deleted", |d| {
                std::fs::remove_file(d.join("settings.json")).unwrap()
            }),
            ("created", |d| std::fs::write(d.join("none"), "x").unwrap()),
            ("an entry added to a folder", |d| {
                std::fs::write(d.join("agents/x.md"), "x").unwrap()
            }),
            ("mode changed", |d| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(
                    d.join("settings.json"),
                    std::fs::Permissions::from_mode(0o600),
                )
                .unwrap()
            }),
        ];
        for (what, change) in changes {
            let d = tempfile::tempdir().unwrap();
            std::fs::write(d.path().join("settings.json"), "{}").unwrap();
            std::fs::create_dir(d.path().join("agents")).unwrap();
            let w = settled(d.path());
            change(d.path());
            assert!(w.changed().is_some(), "{what}");
        }
    }

    #[test]
    fn a_file_changed_just_before_the_stamps_counts_as_changed() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("settings.json"), "{}").unwrap();
        let w = Watch::take([d.path().join("settings.json")]);
        assert!(w.changed().is_some(), "racily clean: read it again");
        assert!(Watch::stale().changed().is_some());
    }
}
