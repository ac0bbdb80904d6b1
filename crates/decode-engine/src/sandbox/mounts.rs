//! The sandbox's view of the file system as a table of mounts (docs/sandbox.md,
//! "How"): the whole system read-only, then, parents before children, the places a
//! command may write, the protected paths inside them, what is hidden and the host
//! services covered.
//!
//! One path has one mount; when several reasons name it, the strongest wins
//! ([`Kind`]'s order), and a mount beneath a stronger one is left out where it would
//! undo it (nothing writable beneath a protected or hidden folder).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a mount does to its path. Later variants win over earlier ones at the same
/// path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Bound onto itself inside a writable place, so it cannot be renamed or
    /// removed (a folder above a protected path).
    Pin,
    /// Read-only because everything is (a home folder inside a writable place, such
    /// as a temp folder).
    BaseReadOnly,
    /// Writable: the project, a temp folder, a toolchain cache, an additional or
    /// person-listed folder.
    Writable,
    /// A protected path, read-only inside a writable place.
    Protected,
    /// An empty private folder over a host service's folder (the runtime folder,
    /// the X11 socket folder): writable, and nothing of the host's there.
    Tmpfs,
    /// The null device over a host service's socket: a connection is refused.
    NullSocket,
    /// Hidden: an empty folder or file nobody can read, over a secret.
    Hidden,
}

impl Kind {
    /// Whether a command can write beneath a mount of this kind.
    pub(crate) fn writable(self) -> bool {
        matches!(self, Kind::Writable | Kind::Pin | Kind::Tmpfs)
    }

    /// What it is, for `decode doctor` and the bound a command hit.
    pub fn label(self) -> &'static str {
        match self {
            Kind::BaseReadOnly => "read-only",
            Kind::Pin => "pinned",
            Kind::Writable => "writable",
            Kind::Protected => "protected (read-only)",
            Kind::Tmpfs => "host service folder (empty inside)",
            Kind::NullSocket => "host service socket (refused)",
            Kind::Hidden => "hidden",
        }
    }
}

/// One entry of the table, with why it is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub path: PathBuf,
    pub kind: Kind,
    /// Why (a credential store, "toolchain cache", "`sandbox.writable`", …).
    pub why: String,
    /// For [`Kind::Hidden`]: the path is a folder (else a file).
    pub dir: bool,
    /// It must be a mount point whatever its kind (it was pinned too): a writable
    /// project inside a writable temp folder still cannot be renamed.
    pub pinned: bool,
}

/// The mount table of one sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mounts {
    by_path: BTreeMap<PathBuf, Mount>,
}

impl Mounts {
    /// Adds `path` (absolute, resolved) as `kind`; the strongest kind stays.
    pub fn add(&mut self, path: &Path, kind: Kind, why: impl Into<String>) {
        self.add_entry(path, kind, why.into(), false);
    }

    /// Adds a hidden path (`dir`: it is a folder).
    pub fn hide(&mut self, path: &Path, dir: bool, why: impl Into<String>) {
        self.add_entry(path, Kind::Hidden, why.into(), dir);
    }

    fn add_entry(&mut self, path: &Path, kind: Kind, why: String, dir: bool) {
        if !path.is_absolute() {
            return;
        }
        let pin = kind == Kind::Pin;
        match self.by_path.get_mut(path) {
            Some(m) if m.kind >= kind => m.pinned |= pin,
            Some(m) => {
                m.pinned |= m.kind == Kind::Pin;
                m.kind = kind;
                m.why = why;
                m.dir = dir;
            }
            None => {
                self.by_path.insert(
                    path.to_path_buf(),
                    Mount {
                        path: path.to_path_buf(),
                        kind,
                        why,
                        dir,
                        pinned: pin,
                    },
                );
            }
        }
    }

    /// Whether `path` is in the table as `kind` (before ordering).
    pub fn has(&self, path: &Path, kind: Kind) -> bool {
        self.by_path.get(path).is_some_and(|m| m.kind == kind)
    }

    /// The kind of `path` itself, if it is in the table.
    pub fn kind_of(&self, path: &Path) -> Option<Kind> {
        self.by_path.get(path).map(|m| m.kind)
    }

    /// The mounts in the order they are made (parents first), each only where it
    /// changes something: beneath a hidden folder or a host service's folder nothing
    /// is mounted; beneath a protected folder only what hides more; a writable or
    /// pinned folder only where what is above it is not writable (or, for a pin,
    /// only where it is); a base read-only folder only beneath a writable one.
    pub fn ordered(&self) -> Vec<&Mount> {
        let mut all: Vec<&Mount> = self.by_path.values().collect();
        all.sort_by(|a, b| {
            (a.path.components().count(), &a.path).cmp(&(b.path.components().count(), &b.path))
        });
        let mut kept: Vec<&Mount> = Vec::with_capacity(all.len());
        for m in all {
            // The nearest mount above it that is kept (or the root: read-only).
            let above = kept
                .iter()
                .rev()
                .find(|k| m.path.starts_with(&k.path) && k.path != m.path)
                .map(|k| k.kind);
            let writable_above = above.is_some_and(Kind::writable);
            let keep = match above {
                Some(Kind::Hidden | Kind::Tmpfs | Kind::NullSocket) => false,
                Some(Kind::Protected) => matches!(m.kind, Kind::Hidden | Kind::NullSocket),
                _ => match m.kind {
                    Kind::BaseReadOnly => writable_above,
                    Kind::Writable => !writable_above || m.pinned,
                    Kind::Pin => writable_above,
                    Kind::Protected => writable_above,
                    Kind::Tmpfs | Kind::NullSocket | Kind::Hidden => true,
                },
            };
            if keep {
                kept.push(m);
            }
        }
        kept
    }

