//! Where a path lands: relative to the project, resolved through links, in
//! scope or not, protected or critical.

use super::*;
use crate::decide::memo;

impl Gate {
    pub(super) fn rel(&self, p: &Path) -> Option<String> {
        let r = paths::strip_within(p, &self.root)
            .or_else(|| paths::strip_within(p, &self.root_given))?;
        let s = r.to_string_lossy();
        Some(if s.is_empty() {
            ".".to_string()
        } else {
            s.into_owned()
        })
    }

    /// `p` resolved through links (relative to the project root). Within one
    /// judgement a path is resolved once: a command's folder is asked about by
    /// several stages, and each would walk the file system again.
    pub(super) fn resolve(&self, p: &Path) -> PathBuf {
        memo::resolved(&self.root, p, || paths::resolve_under(&self.root, p))
    }

    /// A glob path: its literal prefix (the components before the first one
    /// holding a metacharacter) resolved, the rest appended as written.
    pub(super) fn resolve_glob(&self, given: &Path) -> PathBuf {
        let mut prefix = PathBuf::from("/");
        let mut rest = PathBuf::new();
        let mut in_rest = false;
        for c in given.components() {
            let s = c.as_os_str().to_string_lossy();
            if matches!(c, std::path::Component::RootDir) {
                continue;
            }
            if in_rest || s.contains(['*', '?', '[']) {
                in_rest = true;
                rest.push(c.as_os_str());
            } else {
                prefix.push(c.as_os_str());
            }
        }
        self.resolve(&prefix).join(rest)
    }

    /// Whether the glob path `g` can name a protected path or a folder of
    /// permission files.
    pub(super) fn glob_protected(&self, g: &Path, dotglob: bool) -> Option<&'static str> {
        // A system folder of Decode's is root-owned: a glob from the root
        // (`ls /*/*/*`) reaches it only with privileges, which ask anyway;
        // it counts when named.
        let comps = glob_components(g);
        if let Some(e) = self.protected.iter().find(|e| {
            glob_can_name(&comps, &e.path, e.dir, dotglob)
                && !SYSTEM_DIRS.iter().any(|d| e.path.starts_with(d))
        }) {
            return Some(e.kind.label());
        }
        if let Some(l) = glob_anywhere(g, dotglob) {
            return Some(l);
        }
        self.protected_parents
            .iter()
            .any(|pp| glob_can_name(&comps, pp, false, dotglob))
            .then_some(ProtectedKind::PermissionFolder.label())
    }

    /// Resolves an absolute path that may hold `.`/`..`, as the kernel does:
    /// each `..` applies to the path resolved so far (after symlinks).
    pub(super) fn resolve_physical(&self, p: &Path) -> PathBuf {
        if !p
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return self.resolve(&lexical(Path::new("/"), p));
        }
        paths::resolve(p)
    }

    pub(super) fn in_scope(&self, resolved: &Path) -> bool {
        within(resolved, &self.root) || self.extra_dirs.iter().any(|d| within(resolved, d))
    }

    /// What `p` is protected as, if it is (the never-automatic set, then the
    /// names protected wherever they stand); asked about once per judgement.
    pub(super) fn protected_label(&self, p: &Path) -> Option<&'static str> {
        memo::label(&self.root, p, || self.protected_label_now(p))
    }

    fn protected_label_now(&self, p: &Path) -> Option<&'static str> {
        self.protected
            .iter()
            .find(|e| {
                if e.dir {
                    within(p, &e.path)
                } else {
                    // Both are folded lexically: the same path is the same bytes.
                    p.as_os_str() == e.path.as_os_str()
                }
            })
            .map(|e| e.kind.label())
            .or_else(|| anywhere_label(p))
    }

    pub(super) fn is_critical_dir(&self, p: &Path) -> bool {
        p.parent().is_none()
            || p.parent() == Some(Path::new("/"))
            || p == self.home
            || p == self.home_canon
            || within(&self.root, p)
            || within(&self.root_given, p)
            || within(&self.home, p)
            || within(&self.home_canon, p)
    }

    pub(super) fn is_strict_ancestor_of_critical(&self, d: &Path) -> bool {
        let strict = |x: &Path| x != d && within(x, d);
        d.parent().is_none()
            || strict(&self.root)
            || strict(&self.root_given)
            || strict(&self.home)
            || strict(&self.home_canon)
    }

    /// The folder a `git merge` lands in: the checked-out branch.
    pub(super) fn current_branch(&self) -> Option<String> {
        let g = self.git_dir.as_ref()?;
        let head = std::fs::read_to_string(g.join("HEAD")).ok()?;
        let r = head.trim().strip_prefix("ref:")?.trim();
        Some(r.strip_prefix("refs/heads/").unwrap_or(r).to_string())
    }
}
