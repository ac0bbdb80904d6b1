//! The never-automatic set: what a protected path is, the names protected
//! wherever they stand (`.git`, `.vscode`, `.idea`, `.envrc`), and whether a glob
//! can name one.

use std::path::{Path, PathBuf};

pub use crate::protected_names::ProtectedKind;
use crate::protected_names::{name_is, AnyDepth, ANY_DEPTH};

/// Whether a glob component (bash rules: `*` does not match a leading dot
/// unless the pattern starts with one) can match `name`.
fn component_matches(pattern: &str, name: &str, dotglob: bool) -> bool {
    if !pattern.contains(['*', '?', '[']) {
        return pattern == name;
    }
    if name.starts_with('.') && !pattern.starts_with('.') && !dotglob {
        return false;
    }
    if pattern.bytes().all(|b| b == b'*') {
        return true;
    }
    match component_glob(pattern) {
        Some(m) => m.is_match(name),
        None => pattern == name,
    }
}

/// The most compiled component globs a thread keeps; past it the cache
/// starts over (a long command's many patterns cannot grow it without end).
const COMPONENT_CACHE: usize = 256;

thread_local! {
    /// Component globs compiled on this thread, by pattern: a command's
    /// globs meet every protected name, and compiling one is the costly part.
    static COMPONENT_GLOBS: std::cell::RefCell<
        std::collections::HashMap<String, Option<globset::GlobMatcher>>,
    > = std::cell::RefCell::new(std::collections::HashMap::new());
}

/// One path component's glob compiled (`None`: it does not compile), the
/// same matcher for the same pattern whether or not it was cached.
fn component_glob(pattern: &str) -> Option<globset::GlobMatcher> {
    let compile = || {
        globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .ok()
            .map(|g| g.compile_matcher())
    };
    COMPONENT_GLOBS.with(|cell| {
        let Ok(mut cache) = cell.try_borrow_mut() else {
            return compile();
        };
        if let Some(m) = cache.get(pattern) {
            return m.clone();
        }
        if cache.len() >= COMPONENT_CACHE {
            cache.clear();
        }
        let m = compile();
        cache.insert(pattern.to_string(), m.clone());
        m
    })
}

/// The folder part of a glob path before its first glob component.
pub(super) fn glob_dir(g: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in g.components() {
        if c.as_os_str().to_string_lossy().contains(['*', '?', '[']) {
            break;
        }
        out.push(c);
    }
    out
}

/// A file or folder the gate never lets a call change on its own (the
/// never-automatic set), as the file tools and the bash sandbox see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPath {
    /// Absolute; as given and as resolved both appear when they differ.
    pub path: PathBuf,
    /// A folder: everything beneath it is protected too.
    pub dir: bool,
    /// What it is.
    pub kind: ProtectedKind,
}

impl ProtectedPath {
    /// What it is, for messages.
    pub fn label(&self) -> &'static str {
        self.kind.label()
    }
}

/// What a file or folder name is protected as wherever it stands, on its
/// own, as the sandbox's scan of the project reads it: `.git` (a
/// repository's internals), `.vscode`, `.idea` and `.envrc` (files other
/// tools run on their own). Permission files at any depth are the gate's
/// ([`ANY_DEPTH`]); the sandbox protects the project's own file by file.
pub fn protected_anywhere(name: &std::ffi::OsStr) -> Option<ProtectedKind> {
    let name = name.to_str()?;
    ANY_DEPTH
        .iter()
        .filter(|e| e.kind != ProtectedKind::PermissionFile)
        .find(|e| e.names.len() == 1 && e.names[0] == name)
        .map(|e| e.kind)
}

/// The links directly inside `dir`: an agent file that is a link is read from
/// where it points.
pub(super) fn linked_entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .take(4096)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        .map(|e| e.path())
        .collect()
}

/// Whether the components `comps` hold the entry `e` in a row, ending at
/// the last component (or anywhere, for a folder entry); `is` compares a
/// component with one of the entry's names.
fn holds<S: AsRef<str>>(comps: &[S], e: &AnyDepth, is: impl Fn(&str, &str) -> bool) -> bool {
    let n = e.names.len();
    if comps.len() < n {
        return false;
    }
    (0..=comps.len() - n).any(|k| {
        (e.beneath || k + n == comps.len())
            && e.names
                .iter()
                .zip(&comps[k..k + n])
                .all(|(p, c)| is(p, c.as_ref()))
    })
}

/// The names in `p`, borrowed where they are UTF-8 (a path is judged on every
/// call: copying each name would cost more than the checks).
fn components(p: &Path) -> Vec<std::borrow::Cow<'_, str>> {
    p.components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .map(|c| c.as_os_str().to_string_lossy())
        .collect()
}

/// Names protected wherever they stand ([`ANY_DEPTH`]): `.git` internals of
/// any repository, every project's permission files, and files other tools
/// run on their own. `.git` wins over the others (its hooks run code).
pub(super) fn anywhere_label(p: &Path) -> Option<&'static str> {
    let comps = components(p);
    let mut found = ANY_DEPTH.iter().filter(|e| holds(&comps, e, name_is));
    let first = found.next()?;
    let kind = std::iter::once(first)
        .chain(found)
        .find(|e| e.kind == ProtectedKind::GitInternals)
        .unwrap_or(first)
        .kind;
    Some(kind.label())
}

/// Whether a glob path can name something [`anywhere_label`] protects.
pub(super) fn glob_anywhere(g: &Path, dotglob: bool) -> Option<&'static str> {
    let comps = components(g);
    let can = |pattern: &str, c: &str| -> bool {
        if !c.contains(['*', '?', '[']) {
            return name_is(pattern, c);
        }
        match pattern.split_once('*') {
            // A name with a `*` of its own: the glob meets one of its
            // ordinary spellings.
            Some((head, tail)) => [format!("{head}{tail}"), format!("{head}.local{tail}")]
                .iter()
                .any(|n| component_matches(c, n, dotglob)),
            None => component_matches(c, pattern, dotglob),
        }
    };
    ANY_DEPTH
        .iter()
        .find(|e| holds(&comps, e, can))
        .map(|e| e.kind.label())
}

/// The components of a glob path, as [`glob_can_name`] reads them (split once
/// for every path it is compared with).
pub(super) fn glob_components(pattern: &Path) -> Vec<std::borrow::Cow<'_, str>> {
    pattern
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect()
}

/// Whether the glob path whose components are `pattern` ([`glob_components`]
/// of an absolute, lexically folded path) can name `target` (or, when `dir`,
/// something inside it).
pub(super) fn glob_can_name(
    pattern: &[std::borrow::Cow<'_, str>],
    target: &Path,
    dir: bool,
    dotglob: bool,
) -> bool {
    let mut p = pattern.iter();
    for t in target.components() {
        // A pattern with fewer components names neither the target nor
        // anything inside it.
        let Some(p) = p.next() else {
            return false;
        };
        if !component_matches(p, &t.as_os_str().to_string_lossy(), dotglob) {
            return false;
        }
    }
    // As many components (the target), or more (something inside it).
    dir || p.next().is_none()
}