    /// Where `path` stands in the sandbox: the kind of the nearest kept mount at or
    /// above it (`None`: only the read-only root above it).
    pub fn at(&self, path: &Path) -> Option<&Mount> {
        self.ordered()
            .into_iter()
            .rev()
            .find(|m| path.starts_with(&m.path))
    }

    /// The bubblewrap options for the table. `empty_dir` and `empty_file` are what a
    /// hidden folder or file shows instead (empty, nobody may read them).
    pub fn args(&self, empty_dir: &Path, empty_file: &Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        let mut push = |opts: &[&std::ffi::OsStr]| a.extend(opts.iter().map(|o| o.to_os_string()));
        for m in self.ordered() {
            let p = m.path.as_os_str();
            match m.kind {
                Kind::BaseReadOnly | Kind::Protected => push(&["--ro-bind-try".as_ref(), p, p]),
                Kind::Writable | Kind::Pin => push(&["--bind-try".as_ref(), p, p]),
                Kind::Tmpfs => push(&["--tmpfs".as_ref(), p]),
                Kind::NullSocket => push(&["--ro-bind".as_ref(), "/dev/null".as_ref(), p]),
                Kind::Hidden => {
                    let src = if m.dir { empty_dir } else { empty_file };
                    push(&["--ro-bind".as_ref(), src.as_os_str(), p])
                }
            }
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(entries: &[(&str, Kind)]) -> Mounts {
        let mut m = Mounts::default();
        for (p, k) in entries {
            m.add(Path::new(p), *k, "test");
        }
        m
    }

    fn order(m: &Mounts) -> Vec<(String, Kind)> {
        m.ordered()
            .into_iter()
            .map(|m| (m.path.display().to_string(), m.kind))
            .collect()
    }

    #[test]
    fn parents_first_and_the_strongest_kind_of_a_path_wins() {
        let m = table(&[
            ("/home/u/p/.decode", Kind::Protected),
            ("/home/u", Kind::BaseReadOnly),
            ("/home/u/p", Kind::Writable),
            ("/home/u/.cache", Kind::Writable),
            ("/tmp", Kind::Writable),
            ("/home/u/p", Kind::Pin),
        ]);
        assert_eq!(
            order(&m),
            [
                ("/tmp".into(), Kind::Writable),
                ("/home/u/.cache".into(), Kind::Writable),
                ("/home/u/p".into(), Kind::Writable),
                ("/home/u/p/.decode".into(), Kind::Protected),
            ]
        );
    }

    #[test]
    fn a_home_inside_a_temp_folder_is_read_only_again() {
        let m = table(&[
            ("/tmp", Kind::Writable),
            ("/tmp/t/home", Kind::BaseReadOnly),
            ("/tmp/t/home/.cache", Kind::Writable),
            ("/tmp/t/home/.cache/x", Kind::Writable),
            ("/tmp/t/proj", Kind::Writable),
            ("/tmp/t/proj", Kind::Pin),
            ("/tmp/t/other", Kind::Writable),
            ("/tmp/t/proj/a", Kind::Pin),
            ("/tmp/t/home/d", Kind::Pin),
        ]);
        assert_eq!(
            order(&m),
            [
                ("/tmp".into(), Kind::Writable),
                ("/tmp/t/home".into(), Kind::BaseReadOnly),
                ("/tmp/t/proj".into(), Kind::Writable),
                ("/tmp/t/home/.cache".into(), Kind::Writable),
                ("/tmp/t/proj/a".into(), Kind::Pin),
            ]
        );
    }

    #[test]
    fn nothing_writable_beneath_what_is_protected_or_hidden() {
        let mut m = table(&[
            ("/p", Kind::Writable),
            ("/p/.git", Kind::Protected),
            ("/p/.git/x", Kind::Writable),
            ("/p/.git/y", Kind::NullSocket),
            ("/run/user/1", Kind::Tmpfs),
            ("/run/user/1/bus", Kind::NullSocket),
        ]);
        m.hide(Path::new("/h/.aws"), true, "credential store");
        m.add(Path::new("/h/.aws/cache"), Kind::Writable, "x");
        assert_eq!(
            order(&m),
            [
                ("/p".into(), Kind::Writable),
                ("/h/.aws".into(), Kind::Hidden),
                ("/p/.git".into(), Kind::Protected),
                ("/p/.git/y".into(), Kind::NullSocket),
                ("/run/user/1".into(), Kind::Tmpfs),
            ]
        );
        let args: Vec<String> = m
            .args(Path::new("/E"), Path::new("/F"))
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args.join(" "),
            "--bind-try /p /p --ro-bind /E /h/.aws --ro-bind-try /p/.git /p/.git \
             --ro-bind /dev/null /p/.git/y --tmpfs /run/user/1"
        );
        assert_eq!(
            m.at(Path::new("/h/.aws/credentials")).unwrap().kind,
            Kind::Hidden
        );
        assert_eq!(m.at(Path::new("/p/src/a.rs")).unwrap().kind, Kind::Writable);
        assert!(m.at(Path::new("/etc/passwd")).is_none());
    }
}
