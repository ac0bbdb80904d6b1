//! The stat index and the snapshot: what the project's files were at the last
//! checkpoint (type, mode, size, modification and change times, inode, and the id
//! of the contents in the store), and the walk that brings it up to date.
//!
//! A snapshot lists every file, link and folder of the project (`.gitignore`d ones,
//! git's excludes and protected paths left out; projects without git honour their
//! `.gitignore` files too), and reads only the files whose stat data differ from
//! the index: a project where little changed costs a walk and a `stat` per file.
//! A file changed within a second of being indexed is read again next time (git's
//! "racy" rule: a second write in the same clock tick leaves the stat data alike).

use std::collections::{HashMap, HashSet};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::objects::Objects;
use super::state::{excluded, perm, read_file, FileState, Oid, RelPath};

/// The most entries a project may have for its checkpoints (beyond it recording
/// stops with a clear message instead of taking seconds per command).
pub const MAX_ENTRIES: usize = 300_000;

/// A file whose modification or change time is this close to the snapshot is read
/// again at the next snapshot.
const RACY: Duration = Duration::from_secs(1);

const MAGIC: &[u8; 8] = b"DCKIDX1\n";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    File = 1,
    Link = 2,
    Dir = 3,
}

/// One path of the index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) kind: Kind,
    /// The full `st_mode`.
    pub(crate) mode: u32,
    pub(crate) size: u64,
    pub(crate) mtime: i64,
    pub(crate) ctime: i64,
    pub(crate) ino: u64,
    pub(crate) oid: Oid,
    /// Read again at the next snapshot whatever its stat data say.
    pub(crate) racy: bool,
}

impl Entry {
    pub(crate) fn state(&self) -> FileState {
        match self.kind {
            Kind::File => FileState::File {
                oid: self.oid,
                mode: perm(self.mode),
            },
            Kind::Link => FileState::Link { oid: self.oid },
            Kind::Dir => FileState::Dir {
                mode: perm(self.mode),
            },
        }
    }

    fn matches(&self, meta: &std::fs::Metadata) -> bool {
        let Some(kind) = kind_of(meta) else {
            return false;
        };
        if kind != self.kind || meta.mode() != self.mode {
            return false;
        }
        // A folder's own times change with its entries: only its type and mode count.
        kind == Kind::Dir
            || (!self.racy
                && meta.size() == self.size
                && nanos(meta.mtime(), meta.mtime_nsec()) == self.mtime
                && nanos(meta.ctime(), meta.ctime_nsec()) == self.ctime
                && meta.ino() == self.ino)
    }
}

fn nanos(secs: i64, nsec: i64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}

fn kind_of(meta: &std::fs::Metadata) -> Option<Kind> {
    let ft = meta.file_type();
    if ft.is_file() {
        Some(Kind::File)
    } else if ft.is_symlink() {
        Some(Kind::Link)
    } else if ft.is_dir() {
        Some(Kind::Dir)
    } else {
        None
    }
}

/// The index: every recorded path of the project.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Index {
    pub(crate) entries: HashMap<RelPath, Entry>,
}

