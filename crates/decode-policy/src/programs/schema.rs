//! The shape of what the gate knows about a program (docs/architecture.md,
//! "Where to add a program"): one [`Program`] entry per program (or per
//! group of programs read alike), with its options, its sub-command tree,
//! what it runs, where it writes, what it removes, which options move it to
//! another folder, its effect (read-only, local, external, privilege), and
//! examples that a test reads back.
//!
//! An entry is data; the interpreter (`see`, `writes`, `effects`) reads it.
//! What no field can say (sed and awk scripts, `find -exec`, git's
//! configuration keys) is a hook: a function named in the entry, kept in the
//! same family file, with examples like any other entry.

use crate::options::OptionSpec;
use crate::shell::config::ShellConfig;
use crate::shell::model::{Analysis, Redir, Role, Target};
use crate::shell::words::Word;

/// One program, or several spelled differently but read alike (`sudo`,
/// `doas`).
#[derive(Debug)]
pub(crate) struct Program {
    /// The names it is run by (a command word's base name). A name ending in
    /// `*` stands for every name with that prefix (`git-remote-*`).
    pub names: &'static [&'static str],
    /// The bare program: its options (those before any sub-command) and
    /// what it does without a sub-command.
    pub node: Node,
    /// Its sub-commands.
    pub subs: &'static [Sub],
    /// Whether the gate reads every word it takes ([`Args::Read`]): for any
    /// other program a later word that a deny rule or a cap names asks
    /// (`foo run curl x`).
    pub args: Args,
    /// Whether the general rule for programs the caps do not name applies:
    /// `push`, `publish`, `deploy` or `upload` as its first sub-command word
    /// is an external effect (`hg push`). Off for the programs whose
    /// effects are listed, for task runners (`make deploy` runs the
    /// project's own script) and for programs whose operands are data.
    pub generic_verbs: bool,
    /// Its operands are a command it runs, so a command xargs or find gives
    /// it is only known when it runs (`echo rm -rf /home | xargs env`).
    pub takes_command: bool,
    /// How a sub-command word is spelled in full (npm's `publ`, `i`).
    pub canonical: Option<fn(&str) -> Option<&'static str>>,
    /// A first word starting with this character selects a toolchain and is
    /// no sub-command (`cargo +nightly publish`).
    pub toolchain: Option<char>,
    /// Command lines and their one-line reading (see `programs::reading`),
    /// checked by a test; include lines that must *not* read as something.
    #[cfg_attr(not(test), allow(dead_code))]
    pub examples: &'static [(&'static str, &'static str)],
}

impl Program {
    /// An entry with no names, no sub-commands and nothing known: each entry
    /// starts from it (`Program { names, node, ..Program::BASE }`).
    pub(crate) const BASE: Program = Program {
        names: &[],
        node: Node::NONE,
        subs: &[],
        args: Args::Unread,
        generic_verbs: true,
        takes_command: false,
        canonical: None,
        toolchain: None,
        examples: &[],
    };
}

/// A sub-command (`git push`, `gh pr create`, `uv tool run`).
#[derive(Debug)]
pub(crate) struct Sub {
    /// Its name first, then its aliases (`["create", "new"]`).
    pub names: &'static [&'static str],
    pub node: Node,
    pub subs: &'static [Sub],
}

impl Sub {
    /// A sub-command with an external effect and nothing else known.
    pub(crate) const fn external(names: &'static [&'static str], what: &'static str) -> Sub {
        Sub {
            names,
            node: Node {
                effect: Effect::External(what),
                ..Node::NONE
            },
            subs: &[],
        }
    }

    /// A group of sub-commands (`gh pr …`) whose own options the gate does
    /// not know.
    pub(crate) const fn group(names: &'static [&'static str], subs: &'static [Sub]) -> Sub {
        Sub {
            names,
            node: Node::NONE,
            subs,
        }
    }
}

