//! git's index, read (docs/permissions.md, "git's stored copies"): the
//! paths it holds, in versions 2 to 4, and a memo of what was found in it
//! that is read again only when the index changes.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::trace::Verdict;

/// The most index entries read, and the largest index: past them the
/// index is an error (bounded work; the caller asks).
const MAX_ENTRIES: usize = 1_000_000;
const MAX_INDEX_BYTES: u64 = 256 << 20;
/// The covered files remembered per index.
const MAX_COVERED: usize = 64;

/// What the index last read held: which file, as it was, and the paths
/// (relative to the repository's top) a verdict was found for.
#[derive(Debug, Default)]
pub(crate) struct IndexMemo {
    last: Mutex<Option<(IndexKey, Covered)>>,
}

/// The paths a verdict was found for, or why the index could not be read.
type Covered = Result<Vec<(String, Verdict)>, String>;

#[derive(Debug, Clone, PartialEq, Eq)]
struct IndexKey {
    path: PathBuf,
    len: u64,
    mtime: (i64, i64),
    ino: u64,
}

impl IndexMemo {
    /// The paths of the index in the git folder `dir` for which `judge`
    /// gives a verdict (at most [`MAX_COVERED`]); the last answer while
    /// the index file is unchanged. No index: none.
    pub(crate) fn covered(&self, dir: &Path, judge: impl Fn(&str) -> Option<Verdict>) -> Covered {
        use std::os::unix::fs::MetadataExt;
        let index = dir.join("index");
        let meta = match std::fs::metadata(&index) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(format!("the gate cannot read {}: {e}", index.display())),
        };
        let key = IndexKey {
            path: index.clone(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ino: meta.ino(),
        };
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((k, covered)) = last.as_ref() {
            if *k == key {
                return covered.clone();
            }
        }
        let covered = read(dir, &index, meta.len()).map(|paths| {
            paths
                .into_iter()
                .filter_map(|p| judge(&p).map(|v| (p, v)))
                .take(MAX_COVERED)
                .collect()
        });
        *last = Some((key, covered.clone()));
        covered
    }
}

fn read(dir: &Path, index: &Path, len: u64) -> Result<Vec<String>, String> {
    let cannot = |e: String| format!("the gate cannot read {}: {e}", index.display());
    if len > MAX_INDEX_BYTES {
        return Err(cannot("it is too large".into()));
    }
    let bytes = std::fs::read(index).map_err(|e| cannot(e.to_string()))?;
    let sha256 = std::fs::read_to_string(dir.join("config"))
        .is_ok_and(|c| c.to_ascii_lowercase().contains("sha256"));
    index_paths(&bytes, if sha256 { 32 } else { 20 }).map_err(cannot)
}

/// The paths git's index holds (versions 2 to 4; `hash`: the object id's
/// length). A sparse index's folders end in `/`.
fn index_paths(b: &[u8], hash: usize) -> Result<Vec<String>, String> {
    let be32 = |at: usize| -> Result<u32, String> {
        b.get(at..at + 4)
            .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
            .ok_or_else(|| "the index ends early".to_string())
    };
    if b.get(..4) != Some(b"DIRC") {
        return Err("not a git index".into());
    }
    let version = be32(4)?;
    if !(2..=4).contains(&version) {
        return Err(format!("index version {version} is unknown"));
    }
    let count = be32(8)? as usize;
    if count > MAX_ENTRIES {
        return Err(format!("the index holds {count} files, over {MAX_ENTRIES}"));
    }
    let mut out: Vec<String> = Vec::with_capacity(count.min(65_536));
    let mut at = 12;
    let mut prev: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let flags_at = start + 40 + hash;
        let flags = b
            .get(flags_at..flags_at + 2)
            .map(|s| u16::from_be_bytes([s[0], s[1]]))
            .ok_or("the index ends early")?;
        let mode = be32(start + 24)?;
        at = flags_at + 2;
        if version >= 3 && flags & 0x4000 != 0 {
            at += 2;
        }
        let name = if version == 4 {
            let (strip, used) = varint(b.get(at..).ok_or("the index ends early")?)?;
            at += used;
            let end = b[at..]
                .iter()
                .position(|&c| c == 0)
                .ok_or("the index ends early")?;
            let keep = prev
                .len()
                .checked_sub(strip)
                .ok_or("a bad path in the index")?;
            let mut name = prev[..keep].to_vec();
            name.extend_from_slice(&b[at..at + end]);
            at += end + 1;
            name
        } else {
            let end = b
                .get(at..)
                .and_then(|r| r.iter().position(|&c| c == 0))
                .ok_or("the index ends early")?;
            let name = b[at..at + end].to_vec();
            // Padded with 1 to 8 NULs to a multiple of 8 from the entry's start.
            let len = at + end - start;
            at = start + (len + 8) / 8 * 8;
            name
        };
        let mut s = String::from_utf8_lossy(&name).into_owned();
        if mode & 0o170000 == 0o040000 && !s.ends_with('/') {
            s.push('/');
        }
        out.push(s);
        prev = name;
    }
    Ok(out)
}

/// git's offset varint (index version 4): the value and the bytes used.
fn varint(b: &[u8]) -> Result<(usize, usize), String> {
    let mut i = 0;
    let mut c = *b.first().ok_or("the index ends early")?;
    let mut val = (c & 127) as usize;
    while c & 128 != 0 {
        i += 1;
        c = *b.get(i).ok_or("the index ends early")?;
        val = val
            .checked_add(1)
            .and_then(|v| v.checked_mul(128))
            .ok_or("a bad number in the index")?
            + (c & 127) as usize;
    }
    Ok((val, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git")
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn the_index_is_read_in_every_version() {
        let d = tempfile::tempdir().unwrap();
        git(d.path(), &["init", "-q"]);
        let names = ["a", "dir/b.txt", "dir/sub/c", "long-name-".repeat(5).leak()];
        for n in names {
            let p = d.path().join(n);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, n).unwrap();
        }
        git(d.path(), &["add", "-A"]);
        for v in ["2", "3", "4"] {
            git(d.path(), &["update-index", "--index-version", v]);
            if v == "3" {
                // An extended flag (intent to add) makes version 3 entries longer.
                std::fs::write(d.path().join("new"), "x").unwrap();
                git(d.path(), &["add", "-N", "new"]);
            }
            let bytes = std::fs::read(d.path().join(".git/index")).unwrap();
            let mut got = index_paths(&bytes, 20).unwrap();
            got.sort();
            let mut want: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            if v != "2" {
                want.push("new".into());
            }
            want.sort();
            assert_eq!(got, want, "version {v}");
        }
    }

    #[test]
    fn a_broken_index_is_an_error_not_a_panic() {
        assert!(index_paths(b"", 20).is_err());
        assert!(index_paths(b"DIRC\0\0\0\x02\0\0\0\x05", 20).is_err());
        assert!(index_paths(b"DIRC\0\0\0\x09\0\0\0\x00", 20).is_err());
        let mut b = b"DIRC\0\0\0\x04\0\0\0\x01".to_vec();
        b.extend([0u8; 62]);
        b.extend([0xff, 0xff, 0xff]);
        assert!(index_paths(&b, 20).is_err());
    }
}
