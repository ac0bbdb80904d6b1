//! How a tool reads a path argument — exactly as the gate does (docs/permissions.md, "Tools and kinds"): `~`,
//! `$HOME` and `${HOME}` expanded, relative paths joined to the project root, `.` and
//! `..` folded. Anything else would let a tool touch another file than the one judged.

use std::path::{Path, PathBuf};

pub(crate) use decode_policy::paths::{expand_home, lexical};

use super::ToolContext;

/// The absolute path a tool's `path` argument names (not resolved through
/// links), byte for byte the path the gate judged: never trimmed.
pub(crate) fn tool_path(ctx: &ToolContext, raw: &str) -> PathBuf {
    lexical(&ctx.project_root, &expand_home(raw, ctx.active.home()))
}

/// Resolves symlinks along an absolute path for as long as its components exist
/// (dangling links are followed too: a write through one lands on its target); the
/// rest is appended as is. This is where a write really lands — the gate's own
/// resolution, so the tool touches exactly the file that was judged.
pub(crate) fn resolve_links(p: &Path) -> PathBuf {
    decode_policy::paths::resolve(p)
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
