//! Read-only commands (docs/permissions.md, "Read-only commands"): a bash
//! command the gate can prove only reads runs like `read` — without asking
//! in default, edit and plan mode.
//!
//! The proof, for every fragment: a program (or sub-command) the program
//! data mark read-only with none of the words that make it write or run
//! (`programs::read_only`), run by its name with no wrapper or assignment,
//! nothing only known when it runs, no redirect but to a harmless device;
//! and every path it reads allowed for `read` — the read deny and ask rules
//! and the path scope, a folder judged with every file beneath it, a program
//! that reads the folder it runs in (`rg x`, `git log`) judged with that
//! folder. A path a read deny rule covers denies the command; anything else
//! short of the proof leaves it an ordinary bash command.

use super::*;

/// What the proof says of a bash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ReadOnly {
    /// Not proven: an ordinary bash command (why, for the trace).
    No(String),
    /// It only reads, and every path it reads is allowed for `read`.
    Yes,
    /// It only reads, and a read deny rule covers a path it reads: why.
    Denied(String),
}

/// What a fragment's words say: `Ok(here)` — it only reads (`here`: the folder
/// it runs in too) — or why not.
type Reads = Result<bool, String>;

/// The most paths a command may read and still be proven read-only: each
/// is judged like a `read` (bounded work).
const MAX_PATHS: usize = 64;

/// How much of the proof the caller needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Proof {
    /// Whether the command is read-only, and whether a read deny rule covers
    /// a path it reads.
    Full,
    /// Only whether a read deny rule covers a path it reads (every fragment an
    /// allow rule covers, or the mode decides): the work that can only show it
    /// is not read-only is left out, and the answer is never `Yes`.
    DenyOnly,
}

/// A name no file is expected to have: a folder whose every entry a rule
/// covers (`read(secrets/**)`) covers it too.
const PROBE: &str = ".decode-read-only-probe";

impl Gate {
    /// The proof for a parsed command (see the module comment).
    /// `infos`: the fragments' paths when the caller has them already.
    pub(super) fn read_only_command(
        &self,
        raw: &str,
        parsed: &Parsed,
        infos: Option<&[Vec<PathInfo>]>,
        proof: Proof,
    ) -> ReadOnly {
        if !self.read_only_commands {
            return ReadOnly::No("read-only commands are off (readOnlyCommands: false)".into());
        }
        // A substitution anywhere — in a here-document's body too — is an
        // expansion whose text is only known when it runs.
        if raw.contains('`')
            || raw
                .as_bytes()
                .windows(2)
                .any(|w| matches!(w, [b'$' | b'<' | b'>', b'(']))
        {
            return ReadOnly::No("it holds a substitution".into());
        }
        if let Some(b) = self.broken_rules.iter().find(|b| b.covers(Tool::Read)) {
            return ReadOnly::No(format!("the rule `{}` does not parse", b.text));
        }
        if let Some(why) = &parsed.opaque {
            return ReadOnly::No(format!("opaque: {why}"));
        }
        if parsed.fragments.is_empty() {
            return ReadOnly::No("no command".into());
        }
        // Every fragment that only reads is judged like `read`, whatever the
        // others do: `touch x && git show HEAD:.env` reads a denied file as
        // surely as `git show HEAD:.env` alone.
        // A fragment that reads and also writes (`git show HEAD:.env > out`) is
        // no read-only command, but what it reads is judged all the same.
        let (strict, uses): (Vec<Reads>, Vec<Reads>) = parsed
            .fragments
            .iter()
            .map(|f| self.fragment_reads_only(f))
            .unzip();
        let words_not_read_only = strict.iter().any(Result::is_err);
        let mut not = if proof == Proof::Full {
            parsed.fragments.iter().zip(&strict).find_map(|(f, u)| {
                u.as_ref()
                    .err()
                    .map(|why| format!("{}: {why}", quote(&f.text)))
            })
        } else {
            Some("only a read deny rule was looked for".to_string())
        };
        let paths: usize = parsed.fragments.iter().map(|f| f.paths.len()).sum();
        if paths > MAX_PATHS {
            return ReadOnly::No(format!("it names {paths} paths, over {MAX_PATHS}"));
        }
        for (i, (f, here)) in parsed.fragments.iter().zip(&uses).enumerate() {
            let Ok(here) = *here else {
                continue;
            };
            // Beside a command that does more than read, a test of whether a
            // file is there (`test -f .env || cp .env.example .env`) reads
            // nothing of it.
            if words_not_read_only
                && matches!(f.core.first().map(String::as_str), Some("test" | "["))
            {
                continue;
            }
            let computed;
            let paths = match infos.and_then(|all| all.get(i)) {
                Some(p) => p.as_slice(),
                None => {
                    computed = self.path_infos(f);
                    computed.as_slice()
                }
            };
            match self.fragment_reads_allowed(f, paths, here, proof) {
                ReadOnly::Yes => {}
                ReadOnly::Denied(why) => return ReadOnly::Denied(why),
                ReadOnly::No(why) => {
                    not.get_or_insert(why);
                }
            }
        }
        not.map_or(ReadOnly::Yes, ReadOnly::No)
    }

