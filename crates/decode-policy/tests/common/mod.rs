//! Shared helpers: a temp project and fake home per case set, and a
//! table runner that reports every failing case at once.

use std::path::{Path, PathBuf};

use decode_policy::{Call, Decision, Gate, Mode, PolicyInput, Tool, Verdict};

/// A temporary project (`proj/`) and home (`home/`) side by side.
pub(crate) struct Proj {
    /// Kept so the folder lives as long as the project.
    _tmp: tempfile::TempDir,
    /// Canonical temp folder holding both.
    pub base: PathBuf,
    pub root: PathBuf,
    pub home: PathBuf,
}

impl Proj {
    pub(crate) fn new() -> Proj {
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(tmp.path()).expect("canonical");
        let root = base.join("proj");
        let home = base.join("home");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(root.join("README.md"), "hi\n").unwrap();
        Proj {
            _tmp: tmp,
            base,
            root,
            home,
        }
    }

    /// A project with a `.git` folder whose HEAD is `branch`.
    pub(crate) fn with_git(branch: &str) -> Proj {
        let p = Proj::new();
        std::fs::create_dir_all(p.root.join(".git/hooks")).unwrap();
        std::fs::write(
            p.root.join(".git/HEAD"),
            format!("ref: refs/heads/{branch}\n"),
        )
        .unwrap();
        p
    }

    pub(crate) fn input(&self) -> PolicyInput {
        PolicyInput::new(&self.root, &self.home)
    }

    pub(crate) fn gate(&self, allow: &[&str], ask: &[&str], deny: &[&str]) -> Gate {
        self.gate_with(|i| {
            i.project_rules.allow = strings(allow);
            i.project_rules.ask = strings(ask);
            i.project_rules.deny = strings(deny);
        })
    }

    pub(crate) fn gate_with(&self, f: impl FnOnce(&mut PolicyInput)) -> Gate {
        let mut input = self.input();
        f(&mut input);
        let (gate, warnings) = Gate::new(input);
        assert!(warnings.is_empty(), "unexpected warnings: {warnings:?}");
        gate
    }

    /// Replaces `{root}`, `{home}` and `{base}` in a subject.
    pub(crate) fn fill(&self, s: &str) -> String {
        s.replace("{root}", &self.root.to_string_lossy())
            .replace("{home}", &self.home.to_string_lossy())
            .replace("{base}", &self.base.to_string_lossy())
    }

    pub(crate) fn write(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.root.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, content).unwrap();
        p
    }

    pub(crate) fn symlink(&self, target: &Path, link_rel: &str) {
        let link = self.root.join(link_rel);
        if let Some(parent) = link.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::os::unix::fs::symlink(target, link).unwrap();
    }
}

pub(crate) fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

pub(crate) fn decide(g: &Gate, tool: &str, subject: &str, mode: &str) -> Decision {
    let tool = Tool::from_name(tool).expect("tool");
    let mode: Mode = mode.parse().expect("mode");
    g.decide(&Call::new(tool, subject), mode)
}

/// One case: `(mode, tool, subject, want)`; `want` is `allow`, `ask` or
/// `deny`, optionally followed by `:TEXT` that the reason must contain.
pub(crate) type Case<'a> = (&'a str, &'a str, &'a str, &'a str);

/// Runs every case and panics listing all failures. Returns the count.
pub(crate) fn run(p: &Proj, g: &Gate, cases: &[Case<'_>]) -> usize {
    let mut failures = Vec::new();
    for &(mode, tool, subject, want) in cases {
        let subject = p.fill(subject);
        let (verdict, needle) = match want.split_once(':') {
            Some((v, n)) => (v, Some(p.fill(n))),
            None => (want, None),
        };
        let d = decide(g, tool, &subject, mode);
        let ok_verdict = d.verdict.to_string() == verdict;
        let ok_reason = needle
            .as_ref()
            .is_none_or(|n| d.reason.contains(n.as_str()));
        if !ok_verdict || !ok_reason {
            failures.push(format!(
                "[{mode}] {tool} {subject:?}: want {want}, got {} — {}\n    trace: {:?}",
                d.verdict,
                d.reason,
                d.trace
                    .iter()
                    .map(|t| format!("{}: {}", t.stage, t.result))
                    .collect::<Vec<_>>()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    cases.len()
}

/// [`run`] for cases whose subjects were built as owned strings.
pub(crate) fn run_owned(p: &Proj, g: &Gate, cases: &[(&str, &str, String, &str)]) -> usize {
    let cases: Vec<Case<'_>> = cases
        .iter()
        .map(|(m, t, c, v)| (*m, *t, c.as_str(), *v))
        .collect();
    run(p, g, &cases)
}

pub(crate) fn verdict(g: &Gate, tool: &str, subject: &str, mode: &str) -> Verdict {
    decide(g, tool, subject, mode).verdict
}