/// What a program or sub-command does. Fields left out take the values of
/// [`Node::NONE`]; a sub-command does not inherit its parent's fields.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    /// Its options: which take a value, which take none, whether the list
    /// is complete (an option the gate does not know is read both ways).
    pub options: OptionSpec<'static>,
    pub effect: Effect,
    /// What it runs besides itself.
    pub runs: &'static [Runs],
    /// Files it writes.
    pub writes: &'static [Writes],
    /// What it removes or moves away (the critical-removal cap).
    pub removes: &'static [Removes],
    /// Where what it runs runs.
    pub moves: Moves,
    /// Words that are search patterns, not paths.
    pub patterns: Patterns,
    /// What the data cannot say.
    pub hooks: Hooks,
    /// With [`Effect::ReadOnly`]: the words with which it still only reads.
    pub reads: Reads,
}

impl Node {
    /// A node that runs, writes, removes and moves nothing, with options the
    /// gate does not know (each read both ways).
    pub(crate) const NONE: Node = Node {
        options: OptionSpec::NONE,
        effect: Effect::Local,
        runs: &[],
        writes: &[],
        removes: &[],
        moves: Moves::HERE,
        patterns: Patterns::NONE,
        hooks: Hooks::NONE,
        reads: Reads::ANY,
    };
}

impl Node {
    /// A node that runs the command its operands make, after its options
    /// and `skip` words more (`timeout 30 CMD`).
    pub(crate) const fn runs_command(options: OptionSpec<'static>, skip: usize) -> Node {
        Node {
            options,
            runs: match skip {
                0 => &[Runs::Command {
                    skip: 0,
                    assignments: false,
                }],
                1 => &[Runs::Command {
                    skip: 1,
                    assignments: false,
                }],
                _ => panic!("a wrapper skips at most one word"),
            },
            ..Node::NONE
        }
    }
}

/// What running it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// It only reads (with options that neither write nor run anything):
    /// `ls`, `cat`, `git status`.
    ReadOnly,
    /// It may change local files, nothing beyond.
    Local,
    /// It reaches shared infrastructure (push, publish, deploy, merge,
    /// delete a remote resource): asks every time. The text names it.
    External(&'static str),
    /// It runs with another user's rights: asks every time.
    Privilege,
}

/// When a program or sub-command whose effect is [`Effect::ReadOnly`] still
/// only reads (docs/permissions.md, "Read-only commands"): some options make
/// it write or run something (`sort -o`, `rg --pre`, `find -exec`), some
/// operands are outputs (`uniq IN OUT`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reads {
    /// Options with which it writes, runs or loads something. A long option
    /// also counts abbreviated or with `=VALUE`; a short letter (`-o`) counts
    /// anywhere in a cluster; a single-dash word (`-exec`, `-fprint`) counts
    /// as a prefix.
    pub unless: &'static [&'static str],
    /// When set, the only words it may take (options and operands alike):
    /// `git branch` only lists with these.
    pub only: Option<&'static [&'static str]>,
    /// The most operands it may take (read with the node's options):
    /// `uniq IN OUT` writes OUT.
    pub max_operands: Option<usize>,
    /// With no operand that names a path, it reads the folder it runs in
    /// (`rg x`, `find`, `ls`), whose files the read rules judge.
    pub here: bool,
    /// What the fields cannot say (sed's script), given the words after the
    /// program or sub-command: whether it only reads.
    pub by: Option<fn(&[String]) -> bool>,
}

impl Reads {
    /// Any words: it only reads.
    pub(crate) const ANY: Reads = Reads {
        unless: &[],
        only: None,
        max_operands: None,
        here: false,
        by: None,
    };

    /// Read-only unless one of these options is given.
    pub(crate) const fn unless(unless: &'static [&'static str]) -> Reads {
        Reads {
            unless,
            ..Reads::ANY
        }
    }

    /// The same, for a program that reads the folder it runs in when no
    /// operand names one (`rg`, `find`).
    pub(crate) const fn here(unless: &'static [&'static str]) -> Reads {
        Reads {
            unless,
            here: true,
            ..Reads::ANY
        }
    }
}