    /// Whether the fragment only reads, by its words alone: `Ok(here)`,
    /// `here` when it also reads the folder it runs in. Two answers: with its
    /// redirections to files (a write: no read-only command), and with them
    /// left aside (what it reads, judged all the same).
    fn fragment_reads_only(&self, f: &Fragment) -> (Reads, Reads) {
        if let Err(why) = self.fragment_run_plainly(f) {
            return (Err(why.clone()), Err(why));
        }
        let reads = self.fragment_program_reads(f);
        match f
            .writes
            .iter()
            .find(|t| t.dynamic || t.link || !is_harmless_device(Path::new(&t.raw)))
        {
            Some(t) => (Err(format!("writes {}", t.raw)), reads),
            None => (reads.clone(), reads),
        }
    }

    /// Whether the fragment's program is run plainly: by its name, with words
    /// the gate knows before it runs.
    fn fragment_run_plainly(&self, f: &Fragment) -> Result<(), String> {
        let Some(program) = f.words.first() else {
            return Err("no program".into());
        };
        if f.chain.len() != 1 || f.levels.len() != 1 {
            return Err("run through a wrapper".into());
        }
        if !f.text.starts_with(program.text.as_str()) && !f.canon.starts_with(&f.core[0]) {
            return Err("run with assignments".into());
        }
        if program.text.contains('/') {
            return Err("a program given as a path".into());
        }
        if f.has_dynamic() || f.program_unknown() || f.program_partial || f.program_free {
            return Err("a word is only known when it runs".into());
        }
        if f.filled || f.command_filled || f.git_elsewhere || f.loose_globs {
            return Err("its words are filled in or read in ways the gate does not model".into());
        }
        if f.links.is_none() || f.links.as_ref().is_some_and(|l| !l.is_empty()) {
            return Err("a link made earlier in the command".into());
        }
        Ok(())
    }

    /// Whether the program and its options only read (`Ok(here)`, see
    /// [`Gate::fragment_reads_only`]).
    fn fragment_program_reads(&self, f: &Fragment) -> Reads {
        let Some(use_) = crate::programs::read_only(&f.core) else {
            return Err("not a program and options the gate knows as read-only".into());
        };
        if f.core[0] == "git" {
            // git obeys the configuration of the repository it finds: only
            // the project's own, whose `.git` the gate protects, is trusted.
            let at_root = f.cwd.as_deref() == Some(self.root.as_path());
            if !at_root || std::fs::symlink_metadata(self.root.join(".git")).is_err() {
                return Err("git outside the project's own repository root".into());
            }
        }
        Ok(use_.here)
    }

