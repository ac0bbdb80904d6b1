//! The caps that look at what a bash fragment writes or removes: a write whose
//! place cannot be known, critical removal, and never-automatic files.

use super::*;

impl Gate {
    /// A write the gate cannot place counts as naming a protected file: a
    /// target only known when it runs, relative to a folder only known then,
    /// or through a link the command made; and a file copied into a folder
    /// lands where it would be protected (`cp .bashrc ~`).
    pub(super) fn unplaceable_write(&self, f: &Fragment) -> Option<String> {
        if f.filled {
            // `find -exec cp x {} \;`, `xargs touch`, `xargs -I% sh -c 'echo > %'`:
            // find or xargs fills the targets in when it runs.
            let writer = matches!(
                f.core.first().map(String::as_str),
                Some(
                    "cp" | "mv"
                        | "install"
                        | "ln"
                        | "rsync"
                        | "tee"
                        | "touch"
                        | "truncate"
                        | "mkdir"
                        | "dd"
                        | "tar"
                        | "unzip"
                )
            ) || (matches!(f.core.first().map(String::as_str), Some("sed" | "gsed"))
                && f.core
                    .iter()
                    .any(|a| a.starts_with("-i") || a.starts_with("--in-place")));
            // The command xargs runs gets its words appended; one that find
            // or xargs runs through a shell writes where that shell says.
            let direct = f
                .chain
                .iter()
                .any(|c| matches!(c.as_str(), "xargs" | "parallel"));
            let placed = |t: &&shell::WriteTarget| {
                !matches!(t.raw.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr")
            };
            let hit = if direct {
                f.writes.iter().any(|t| t.raw.contains("{}") || t.dynamic)
            } else {
                f.writes.iter().any(|t| placed(&t))
            };
            if writer || hit {
                return Some(format!(
                    "{} writes to paths find or xargs fills in when it runs (they may be protected files): never automatic",
                    quote(&f.text)
                ));
            }
        }
        for t in &f.writes {
            let expanded = paths::expand_user(&t.raw)
                .unwrap_or_else(|| expand_home(&static_vars(&t.raw, f.cwd.as_deref()), &self.home));
            let es = expanded.to_string_lossy();
            if es.contains('$') || es.contains('`') || es.starts_with('~') {
                return Some(format!(
                    "{} writes to {}, a path only known when it runs (it may be a protected file): never automatic",
                    quote(&f.text),
                    t.raw
                ));
            }
            let given = if expanded.is_absolute() {
                lexical(Path::new("/"), &expanded)
            } else {
                match &f.cwd {
                    Some(c) => lexical(c, &expanded),
                    None => {
                        return Some(format!(
                            "{} writes {} in a folder only known when it runs (it may be a protected file): never automatic",
                            quote(&f.text),
                            t.raw
                        ))
                    }
                }
            };
            match &f.links {
                None => {
                    return Some(format!(
                        "{} writes {} after the command made a link the gate cannot place: never automatic",
                        quote(&f.text),
                        t.raw
                    ))
                }
                Some(links) => {
                    if let Some(l) = links.iter().find(|l| within(&given, l)) {
                        return Some(format!(
                            "{} writes through {}, a link the command made: never automatic",
                            quote(&f.text),
                            l.display()
                        ));
                    }
                }
            }
            if let Some(n) = other_names(&given) {
                // `.git/config` under another name (a hard link made before):
                // the write lands in every name.
                return Some(format!(
                    "{} writes {}, a file with {n} names (hard links), one of which may be a protected file: never automatic",
                    quote(&f.text),
                    t.raw
                ));
            }
            let in_project = within(&given, &self.root) || within(&given, &self.root_given);
            if t.contents && self.holds_protected(&given) && !(t.archive && in_project) {
                return Some(format!(
                    "{} puts files whose names are only known when it runs into {} (they may land on a protected file): never automatic",
                    quote(&f.text),
                    t.raw
                ));
            }
            if let Some(from) = &t.from {
                let base = from.trim_end_matches('/');
                let name = base.rsplit('/').next().unwrap_or(base);
                if name.contains(['*', '?', '[']) {
                    let landing = given.join(name);
                    let label = self.glob_protected(&landing, f.dotglob).or_else(|| {
                        (f.loose_globs && self.holds_protected(&given))
                            .then_some("a protected file (the glob follows extglob or nocaseglob)")
                    });
                    if let Some(label) = label {
                        return Some(format!(
                            "{} copies {from}, which may match {label}, into {}: never automatic",
                            quote(&f.text),
                            t.raw
                        ));
                    }
                } else if !name.is_empty() && name != "." && name != ".." {
                    let landing = given.join(name);
                    for q in [landing.clone(), self.resolve(&landing)] {
                        let label = self.protected_label(&q).or_else(|| {
                            self.protected_parents
                                .contains(&q)
                                .then_some(ProtectedKind::PermissionFolder.label())
                        });
                        if let Some(label) = label {
                            return Some(format!(
                                "{} copies {from} onto {label} ({}): never automatic",
                                quote(&f.text),
                                q.display()
                            ));
                        }
                    }
                }
            }
        }
        None
    }

    /// Whether files landing in folder `d` may be protected: it is in the
    /// project, the home folder or Decode's folders, or holds one of them.
    pub(super) fn holds_protected(&self, d: &Path) -> bool {
        let r = self.resolve(d);
        [d, r.as_path()].iter().any(|q| {
            [&self.root, &self.root_given, &self.home, &self.home_canon]
                .iter()
                .any(|x| within(q, x) || within(x, q))
                || self.app_dirs.iter().any(|x| within(q, x) || within(x, q))
        })
    }

    pub(super) fn critical_removal(&self, f: &Fragment) -> Option<String> {
        // `find ROOT … -delete` and `-exec rm … {}` remove what lies under
        // ROOT: critical when ROOT is `/`, a child of `/`, the home folder,
        // a parent of the project root, or only known when it runs.
        // A program only known when it runs: a dynamic command word, or a
        // wrapper whose command xargs or find fills in (`echo rm -rf /home |
        // xargs env`).
        let unknown_program = f.program_unknown() || f.command_filled;
        let stash_untracked = crate::programs::git_tree_sub(&f.core) == Some("stash")
            && f.core
                .iter()
                .any(|a| matches!(a.as_str(), "-u" | "-a" | "--include-untracked" | "--all"));
        if f.git_elsewhere
            && (crate::programs::git_tree_sub(&f.core) == Some("clean") || stash_untracked)
        {
            return Some(format!(
                "{} cleans a work tree the environment names (GIT_WORK_TREE, GIT_DIR; it may be a critical folder): asks every time",
                quote(&f.text)
            ));
        }
        if let Some(roots) = &f.find_roots {
            let name = f.core.first().map(String::as_str);
            let find_removes = name == Some("find") && crate::programs::find_removes(&f.words);
            let removes = find_removes
                || ((matches!(name, Some("rm" | "rmdir" | "unlink" | "shred")) || unknown_program)
                    && f.core.iter().any(|a| a.contains("{}")));
            if removes {
                for r in roots {
                    let place = r.as_deref().and_then(|r| {
                        let glob_then_up = r
                            .find(['*', '?', '['])
                            .is_some_and(|m| r[m..].split('/').any(|c| c == ".."));
                        if glob_then_up {
                            return None;
                        }
                        let r = every_entry_of(r);
                        let e = expand_home(&static_vars(r, f.cwd.as_deref()), &self.home);
                        let es = e.to_string_lossy().into_owned();
                        if es.contains('$') || es.contains('`') || es.starts_with('~') {
                            None
                        } else if e.is_absolute() {
                            Some(lexical(Path::new("/"), &e))
                        } else {
                            f.cwd.as_ref().map(|c| lexical(c, &e))
                        }
                    });
                    let critical = match &place {
                        None => true,
                        Some(p)
                            if f.links
                                .as_ref()
                                .is_none_or(|l| l.iter().any(|l| within(p, l))) =>
                        {
                            true
                        }
                        Some(p) => {
                            let r = self.resolve(p);
                            // With nothing that narrows what it matches, it
                            // empties the project root too (`find . -delete`).
                            let empties = find_removes && !find_narrows(&f.core);
                            [p, &r].iter().any(|q| {
                                q.parent().is_none()
                                    || q.parent() == Some(Path::new("/"))
                                    || *q == &self.home
                                    || *q == &self.home_canon
                                    || (*q != &self.root && within(&self.root, q))
                                    || (*q != &self.root_given && within(&self.root_given, q))
                                    || (empties && (*q == &self.root || *q == &self.root_given))
                            })
                        }
                    };
                    if critical {
                        return Some(format!(
                            "{} removes what lies under {} (a critical folder): asks every time",
                            quote(&f.text),
                            r.as_deref().unwrap_or("a folder only known when it runs")
                        ));
                    }
                }
                // `find … -exec {} -rf /home \;`: its own arguments are judged too.
                if !unknown_program {
                    return None;
                }
            }
        }
        if unknown_program {
            // A program only known when it runs may be `rm`: its arguments
            // are removal targets.
            let why = if f.program_free {
                Some("its command word may expand to any command")
            } else if f.filled
                || f.chain
                    .iter()
                    .any(|c| matches!(c.as_str(), "xargs" | "parallel"))
            {
                Some("it takes arguments from its input")
            } else if f.core_dyn[1..].iter().any(|&d| d) {
                Some("its arguments are only known when it runs")
            } else {
                None
            };
            if let Some(why) = why {
                return Some(format!(
                    "{} runs a command only known when it runs and {why} (it may remove a critical folder): asks every time",
                    quote(&f.text)
                ));
            }
            let mut as_rm = f.core.clone();
            as_rm[0] = "rm".to_string();
            for t in crate::programs::removal_targets(&as_rm) {
                if let Some(r) = self.critical_target(f, t) {
                    return Some(r);
                }
            }
        }
        let is_rm = matches!(f.core.first().map(String::as_str), Some("rm" | "rmdir"));
        if is_rm
            && (f.filled
                || f.chain
                    .iter()
                    .any(|c| matches!(c.as_str(), "xargs" | "parallel")))
        {
            return Some(format!(
                "{} removes targets read from its input (it may be a critical folder): asks every time",
                quote(&f.text)
            ));
        }
        for t0 in crate::programs::removal_targets(&f.core) {
            let alts = if t0.contains('{') {
                shell::brace_expand(t0, 64)
            } else {
                vec![t0.to_string()]
            };
            for t in &alts {
                if let Some(r) = self.critical_target(f, t) {
                    return Some(r);
                }
            }
        }
        None
    }

    pub(super) fn critical_target(&self, f: &Fragment, t: &str) -> Option<String> {
        {
            let expanded = paths::expand_user(t)
                .unwrap_or_else(|| expand_home(&static_vars(t, f.cwd.as_deref()), &self.home));
            if t.contains("{}") || paths::has_expansion(&expanded.to_string_lossy()) {
                return Some(format!(
                    "{} removes {t}, only known when it runs (it may be a critical folder): asks every time",
                    quote(&f.text)
                ));
            }
            let base = if expanded.is_absolute() {
                PathBuf::from("/")
            } else {
                match &f.cwd {
                    Some(c) => c.clone(),
                    None => {
                        return Some(format!(
                            "{} removes {t} in an unknown directory: asks every time",
                            quote(&f.text)
                        ))
                    }
                }
            };
            let s = expanded.to_string_lossy();
            let through_link = |p: &Path| match &f.links {
                None => true,
                Some(links) => links.iter().any(|l| within(p, l)),
            };
            let critical = match s.find(['*', '?', '[']) {
                Some(meta) => {
                    let prefix = &s[..meta];
                    let (dir, rest) = match prefix.rfind('/') {
                        Some(0) => ("/", &s[1..]),
                        Some(k) => (&s[..k], &s[k + 1..]),
                        None => (".", &s[..]),
                    };
                    if rest.split('/').any(|c| c == "..") {
                        // `d?/../../x`: where `..` lands depends on what the glob matches.
                        return Some(format!(
                            "{} removes {t}, where `..` follows a glob (it may be a critical folder): asks every time",
                            quote(&f.text)
                        ));
                    }
                    let lexical_dir = lexical(&base, Path::new(dir));
                    if through_link(&lexical_dir) {
                        return Some(format!(
                            "{} removes {t} through a link the command made (it may point at a critical folder): asks every time",
                            quote(&f.text)
                        ));
                    }
                    let d = self.resolve(&lexical_dir);
                    let wipes = rest.chars().all(|c| matches!(c, '*' | '?' | '.' | '/'));
                    self.is_strict_ancestor_of_critical(&d) || (wipes && self.is_critical_dir(&d))
                }
                None => {
                    let given = lexical(&base, &expanded);
                    if through_link(&given) {
                        return Some(format!(
                            "{} removes {t} through a link the command made (it may point at a critical folder): asks every time",
                            quote(&f.text)
                        ));
                    }
                    let resolved = self.resolve(&given);
                    self.is_critical_dir(&given) || self.is_critical_dir(&resolved)
                }
            };
            if critical {
                return Some(format!(
                    "{} removes a critical folder ({t}): asks every time",
                    quote(&f.text)
                ));
            }
        }
        None
    }

    pub(super) fn never_auto(&self, f: &Fragment, infos: &[PathInfo]) -> Option<String> {
        if f.git_elsewhere {
            if let Some(sub) = crate::programs::git_tree_sub(&f.core) {
                return Some(format!(
                    "{} (`git {sub}`) writes a work tree the environment names (GIT_WORK_TREE, GIT_DIR), which may hold protected files: never automatic",
                    quote(&f.text)
                ));
            }
        }
        for p in infos {
            if p.dynamic && paths::mentions_protected_name(&p.raw) {
                return Some(format!(
                    "{} names {}, only known when it runs (it may be a protected file): never automatic",
                    quote(&f.text),
                    p.raw
                ));
            }
            let given = p
                .given
                .clone()
                .or_else(|| Some(lexical(&self.root, &expand_home(&p.raw, &self.home))));
            let resolved = p
                .resolved
                .clone()
                .or_else(|| given.as_ref().map(|g| self.resolve(g)));
            if p.glob {
                let label = [&given, &resolved].into_iter().flatten().find_map(|q| {
                    self.glob_protected(q, f.dotglob).or_else(|| {
                        (f.loose_globs && self.holds_protected(&glob_dir(q)))
                            .then_some("a protected file (the glob follows extglob or nocaseglob)")
                    })
                });
                if let Some(label) = label {
                    return Some(format!(
                        "{} names {} which may match {label}: never automatic",
                        quote(&f.text),
                        p.raw
                    ));
                }
            }
            for q in [&given, &resolved, &p.alt].into_iter().flatten() {
                let label = self.protected_label(q).or_else(|| {
                    self.protected_parents
                        .iter()
                        .any(|pp| pp == q)
                        .then_some(ProtectedKind::PermissionFolder.label())
                });
                if let Some(label) = label {
                    return Some(format!(
                        "{} names {label} ({}): never automatic",
                        quote(&f.text),
                        p.raw
                    ));
                }
            }
        }
        for change in crate::branches::changes(&f.core, &f.core_dyn) {
            let protected = |b: &str| self.protected_branches.iter().any(|p| p == b);
            match change {
                crate::branches::Change::Current(what) => {
                    let on: Vec<Option<String>> = match &f.branch {
                        Branch::Head => vec![self.current_branch()],
                        Branch::OneOf(v) => v
                            .iter()
                            .map(|b| {
                                if b == "HEAD" {
                                    self.current_branch()
                                } else {
                                    Some(b.clone())
                                }
                            })
                            .collect(),
                        Branch::Unknown => vec![None],
                    };
                    for b in on {
                        match b {
                            Some(b) if !protected(&b) => {}
                            Some(b) => {
                                return Some(format!(
                                    "`{what}` changes protected branch {b}: never automatic"
                                ))
                            }
                            None => {
                                return Some(format!(
                                    "`{what}` on a branch the gate cannot know (it may be protected): never automatic"
                                ))
                            }
                        }
                    }
                }
                crate::branches::Change::Named(b, what) => {
                    if protected(&b) {
                        return Some(format!(
                            "`{what}` changes protected branch {b}: never automatic"
                        ));
                    }
                }
                crate::branches::Change::Unknown(what) => {
                    return Some(format!(
                        "`{what}` names a branch only known when it runs (it may be protected): never automatic"
                    ))
                }
                crate::branches::Change::PullRequest => {
                    return Some(
                        "`gh pr merge` may merge into a protected branch: never automatic"
                            .to_string(),
                    )
                }
            }
        }
        if let Some(why) = self.unplaceable_write(f) {
            return Some(why);
        }
        if let Some(why) = crate::programs::git_config_write(&f.core) {
            return Some(format!("{} {why}: never automatic", quote(&f.text)));
        }
        if let Some(what) = crate::programs::container_removal(&f.core) {
            return Some(format!("{what}: never automatic"));
        }
        None
    }
}

/// How many names the regular file at `p` has, when it has more than one.
fn other_names(p: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p)
        .ok()
        .filter(|m| m.is_file() && m.nlink() > 1)
        .map(|m| m.nlink())
}

