//! git's stored copies (outside attack, round 6, C2): the sandbox hides the
//! files read deny rules cover but not git's object store and index. A git
//! command that names a covered file in the store is judged like `read` of
//! it; one that prints stored content whole asks where git tracks a covered
//! file. Real repositories (`git init`), one tracking `.env`, one ignoring it.

use std::path::Path;
use std::process::Command;

use crate::common;

use common::{run, Proj};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {:?}", out);
}

/// A project whose repository holds `.env`, `secrets/key` and `notes/p.md`
/// (tracked: true) or ignores `.env` and `secrets/` (tracked: false).
fn repo(tracked: bool) -> Proj {
    let p = Proj::new();
    p.write(".env", "KEY=1\n");
    p.write("secrets/key", "k\n");
    p.write("notes/p.md", "private\n");
    if !tracked {
        p.write(".gitignore", ".env\nsecrets/\nnotes/\n");
    }
    git(&p.root, &["init", "-q"]);
    git(&p.root, &["add", "-A"]);
    git(&p.root, &["commit", "-qm", "one"]);
    p.write("src/main.rs", "fn main() { }\n");
    git(&p.root, &["commit", "-qam", "two"]);
    p
}

const DENY: &[&str] = &["read(.env)", "read(secrets/**)"];
const ASK: &[&str] = &["read(notes/p.md)"];

#[test]
fn a_covered_file_named_in_the_store_is_denied_in_every_mode() {
    let p = repo(true);
    let g = p.gate(&["bash(git *)"], ASK, DENY);
    let mut cases = Vec::new();
    for mode in ["default", "edit", "auto", "bypass"] {
        for c in [
            "git cat-file -p HEAD:.env",
            "git cat-file blob HEAD~1:.env",
            "git show :0:.env",
            "git show :.env",
            "git show HEAD:./.env",
            "git --no-pager show main:.env",
            "git show HEAD:src/../.env",
            "git log -p -- .env",
            "git diff HEAD~1 -- .env",
            "git checkout HEAD -- .env",
            "git restore --source=HEAD .env",
            "git cat-file -p HEAD:secrets/key",
            "touch x && git cat-file -p HEAD:.env",
            "git show HEAD:.env > out.txt",
            "cd src && git show HEAD:.env",
            "cd src && git show HEAD:../.env",
        ] {
            cases.push((mode, "bash", c, "deny:read(.env)"));
        }
        // A read ask rule asks, in bypass too.
        cases.push((mode, "bash", "git show HEAD:notes/p.md", "ask:notes/p.md"));
        cases.push((mode, "bash", "git log -p -- notes/p.md", "ask:notes/p.md"));
    }
    for c in &mut cases {
        if c.2.contains("secrets") {
            c.3 = "deny:read(secrets/**)";
        }
    }
    run(&p, &g, &cases);
}

#[test]
fn stored_content_printed_whole_asks_where_git_tracks_a_covered_file() {
    let p = repo(true);
    let g = p.gate(&["bash(git *)"], ASK, DENY);
    let mut cases = Vec::new();
    for mode in ["default", "auto"] {
        for c in [
            "git log -p",
            "git log -3 --patch",
            "git show",
            "git show HEAD~1",
            "git diff",
            "git diff --cached",
            "git diff HEAD~1 HEAD",
            "git grep KEY HEAD",
            "git grep --cached KEY",
            "git grep -e KEY HEAD~1",
            "git cat-file -p HEAD~1^{tree}",
            "git cat-file --batch",
            "git archive HEAD",
            "git archive -o x.tar HEAD",
            "git format-patch -1",
            "git stash show -p",
            "git log -p -- .",
            "git show HEAD:",
            "git -C src log -p",
        ] {
            cases.push((mode, "bash", c, "ask:stored copies"));
        }
        // A folder every file of which a deny rule covers reads them all.
        cases.push((
            mode,
            "bash",
            "git log -p -- secrets",
            "deny:read(secrets/**)",
        ));
        // Guards: names and counts only, named files no rule covers, the work tree.
        for c in [
            "git status",
            "git log --oneline",
            "git log --stat -3",
            "git show --stat HEAD",
            "git diff --name-only HEAD~1",
            "git grep -n KEY",
            "git grep KEY src",
            "git grep KEY HEAD -- src",
            "git show HEAD:src/main.rs",
            "git log -p -- src",
            "git diff HEAD~1 -- src/main.rs",
            "git cat-file -t HEAD",
            "git checkout -b feature",
            "git blame src/main.rs",
            // An operand that names a path here is one (git's own reading).
            "git diff src/main.rs",
            "git diff HEAD~1 src/main.rs",
            "git log -p src",
        ] {
            cases.push((mode, "bash", c, "allow"));
        }
        cases.push((mode, "bash", "git diff HEAD~1 .env", "deny"));
        cases.push((mode, "bash", "git diff HEAD~1 .", "ask:stored copies"));
    }
    // Bypass runs what prints whole (it names no covered file).
    cases.push(("bypass", "bash", "git log -p", "allow"));
    cases.push(("bypass", "bash", "git grep KEY HEAD", "allow"));
    run(&p, &g, &cases);
}