    /// Whether every path the fragment reads is allowed for `read`.
    /// [`Proof::DenyOnly`]: what can only show it is not allowed (a folder or glob
    /// holding files a rule covers, the folder it runs in) is not looked at.
    fn fragment_reads_allowed(
        &self,
        f: &Fragment,
        infos: &[PathInfo],
        here: bool,
        proof: Proof,
    ) -> ReadOnly {
        if f.core[0] == "cd" && proof == Proof::DenyOnly {
            // Never a deny (below).
            return ReadOnly::No("cd".into());
        }
        if f.core[0] == "cd" {
            // It reads nothing: where it goes must be a folder `read` may see
            // (what runs there is judged with its own paths).
            return match infos.first() {
                Some(PathInfo { given: Some(g), .. }) => match self.read_verdict(g) {
                    ReadOnly::Yes => ReadOnly::Yes,
                    ReadOnly::Denied(why) | ReadOnly::No(why) => ReadOnly::No(why),
                },
                _ => ReadOnly::No("cd to a folder the gate cannot place".into()),
            };
        }
        let mut not = None;
        // What it writes (a redirection to a file) is not read.
        let written = |p: &PathInfo| f.writes.iter().any(|t| t.raw == p.raw);
        for p in infos.iter().filter(|p| !written(p)) {
            let (Some(given), Some(resolved)) = (&p.given, &p.resolved) else {
                return ReadOnly::No(format!("{} is in an unknown folder", p.raw));
            };
            if is_harmless_device(given) {
                continue;
            }
            let mut verdict = if p.glob {
                self.glob_read(given, proof)
            } else {
                self.path_read(given, resolved, proof)
            };
            if verdict == ReadOnly::Yes && p.alt.is_some() && !p.glob {
                // `..` after a link: the kernel reads where the link leads
                // and then up, not the folded name.
                verdict = self.read_verdict(resolved);
            }
            match verdict {
                ReadOnly::Denied(why) => return ReadOnly::Denied(why),
                ReadOnly::No(why) => {
                    not.get_or_insert(why);
                }
                ReadOnly::Yes => {}
            }
        }
        // What git names in its store (`git show HEAD:PATH`) is read too.
        let stored = crate::programs::stored_reads(&f.core);
        let named = stored.iter().flat_map(|s| s.named.iter().chain(&s.specs));
        for (path, relative) in named {
            let base = if *relative {
                f.cwd.as_deref()
            } else {
                Some(self.root.as_path())
            };
            let Some(base) = base else {
                not.get_or_insert(format!("{path} is in an unknown folder"));
                continue;
            };
            match self.read_verdict(&lexical(base, Path::new(path))) {
                ReadOnly::Yes => {}
                ReadOnly::Denied(why) => return ReadOnly::Denied(why),
                ReadOnly::No(why) => {
                    not.get_or_insert(why);
                }
            }
        }
        if let Some(why) = not {
            return ReadOnly::No(why);
        }
        if proof == Proof::DenyOnly {
            // The folder it runs in is never a deny (below).
            return ReadOnly::Yes;
        }
        // With an operand naming what exists, it reads that, not the
        // folder it runs in; git reads its repository whatever it names.
        let here = here
            && (f.core[0] == "git"
                || !f.core[1..].iter().any(|w| {
                    !w.starts_with('-')
                        && f.paths.contains(w)
                        && f.cwd.as_ref().is_some_and(|c| {
                            std::fs::symlink_metadata(lexical(c, Path::new(w))).is_ok()
                        })
                }));
        match (&f.cwd, here) {
            (_, false) => ReadOnly::Yes,
            (None, true) => ReadOnly::No("it reads a folder the gate cannot place".into()),
            (Some(c), true) => match self.folder_read(c) {
                ReadOnly::Denied(why) => ReadOnly::No(why),
                other => other,
            },
        }
    }

