//! How a tool reads a path argument — exactly as the gate does (SPEC §1): `~`,
//! `$HOME` and `${HOME}` expanded, relative paths joined to the project root, `.` and
//! `..` folded. Anything else would let a tool touch another file than the one judged.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::ToolContext;

/// Expands a leading `~`, `$HOME` or `${HOME}`.
pub(crate) fn expand_home(s: &str, home: &Path) -> PathBuf {
    let rest = if s == "~" || s == "$HOME" || s == "${HOME}" {
        Some("")
    } else {
        s.strip_prefix("~/")
            .or_else(|| s.strip_prefix("$HOME/"))
            .or_else(|| s.strip_prefix("${HOME}/"))
    };
    match rest {
        Some("") => home.to_path_buf(),
        Some(r) => home.join(r),
        None => PathBuf::from(s),
    }
}

/// Joins `p` to `base` when relative and folds `.` and `..` lexically.
pub(crate) fn lexical(base: &Path, p: &Path) -> PathBuf {
    let joined;
    let p = if p.is_absolute() {
        p
    } else {
        joined = base.join(p);
        &joined
    };
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// The absolute path a tool's `path` argument names (not resolved through links).
pub(crate) fn tool_path(ctx: &ToolContext, raw: &str) -> PathBuf {
    lexical(
        &ctx.project_root,
        &expand_home(raw.trim(), ctx.active.home()),
    )
}

/// Resolves symlinks along an absolute path for as long as its components exist
/// (dangling links are followed too: a write through one lands on its target); the
/// rest is appended as is. This is where a write really lands.
pub(crate) fn resolve_links(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    let mut queue: Vec<OsString> = p
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    let mut links = 0;
    let mut exists = true;
    while let Some(name) = queue.pop() {
        if name == ".." {
            out.pop();
            continue;
        }
        let candidate = out.join(&name);
        if !exists {
            out = candidate;
            continue;
        }
        match std::fs::symlink_metadata(&candidate) {
            Ok(md) if md.file_type().is_symlink() && links < 40 => {
                links += 1;
                match std::fs::read_link(&candidate) {
                    Ok(target) => {
                        if target.is_absolute() {
                            out = PathBuf::from("/");
                        }
                        for c in target.components().rev() {
                            match c {
                                Component::Normal(n) => queue.push(n.to_os_string()),
                                Component::ParentDir => queue.push(OsString::from("..")),
                                _ => {}
                            }
                        }
                    }
                    Err(_) => {
                        out = candidate;
                        exists = false;
                    }
                }
            }
            Ok(_) => out = candidate,
            Err(_) => {
                out = candidate;
                exists = false;
            }
        }
    }
    out
}

/// How a path is shown to the model and the person: relative to the project root
/// when inside it, absolute otherwise.
pub(crate) fn display(root: &Path, p: &Path) -> String {
    match p.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => p.display().to_string(),
    }
}

/// Whether `p` is `dir` or inside it, component by component.
pub(crate) fn within(p: &Path, dir: &Path) -> bool {
    p.starts_with(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_folds() {
        let root = Path::new("/p/r");
        assert_eq!(
            lexical(root, Path::new("a/../b/./c")),
            PathBuf::from("/p/r/b/c")
        );
        assert_eq!(lexical(root, Path::new("../../../x")), PathBuf::from("/x"));
        assert_eq!(lexical(root, Path::new("/abs")), PathBuf::from("/abs"));
    }

    #[test]
    fn home_forms() {
        let h = Path::new("/home/u");
        assert_eq!(expand_home("~", h), PathBuf::from("/home/u"));
        assert_eq!(expand_home("~/x", h), PathBuf::from("/home/u/x"));
        assert_eq!(expand_home("$HOME/x", h), PathBuf::from("/home/u/x"));
        assert_eq!(expand_home("${HOME}/x", h), PathBuf::from("/home/u/x"));
        assert_eq!(expand_home("~x", h), PathBuf::from("~x"));
    }

    #[test]
    fn display_is_relative_inside() {
        let root = Path::new("/p/r");
        assert_eq!(display(root, Path::new("/p/r/a/b")), "a/b");
        assert_eq!(display(root, Path::new("/p/r")), ".");
        assert_eq!(display(root, Path::new("/p/r2/a")), "/p/r2/a");
    }
}