impl Index {
    /// The index written by [`Index::encode`]; `None` when it is damaged (then the
    /// next snapshot reads every file again, which loses nothing).
    pub(crate) fn decode(bytes: &[u8]) -> Option<Index> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(8)? != MAGIC {
            return None;
        }
        let count = r.u64()? as usize;
        let mut entries = HashMap::with_capacity(count.min(MAX_ENTRIES));
        for _ in 0..count {
            let len = r.u32()? as usize;
            let path = RelPath(r.take(len)?.to_vec());
            let kind = match r.u8()? {
                1 => Kind::File,
                2 => Kind::Link,
                3 => Kind::Dir,
                _ => return None,
            };
            let mode = r.u32()?;
            let size = r.u64()?;
            let mtime = r.u64()? as i64;
            let ctime = r.u64()? as i64;
            let ino = r.u64()?;
            let oid = Oid(r.take(20)?.try_into().ok()?);
            let racy = r.u8()? != 0;
            entries.insert(
                path,
                Entry {
                    kind,
                    mode,
                    size,
                    mtime,
                    ctime,
                    ino,
                    oid,
                    racy,
                },
            );
        }
        (r.at == bytes.len()).then_some(Index { entries })
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.entries.len() * 80);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.entries.len() as u64).to_le_bytes());
        let mut keys: Vec<&RelPath> = self.entries.keys().collect();
        keys.sort();
        for k in keys {
            let e = &self.entries[k];
            out.extend_from_slice(&(k.0.len() as u32).to_le_bytes());
            out.extend_from_slice(&k.0);
            out.push(e.kind as u8);
            out.extend_from_slice(&e.mode.to_le_bytes());
            out.extend_from_slice(&e.size.to_le_bytes());
            out.extend_from_slice(&(e.mtime as u64).to_le_bytes());
            out.extend_from_slice(&(e.ctime as u64).to_le_bytes());
            out.extend_from_slice(&e.ino.to_le_bytes());
            out.extend_from_slice(&e.oid.0);
            out.push(e.racy as u8);
        }
        out
    }

    /// The blobs the index holds.
    pub(crate) fn oids(&self) -> impl Iterator<Item = Oid> + '_ {
        self.entries
            .values()
            .filter(|e| e.kind != Kind::Dir)
            .map(|e| e.oid)
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// One path that changed between the index and the disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Changed {
    pub(crate) path: RelPath,
    pub(crate) before: FileState,
    pub(crate) after: FileState,
}

/// What a snapshot found and what it cost.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    /// What differs from the index it started from.
    pub(crate) changes: Vec<Changed>,
    /// Paths recorded (files, links and folders).
    pub(crate) entries: usize,
    /// Files read (their stat data differed).
    pub(crate) read: usize,
    /// Files left out: unreadable, too large, or of another type (FIFO, socket).
    pub(crate) skipped: Vec<(RelPath, String)>,
    pub(crate) elapsed: Duration,
}

/// Why a snapshot could not be taken.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SnapshotError {
    #[error("the project holds more than {MAX_ENTRIES} files and folders (not counting ignored ones), too many to record")]
    TooMany,
    #[error("cannot store a copy of {path}: {source}")]
    Store {
        path: String,
        #[source]
        source: io::Error,
    },
}

/// The walker over the project's recorded paths.
fn walker(root: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .ignore(false)
        .parents(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .same_file_system(false)
        .filter_entry(|e| {
            // `.git` (and the other protected names) are never entered.
            decode_policy::protected_anywhere(e.file_name()).is_none() && e.file_name() != ".decode"
        })
        .build()
}

/// Brings `index` up to the project's files now and returns what changed. Files
/// whose stat data differ are read and stored in `objects`.
pub(crate) fn snapshot(
    root: &Path,
    objects: &Objects,
    index: &mut Index,
) -> Result<Snapshot, SnapshotError> {
    let started = Instant::now();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let racy_after =
        nanos(now.as_secs() as i64, now.subsec_nanos() as i64) - RACY.as_nanos() as i64;
    let mut out = Snapshot::default();
    let mut seen: HashSet<RelPath> = HashSet::with_capacity(index.entries.len());
    let mut to_read: Vec<(RelPath, std::fs::Metadata)> = Vec::new();
    for entry in walker(root) {
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let Some(rel) = RelPath::of(root, entry.path()) else {
            continue;
        };
        if excluded(&rel.0) {
            continue;
        }
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if kind_of(&meta).is_none() {
            continue;
        }
        if seen.len() >= MAX_ENTRIES {
            return Err(SnapshotError::TooMany);
        }
        match index.entries.get(&rel) {
            Some(e) if e.matches(&meta) => {}
            _ => to_read.push((rel.clone(), meta)),
        }
        seen.insert(rel);
    }
    out.entries = seen.len();

    // Read what changed (in parallel: a first checkpoint reads every file).
    let read = read_all(root, objects, &to_read)?;
    for ((rel, meta), result) in to_read.into_iter().zip(read) {
        let before = index.entries.get(&rel).map(Entry::state);
        match result {
            Ok(entry) => {
                let mut entry = entry;
                entry.racy = entry.mtime >= racy_after || entry.ctime >= racy_after;
                let after = entry.state();
                index.entries.insert(rel.clone(), entry);
                let before = before.unwrap_or(FileState::Absent);
                if before != after {
                    out.changes.push(Changed {
                        path: rel,
                        before,
                        after,
                    });
                }
            }
            Err(why) => {
                // Not recorded: neither as changed nor as removed.
                tracing::debug!(path = %rel.shown(), %why, "not recorded in the checkpoint");
                seen.remove(&rel);
                let _ = meta;
                out.skipped.push((rel, why));
            }
        }
        out.read += 1;
    }
    // What the index had and the disk has no more.
    let gone: Vec<RelPath> = index
        .entries
        .keys()
        .filter(|k| !seen.contains(*k))
        .cloned()
        .collect();
    for rel in gone {
        if let Some(e) = index.entries.remove(&rel) {
            // A file skipped this time (too large now, unreadable) is not "deleted".
            if out.skipped.iter().any(|(p, _)| *p == rel) {
                continue;
            }
            out.changes.push(Changed {
                path: rel,
                before: e.state(),
                after: FileState::Absent,
            });
        }
    }
    out.elapsed = started.elapsed();
    Ok(out)
}

/// Reads and stores the files of `list`; the outer error is a store failure, the
/// inner one a file that cannot be recorded.
#[allow(clippy::type_complexity)]
fn read_all(
    root: &Path,
    objects: &Objects,
    list: &[(RelPath, std::fs::Metadata)],
) -> Result<Vec<Result<Entry, String>>, SnapshotError> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    if list.len() < 64 || threads == 1 {
        return list
            .iter()
            .map(|(rel, meta)| read_entry(root, objects, rel, meta))
            .collect();
    }
    let chunk = list.len().div_ceil(threads);
    let parts: Vec<Result<Vec<Result<Entry, String>>, SnapshotError>> = std::thread::scope(|s| {
        let handles: Vec<_> = list
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|(rel, meta)| read_entry(root, objects, rel, meta))
                        .collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(SnapshotError::Store {
                        path: String::new(),
                        source: io::Error::other("a reader thread panicked"),
                    })
                })
            })
            .collect()
    });
    let mut out = Vec::with_capacity(list.len());
    for p in parts {
        out.extend(p?);
    }
    Ok(out)
}