/// Something a program runs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Runs {
    /// The command starting at its first operand, after its options and
    /// `skip` words more (`timeout 30 CMD`); `assignments`: `NAME=VALUE`
    /// words before the command are its environment (`sudo X=1 CMD`).
    Command { skip: usize, assignments: bool },
    /// The very next word starts the command, whatever it is (`coproc`).
    Next,
    /// The operands after its options, past `skip` words, joined into a
    /// line a shell runs (`watch 'make test'`).
    Line { skip: usize },
    /// The value of one of these options is a line a shell runs (`man -P`,
    /// `split --filter`); judged by deny rules, ask rules and caps.
    OptionLine(&'static [&'static str]),
    /// Each operand after its options is a line a shell runs, needing allow
    /// rules of its own (`hyperfine 'make a' 'make b'`, `concurrently`).
    Lines,
    /// The same, and the line needs allow rules of its own; a value only
    /// known when it runs makes the command opaque (`rsync -e`).
    OptionCommand(&'static [&'static str]),
    /// Each of these options starts a command that runs up to one of the
    /// `until` words (`fd -x CMD ;`).
    OptionWords {
        opts: &'static [&'static str],
        until: &'static [&'static str],
    },
    /// With no command it starts a shell that reads its script from
    /// standard input (`chroot DIR`, `unshare`).
    ShellWithout,
    /// A script in the program's own language, which can run shell commands
    /// and write files (vim's Ex commands, gdb's and lldb's commands, less's
    /// start-up commands): the value of one of `opts`, a file one of `files`
    /// names (other than `NONE`, `NORC`, `DEFAULTS`), and with `plus` a
    /// `+CMD` word other than a line number, a search or `G`/`g`/`F`
    /// (`vim +CMD`, `less +CMD`). Any of them makes the command opaque; the
    /// text after a `!` or a `shell` word meets deny rules and caps. A
    /// value whose first word is one of `plain` (commands that only run or
    /// inspect the program debugged: `run`, `bt`, `info`) and that holds no
    /// `(`, `$`, `!`, `|`, `;`, `&`, `<`, `>`, backquote or newline is not
    /// a script that runs anything.
    Script {
        opts: &'static [&'static str],
        files: &'static [&'static str],
        plus: bool,
        plain: &'static [&'static str],
    },
    /// One of these options (`--opt`, `--opt=V`, `-oV`), or one of these
    /// configuration keys as a word after `set` (`npm config set
    /// script-shell X`, `npm set script-shell=X`), names
    /// a program, a hook or a configuration the program obeys that the gate
    /// cannot read (npm's `--script-shell`, apt's `-o`): the command is
    /// opaque, `why` says so.
    Opaque {
        options: &'static [&'static str],
        keys: &'static [&'static str],
        why: &'static str,
    },
    /// This sub-command runs a command, and may stand after options the gate
    /// does not read (`uv -q run CMD`, `poetry -C dir run CMD`): then the
    /// command is opaque, and what `PROGRAM run …` would run is judged too
    /// (in the folder a `--directory`, `-C` or `--cwd` option names).
    SubAfterOptions(&'static str),
}

/// A file a program writes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Writes {
    /// Every operand (`touch`, `mkdir`, `tee`).
    Operands,
    /// The value of one of these options (`sort -o`, `curl -D`).
    OptionValue(&'static [&'static str]),
    /// A word starting with one of these (`dd of=FILE`).
    Prefixed(&'static [&'static str]),
    /// Files whose names the gate cannot know (a download's, a package's)
    /// land in the folder one of `options` names (`aria2c -d DIR`, `pip
    /// install --target DIR`), or, with one of the `flags`, in its folder
    /// (`pip install --user`: `~/.local`).
    Into {
        options: &'static [&'static str],
        flags: &'static [(&'static str, &'static str)],
    },
    /// Copies, moves or links its sources into the last operand or the
    /// value of `target_dir`; `no_target_dir` makes the last operand the
    /// copy itself (its contents land there).
    Copy {
        kind: Copy,
        target_dir: &'static [&'static str],
        no_target_dir: &'static [&'static str],
    },
}

