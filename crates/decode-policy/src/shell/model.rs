//! What the walker and the program entries exchange: fragments and their
//! parts (redirections, write targets), and what seeing through one simple
//! command finds (docs/permissions.md, "Shell commands: fragments").

use std::path::PathBuf;

use super::words::{basename, Word};

/// Whether a fragment must be covered by an allow rule, or is only checked
/// by deny rules, ask rules and caps (a string run by `eval`, the command run
/// by `sudo bash -c`, the outer `bash -c` whose string is judged instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) enum Role {
    Full,
    #[default]
    Checked,
}

/// One simple command.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fragment {
    /// Normalised words joined by single spaces, redirections as `> target`.
    pub text: String,
    /// The command points git at a repository or work tree through the
    /// environment (`GIT_WORK_TREE`, `GIT_DIR`, `GIT_COMMON_DIR`): which
    /// folder a git command works on is not known.
    pub git_elsewhere: bool,
    /// The same with each word re-quoted canonically (what allow rules and
    /// "always allow" rules match: word boundaries and quoting kept).
    pub canon: String,
    pub role: Role,
    /// Forms allow rules may match (empty for `Role::Checked`).
    pub allow_forms: Vec<String>,
    /// Forms deny rules, ask rules and `caps.external` match.
    pub check_forms: Vec<String>,
    /// Command names met while seeing through (basenames), outermost first.
    pub chain: Vec<String>,
    /// The seen-through command: name (basename) and its arguments.
    pub core: Vec<String>,
    /// Paths the fragment names (raw, quoting removed), relative to `cwd`.
    pub paths: Vec<String>,
    /// Current directory when the fragment runs; `None` when unknown.
    pub cwd: Option<PathBuf>,
    /// The branch checked out when it runs (after earlier switches).
    pub branch: Branch,
    /// Where it writes (redirections and the targets of writing commands).
    pub writes: Vec<Target>,
    /// Links made by earlier commands (`ln`), as lexical paths; `None` when
    /// one was made where the gate cannot place it.
    pub links: Option<Vec<PathBuf>>,
    /// For `find` and the commands its `-exec` runs: the starting points
    /// (`None`: only known when it runs); `{}` stands for a path under them.
    pub find_roots: Option<Vec<Option<String>>>,
    /// The command's words (assignments and redirections apart), expanded.
    pub words: Vec<Word>,
    /// Index in `words` where each see-through level starts.
    pub levels: Vec<usize>,
    /// For each word of `core`: only known when the shell runs.
    pub core_dyn: Vec<bool>,
    /// For each word of `core`: some part of it is quoted.
    pub core_quoted: Vec<bool>,
    /// The program word is dynamic but made only of variables the command
    /// sets to known text: each value was judged as a fragment of its own.
    pub program_resolved: bool,
    /// The program word has static parts (`c$(x)rl`): rules that could
    /// match some value of it apply.
    pub program_partial: bool,
    /// The program word may expand to several words the command controls
    /// (a substitution, `"$@"`, an array, a variable it sets to unknown
    /// text): it may hold the arguments too.
    pub program_free: bool,
    /// Globs match names starting with a dot (`shopt -s dotglob`,
    /// `GLOBIGNORE`) when it runs.
    pub dotglob: bool,
    /// Globs follow rules the gate does not model (`extglob`,
    /// `nocaseglob`): a glob may name anything in its folder.
    pub loose_globs: bool,
    /// Run by `find -exec` or `xargs`: some of its words are filled in when
    /// it runs (`{}`, the `-I` string, appended arguments).
    pub filled: bool,
    /// A wrapper or shell run by xargs or find whose command (or script) is
    /// among the words filled in (`echo rm -rf /home | xargs env`).
    pub command_filled: bool,
}