/// Whether a `find` expression narrows what it matches: a name test with
/// literal text (`-name '*.o'`) that is not negated, and no alternative or
/// group that could undo it.
fn find_narrows(words: &[String]) -> bool {
    // Only a name test with some literal text narrows for sure: `-type f`,
    // `-mtime -10000` or `-name '*'` may match every file.
    use crate::programs::FIND_PATTERNS as TESTS;
    // The find's own words (an `-exec` command's come after them).
    let expr: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .take_while(|w| !matches!(*w, "-exec" | "-execdir" | "-ok" | "-okdir"))
        .collect();
    // A test counts unless negated; an alternative or a group may undo any.
    let mut narrows = false;
    let mut negated = false;
    for (k, a) in expr.iter().enumerate() {
        if matches!(*a, "-o" | "-or" | "," | "(" | ")") {
            return false;
        }
        let literal = expr.get(k + 1).is_some_and(|p| {
            p.chars().any(|c| {
                !matches!(
                    c,
                    '*' | '?' | '.' | '/' | '[' | ']' | '\\' | '^' | '$' | '+'
                )
            })
        });
        narrows |= TESTS.contains(a) && !negated && literal;
        negated = matches!(*a, "-not" | "!");
    }
    narrows
}

/// `find *`, `find ./*`, `find dir/*`: every entry of the folder is the folder
/// emptied; the folder stands for them (`.`, `dir`).
fn every_entry_of(root: &str) -> &str {
    let Some(rest) = root.strip_suffix('*') else {
        return root;
    };
    let folder = rest.trim_end_matches('/');
    if folder.contains(['*', '?', '[']) {
        return root;
    }
    match (folder.is_empty(), rest.starts_with('/')) {
        (true, true) => "/",
        (true, false) => ".",
        _ => folder,
    }
}