/// What the store holds is not what the folder holds now: a file since
/// removed, or only on another branch (outside attack, round 7, C0). So
/// stored content printed whole asks wherever a read rule could cover a file
/// of the repository, tracked now or not; patterns, pathspec magic and words
/// only known when it runs name no file (C1).
#[test]
fn history_other_branches_and_wide_pathspecs_ask() {
    let p = repo(false);
    p.write("old/.env", "OLD=1\n");
    git(&p.root, &["add", "-f", "old/.env"]);
    git(&p.root, &["commit", "-qm", "secret"]);
    git(&p.root, &["rm", "-q", "old/.env"]);
    git(&p.root, &["commit", "-qm", "gone"]);
    let g = p.gate(
        &["bash(git *)"],
        ASK,
        &["read(**/.env)", "read(secrets/**)"],
    );
    let mut cases = Vec::new();
    for mode in ["default", "auto"] {
        for c in [
            "git log -p",
            "git show HEAD~1",
            "git diff HEAD~2 HEAD",
            "git log -p --all",
            "git cat-file -p $(git rev-parse HEAD~1:old/.env)",
            "git log -p -- '*'",
            "git log -p -- ':(icase)OLD/.ENV'",
            "git log -p -- ':(exclude)src'",
            "git log -p -- .e[n]v",
            "git grep OLD HEAD~1 -- '*'",
            "git archive HEAD~1 -- ':(exclude)src'",
            "git log -p --full-diff -- src/main.rs",
            "git log -p -- old",
        ] {
            cases.push((mode, "bash", c, "ask:stored copies"));
        }
        cases.push((mode, "bash", "git show HEAD~1:old/.env", "deny"));
        cases.push((mode, "bash", "git show HEAD:$(echo old/.env)", "ask"));
    }
    // Plan mode runs only what is proven read-only: not these.
    cases.push(("plan", "bash", "git log -p", "deny"));
    cases.push(("plan", "bash", "git show HEAD~1", "deny"));
    for c in [
        "git checkout-index -a --prefix=/tmp/o/",
        "git update-index --cacheinfo 100644,4b825dc,copy.txt",
        "git clone . /tmp/x",
        "git worktree add /tmp/wt HEAD~1",
        "git notes add -m x HEAD",
        "git read-tree -u HEAD~1",
        "git log -U0",
        "git log --binary -1",
        "git log --unified=1",
        "git commit-tree 4b825dc -p HEAD -m x",
        "printf x | git mktree",
        "git for-each-ref --format='%(raw)' refs/tags/",
        "git -C /tmp/x fetch {root} dev",
        "git fetch ../other main",
    ] {
        cases.push(("auto", "bash", c, "ask:stored copies"));
    }
    for c in [
        "git unpack-file HEAD~1:old/.env",
        "git notes add -C HEAD~1:old/.env HEAD",
    ] {
        cases.push(("auto", "bash", c, "deny"));
    }
    // Guards: names only, the files no rule covers, a server's clone.
    for c in [
        "git log --oneline",
        "git log -p -- src/main.rs",
        "git show HEAD:src/main.rs",
        "git clone https://example.com/r.git /tmp/r",
        "git fetch origin",
        "git fetch origin dev",
        "git for-each-ref refs/heads",
    ] {
        cases.push(("auto", "bash", c, "allow"));
    }
    run(&p, &g, &cases);
}

#[test]
fn without_read_rules_that_reach_the_repository_nothing_asks() {
    let p = repo(true);
    let g = p.gate(&["bash(git *)"], &[], &["read(~/.aws/**)"]);
    let cases: Vec<_> = ["git log -p", "git show", "git diff", "git grep KEY HEAD"]
        .into_iter()
        .map(|c| ("auto", "bash", c, "allow"))
        .collect();
    run(&p, &g, &cases);
}
