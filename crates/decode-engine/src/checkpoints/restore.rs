//! Putting one path back: removing what is there, creating a folder, writing a file
//! with its mode, making a link. Every step works in a folder opened one component
//! at a time from `/` without following a link (decode-core `beneath`), so a link
//! swapped in on the way cannot send a restore outside the project.

use std::ffi::OsStr;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use super::state::RelPath;
use crate::beneath;

fn split<'a>(root: &Path, rel: &'a RelPath) -> io::Result<(std::path::PathBuf, &'a OsStr)> {
    let p = rel.to_path();
    let name = p
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => root.join(d),
        _ => root.to_path_buf(),
    };
    Ok((parent, name))
}

/// Removes the file, link or (empty) folder at `rel`; nothing there is fine.
pub(crate) fn remove(root: &Path, rel: &RelPath, is_dir: bool) -> io::Result<()> {
    let (parent, name) = split(root, rel)?;
    let dir = match beneath::open_dir(&parent, false) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let at = dir.entry_path(name);
    let result = if is_dir {
        std::fs::remove_dir(&at)
    } else {
        std::fs::remove_file(&at)
    };
    match result {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::DirectoryNotEmpty => Err(io::Error::new(
            e.kind(),
            "the folder is not empty: it holds files the turn did not record (ignored or added since); remove them first",
        )),
        other => other,
    }
}

/// Creates the folder at `rel` (its parents as needed) or keeps the one there, with
/// exactly `mode`.
pub(crate) fn put_dir(root: &Path, rel: &RelPath, mode: u32) -> io::Result<()> {
    let (parent, name) = split(root, rel)?;
    let dir = beneath::open_dir(&parent, true)?;
    let at = dir.entry_path(name);
    match std::fs::DirBuilder::new().mode(0o700).create(&at) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let f = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(&at)?;
    f.set_permissions(std::fs::Permissions::from_mode(mode))
}

/// Writes `bytes` to the file at `rel` atomically (its folders made as needed), with
/// exactly `mode`.
pub(crate) fn put_file(root: &Path, rel: &RelPath, bytes: &[u8], mode: u32) -> io::Result<()> {
    let (parent, name) = split(root, rel)?;
    let dir = beneath::open_dir(&parent, true)?;
    dir.atomic_write(name, bytes)?;
    let f = dir.open_file(name)?;
    f.set_permissions(std::fs::Permissions::from_mode(mode))?;
    if !dir.still_in_place() {
        return Err(io::Error::other(
            "a folder on the way was moved while the file was restored",
        ));
    }
    Ok(())
}

/// Makes `rel` a link to `target` (what is there, if anything, was removed first).
pub(crate) fn put_link(root: &Path, rel: &RelPath, target: &[u8]) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let (parent, name) = split(root, rel)?;
    let dir = beneath::open_dir(&parent, true)?;
    let at = dir.entry_path(name);
    match std::fs::symlink_metadata(&at) {
        Ok(m) if m.is_dir() => std::fs::remove_dir(&at)?,
        Ok(_) => std::fs::remove_file(&at)?,
        Err(_) => {}
    }
    std::os::unix::fs::symlink(OsStr::from_bytes(target), &at)
}
