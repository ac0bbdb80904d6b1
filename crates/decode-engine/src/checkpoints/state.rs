//! What a path is at one moment (absent, a file with its contents and mode, a link
//! with its target, a folder with its mode), how it is read from disk into the
//! object store, and which paths are never recorded (the protected ones).

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::objects::Objects;

/// Files larger than this are not recorded (their changes cannot be undone): a
/// checkpoint must not copy a multi-gigabyte data file or disk image on every turn.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// A git object id (SHA-1), written as 40 hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Oid(pub(crate) [u8; 20]);

impl Oid {
    pub(crate) const ZERO: Oid = Oid([0; 20]);

    pub(crate) fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    pub(crate) fn from_hex(s: &str) -> Option<Oid> {
        if s.len() != 40 || !s.is_ascii() {
            return None;
        }
        let mut out = [0u8; 20];
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Oid(out))
    }
}

impl std::fmt::Debug for Oid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hex())
    }
}

impl Serialize for Oid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
    }
}

impl<'de> Deserialize<'de> for Oid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Oid, D::Error> {
        let s = String::deserialize(d)?;
        Oid::from_hex(&s).ok_or_else(|| serde::de::Error::custom("not a 40-digit object id"))
    }
}

/// A path relative to the project root, as bytes (a file name need not be UTF-8).
/// Written as a string when it is UTF-8, else as `{"bytes": [...]}`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub(crate) struct RelPath(pub(crate) Vec<u8>);

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum RelPathRepr {
    Text(String),
    Bytes { bytes: Vec<u8> },
}

impl Serialize for RelPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(t) => RelPathRepr::Text(t.to_string()).serialize(s),
            Err(_) => RelPathRepr::Bytes {
                bytes: self.0.clone(),
            }
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RelPath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RelPath, D::Error> {
        Ok(match RelPathRepr::deserialize(d)? {
            RelPathRepr::Text(t) => RelPath(t.into_bytes()),
            RelPathRepr::Bytes { bytes } => RelPath(bytes),
        })
    }
}

impl RelPath {
    /// `path` relative to `root`, when it is strictly inside it.
    pub(crate) fn of(root: &Path, path: &Path) -> Option<RelPath> {
        let rel = path.strip_prefix(root).ok()?;
        if rel.as_os_str().is_empty() {
            return None;
        }
        Some(RelPath(rel.as_os_str().as_bytes().to_vec()))
    }

    pub(crate) fn to_path(&self) -> &Path {
        Path::new(std::ffi::OsStr::from_bytes(&self.0))
    }

    pub(crate) fn abs(&self, root: &Path) -> PathBuf {
        root.join(self.to_path())
    }

    /// As shown to a person (lossy for a name that is not UTF-8).
    pub(crate) fn shown(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }

    /// How many components deep it is.
    pub(crate) fn depth(&self) -> usize {
        self.0.iter().filter(|b| **b == b'/').count()
    }
}

/// What a path is at one moment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum FileState {
    Absent,
    /// A regular file: its contents (a blob in the store) and its permission bits.
    File {
        oid: Oid,
        mode: u32,
    },
    /// A symbolic link: its target (a blob in the store).
    Link {
        oid: Oid,
    },
    /// A folder and its permission bits.
    Dir {
        mode: u32,
    },
}

impl FileState {
    /// The blob it keeps in the store, if any.
    pub(crate) fn oid(&self) -> Option<Oid> {
        match self {
            FileState::File { oid, .. } | FileState::Link { oid } => Some(*oid),
            _ => None,
        }
    }

    pub(crate) fn is_absent(&self) -> bool {
        matches!(self, FileState::Absent)
    }
}

/// The permission bits of a mode.
pub(crate) fn perm(mode: u32) -> u32 {
    mode & 0o7777
}

/// Which paths of a project are never recorded nor restored: the protected files and
/// folders that a call never changes on its own (docs/checkpoints.md): every `.git`,
/// `.vscode`, `.idea` and `.envrc` (the gate's names protected anywhere), every
/// `.decode` folder, `.mcp.json` anywhere, and `.claude/agents/**` and
/// `.claude/settings*.json` at any depth.
pub(crate) fn excluded(rel: &[u8]) -> bool {
    let parts: Vec<&[u8]> = rel.split(|b| *b == b'/').collect();
    for (i, c) in parts.iter().enumerate() {
        let name = std::ffi::OsStr::from_bytes(c);
        if decode_policy::protected_anywhere(name).is_some() {
            return true;
        }
        match *c {
            b".decode" | b".mcp.json" => return true,
            b".claude" => match parts.get(i + 1) {
                Some(&b"agents") => return true,
                Some(next)
                    if i + 2 == parts.len()
                        && next.starts_with(b"settings")
                        && next.ends_with(b".json") =>
                {
                    return true
                }
                _ => {}
            },
            _ => {}
        }
    }
    false
}