fn read_entry(
    root: &Path,
    objects: &Objects,
    rel: &RelPath,
    meta: &std::fs::Metadata,
) -> Result<Result<Entry, String>, SnapshotError> {
    let path = rel.abs(root);
    let Some(kind) = kind_of(meta) else {
        return Ok(Err("not a regular file, link or folder".into()));
    };
    let store_err = |source: io::Error| SnapshotError::Store {
        path: rel.shown(),
        source,
    };
    let (oid, meta) = match kind {
        Kind::Dir => (Oid::ZERO, meta.clone()),
        Kind::Link => match std::fs::read_link(&path) {
            Ok(t) => (
                objects.put(t.as_os_str().as_bytes()).map_err(store_err)?,
                meta.clone(),
            ),
            Err(e) => return Ok(Err(e.to_string())),
        },
        Kind::File => match read_file(&path, meta) {
            Ok((bytes, _)) => {
                let oid = objects.put(&bytes).map_err(store_err)?;
                // The stat data of what was read (it may have changed since the walk).
                match std::fs::symlink_metadata(&path) {
                    Ok(m) if m.ino() == meta.ino() && m.is_file() => (oid, m),
                    _ => return Ok(Err("it changed while it was read".into())),
                }
            }
            Err(e) => return Ok(Err(e.to_string())),
        },
    };
    Ok(Ok(Entry {
        kind,
        mode: meta.mode(),
        size: meta.size(),
        mtime: nanos(meta.mtime(), meta.mtime_nsec()),
        ctime: nanos(meta.ctime(), meta.ctime_nsec()),
        ino: meta.ino(),
        oid,
        racy: false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_round_trips_and_a_damaged_one_is_refused() {
        let mut i = Index::default();
        i.entries.insert(
            RelPath(b"a/b".to_vec()),
            Entry {
                kind: Kind::File,
                mode: 0o100644,
                size: 3,
                mtime: -5,
                ctime: 7,
                ino: 9,
                oid: Oid([3; 20]),
                racy: true,
            },
        );
        let bytes = i.encode();
        assert_eq!(Index::decode(&bytes), Some(i));
        assert_eq!(Index::decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(Index::decode(b"garbage"), None);
    }
}
