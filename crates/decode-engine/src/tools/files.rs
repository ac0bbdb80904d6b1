//! Helpers shared by the file tools: binary detection, diffs, input parsing,
//! atomic writes with the session's read record.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use similar::TextDiff;

use super::paths::{resolve_links, tool_path};
use super::session::FileStamp;
use super::ToolContext;
use crate::beneath;

/// How many leading bytes are sniffed for a NUL byte (what git and ripgrep do).
pub(crate) const SNIFF_BYTES: usize = 8192;

/// Whether `bytes` (a file's first bytes) look binary: a NUL byte in the first 8 KiB.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(SNIFF_BYTES)].contains(&0)
}

/// Parses a tool input into its typed form; the error is one line.
pub(crate) fn parse_input<T: DeserializeOwned>(
    tool: &str,
    input: &serde_json::Value,
) -> Result<T, String> {
    if !input.is_object() {
        return Err(format!("{tool}: the input must be a JSON object"));
    }
    serde_path_to_error::deserialize(input).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." {
            format!("{tool}: {inner}")
        } else {
            format!("{tool}: `{path}`: {inner}")
        }
    })
}

/// A unified diff of `old` → `new` for `shown` (the path as shown), 3 lines of
/// context; `None` when they are equal. A new file diffs against `/dev/null`.
pub(crate) fn unified_diff(shown: &str, old: Option<&str>, new: &str) -> Option<String> {
    if old == Some(new) {
        return None;
    }
    let before = old.unwrap_or("");
    let diff = TextDiff::from_lines(before, new);
    let from = if old.is_some() {
        format!("a/{shown}")
    } else {
        "/dev/null".to_string()
    };
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&from, &format!("b/{shown}"))
        .to_string();
    if text.is_empty() {
        None
    } else {
        Some(text)
    }
}

/// Counts the `+` and `-` lines of a unified diff.
pub(crate) fn diff_stat(diff: &str) -> (usize, usize) {
    let mut added = 0;
    let mut removed = 0;
    for line in diff.lines() {
        if line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        if line.starts_with('+') {
            added += 1;
        } else if line.starts_with('-') {
            removed += 1;
        }
    }
    (added, removed)
}

/// Why a file may not be changed now: it changed on disk since the agent last read
/// it, or (when the session requires it) it was never read.
pub(crate) fn staleness(
    ctx: &ToolContext,
    path: &Path,
    shown: &str,
    current: &[u8],
    meta: &std::fs::Metadata,
    require_read: bool,
) -> Option<String> {
    match ctx.session.last_read(path) {
        Some(stamp) if stamp.matches(current, meta) => None,
        Some(_) => Some(format!(
            "{shown} has changed on disk since you last read it; read it again before changing it (nothing was written)"
        )),
        None if require_read => Some(format!(
            "{shown} has not been read in this session; read it first so your change is based on its current contents (nothing was written)"
        )),
        None => None,
    }
}

/// The file a file tool's `path` argument names, its links resolved — and
/// the same file the gate judged, or an error: when a link on the way was
/// swapped since the gate judged the call, nothing is touched.
pub(crate) fn judged_target(ctx: &ToolContext, raw: &str, shown: &str) -> Result<PathBuf, String> {
    if raw.len() > decode_policy::paths::MAX_PATH_BYTES {
        return Err(format!(
            "the path is {} bytes long, over the system's limit of {} bytes",
            raw.len(),
            decode_policy::paths::MAX_PATH_BYTES
        ));
    }
    let path = resolve_links(&tool_path(ctx, raw));
    match &ctx.judged_path {
        Some(j) if *j != path => Err(format!(
            "{shown} changed after it was judged (a link on its path now leads elsewhere); nothing was done"
        )),
        _ => Ok(path),
    }
}