/// The state of the entry at `path` (never following a link), its file or link
/// target stored in `objects`. `meta` is its `lstat`, when the caller has it.
pub(crate) fn read_state(
    objects: &Objects,
    path: &Path,
    meta: Option<&Metadata>,
) -> io::Result<FileState> {
    state_with(Some(objects), path, meta)
}

/// The state of the entry at `path` as [`read_state`] reads it, without storing
/// anything (its ids only).
pub(crate) fn peek_state(path: &Path) -> io::Result<FileState> {
    state_with(None, path, None)
}

fn state_with(
    objects: Option<&Objects>,
    path: &Path,
    meta: Option<&Metadata>,
) -> io::Result<FileState> {
    let put = |bytes: &[u8]| match objects {
        Some(o) => o.put(bytes),
        None => Objects::id_of(bytes),
    };
    let owned;
    let meta = match meta {
        Some(m) => m,
        None => match std::fs::symlink_metadata(path) {
            Ok(m) => {
                owned = m;
                &owned
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(FileState::Absent),
            Err(e) => return Err(e),
        },
    };
    let ft = meta.file_type();
    if ft.is_dir() {
        Ok(FileState::Dir {
            mode: perm(meta.mode()),
        })
    } else if ft.is_symlink() {
        let target = std::fs::read_link(path)?;
        let oid = put(target.as_os_str().as_bytes())?;
        Ok(FileState::Link { oid })
    } else if ft.is_file() {
        let (bytes, mode) = read_file(path, meta)?;
        let oid = put(&bytes)?;
        Ok(FileState::File {
            oid,
            mode: perm(mode),
        })
    } else {
        // A socket, FIFO or device: not something a turn's undo puts back.
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file, link or folder",
        ))
    }
}

/// The contents of the regular file at `path`: opened without following a link and
/// without blocking (a FIFO swapped in is refused), checked to be the inode `meta`
/// describes. Returns the contents and the mode of what was read.
pub(crate) fn read_file(path: &Path, meta: &Metadata) -> io::Result<(Vec<u8>, u32)> {
    if meta.len() > MAX_FILE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {} MiB", MAX_FILE_BYTES / (1024 * 1024)),
        ));
    }
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let now = file.metadata()?;
    if !now.is_file() || now.ino() != meta.ino() || now.dev() != meta.dev() {
        return Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "it was replaced while it was read",
        ));
    }
    let mut bytes = Vec::with_capacity(now.len() as usize);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {} MiB", MAX_FILE_BYTES / (1024 * 1024)),
        ));
    }
    Ok((bytes, now.mode()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_are_never_recorded() {
        for p in [
            ".git",
            ".git/config",
            "sub/.git/hooks/pre-commit",
            ".decode/settings.json",
            ".decode/settings.local.json",
            "nested/.decode/agents/x.md",
            ".claude/agents/a.md",
            "x/.claude/settings.local.json",
            ".claude/settings.json",
            ".mcp.json",
            "a/.envrc",
            ".vscode/tasks.json",
            ".idea/workspace.xml",
        ] {
            assert!(excluded(p.as_bytes()), "{p}");
        }
        for p in [
            "src/main.rs",
            ".gitignore",
            ".claude/notes.md",
            ".claude/commands/x.md",
            "docs/.github/workflows/ci.yml",
            "git/config",
        ] {
            assert!(!excluded(p.as_bytes()), "{p}");
        }
    }

    #[test]
    fn paths_that_are_not_utf8_round_trip() {
        let p = RelPath(b"caf\xe9.txt".to_vec());
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<RelPath>(&text).unwrap(), p);
        let q = RelPath(b"src/a.rs".to_vec());
        assert_eq!(serde_json::to_string(&q).unwrap(), "\"src/a.rs\"");
    }

    #[test]
    fn oids_round_trip_as_hex() {
        let o = Oid([0xab; 20]);
        assert_eq!(Oid::from_hex(&o.hex()), Some(o));
        assert_eq!(Oid::from_hex("xyz"), None);
    }
}