/// How a program that copies reads its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Copy {
    /// `cp`, `mv`: sources, then the destination.
    Files,
    /// `install`: as `cp`, and `-d` makes every operand a folder.
    Install,
    /// `ln`: links (whose targets count as written too); `ln -s TARGET`
    /// links into the current folder.
    Link,
    /// `rsync`: a source ending in `/` copies its contents; a destination
    /// with `HOST:` is remote; its logs, batches and backup folders.
    Sync,
}

/// What a program removes, empties or moves away (the critical-removal
/// cap: removing, emptying and moving away count alike).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Removes {
    /// Every operand (`rm`, `rmdir`, `shred`, `wipe`).
    Operands,
    /// With one of these options, each operand's parents too (`rmdir -p`).
    Parents(&'static [&'static str]),
    /// With one of these options (or always, when empty), the operands it
    /// moves away: every operand but the last, or every one when a
    /// target-folder option (the second list) names where they go (`mv`,
    /// `rsync --remove-source-files`).
    Sources(&'static [&'static str], &'static [&'static str]),
    /// With one of these options, the last operand: what it empties
    /// (`rsync --delete DEST`).
    Last(&'static [&'static str]),
    /// With one of these options, every operand (an archiver's
    /// remove-after option: `tar --remove-files`, `zip -m`, `7z -sdel`).
    OperandsWith(&'static [&'static str]),
    /// What the program's own reading names (`git clean` over the work tree
    /// `--work-tree` or `-C` names).
    By(fn(&[String]) -> Vec<&str>),
}

/// Where a program runs the command it runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Moves {
    /// Options whose value is the folder it runs in (`env -C DIR`).
    pub to: &'static [&'static str],
    /// Options after which the folder is one the gate cannot place (a new
    /// root, a login shell: `sudo -i`, `unshare -R DIR`).
    pub lost: &'static [&'static str],
    /// Where it runs when none of those is given.
    pub default: Place,
}

impl Moves {
    /// It runs its command where it runs itself.
    pub(crate) const HERE: Moves = Moves {
        to: &[],
        lost: &[],
        default: Place::Here,
    };
    /// The value of one of these options is the folder.
    pub(crate) const fn to(to: &'static [&'static str]) -> Moves {
        Moves {
            to,
            lost: &[],
            default: Place::Here,
        }
    }
}

/// Where a command runs by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Here.
    Here,
    /// Somewhere the gate cannot place (a new root, namespaces: `chroot`).
    Lost,
    /// Somewhere the gate cannot place unless one of these options keeps
    /// the folder or names one (`pkexec --keep-cwd`, `systemd-run
    /// --same-dir`).
    LostUnless(&'static [&'static str]),
}

/// Words that name search patterns, not paths.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Patterns {
    /// Options whose value is a pattern (`find -name`).
    pub options: &'static [&'static str],
    /// Found by a function (grep's pattern operand depends on `-e`):
    /// indexes into the program's words (the program first).
    pub by: Option<PatternFn>,
}

impl Patterns {
    pub(crate) const NONE: Patterns = Patterns {
        options: &[],
        by: None,
    };
}

/// Functions for what the fields cannot say.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hooks {
    /// Seeing through it: called after the data are applied, with where the
    /// command it runs starts (if the data found one); returns where it
    /// starts.
    pub see: Option<SeeHook>,
    /// Where it writes, besides the data's targets.
    pub writes: Option<WritesHook>,
    /// Its external effect when its sub-commands have none: what it does
    /// (`mvn deploy`), asked about every time.
    pub effect: Option<EffectHook>,
    /// Other spellings of the command that deny and ask rules also see
    /// (`rm -fr x` as `rm -rf x`).
    pub forms: Option<FormsFn>,
}