/// The contents and metadata of the file at `path` (links resolved), read
/// without following any link; `None` when it does not exist.
pub(crate) fn read_beneath(path: &Path) -> io::Result<Option<(Vec<u8>, std::fs::Metadata)>> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    };
    match beneath::open_dir(parent, false) {
        Ok(dir) => dir.read(name),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// What a search may do with an entry its walker found.
pub(crate) enum Found {
    /// Shown (and, for grep, searched through this file).
    Shown(Option<File>),
    /// A read deny rule covers it: never shown, not even named.
    Denied,
    /// A read ask rule covers it: skipped and counted.
    Asked,
    /// It is not where the walker found it any more (a folder on its path was
    /// swapped for a link, or it left the searched folder): skipped.
    Moved,
}

/// Judges an entry a search walker found at `path` (named through the folders
/// the walker descended, which a link swapped in meanwhile may have
/// redirected) with the inode the walker listed. The entry counts only if
/// that very inode is, now, at the same name in the link-free folder that
/// `path`'s folder resolves to, inside `scope` (the resolved search root);
/// that place is what the read rules judge, and with `open` the file is
/// opened there without following a link and checked to be the same inode.
/// The last folder [`found_in_place`] opened (one per walker thread).
#[derive(Default)]
pub(crate) struct PlaceCache {
    last: Option<(PathBuf, PathBuf, beneath::Dir)>,
}

pub(crate) fn found_in_place(
    gate: &decode_policy::Gate,
    scope: &Path,
    path: &Path,
    ino: Option<u64>,
    open: bool,
    cache: &mut PlaceCache,
) -> Found {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Found::Moved;
    };
    // The folder is resolved and opened once for all the files the walker lists in
    // it: the open folder stays the one checked, whatever is renamed meanwhile.
    if cache.last.as_ref().is_none_or(|(p, _, _)| p != parent) {
        let real_parent = resolve_links(parent);
        let Ok(dir) = beneath::open_dir(&real_parent, false) else {
            cache.last = None;
            return Found::Moved;
        };
        cache.last = Some((parent.to_path_buf(), real_parent, dir));
    }
    let Some((_, real_parent, dir)) = cache.last.as_ref() else {
        return Found::Moved;
    };
    let place = real_parent.join(name);
    if !place.starts_with(scope) {
        return Found::Moved;
    }
    let Ok(now) = dir.inode_of(name) else {
        return Found::Moved;
    };
    if ino.is_some_and(|i| i != now) {
        return Found::Moved;
    }
    if gate.filters_searches() {
        for p in [path, place.as_path()] {
            match gate.search_filter(p) {
                Some(decode_policy::Verdict::Deny) => return Found::Denied,
                Some(_) => return Found::Asked,
                None => {}
            }
        }
    }
    if !open {
        return Found::Shown(None);
    }
    match dir.open_file(name) {
        Ok(f)
            if f.metadata().is_ok_and(|m| {
                use std::os::unix::fs::MetadataExt;
                m.ino() == now
            }) =>
        {
            Found::Shown(Some(f))
        }
        _ => Found::Moved,
    }
}

/// Writes `contents` to `path` (already resolved through links) atomically, creating
/// missing parent folders and keeping an existing file's permissions, then records
/// the new contents as seen by the session. No link is followed on the way: the
/// file lands exactly at `path` or the write fails.
pub(crate) fn write_and_record(ctx: &ToolContext, path: &Path, contents: &[u8]) -> io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    };
    let dir = beneath::open_dir(parent, true)?;
    dir.atomic_write(name, contents)?;
    if !dir.still_in_place() {
        tracing::warn!(path = %path.display(), "a folder moved while a file was written into it");
        return Err(io::Error::other(format!(
            "{} moved while the file was written (a folder on the path was exchanged)",
            parent.display()
        )));
    }
    match std::fs::metadata(path) {
        Ok(meta) => ctx
            .session
            .record_read(path, FileStamp::of_contents(contents, &meta)),
        Err(_) => ctx.session.forget_read(path),
    }
    Ok(())
}

/// `1 line`, `2 lines`: a count and a noun, plural when it is not one.
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A one-line description of an I/O error.
pub(crate) fn io_message(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or folder".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// Cuts `s` to at most `max` characters (on a character boundary); returns whether
/// it was cut.
pub(crate) fn truncate_chars(s: &mut String, max: usize) -> bool {
    match s.char_indices().nth(max) {
        Some((idx, _)) => {
            s.truncate(idx);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_of_new_file_is_against_dev_null() {
        let d = unified_diff("a.txt", None, "x\ny\n").unwrap();
        assert!(d.starts_with("--- /dev/null\n+++ b/a.txt\n"), "{d}");
        assert_eq!(diff_stat(&d), (2, 0));
        assert!(unified_diff("a", Some("s"), "s").is_none());
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        let mut s = "héllo".to_string();
        assert!(truncate_chars(&mut s, 2));
        assert_eq!(s, "hé");
        let mut t = "ab".to_string();
        assert!(!truncate_chars(&mut t, 2));
    }
}
