//! The never-automatic set: what a protected path is, the names protected
//! wherever they stand (`.git`, `.vscode`, `.idea`, `.envrc`), and whether a glob
//! can name one.

use std::path::{Path, PathBuf};

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
    match globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
    {
        Ok(g) => g.compile_matcher().is_match(name),
        Err(_) => pattern == name,
    }
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

/// What a protected path is; [`ProtectedKind::label`] says it in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtectedKind {
    /// `.decode/settings.json`.
    PermissionFile,
    /// `.decode/agents`, `.claude/agents`.
    AgentDefinitions,
    /// `.decode` and `.claude` themselves: not protected as a whole, but
    /// swapping one (a rename, a link) would swap the files read from it.
    PermissionFolder,
    /// A `.git` folder (or the project's git folder found upwards).
    GitInternals,
    /// `~/.bashrc`, `~/.profile`, …
    ShellStartup,
    /// `~/.ssh`.
    Ssh,
    /// Decode's config and data folders.
    AppDirs,
    /// `.vscode`, `.idea`, `.envrc`: files other tools run on their own.
    RunByOtherTools,
}

impl ProtectedKind {
    /// What it is, for messages ("the project's permission file").
    pub fn label(self) -> &'static str {
        match self {
            ProtectedKind::PermissionFile => "the project's permission file",
            ProtectedKind::AgentDefinitions => "the project's agent definitions",
            ProtectedKind::PermissionFolder => "a folder of permission files",
            ProtectedKind::GitInternals => "git internals",
            ProtectedKind::ShellStartup => "a shell start-up file",
            ProtectedKind::Ssh => "~/.ssh",
            ProtectedKind::AppDirs => "Decode's own settings and trust store",
            ProtectedKind::RunByOtherTools => "a file other tools run on their own",
        }
    }
}

impl ProtectedPath {
    /// What it is, for messages.
    pub fn label(&self) -> &'static str {
        self.kind.label()
    }
}

/// What a file or folder name is protected as wherever it stands, if it is:
/// `.git` (a repository's internals), `.vscode`, `.idea` and `.envrc` (files other
/// tools run on their own).
pub fn protected_anywhere(name: &std::ffi::OsStr) -> Option<ProtectedKind> {
    match name.as_encoded_bytes() {
        b".git" => Some(ProtectedKind::GitInternals),
        b".vscode" | b".idea" | b".envrc" => Some(ProtectedKind::RunByOtherTools),
        _ => None,
    }
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

/// Names protected wherever they stand: `.git` internals of any repository,
/// and files other tools run on their own.
pub(super) fn anywhere_label(p: &Path) -> Option<&'static str> {
    let mut label = None;
    for c in p.components() {
        let name = c.as_os_str();
        // `.envrc` is a file: only as the last name.
        if name == ".envrc" {
            continue;
        }
        match protected_anywhere(name) {
            Some(l) if name == ".git" => label = Some(l),
            Some(l) => label = label.or(Some(l)),
            None => {}
        }
    }
    if label.is_none() {
        label = p
            .file_name()
            .filter(|n| *n == ".envrc")
            .and_then(protected_anywhere);
    }
    label.map(ProtectedKind::label)
}

/// Whether a glob path can name something [`anywhere_label`] protects.
pub(super) fn glob_anywhere(g: &Path, dotglob: bool) -> Option<&'static str> {
    let comps: Vec<String> = g
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = comps.len().saturating_sub(1);
    for (k, c) in comps.iter().enumerate() {
        if !c.contains(['*', '?', '[']) {
            continue;
        }
        if component_matches(c, ".git", dotglob) {
            return Some(ProtectedKind::GitInternals.label());
        }
        if component_matches(c, ".vscode", dotglob)
            || component_matches(c, ".idea", dotglob)
            || (k == last && component_matches(c, ".envrc", dotglob))
        {
            return Some(ProtectedKind::RunByOtherTools.label());
        }
    }
    None
}

/// Whether the glob path `pattern` (absolute, lexically folded) can name
/// `target` (or, when `dir`, something inside it).
pub(super) fn glob_can_name(pattern: &Path, target: &Path, dir: bool, dotglob: bool) -> bool {
    let pc: Vec<String> = pattern
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let tc: Vec<String> = target
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let enough = if dir {
        pc.len() >= tc.len()
    } else {
        pc.len() == tc.len()
    };
    enough
        && tc
            .iter()
            .zip(&pc)
            .all(|(t, p)| component_matches(p, t, dotglob))
}