    /// A path as `read` would judge it; a folder with everything beneath it. A
    /// file with other names (hard links) is no proof: a rule covers a name, and
    /// another name of `.env` reads `.env`.
    fn path_read(&self, given: &Path, resolved: &Path, proof: Proof) -> ReadOnly {
        let verdict = self.read_verdict(given);
        if verdict != ReadOnly::Yes {
            return verdict;
        }
        let meta = std::fs::metadata(resolved);
        if meta.as_ref().is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.is_file() && m.nlink() > 1
        }) {
            return ReadOnly::No(format!(
                "{} has other names (hard links): what it holds may be a file a rule covers",
                given.display()
            ));
        }
        if meta.is_ok_and(|m| m.is_dir()) {
            // `read` of the folder itself allows it (above).
            return self.folder_beneath_read(given, proof);
        }
        ReadOnly::Yes
    }

    /// A folder and every file beneath it: a folder whose every entry a
    /// read deny rule covers is denied; one holding a file a read deny or
    /// ask rule covers is not proven.
    fn folder_read(&self, dir: &Path) -> ReadOnly {
        let verdict = self.read_verdict(dir);
        if verdict != ReadOnly::Yes {
            return verdict;
        }
        self.folder_beneath_read(dir, Proof::Full)
    }

    /// Every file beneath a folder `read` allows (see [`Gate::folder_read`]).
    /// [`Proof::DenyOnly`]: the ask rules are not looked at.
    fn folder_beneath_read(&self, dir: &Path, proof: Proof) -> ReadOnly {
        let lists: &[RuleList] = match proof {
            Proof::Full => &[RuleList::Deny, RuleList::Ask],
            Proof::DenyOnly => &[RuleList::Deny],
        };
        match self.search_could_reach_in(dir, "*", lists) {
            None => ReadOnly::Yes,
            Some((Verdict::Deny, rule)) => match self.read_verdict(&dir.join(PROBE)) {
                ReadOnly::Denied(why) => ReadOnly::Denied(why),
                _ => ReadOnly::No(format!(
                    "{} holds files that rule {rule} denies reading",
                    dir.display()
                )),
            },
            Some((_, rule)) => ReadOnly::No(format!(
                "{} holds files that rule {rule} asks about",
                dir.display()
            )),
        }
    }

    /// A glob: its literal folder, and every file the rest could match
    /// ([`Proof::DenyOnly`]: its folder only; what it matches is never a deny).
    fn glob_read(&self, given: &Path, proof: Proof) -> ReadOnly {
        let mut dir = PathBuf::new();
        let mut rest = Vec::new();
        for c in given.components() {
            let s = c.as_os_str().to_string_lossy();
            if rest.is_empty() && !s.contains(['*', '?', '[']) {
                dir.push(c);
            } else {
                rest.push(s.into_owned());
            }
        }
        let verdict = self.read_verdict(&dir);
        if verdict != ReadOnly::Yes || proof == Proof::DenyOnly {
            return verdict;
        }
        if let Some(why) = glob_leaves(&dir, &rest) {
            return ReadOnly::No(format!("{}: {why}", given.display()));
        }
        match self.search_could_reach(&dir, &rest.join("/")) {
            None => ReadOnly::Yes,
            Some((_, rule)) => ReadOnly::No(format!(
                "{} may name files that rule {rule} covers",
                given.display()
            )),
        }
    }

    /// What `read` of `path` would say in default mode.
    fn read_verdict(&self, path: &Path) -> ReadOnly {
        super::memo::answer(&self.root, path, || self.read_verdict_now(path))
    }

    /// [`Gate::read_verdict`], judged now.
    fn read_verdict_now(&self, path: &Path) -> ReadOnly {
        let call = Call::new(Tool::Read, path.to_string_lossy());
        let d = self.decide_path(&call, Mode::Default, Run::new());
        match d.verdict {
            Verdict::Allow => ReadOnly::Yes,
            // A deny from a rule; a path no file can have is no proof.
            Verdict::Deny if d.trace.iter().any(|t| t.stage == Stage::DenyRules) => {
                ReadOnly::Denied(format!("it reads {}: {}", path.display(), d.reason))
            }
            Verdict::Deny => ReadOnly::No(format!("reading {}: {}", path.display(), d.reason)),
            Verdict::Ask => ReadOnly::No(format!("reading {} asks: {}", path.display(), d.reason)),
        }
    }
}

/// Why a glob is no proof of what it reads, if it is not: bash matches it against
/// the folder `dir` as it is, and a match that is a link (or a file with other
/// names) reads what it leads to, which the rules judge under another name. The
/// folders the pattern `rest` could match are listed (at most 4,096 entries);
/// POSIX character classes (`[[:alpha:]]`) are no proof either.
fn glob_leaves(dir: &Path, rest: &[String]) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if rest
        .iter()
        .any(|c| c.contains("[[:") || c.contains("[=") || c.contains("[."))
    {
        return Some("a character class the gate does not read".into());
    }
    let mut level = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    for (i, pattern) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        let Ok(glob) = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
        else {
            return Some("a pattern the gate cannot read".into());
        };
        let m = glob.compile_matcher();
        let mut next = Vec::new();
        for d in &level {
            let Ok(rd) = std::fs::read_dir(d) else {
                continue;
            };
            for e in rd.flatten() {
                seen += 1;
                if seen > 4096 {
                    return Some("it matches too many files to check".into());
                }
                if !m.is_match(e.file_name()) {
                    continue;
                }
                let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
                    continue;
                };
                if meta.file_type().is_symlink() {
                    return Some(format!("{} is a link", e.path().display()));
                }
                if meta.is_file() && meta.nlink() > 1 {
                    return Some(format!(
                        "{} has other names (hard links)",
                        e.path().display()
                    ));
                }
                if !last && meta.is_dir() {
                    next.push(e.path());
                }
            }
        }
        level = next;
    }
    None
}
