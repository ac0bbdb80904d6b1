//! Protected branches (docs/permissions.md, "Caps"): `main`, `master` and
//! settings `protectedBranches` are never changed without asking — by a
//! merge, pull or rebase while on one, or by a command that names one as its
//! destination. Which branch is checked out at a point of a command is
//! followed through earlier `checkout`/`switch` commands; where it cannot be
//! known, it counts as protected.

use crate::options::{self, OptionSpec};
use crate::programs::git_subcommand;

/// What a fragment would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// The checked-out branch (`git merge`, `git pull`, `git rebase`).
    Current(&'static str),
    /// A named branch (a fetch refspec's destination, `update-ref`,
    /// `branch -f|-M|-C|-d`, `checkout -B`, `rebase UPSTREAM BRANCH`).
    Named(String, &'static str),
    /// A branch only known when the command runs.
    Unknown(&'static str),
    /// `gh pr merge`: the pull request's base may be protected.
    PullRequest,
}

/// `refs/heads/main`, `+x:refs/heads/main` destinations as branch names.
fn branch_name(r: &str) -> String {
    let r = r.trim_start_matches('+');
    // git completes `heads/main` to `refs/heads/main`.
    r.strip_prefix("refs/heads/")
        .or_else(|| r.strip_prefix("heads/"))
        .unwrap_or(r)
        .to_string()
}

/// `git -c remote.NAME.fetch=…` / `--config-env=remote.NAME.fetch=…`
/// before the sub-command: the refspecs a fetch writes are the option's.
fn fetch_config(core: &[String], globals_end: usize) -> bool {
    let mut k = 1;
    while k < globals_end {
        let a = core[k].to_ascii_lowercase();
        let kv = if a == "-c" || a == "--config-env" {
            k += 1;
            core.get(k).map(|v| v.to_ascii_lowercase())
        } else {
            a.strip_prefix("-c")
                .or_else(|| a.strip_prefix("--config-env="))
                .map(str::to_string)
        };
        if kv.is_some_and(|kv| {
            let key = kv.split('=').next().unwrap_or("");
            key.starts_with("remote.") && key.ends_with(".fetch")
        }) {
            return true;
        }
        k += 1;
    }
    false
}

/// Positional words after the subcommand, skipping options (`with_value`
/// take the next word).
fn positionals<'a>(rest: &'a [String], with_value: &[&str]) -> Vec<(usize, &'a str)> {
    let spec = OptionSpec {
        value: with_value,
        complete: true,
        ..OptionSpec::default()
    };
    options::operands(rest, &spec)
        .into_iter()
        .map(|k| (k, rest[k].as_str()))
        .collect()
}

/// The changes to branches a fragment makes. `dynamic[k]`: `core[k]` is
/// only known when it runs.
pub(crate) fn changes(core: &[String], dynamic: &[bool]) -> Vec<Change> {
    let mut out = Vec::new();
    let Some(name) = core.first() else {
        return out;
    };
    if name == "gh" {
        let p = positionals(&core[1..], &["-R", "--repo"]);
        if p.len() >= 2 && p[0].1 == "pr" && p[1].1 == "merge" {
            out.push(Change::PullRequest);
        }
        return out;
    }
    if name != "git" {
        return out;
    }
    let Some((sub, rest)) = git_subcommand(core) else {
        return out;
    };
    let offset = core.len() - rest.len();
    let g = Git {
        rest,
        dynamic: dynamic.get(offset..).unwrap_or(&[]),
    };
    if matches!(sub, "fetch" | "pull" | "remote") && fetch_config(core, offset) {
        out.push(Change::Unknown("git fetch with a configured refspec"));
    }
    match sub {
        "merge" if !g.has(&["--abort", "--quit", "--continue"]) => {
            out.push(Change::Current("git merge"));
        }
        "pull" => {
            out.push(Change::Current("git pull"));
            // `git pull origin x:main` also fetches into main.
            g.refspecs("fetch", &mut out);
        }
        // `git reset` moves the branch checked out (`--hard` with it).
        "reset" if g.has(&["--hard", "--soft", "--mixed", "--keep", "--merge"]) => {
            out.push(Change::Current("git reset"));
        }
        // With no mode, `git reset REV` moves the branch too (mixed);
        // `git reset`, `git reset HEAD`, `REV -- PATHS`, `-p` do not. One
        // word may be a path or a revision: fail closed.
        "reset" if !g.has(&["-p", "--patch", "--pathspec-from-file"]) => {
            let p = positionals(rest, &[]);
            // `REV --` with no path after it moves the branch too.
            let dashes = rest.iter().position(|a| a == "--");
            let rev_only = dashes.is_none_or(|d| d + 1 == rest.len());
            let moves = rev_only && p.len() == 1 && !matches!(p[0].1, "HEAD" | "@");
            if moves {
                out.push(Change::Current("git reset"));
            }
        }
        "symbolic-ref" => {
            let p = positionals(rest, &["-m"]);
            if let Some(&(k, r)) = p.first() {
                if r != "HEAD" {
                    g.named(&mut out, k, r, "git symbolic-ref");
                }
            }
        }
        "worktree" => {
            for (k, a) in rest.iter().enumerate() {
                if matches!(a.as_str(), "-B") {
                    if let Some(b) = rest.get(k + 1) {
                        g.named(&mut out, k + 1, b, "git worktree add -B");
                    }
                }
            }
        }
        "rebase" => g.rebase(&mut out),
        "fetch" | "push" => g.refspecs(sub, &mut out),
        "update-ref" => g.update_ref(&mut out),
        "branch" => g.branch(&mut out),
        "checkout" | "switch" => {
            for (k, a) in rest.iter().enumerate() {
                if matches!(a.as_str(), "-B" | "-C" | "--force-create") {
                    if let Some(b) = rest.get(k + 1) {
                        g.named(&mut out, k + 1, b, "git checkout -B");
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// A git sub-command's words (after the sub-command) and which are only
/// known when it runs.
struct Git<'a> {
    rest: &'a [String],
    dynamic: &'a [bool],
}

impl Git<'_> {
    fn dy(&self, k: usize) -> bool {
        self.dynamic.get(k).copied().unwrap_or(false)
    }

    /// A flag counts wherever it stands in a cluster (`git branch -Mf x main`).
    fn has(&self, flags: &[&str]) -> bool {
        options::flagged(self.rest, &OptionSpec::default(), flags)
    }

    /// A change to the branch `word` names (at `k`), or to one only known
    /// when it runs.
    fn named(&self, out: &mut Vec<Change>, k: usize, word: &str, what: &'static str) {
        if self.dy(k) {
            out.push(Change::Unknown(what));
        } else {
            out.push(Change::Named(branch_name(word), what));
        }
    }

    /// `git rebase [UPSTREAM [BRANCH]]`: BRANCH, else the current one.
    fn rebase(&self, out: &mut Vec<Change>) {
        if self.has(&[
            "--abort",
            "--quit",
            "--continue",
            "--skip",
            "--edit-todo",
            "--show-current-patch",
        ]) {
            return;
        }
        let p = positionals(
            self.rest,
            &[
                "--onto",
                "-x",
                "--exec",
                "-s",
                "--strategy",
                "-X",
                "--strategy-option",
                "-C",
            ],
        );
        match p.get(1) {
            Some(&(k, b)) => self.named(out, k, b, "git rebase"),
            None => out.push(Change::Current("git rebase")),
        }
    }

    /// `git fetch|push REMOTE REFSPEC…`: each refspec's destination (`x:main`,
    /// `+x:refs/heads/main`; a wildcard may name any branch), and for `git
    /// push .` each branch named.
    fn refspecs(&self, sub: &str, out: &mut Vec<Change>) {
        let p = positionals(
            self.rest,
            &[
                "-o",
                "--push-option",
                "--upload-pack",
                "--receive-pack",
                "--exec",
                "--depth",
                "--deepen",
                "--shallow-since",
                "--shallow-exclude",
                "-j",
                "--jobs",
                "--negotiation-tip",
                "--refmap",
                "--recurse-submodules-default",
            ],
        );
        let what = if sub == "fetch" {
            "git fetch"
        } else {
            "git push"
        };
        // `--refmap=SPEC` (or `--refmap SPEC`) maps what is fetched to
        // local refs: judged like a refspec.
        for (k, a) in self.rest.iter().enumerate() {
            let map = match a.strip_prefix("--refmap=") {
                Some(v) => Some((k, v)),
                None if a == "--refmap" => self.rest.get(k + 1).map(|v| (k + 1, v.as_str())),
                None => None,
            };
            if let Some((k, spec)) = map {
                match spec.rsplit_once(':') {
                    Some((_, dst)) if dst.contains('*') || self.dy(k) => {
                        out.push(Change::Unknown("git fetch --refmap"))
                    }
                    Some((_, dst)) if !dst.is_empty() => self.named(out, k, dst, what),
                    _ => {}
                }
            }
        }
        // The first positional is the remote; refspecs follow.
        let remote_is_dot = p.first().is_some_and(|&(_, r)| r == ".");
        for &(k, spec) in p.iter().skip(1) {
            if let Some((_, dst)) = spec.rsplit_once(':') {
                if dst.contains('*') {
                    out.push(Change::Unknown("git fetch"));
                } else if !dst.is_empty() {
                    self.named(out, k, dst, what);
                }
            } else if self.dy(k) {
                out.push(Change::Unknown("git fetch"));
            } else if sub == "push" && remote_is_dot {
                self.named(out, k, spec, "git push .");
            }
        }
    }

    /// `git update-ref REF …`: REF (HEAD: the current branch); `--stdin`: any.
    fn update_ref(&self, out: &mut Vec<Change>) {
        if self.has(&["--stdin"]) {
            out.push(Change::Unknown("git update-ref --stdin"));
        } else if let Some(&(k, r)) = positionals(self.rest, &["-m"]).first() {
            if r == "HEAD" {
                out.push(Change::Current("git update-ref HEAD"));
            } else {
                self.named(out, k, r, "git update-ref");
            }
        }
    }

    /// `git branch -d|-D NAMES`, `-m|-M|-c|-C [OLD] NEW` (the new name, and
    /// the current branch when OLD is not given), `-f NAME`.
    fn branch(&self, out: &mut Vec<Change>) {
        let force = self.has(&["-f", "--force"]);
        let rename = self.has(&["-M", "-C", "-m", "-c", "--move", "--copy"]);
        let delete = self.has(&["-d", "-D", "--delete"]);
        let p = positionals(
            self.rest,
            &[
                "-u",
                "--set-upstream-to",
                "-t",
                "--track",
                "--contains",
                "--no-contains",
                "--merged",
                "--no-merged",
                "--points-at",
                "--sort",
                "--format",
            ],
        );
        if delete {
            for &(k, b) in &p {
                self.named(out, k, b, "git branch -d");
            }
        } else if rename {
            if let Some(&(k, b)) = p.last() {
                self.named(out, k, b, "git branch -M");
            }
            // `git branch -m OLD NEW` renames OLD away (a copy leaves it).
            if p.len() >= 2 && self.has(&["-m", "-M", "--move"]) {
                let (k, b) = p[0];
                self.named(out, k, b, "git branch -m");
            }
            if p.len() < 2 {
                // `git branch -M NEW` renames the current branch.
                out.push(Change::Current("git branch -M"));
            }
        } else if force {
            if let Some(&(k, b)) = p.first() {
                self.named(out, k, b, "git branch -f");
            }
        }
    }
}

/// Where `git checkout|switch ARGS` moves HEAD: `Some(Some(b))` to branch
/// `b`, `Some(None)` somewhere the gate cannot know, `None` when it is no
/// branch switch (a file checkout).
pub(crate) fn switch_target(
    core: &[String],
    dynamic: &[bool],
    cwd: Option<&std::path::Path>,
) -> Option<Option<String>> {
    let (sub, rest) = git_subcommand(core)?;
    let offset = core.len() - rest.len();
    let dy = |k: usize| dynamic.get(offset + k).copied().unwrap_or(false);
    match sub {
        "checkout" | "switch" => {}
        "symbolic-ref" => {
            let p = positionals(rest, &["-m"]);
            return match p.as_slice() {
                [(_, "HEAD"), (k, r)] => Some((!dy(*k)).then(|| branch_name(r))),
                _ => None,
            };
        }
        "update-ref" => {
            let p = positionals(rest, &["-m"]);
            return (p.first().map(|x| x.1) == Some("HEAD")).then_some(None);
        }
        _ => return None,
    }
    let mut positional = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i].as_str();
        if a == "--" {
            return None; // `checkout -- FILE` restores files
        }
        if matches!(
            a,
            "-b" | "-B" | "-c" | "-C" | "--orphan" | "--force-create" | "--create"
        ) {
            return Some(rest.get(i + 1).filter(|_| !dy(i + 1)).cloned());
        }
        if a == "--detach" || a == "-d" {
            return Some(Some("(detached)".into()));
        }
        // `checkout --track origin/main` makes and checks out `main`.
        if matches!(a, "-t" | "--track") || a.starts_with("--track=") {
            let p: Vec<usize> = (i + 1..rest.len())
                .filter(|&j| !rest[j].starts_with('-'))
                .collect();
            if let [j] = p.as_slice() {
                let r = rest[*j].as_str();
                return Some((!dy(*j)).then(|| {
                    let r = r.strip_prefix("refs/remotes/").unwrap_or(r);
                    r.split_once('/').map_or(r, |(_, b)| b).to_string()
                }));
            }
        }
        if a.starts_with('-') && a != "-" {
            i += 1;
            continue;
        }
        positional.push(i);
        i += 1;
    }
    if positional.len() != 1 {
        return None;
    }
    let k = positional[0];
    let b = &rest[k];
    if dy(k) || b == "-" || b.starts_with("@{") {
        return Some(None);
    }
    if sub == "checkout" {
        if let Some(c) = cwd {
            if c.join(b).exists() {
                return None; // a file checkout, not a branch switch
            }
        }
    }
    Some(Some(b.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Vec<Change> {
        let core: Vec<String> = s.split_whitespace().map(String::from).collect();
        changes(&core, &vec![false; core.len()])
    }

    #[test]
    fn branch_changes() {
        assert_eq!(c("git merge x"), [Change::Current("git merge")]);
        assert_eq!(c("git pull"), [Change::Current("git pull")]);
        assert_eq!(
            c("git fetch . x:main"),
            [Change::Named("main".into(), "git fetch")]
        );
        assert_eq!(
            c("git fetch origin +x:refs/heads/release"),
            [Change::Named("release".into(), "git fetch")]
        );
        assert_eq!(
            c("git branch -f main x"),
            [Change::Named("main".into(), "git branch -f")]
        );
        assert_eq!(
            c("git update-ref refs/heads/main abc"),
            [Change::Named("main".into(), "git update-ref")]
        );
        assert_eq!(
            c("git rebase origin/main feature"),
            [Change::Named("feature".into(), "git rebase")]
        );
        assert!(c("git fetch origin").is_empty());
        assert!(c("git merge --abort").is_empty());
        assert_eq!(c("gh pr merge 3"), [Change::PullRequest]);
        let core: Vec<String> = "git checkout -".split(' ').map(String::from).collect();
        assert_eq!(switch_target(&core, &[false; 3], None), Some(None));
    }
}