impl Hooks {
    pub(crate) const NONE: Hooks = Hooks {
        see: None,
        writes: None,
        effect: None,
        forms: None,
    };
}

/// Indexes of the words (the program first) that are patterns.
pub(crate) type PatternFn = fn(&[String]) -> Vec<usize>;
/// Other spellings of a command (the program first).
pub(crate) type FormsFn = fn(&[String]) -> Vec<String>;
pub(crate) type SeeHook = fn(&Ctx<'_>, Option<usize>, &mut Analysis) -> Option<usize>;
pub(crate) type WritesHook = fn(&Argv<'_>, &mut Vec<Target>);
pub(crate) type EffectHook = fn(&Argv<'_>) -> Option<String>;

/// One simple command, seen at the program a node belongs to.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    /// The program's name (base name of `words[i]`).
    pub name: &'a str,
    pub words: &'a [Word],
    /// Where the program's name stands.
    pub i: usize,
    /// Where this node's own words start (after the name and the
    /// sub-command words that led to it).
    pub at: usize,
    pub role: Role,
    /// Allow rules may still see the command this one runs (only harmless
    /// wrappers so far).
    pub allow_ok: bool,
    pub redirs: &'a [Redir],
    pub config: &'a ShellConfig,
}

/// A seen-through command's words (the program by its base name first) and,
/// for each, whether it is only known when it runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Argv<'a> {
    pub words: &'a [String],
    pub dynamic: &'a [bool],
}

impl<'a> Argv<'a> {
    /// The program's name.
    pub(crate) fn name(&self) -> &'a str {
        self.words.first().map_or("", String::as_str)
    }

    /// The words after the program's name.
    pub(crate) fn args(&self) -> &'a [String] {
        self.words.get(1..).unwrap_or(&[])
    }

    /// Whether argument `k` (0: the first after the name) is only known
    /// when it runs.
    pub(crate) fn dyn_arg(&self, k: usize) -> bool {
        self.dynamic.get(k + 1).copied().unwrap_or(false)
    }
}

/// The words that make a sub-command an external effect for any program
/// the caps do not name (`hg push`, `poetry publish`).
pub(crate) const PUBLISH_WORDS: &[&str] = &["push", "publish", "deploy", "upload"];

/// Whether a sub-command word is one of `verbs` in any of the spellings
/// command-line programs use for their command trees: the word itself, a
/// part of a `:`-separated name (`hosting:channel:deploy`, `container:push`,
/// `deploy:prod`), the last part of a `.`-separated one (`hex.publish`), the
/// first or last part of a `-` or `_`-joined one without a dot (`gh-deploy`,
/// `push-image`). A path or an option is none of these.
pub(crate) fn spelled_as(word: &str, verbs: &[&str]) -> bool {
    if verbs.contains(&word) {
        return true;
    }
    if word.is_empty() || word.starts_with('-') || word.contains(['/', ' ', '=']) {
        return false;
    }
    if word.contains(':') {
        return word.split(':').any(|p| spelled_as(p, verbs));
    }
    if let Some((head, last)) = word.rsplit_once('.') {
        return !head.is_empty() && verbs.contains(&last);
    }
    let first = word.split(['-', '_']).find(|p| !p.is_empty());
    let last = word.rsplit(['-', '_']).find(|p| !p.is_empty());
    first.is_some_and(|p| verbs.contains(&p)) || last.is_some_and(|p| verbs.contains(&p))
}

/// Whether the gate reads every word a program takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Args {
    /// Every word is read: options, operands, the command it runs; or its
    /// arguments are data (`echo`, `grep`).
    Read,
    /// Some words are not read: one of them may start a command.
    Unread,
}