impl Fragment {
    /// Globs over the words bash may run at each see-through level, joined
    /// by spaces (the program by its base name; every dynamic part `*`,
    /// absorbing the space before it, since it may expand to no word).
    pub(crate) fn argv_patterns(&self, tilde: bool) -> Vec<String> {
        let mut out = Vec::new();
        for &lvl in &self.levels {
            let Some(tail) = self.words.get(lvl..) else {
                continue;
            };
            if tail.is_empty() {
                continue;
            }
            let mut p = String::new();
            for (k, w) in tail.iter().enumerate() {
                let wp = if k == 0 {
                    let mut name = w.clone();
                    if !w.dynamic {
                        name.text = basename(&w.text).to_string();
                        name.segs = Vec::new();
                    }
                    name.pattern(tilde)
                } else {
                    w.pattern(tilde)
                };
                if k > 0 && !wp.starts_with('*') {
                    p.push(' ');
                }
                p.push_str(&wp);
            }
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// Where in `core` a later, unquoted, static word could start a command
    /// (for a program the gate does not know, which may run one).
    pub(crate) fn later_words(&self) -> Vec<usize> {
        (1..self.core.len())
            .filter(|&k| {
                let w = self.core[k].as_str();
                // A quoted word that is one plain name or path (`'rm'`,
                // `"/usr/bin/curl"`) is how bash would run it as a command;
                // quoted text with blanks or other characters is data.
                let quoted_name = w
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+'));
                !self.core_dyn.get(k).copied().unwrap_or(true)
                    && (!self.core_quoted.get(k).copied().unwrap_or(true) || quoted_name)
                    && !w.starts_with('-')
                    && !w.is_empty()
            })
            .collect()
    }

    /// Whether an argument of the fragment is only known when the shell runs
    /// (a dynamic command word makes the command opaque instead).
    pub(crate) fn has_dynamic(&self) -> bool {
        self.words.iter().any(|w| w.dynamic)
    }

    /// The command starting at word `k` of `core` (a later word of a program
    /// the gate does not know), as a light fragment for the caps.
    pub(crate) fn tail(&self, k: usize) -> Fragment {
        let mut core = self.core[k..].to_vec();
        // `foo run /bin/rm -rf /` runs `rm`.
        core[0] = basename(&core[0]).to_string();
        Fragment {
            text: core.join(" "),
            chain: vec![core[0].clone()],
            core_dyn: self
                .core_dyn
                .get(k..)
                .map(<[bool]>::to_vec)
                .unwrap_or_default(),
            core,
            cwd: self.cwd.clone(),
            ..Fragment::default()
        }
    }

    /// [`Fragment::argv_patterns`] of the levels whose program is known:
    /// what deny rules, ask rules and `caps.external` could match.
    pub(crate) fn dynamic_patterns(&self) -> Vec<String> {
        if self.program_partial && !self.program_resolved {
            // `c$(x)rl`: any program it can spell.
            return self.argv_patterns(false);
        }
        let mut static_levels = self.clone();
        static_levels
            .levels
            .retain(|&l| self.words.get(l).is_some_and(|w| !w.dynamic));
        static_levels.argv_patterns(false)
    }

    /// The program word is only known when it runs (and not resolved
    /// through the command's own variables).
    pub(crate) fn program_unknown(&self) -> bool {
        self.core_dyn.first() == Some(&true) && !self.program_resolved
    }
}

/// The parse of one bash command.
#[derive(Debug, Clone, Default)]
pub(crate) struct Parsed {
    pub fragments: Vec<Fragment>,
    /// Why no rule can allow it.
    pub opaque: Option<String>,
    /// The analysis is incomplete (nesting too deep): ask even in bypass.
    pub strict: bool,
}

/// Where a redirection points.
#[derive(Debug, Clone)]
pub(crate) struct Redir {
    pub text: String,
    pub path: Option<String>,
    /// The target holds a decoded control character.
    pub ctrl: bool,
    /// `text` with the target in canonical (re-quoted) form.
    pub canon: String,
    /// It writes its target (`>`, `>>`, `>|`, `&>`, `<>`).
    pub write: bool,
    /// The target is only known when the shell runs.
    pub dynamic: bool,
    /// What a here-string or here-document feeds to standard input: its
    /// text when static, `None` when it holds expansions.
    pub feed: Option<Option<String>>,
    /// Not a redirection: text the previous pipeline stage visibly writes
    /// to this command's standard input (`echo TEXT | sh`).
    pub piped: Option<String>,
}

/// One place a command writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The path as written (quoting removed).
    pub raw: String,
    /// Only known when the command runs.
    pub dynamic: bool,
    /// A file copied, moved or linked into `raw`: when `raw` is a folder the
    /// file lands at `raw/basename(from)`.
    pub from: Option<String>,
    /// `ln` creates a link here.
    pub link: bool,
    /// Files whose names the gate cannot know land inside `raw` (an
    /// archive extracted, a folder's contents copied: `cp -r x/. .`).
    pub contents: bool,
    /// Where an archive extracts (with `contents`): in the project that is
    /// the project's own business (the sandbox keeps its protected paths);
    /// elsewhere, the files may land on the home folder's.
    pub archive: bool,
}

impl Target {
    pub(crate) fn new(raw: &str, dynamic: bool) -> Target {
        Target {
            raw: raw.to_string(),
            dynamic,
            from: None,
            link: false,
            contents: false,
            archive: false,
        }
    }
}

/// A command that a fragment runs besides itself.
#[derive(Debug, Clone)]
pub(crate) enum Derived {
    /// Words run as a command (`xargs CMD`, `find -exec CMD ;`, `rg --pre CMD`).
    Words(Vec<Word>, Role),
    /// A string run by a shell (`bash -c`, `su -c`, `eval`, `env -S`).
    Source(String, Role),
    /// Words `find -exec` runs for each match under the starting points
    /// (`None`: a starting point only known when it runs).
    Find(Vec<Word>, Role, Vec<Option<String>>),
    /// Text typed into a shell but not entered (it runs only if a later
    /// key enters it): what it says meets deny rules, ask rules and caps;
    /// text bash cannot parse is not opaque.
    Typed(String),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Analysis {
    pub text: String,
    /// `text` with canonical (re-quoted) words.
    pub canon: String,
    pub role: Role,
    pub allow_forms: Vec<String>,
    pub check_forms: Vec<String>,
    pub chain: Vec<String>,
    pub core: Vec<String>,
    pub derived: Vec<Derived>,
    pub dynamic: Option<String>,
    /// More wrapper levels than [`MAX_SEE_THROUGH`]: the analysis is incomplete.
    pub deep: bool,
    /// A word decoded a control or invisible character (`$'\x01'`).
    pub ctrl: bool,
    /// Index in the words where each see-through level starts (the first is 0).
    pub levels: Vec<usize>,
    /// For each word of `core`: it is only known when the shell runs.
    pub core_dyn: Vec<bool>,
    /// For each word of `core`: some part of it is quoted or escaped.
    pub core_quoted: Vec<bool>,
    /// The folder the command runs in (`env -C DIR`, `git -C DIR`), when a
    /// wrapper moves it.
    pub chdir: Option<Workdir>,
    /// Files the wrappers themselves write (`strace -o FILE`, `time -o FILE`).
    pub own_writes: Vec<Target>,
    /// `find`'s starting points.
    pub find_roots: Option<Vec<Option<String>>>,
    /// Judging it would exceed a budget: opaque, and asks even in bypass.
    pub over_budget: Option<String>,
}

/// Where a wrapper makes the command it runs start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Workdir {
    /// This folder (relative to the one the wrapper itself runs in).
    At(String),
    /// A folder or root the gate cannot place (`chroot DIR`, `nsenter`, a
    /// directory option it does not know).
    Unknown,
}

impl Analysis {
    /// A wrapper moves the command into `dir` (one wrapper inside another:
    /// `sudo -D a env -C b` runs in `a/b`).
    pub(crate) fn move_to(&mut self, dir: Workdir) {
        self.chdir = match (self.chdir.take(), dir) {
            (Some(Workdir::Unknown), _) | (_, Workdir::Unknown) => Some(Workdir::Unknown),
            (Some(Workdir::At(base)), Workdir::At(d)) if !d.starts_with(['/', '~']) => {
                Some(Workdir::At(format!("{}/{d}", base.trim_end_matches('/'))))
            }
            (_, d) => Some(d),
        };
    }
}

/// The branch checked out when a fragment runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Branch {
    /// No earlier switch: the repository's HEAD.
    #[default]
    Head,
    /// One of these (`HEAD`: the repository's HEAD), after switches that may
    /// have failed.
    OneOf(Vec<String>),
    /// An earlier switch the gate cannot follow (dynamic, `-`, `@{-1}`, a subshell).
    Unknown,
}

impl Branch {
    /// After a switch to `to` (`None`: unknown). `certain`: the rest of the
    /// command runs only when the switch succeeded (`&&`).
    pub(crate) fn switched(&self, to: Option<&str>, certain: bool) -> Branch {
        let Some(to) = to else {
            return Branch::Unknown;
        };
        if certain {
            return Branch::OneOf(vec![to.to_string()]);
        }
        match self {
            Branch::Unknown => Branch::Unknown,
            Branch::Head => Branch::OneOf(vec!["HEAD".into(), to.to_string()]),
            Branch::OneOf(v) => {
                let mut v = v.clone();
                if !v.iter().any(|b| b == to) {
                    v.push(to.to_string());
                }
                Branch::OneOf(v)
            }
        }
    }
}
