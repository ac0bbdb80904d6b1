//! Whether the literal folders of rule globs exist, asked many times in one
//! judgement (a search of a folder meets every read deny and ask rule under it).
//! Each answer is what `symlink_metadata` would say now; a folder asked about for
//! several names is read once instead of looked up name by name.

use std::cell::RefCell;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// A folder is listed once this many of its names have been asked about.
const LIST_AFTER: u32 = 3;
/// Folders bigger than this are not listed (each name is looked up instead).
const MOST_ENTRIES: usize = 4096;

/// Answers for one judgement: the file system may change between two. A
/// judgement asks about a few dozen globs in a few folders: plain lists, found
/// by comparing bytes, cost less than hashing each path.
#[derive(Default)]
pub(super) struct Existence {
    /// Answers by the key the caller gives (a rule glob's place in the index).
    known: RefCell<Vec<(usize, bool)>>,
    /// Folders (by their bytes): how many of their names were asked about, and
    /// their names (sorted) once listed, `None` where they could not be listed whole.
    folders: RefCell<Vec<Folder>>,
}

struct Folder {
    path: OsString,
    asked: u32,
    names: Option<Option<Vec<OsString>>>,
}

impl Existence {
    /// Whether something (a file, a folder, a link, even a broken one) is at the
    /// path `at` makes, remembered under `key` (a key stands for one path).
    pub(super) fn at(&self, key: usize, at: impl FnOnce() -> PathBuf) -> bool {
        if let Some(&(_, known)) = self.known.borrow().iter().find(|(k, _)| *k == key) {
            return known;
        }
        let path = at();
        let answer = self
            .in_listing(&path)
            .unwrap_or_else(|| std::fs::symlink_metadata(&path).is_ok());
        self.known.borrow_mut().push((key, answer));
        answer
    }

    /// The answer from the parent folder's listing, once it is worth reading.
    fn in_listing(&self, path: &Path) -> Option<bool> {
        let name = match path.file_name() {
            Some(n) if n != "." && n != ".." => n,
            _ => return None,
        };
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty())?;
        let mut folders = self.folders.borrow_mut();
        let i = match folders.iter().position(|f| f.path == parent.as_os_str()) {
            Some(i) => i,
            None => {
                folders.push(Folder {
                    path: parent.as_os_str().to_os_string(),
                    asked: 0,
                    names: None,
                });
                folders.len() - 1
            }
        };
        let f = &mut folders[i];
        if f.names.is_none() {
            f.asked += 1;
            if f.asked < LIST_AFTER {
                return None;
            }
            f.names = Some(list(parent));
        }
        let names = f.names.as_ref()?.as_ref()?;
        Some(names.binary_search_by(|n| n.as_os_str().cmp(name)).is_ok())
    }
}

/// The names in `folder`, sorted, or `None` when it cannot be read whole (not a
/// folder, not readable, too big): then each name is looked up.
fn list(folder: &Path) -> Option<Vec<OsString>> {
    let entries = std::fs::read_dir(folder).ok()?;
    let mut names = Vec::new();
    for e in entries {
        names.push(e.ok()?.file_name());
        if names.len() > MOST_ENTRIES {
            return None;
        }
    }
    names.sort_unstable_by(|a, b| OsStr::cmp(a, b));
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_agree_with_a_lookup_before_and_after_the_folder_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("a")).unwrap();
        std::fs::write(d.join("f"), "").unwrap();
        std::os::unix::fs::symlink(d.join("nowhere"), d.join("broken")).unwrap();
        let e = Existence::default();
        let names = [
            "a", "f", "broken", "missing", "b", "c", "a", "missing2", ".", "..",
        ];
        for (key, name) in names.into_iter().enumerate() {
            let p = d.join(name);
            assert_eq!(
                e.at(key, || p.clone()),
                p.symlink_metadata().is_ok(),
                "{name}"
            );
        }
        assert!(
            e.folders
                .borrow()
                .iter()
                .any(|f| f.path == d.as_os_str() && f.names.is_some()),
            "listed after three names"
        );
        // Inside a file, and inside a missing folder: nothing is there.
        assert!(!e.at(100, || d.join("f/x")));
        assert!(!e.at(101, || d.join("missing/x")));
        // A key stands for its path: asked again, it is not looked up again.
        assert!(e.at(0, || unreachable!()));
    }

    #[test]
    fn an_unreadable_folder_falls_back_to_lookups() {
        let dir = tempfile::tempdir().unwrap();
        let e = Existence::default();
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        for (key, name) in ["x", "y", "z", "w"].into_iter().enumerate() {
            assert!(!e.at(key, || file.join(name)));
        }
        let folders = e.folders.borrow();
        let f = folders.iter().find(|f| f.path == file.as_os_str()).unwrap();
        assert_eq!(f.names, Some(None), "could not be listed: looked up");
    }
}
