//! Version control: `git` (its configuration keys and options that run
//! programs, its aliases, the folders `-C` and `--work-tree` name, what it
//! pushes) (docs/permissions.md, "Fail closed" and "The stages"); other
//! version control systems' commits that reach a server (`svn commit`,
//! `p4 submit`).

use super::node;
use super::schema::{
    Args, Argv, Ctx, Effect, Hooks, Moves, Node, Place, Program, Reads, Removes, Runs, Sub,
};
use super::support::{global_options, run_string, value_word};
use crate::options::{self, OptionSpec, Step};
use crate::shell::model::{Analysis, Derived, Role, Target, Workdir};
use crate::shell::words::Word;

/// git's global options (`git [OPTIONS] SUB`). One it does not know is read
/// both ways: a newer git may have an option this list lacks.
pub(crate) const GIT: OptionSpec<'static> = OptionSpec {
    short_value: "",
    glued: "",
    value: &[
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--super-prefix",
        "--config-env",
        "--attr-source",
    ],
    flags: &[
        "-p",
        "-P",
        "-v",
        "-h",
        "--paginate",
        "--no-pager",
        "--bare",
        "--exec-path",
        "--html-path",
        "--man-path",
        "--info-path",
        "--no-replace-objects",
        "--no-lazy-fetch",
        "--no-optional-locks",
        "--no-advice",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--version",
        "--help",
    ],
    complete: false,
};

/// A git sub-command whose options' values git runs as commands (in any
/// spelling: clusters, abbreviations, attached or not); `moved`: what they
/// run runs at the top of the work tree (or in a folder of its own), not here.
const fn runs_options(
    names: &'static [&'static str],
    short_value: &'static str,
    glued: &'static str,
    runs: &'static [Runs],
    moved: &'static [&'static str],
) -> Sub {
    Sub {
        names,
        node: Node {
            options: OptionSpec {
                short_value,
                glued,
                value: match runs {
                    [Runs::OptionCommand(opts)] => opts,
                    _ => &[],
                },
                flags: &[],
                complete: false,
            },
            runs,
            moves: Moves {
                to: &[],
                lost: moved,
                default: Place::Here,
            },
            ..Node::NONE
        },
        subs: &[],
    }
}

const FILTERS: &[&str] = &[
    "--setup",
    "--tree-filter",
    "--index-filter",
    "--msg-filter",
    "--env-filter",
    "--commit-filter",
    "--parent-filter",
    "--tag-name-filter",
];

/// git's sub-commands the gate reads: those that push, and those whose
/// options run commands.
const GIT_SUBS: &[Sub] = &[
    pushes(&["push"]),
    pushes(&["send-pack"]),
    Sub::external(&["http-push"], "http-push"),
    Sub::group(&["subtree"], &[Sub::external(&["push"], "push")]),
    Sub::group(&["lfs"], &[Sub::external(&["push"], "push")]),
    Sub::group(&["annex"], &[Sub::external(&["push"], "push")]),
    Sub::group(&["svn"], &[Sub::external(&["dcommit"], "dcommit")]),
    runs_options(
        &["rebase"],
        "xsXC",
        "",
        &[Runs::OptionCommand(&["-x", "--exec"])],
        &["-x", "--exec"],
    ),
    runs_options(
        &["fetch", "fetch-pack", "pull", "ls-remote", "archive"],
        "",
        "",
        &[Runs::OptionCommand(&["--upload-pack", "--exec"])],
        &[],
    ),
    runs_options(
        &["clone"],
        "uocb",
        "",
        &[Runs::OptionCommand(&["-u", "--upload-pack", "--exec"])],
        &[],
    ),
    runs_options(
        &["daemon"],
        "",
        "",
        &[Runs::OptionCommand(&["--access-hook"])],
        &[],
    ),
    runs_options(
        &["difftool", "mergetool"],
        "xt",
        "",
        &[Runs::OptionCommand(&["-x", "--extcmd"])],
        &["-x", "--extcmd"],
    ),
    // `-O[PAGER]`: the pager only attached.
    read_only(
        runs_options(
            &["grep"],
            "efABC",
            "O",
            &[Runs::OptionCommand(&["-O", "--open-files-in-pager"])],
            &[],
        ),
        Reads::here(&["-O", "--open-files-in-pager", "--textconv", "--ext-diff"]),
    ),
    reader(&["status", "rev-parse", "ls-files"], Reads::here(&[])),
    reader(&["diff", "log", "show", "blame"], Reads::here(SHOWS_RUN)),
    reader(
        &["branch"],
        Reads {
            only: Some(BRANCH_LISTS),
            here: true,
            ..Reads::ANY
        },
    ),
    runs_options(
        &["send-email"],
        "",
        "",
        &[Runs::OptionCommand(&[
            "--to-cmd",
            "--cc-cmd",
            "--header-cmd",
            "--sendmail-cmd",
            "--smtp-server",
        ])],
        &[],
    ),
    runs_options(
        &["filter-branch"],
        "d",
        "",
        &[Runs::OptionCommand(FILTERS)],
        FILTERS,
    ),
];

/// With these, `git diff|log|show|blame` write a file or run a program (an
/// external diff, a text conversion, gpg).
const SHOWS_RUN: &[&str] = &["--output", "--ext-diff", "--textconv", "--show-signature"];

/// The words with which `git branch` only lists branches.
const BRANCH_LISTS: &[&str] = &[
    "-a",
    "--all",
    "-r",
    "--remotes",
    "-v",
    "-vv",
    "--verbose",
    "--list",
    "-l",
    "--show-current",
    "--no-color",
    "--no-column",
];

/// The global options with which no git command is read-only: they load
/// configuration that runs programs (`-c`, `--config-env`), run programs
/// from elsewhere (`--exec-path`), page (`-p`), or point git at another
/// repository, whose configuration git obeys (`-C`, `--git-dir`, `--bare`:
/// the folder it runs in as the repository).
const GIT_NOT_READ_ONLY: &[&str] = &[
    "--bare",
    "-c",
    "--config-env",
    "--exec-path",
    "-p",
    "--paginate",
    "-C",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--attr-source",
];

/// A git sub-command that only reads, with the words `reads` allows.
const fn reader(names: &'static [&'static str], reads: Reads) -> Sub {
    Sub {
        names,
        node: Node {
            effect: Effect::ReadOnly,
            reads,
            ..Node::NONE
        },
        subs: &[],
    }
}

/// `sub`, read-only with the words `reads` allows.
const fn read_only(sub: Sub, reads: Reads) -> Sub {
    Sub {
        names: sub.names,
        node: Node {
            effect: Effect::ReadOnly,
            reads,
            ..sub.node
        },
        subs: sub.subs,
    }
}

/// `push` and `send-pack`: external, and `--receive-pack` and `--exec`
/// run commands.
const fn pushes(names: &'static [&'static str]) -> Sub {
    let runs = runs_options(
        names,
        "o",
        "",
        &[Runs::OptionCommand(&["--receive-pack", "--exec"])],
        &[],
    );
    Sub {
        names,
        node: Node {
            effect: Effect::External("push"),
            ..runs.node
        },
        subs: &[],
    }
}

pub(crate) const PROGRAMS: &[Program] = &[
    Program {
        names: &["git"],
        node: Node {
            options: GIT,
            hooks: Hooks {
                see: Some(git),
                writes: Some(git_writes),
                ..Hooks::NONE
            },
            removes: &[Removes::By(git_clean_tree)],
            reads: Reads::unless(GIT_NOT_READ_ONLY),
            ..Node::NONE
        },
        subs: GIT_SUBS,
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            (
                "git -c core.pager=cat -C app push origin",
                "runs 'cat'; cwd app; external git push",
            ),
            ("git -C push status", "cwd push"),
            (
                "git --work-tree=/srv clean -fdx",
                "writes /srv; removes /srv",
            ),
            ("git -C ~ clean -fdx", "cwd ~; removes ~"),
            ("git commit -m push", "plain"),
            ("git rebase -x 'make test' main", "runs 'make test'; cwd ?"),
            (
                "git --shallow-file x push",
                "runs `git push`; external git push",
            ),
            ("git lfs push origin", "external git lfs push"),
            ("git -c alias.p=push p", "opaque; runs 'git push'"),
            ("git log --oneline -5", "read-only"),
            ("git -c core.pager=cat log", "runs 'cat'"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["git-push", "git-send-pack", "git-http-push", "git-remote-*"],
        node: Node {
            effect: Effect::External("push"),
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[("git-push origin main", "external git-push")],
        ..Program::BASE
    },
    Program {
        names: &["svn"],
        node: Node {
            options: global_options(&[
                "--username",
                "--password",
                "--config-dir",
                "--config-option",
                "-m",
                "--message",
                "-F",
                "--file",
                "-r",
                "--revision",
            ]),
            hooks: Hooks {
                effect: Some(svn_on_server),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        subs: &[
            Sub::external(&["commit", "ci"], "commit"),
            Sub::external(&["import"], "import"),
        ],
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("svn ci -m x", "external svn ci"),
            ("svn --username u commit", "external svn commit"),
            (
                "svn rm -m x https://svn.example/r/trunk",
                "external svn rm (on the server)",
            ),
            ("svn rm old.c", "plain"),
            ("svn log -l 5", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["p4"],
        node: Node {
            options: global_options(&[
                "-c", "-p", "-u", "-P", "-d", "-C", "-H", "-x", "-z", "-r", "-L", "-l",
            ]),
            ..Node::NONE
        },
        subs: &[
            Sub::external(&["submit"], "submit"),
            Sub::external(&["shelve"], "shelve"),
            Sub::external(&["push"], "push"),
            Sub::external(&["populate"], "populate"),
            Sub::external(&["obliterate"], "obliterate"),
            Sub::external(&["unsubmit", "resubmit"], "unsubmit"),
        ],
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("p4 submit -d x", "external p4 submit"),
            ("p4 -c ws shelve -c 5", "external p4 shelve"),
            ("p4 opened", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["cvs"],
        node: Node {
            options: global_options(&["-d", "-e", "-s", "-T", "-z"]),
            ..Node::NONE
        },
        subs: &[
            Sub::external(&["commit", "ci", "com"], "commit"),
            Sub::external(&["import", "imp", "im"], "import"),
            Sub::external(&["tag", "ta", "freeze", "rtag", "rt", "rfreeze"], "tag"),
        ],
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("cvs -d :pserver:x ci -m y", "external cvs ci"),
            ("cvs update", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["fossil"],
        node: Node {
            options: global_options(&["-R", "--repository", "--chdir"]),
            ..Node::NONE
        },
        // `commit` syncs with the remote when autosync is on (the default).
        subs: &[
            Sub::external(&["commit", "ci"], "commit"),
            Sub::external(&["push", "sync"], "push"),
        ],
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("fossil ci -m x", "external fossil ci"),
            ("fossil status", "plain"),
        ],
        ..Program::BASE
    },
];

/// `git [global options] SUB REST…` → `(SUB, REST)` (an option the gate
/// does not know read as taking no value).
pub(crate) fn git_subcommand(core: &[String]) -> Option<(&str, &[String])> {
    if core.first().map(String::as_str) != Some("git") {
        return None;
    }
    let i = 1 + options::scan(&core[1..], 0, &GIT).start;
    let sub = core.get(i)?;
    Some((sub.as_str(), &core[i + 1..]))
}

/// `git [options] SUB …`: configuration given on the command line, the
/// options of sub-commands that run commands, `-C`, and aliases from the
/// person's git configuration.
fn git(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let sub = git_globals(c, a);
    for w in &c.words[c.at..] {
        if let Some(cmd) = ext_command(&w.text) {
            // An `ext::` remote is a command git runs (when `protocol.ext.allow` lets it).
            a.dynamic = Some("`git` with an `ext::` URL runs a command".into());
            a.derived.push(Derived::Source(cmd, Role::Checked));
        }
    }
    if let Some(s) = sub {
        git_sub(c, s, a);
    }
    let texts: Vec<&str> = c.words[c.at..].iter().map(|w| w.text.as_str()).collect();
    let globals = options::scan(&texts, 0, &GIT).start;
    for v in options::values(&texts[..globals], &GIT, &["-C"]) {
        a.move_to(Workdir::At(v.text));
    }
    if let Some(&k) = options::candidates(&texts, &GIT).first() {
        git_alias(c, c.at + k, a);
    }
    None
}

/// An alias from the person's git configuration at `words[at]`: run by a
/// shell (`!…`, the arguments appended), or as git's own words.
fn git_alias(c: &Ctx<'_>, at: usize, a: &mut Analysis) {
    let Some(exp) = c.config.git_alias(&c.words[at].text) else {
        return;
    };
    let rest: Vec<&str> = c.words[at + 1..].iter().map(|w| w.text.as_str()).collect();
    match exp.trim_start().strip_prefix('!') {
        Some(cmd) => a.derived.push(Derived::Source(
            format!("{cmd} {}", rest.join(" ")).trim_end().to_string(),
            c.role,
        )),
        None => {
            let mut ws = c.words[c.i..at].to_vec();
            ws.extend(exp.split_whitespace().map(Word::raw));
            ws.extend_from_slice(&c.words[at + 1..]);
            a.derived.push(Derived::Words(ws, c.role));
        }
    }
}

/// git's global options: `-c KEY=VALUE` and `--config-env` (a key whose
/// value git runs, or that defines an alias or loads files), `--exec-path`,
/// and options the gate does not know (read both ways). Returns where the
/// sub-command stands.
fn git_globals(c: &Ctx<'_>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    let mut j = c.at;
    while j < words.len() {
        let t = words[j].text.as_str();
        // `-cKEY=VALUE` glued is `-c KEY=VALUE` to the gate (some gits take it).
        let glued = t
            .strip_prefix("-c")
            .filter(|v| !v.is_empty() && !t.starts_with("--"));
        if t == "-c" || t == "--config-env" || t.starts_with("--config-env=") || glued.is_some() {
            let (kv, last) = match (t.strip_prefix("--config-env="), glued) {
                (Some(v), _) | (None, Some(v)) => (Some(v.to_string()), j),
                (None, None) => (words.get(j + 1).map(|w| w.text.clone()), j + 1),
            };
            if let Some(kv) = kv {
                let dynamic = if last == j {
                    words[j].dynamic
                } else {
                    words.get(j + 1).is_some_and(|w| w.dynamic)
                };
                git_config_option(t == "-c" || glued.is_some(), &kv, dynamic, c.role, a);
            }
            j = last + 1;
            continue;
        }
        if t.starts_with("--exec-path=") {
            a.dynamic = Some("`git --exec-path=…` runs git's programs from another folder".into());
        }
        let git_dir = match t.strip_prefix("--git-dir=") {
            Some(v) => Some(v.to_string()),
            None if t == "--git-dir" => Some(words.get(j + 1).map_or(String::new(), |w| {
                if w.dynamic {
                    String::new()
                } else {
                    w.text.clone()
                }
            })),
            None => None,
        };
        if git_dir.is_some_and(|d| d.trim_end_matches('/').rsplit('/').next() != Some(".git")) {
            // A repository elsewhere obeys its own configuration (hooks,
            // `core.fsmonitor`), which the gate cannot see; a `.git` folder
            // is one the gate protects from writes.
            a.dynamic = Some(
                "`git --git-dir` uses a repository whose configuration (programs it runs) the gate cannot see"
                    .into(),
            );
        }
        if matches!(
            t,
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" | "--attr-source"
        ) {
            j += 2;
            continue;
        }
        if !t.starts_with('-') {
            return Some(j);
        }
        if let Step::Option { unsure: true, .. } = GIT.step(t) {
            // A global option the gate does not know (`--shallow-file x`) may
            // take the next word: git is also judged as if it did.
            if j + 2 < words.len() && !a.deep {
                let mut ws = vec![words[c.i].clone()];
                ws.extend_from_slice(&words[j + 2..]);
                a.derived.push(Derived::Words(ws, Role::Checked));
            }
        }
        j += 1;
    }
    None
}

/// One `git -c KEY=VALUE` (`dash_c`) or `--config-env KEY=VAR`.
fn git_config_option(dash_c: bool, kv: &str, dynamic: bool, role: Role, a: &mut Analysis) {
    let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
    if key.eq_ignore_ascii_case("core.worktree") {
        a.dynamic = Some(format!(
            "`git -c {key}=…` moves the work tree git changes and empties"
        ));
        return;
    }
    match git_key_runs(key) {
        Some(false) => {
            a.dynamic = Some(format!(
                "`git -c {key}=…` defines an alias or loads configuration from a file"
            ));
            // Deny rules, ask rules and caps still see what the alias runs.
            if dash_c && !dynamic && key.to_ascii_lowercase().starts_with("alias.") {
                let v = value.trim_start();
                let line = match v.strip_prefix('!') {
                    Some(cmd) => cmd.to_string(),
                    None => format!("git {v}"),
                };
                a.derived.push(Derived::Source(line, Role::Checked));
            }
        }
        Some(true) if dash_c => {
            if dynamic {
                a.dynamic = Some(format!(
                    "`git -c {key}=…` runs a command only known when it runs"
                ));
            } else if !value.trim().is_empty() {
                let cmd = value.trim_start().trim_start_matches('!').to_string();
                a.derived.push(Derived::Source(cmd, role));
            }
        }
        Some(true) => {
            a.dynamic = Some(format!(
                "`git --config-env {key}=…` runs a command read from a variable"
            ));
        }
        None => {}
    }
}

/// What git's sub-command at `words[s]` runs: a transport helper, the values
/// of options that run commands, `clone -c`, `bisect run`, `submodule foreach`.
fn git_sub(c: &Ctx<'_>, s: usize, a: &mut Analysis) {
    let words = c.words;
    let subname = words[s].text.as_str();
    let rest = &words[s + 1..];
    if subname.starts_with("remote-") {
        // A remote helper called directly (`git remote-ext URL CMD`).
        a.dynamic = Some(format!("`git {subname}` runs a transport helper"));
        if subname == "remote-ext" {
            if let Some(cmd) = rest.get(1) {
                let line = ext_command(&format!("ext::{}", cmd.text)).unwrap_or_default();
                a.derived.push(Derived::Source(line, Role::Checked));
            }
        }
    }
    let sub_node = GIT_SUBS
        .iter()
        .find(|x| x.names.contains(&subname) && !x.node.runs.is_empty());
    if let Some(x) = sub_node {
        let ctx = Ctx { at: s + 1, ..*c };
        node::runs(&x.node, &ctx, a);
    }
    if subname == "clone" {
        git_clone_config(c, rest, a);
    }
    match subname {
        "bisect" if rest.first().is_some_and(|w| w.text == "run") && rest.len() > 1 => {
            // It runs at the top of the work tree, not here.
            a.move_to(Workdir::Unknown);
            a.derived.push(Derived::Words(rest[1..].to_vec(), c.role));
        }
        "submodule" => {
            if let Some(f) = rest.iter().position(|w| w.text == "foreach") {
                // It runs in each submodule's folder.
                a.move_to(Workdir::Unknown);
                let cmd: Vec<&Word> = rest[f + 1..]
                    .iter()
                    .skip_while(|w| w.text.starts_with('-'))
                    .collect();
                if cmd.iter().any(|w| w.dynamic) {
                    a.dynamic = Some(
                        "`git submodule foreach` runs a command only known when it runs".into(),
                    );
                } else if !cmd.is_empty() {
                    let s: Vec<&str> = cmd.iter().map(|w| w.text.as_str()).collect();
                    a.derived.push(Derived::Source(s.join(" "), c.role));
                }
            }
        }
        _ => {}
    }
}

/// `git clone -c KEY=VALUE`: configuration like `git -c`.
fn git_clone_config(c: &Ctx<'_>, rest: &[Word], a: &mut Analysis) {
    let spec = OptionSpec {
        short_value: "cuob",
        value: &["--config", "--upload-pack", "--origin", "--branch"],
        ..OptionSpec::NONE
    };
    for v in options::values(rest, &spec, &["-c", "--config"]) {
        let (key, value) = v.text.split_once('=').unwrap_or((v.text.as_str(), ""));
        match git_key_runs(key) {
            Some(false) => {
                a.dynamic = Some(format!("`git clone -c {key}=…` changes how git runs"));
            }
            Some(true) => {
                let mut w = value_word(rest, &v);
                w.text = value.to_string();
                run_string(&w, c.role, &format!("`git clone -c {key}`"), a);
            }
            None => {}
        }
    }
}

/// What an `ext::` remote runs, as a shell line: git splits `ext::CMD ARGS`
/// at spaces, with `% ` a space inside an argument and `%%` a percent sign.
pub(crate) fn ext_command(url: &str) -> Option<String> {
    let (_, cmd) = url.split_once("ext::")?;
    let mut args: Vec<String> = Vec::new();
    let mut arg = String::new();
    let mut chars = cmd.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('%', Some(&' ')) | ('%', Some(&'%')) => arg.push(chars.next().unwrap_or(c)),
            (' ', _) => args.push(std::mem::take(&mut arg)),
            _ => arg.push(c),
        }
    }
    args.push(arg);
    let quoted: Vec<String> = args
        .iter()
        .filter(|a| !a.is_empty())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    Some(quoted.join(" "))
}

/// Where git writes besides its repository: the work tree `--work-tree`
/// names (for the sub-commands that write one), `checkout-index --prefix`,
/// and `config --file FILE`.
fn git_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    let globals = options::scan(args, 0, &GIT).start;
    let work_trees = options::values(&args[..globals], &GIT, &["--work-tree"]);
    let sub = args.get(globals).map(String::as_str).unwrap_or("");
    let writes_tree = WORK_TREE_SUBS.contains(&sub);
    if writes_tree {
        for w in &work_trees {
            let mut t = Target::new(&w.text, v.dyn_arg(w.at));
            t.contents = true;
            out.push(t);
        }
    }
    if sub == "checkout-index" {
        // `--prefix=DIR/` puts the files under DIR.
        for (k, a) in args.iter().enumerate().skip(globals) {
            if let Some(p) = a.strip_prefix("--prefix=") {
                let mut t = Target::new(if p.is_empty() { "." } else { p }, v.dyn_arg(k));
                t.contents = true;
                out.push(t);
            }
        }
    }
    // `git config --file FILE …` writes FILE.
    if let Some(("config", rest)) = git_subcommand(v.words) {
        let spec = OptionSpec {
            short_value: "f",
            value: &["--file", "--blob", "--default", "--type", "--comment"],
            complete: true,
            ..OptionSpec::NONE
        };
        for o in options::values(rest, &spec, &["-f", "--file"]) {
            let at = v.words.len() - rest.len() + o.at;
            out.push(Target::new(
                &o.text,
                v.dynamic.get(at).copied().unwrap_or(false),
            ));
        }
    }
}

/// `git config` that sets or removes a value, and `git -c
/// core.hooksPath=…`: why it is never automatic, or `None`. The
/// repository's own configuration always counts (`.git/config` runs code);
/// the global and system ones (and `--file`) when the key is one whose value
/// git runs, defines an alias or loads other files, or is not known.
pub(crate) fn git_config_write(core: &[String]) -> Option<&'static str> {
    const REPO: &str = "changes the repository's git configuration (.git/config runs code)";
    match core.first().map(String::as_str) {
        Some("git") => {}
        Some("gh") => return gh_git_config_write(core),
        _ => return None,
    }
    let mut i = 1;
    while i < core.len() {
        let a = core[i].as_str();
        let kv = if a == "-c" || a == "--config-env" {
            core.get(i + 1).map(|s| s.to_ascii_lowercase())
        } else {
            a.strip_prefix("--config-env=")
                .or_else(|| a.strip_prefix("-c"))
                .map(str::to_ascii_lowercase)
        };
        if kv.is_some_and(|kv| kv.starts_with("core.hookspath")) {
            return Some(REPO);
        }
        match GIT.step(a) {
            Step::Option { width, .. } => i += width,
            Step::Operand | Step::EndOfOptions => break,
        }
    }
    let (sub, rest) = git_subcommand(core)?;
    let first = || {
        rest.iter()
            .find(|a| !a.starts_with('-'))
            .map(String::as_str)
    };
    let writes = match sub {
        "config" => return config_sub_write(rest),
        // `register`/`start` add the repository to `maintenance.repo` in
        // ~/.gitconfig (`start` also installs timers), `unregister`/`stop`
        // take it out again.
        "maintenance" => {
            return matches!(first(), Some("register" | "unregister" | "start" | "stop"))
                .then_some(GLOBAL_CONFIG)
        }
        // Other subcommands that write `.git/config`.
        "remote" => matches!(
            first(),
            Some("add" | "rename" | "remove" | "rm" | "set-head" | "set-branches" | "set-url")
        ),
        "branch" => rest.iter().any(|a| {
            a == "-u"
                || a.starts_with("--set-upstream-to")
                || a == "--unset-upstream"
                || a == "--edit-description"
        }),
        "lfs" => matches!(first(), Some("install" | "uninstall" | "update")),
        "submodule" => matches!(
            first(),
            Some("init" | "add" | "set-url" | "set-branch" | "sync")
        ),
        "init" | "clone" => rest
            .iter()
            .any(|a| a.starts_with("--template") || a.starts_with("--separate-git-dir")),
        _ => false,
    };
    writes.then_some(REPO)
}

/// Why a write of the user's git configuration is never automatic.
const GLOBAL_CONFIG: &str =
    "changes the user's git configuration (~/.gitconfig: every repository obeys it)";

/// `gh auth setup-git` writes a credential helper into ~/.gitconfig.
fn gh_git_config_write(core: &[String]) -> Option<&'static str> {
    let mut words = core[1..].iter().filter(|a| !a.starts_with('-'));
    (words.next().map(String::as_str) == Some("auth")
        && words.next().map(String::as_str) == Some("setup-git"))
    .then_some(GLOBAL_CONFIG)
}

/// `git config …` (the words after `config`): whether it writes, and where.
/// The user's and the system's files (`--global`, `--system`) are never
/// automatic whatever the key; another `--file` only for keys that run
/// something.
fn config_sub_write(rest: &[String]) -> Option<&'static str> {
    const REPO: &str = "changes the repository's git configuration (.git/config runs code)";
    const OTHER: &str =
        "changes a git configuration file with a key whose value git runs (aliases, programs, includes)";
    let mut positional = Vec::new();
    let mut write_opt = false;
    let mut elsewhere = false;
    let mut user = false;
    let mut j = 0;
    while j < rest.len() {
        let a = rest[j].as_str();
        if a.starts_with("--get")
            || matches!(a, "-l" | "--list" | "--blob")
            || a.starts_with("--blob=")
        {
            return None;
        }
        if matches!(a, "--global" | "--system") {
            elsewhere = true;
            user = true;
        } else if a.starts_with("--file=") {
            elsewhere = true;
        } else if matches!(a, "-f" | "--file") {
            elsewhere = true;
            j += 1;
        } else if matches!(
            a,
            "--unset"
                | "--unset-all"
                | "--add"
                | "--replace-all"
                | "--rename-section"
                | "--remove-section"
                | "-e"
                | "--edit"
        ) {
            write_opt = true;
        } else if matches!(a, "--type" | "--default" | "--comment") {
            j += 1;
        } else if !a.starts_with('-') {
            positional.push(a);
        }
        j += 1;
    }
    let (writes, key) = match positional.first().copied() {
        Some("get" | "list" | "get-color" | "get-colorbool") => return None,
        Some("set" | "unset") => (true, positional.get(1).copied()),
        Some("rename-section" | "remove-section" | "edit") => (true, None),
        _ => (
            write_opt || positional.len() >= 2,
            positional.first().copied(),
        ),
    };
    if !writes {
        return None;
    }
    if !elsewhere {
        return Some(REPO);
    }
    if user {
        return Some(GLOBAL_CONFIG);
    }
    match key {
        Some(k)
            if !k.contains(['$', '`'])
                && git_key_runs(k).is_none()
                && !k.eq_ignore_ascii_case("core.hookspath") =>
        {
            None
        }
        _ => Some(OTHER),
    }
}

/// Git configuration keys whose value git runs (or that define aliases or
/// load other files): `Some(true)` when the value is a command, `Some(false)`
/// when the key makes the command opaque.
pub(crate) fn git_key_runs(key: &str) -> Option<bool> {
    let k = key.to_ascii_lowercase();
    if k.starts_with("alias.")
        || k.starts_with("include.")
        || k.starts_with("includeif.")
        // Which command runs, or which remotes may run one, is decided later.
        || k.starts_with("protocol.")
        || k == "help.autocorrect"
        || k == "init.templatedir"
        || (k.starts_with("url.") && k.contains("ext::"))
    {
        return Some(false);
    }
    if k == "core.hookspath" {
        // Judged as a write of the repository's hooks (never automatic).
        return None;
    }
    let runs = matches!(
        k.as_str(),
        "core.pager"
            | "core.sshcommand"
            | "core.editor"
            | "core.fsmonitor"
            | "core.askpass"
            | "core.gitproxy"
            | "sequence.editor"
            | "diff.external"
            | "gpg.program"
            | "credential.helper"
            | "uploadpack.packobjectshook"
            | "web.browser"
            | "sendemail.sendmailcmd"
            | "sendemail.smtpserver"
            | "gpg.ssh.defaultkeycommand"
            | "instaweb.httpd"
            | "core.alternaterefscommand"
            | "imap.tunnel"
            | "interactive.difffilter"
    ) || k.starts_with("pager.")
        || k.starts_with("filter.")
        // `remote.NAME.uploadpack`/`receivepack`, `merge.NAME.driver`,
        // `sendemail.toCmd`, `submodule.NAME.update = !CMD`, …
        || [
            ".uploadpack",
            ".receivepack",
            ".driver",
            ".helper",
            ".proxy",
            "cmd",
            ".textconv",
            ".command",
            ".clean",
            ".smudge",
            ".process",
            ".program",
            // By shape: the programs of difftool/mergetool/browser/man
            // viewers (`difftool.X.path`, `browser.X.path`, `man.X.cmd`),
            // the tool a key names, editors, pagers, hooks.
            ".path",
            ".tool",
            ".guitool",
            ".browser",
            ".viewer",
            ".editor",
            ".pager",
            ".exec",
            "hook",
            "askpass",
            "sshcommand",
        ]
        .iter()
        .any(|s| k.ends_with(s))
        || (k.starts_with("submodule.") && k.ends_with(".update"));
    runs.then_some(true)
}

/// `svn` commands that act on the repository at once when an operand is a
/// URL (`svn rm URL`, `svn mkdir URL`, `svn copy URL URL`, `svn propset
/// --revprop`, `svn lock URL`).
fn svn_on_server(v: &Argv<'_>) -> Option<String> {
    const URL_ACTS: &[&str] = &[
        "delete", "del", "remove", "rm", "mkdir", "copy", "cp", "move", "mv", "rename", "ren",
        "propset", "pset", "ps", "propdel", "pdel", "pd", "propedit", "pedit", "pe", "lock",
        "unlock",
    ];
    let args = v.args();
    let spec = global_options(&["-m", "--message", "-F", "--file", "-r", "--revision"]);
    let first = *options::candidates(args, &spec).first()?;
    let sub = args[first].as_str();
    if !URL_ACTS.contains(&sub) {
        return None;
    }
    let on_server = args[first + 1..].iter().enumerate().any(|(j, a)| {
        a.contains("://") || a.starts_with('^') || a == "--revprop" || v.dyn_arg(first + 1 + j)
    });
    on_server.then(|| format!("svn {sub} (on the server)"))
}

/// `git clean` empties the work tree of what git does not track: the folder
/// `--work-tree` or `-C` names counts as what it empties (the
/// critical-removal cap; a work tree named by `GIT_WORK_TREE` is the
/// walker's, docs/permissions.md "Fail closed").
fn git_clean_tree(core: &[String]) -> Vec<&str> {
    let args = core.get(1..).unwrap_or_default();
    let globals = options::scan(args, 0, &GIT).start;
    let rest = args.get(globals + 1..).unwrap_or_default();
    // `git stash -u|-a` moves the untracked (and ignored) files away: the
    // work tree is emptied like `git clean` does.
    let empties = match args.get(globals).map(String::as_str) {
        Some("clean") => true,
        Some("stash") => {
            matches!(
                rest.first().map(String::as_str),
                None | Some("push" | "save") | Some("-u" | "-a" | "--include-untracked" | "--all")
            ) && options::flagged(
                rest,
                &OptionSpec::default(),
                &["-u", "-a", "--include-untracked", "--all"],
            )
        }
        _ => false,
    };
    if !empties {
        return Vec::new();
    }
    let mut out = Vec::new();
    // `--git-dir` with no work tree: the work tree is the current folder.
    let git_dir = args[..globals]
        .iter()
        .any(|a| a == "--git-dir" || a.starts_with("--git-dir="));
    let work_tree = args[..globals]
        .iter()
        .any(|a| a == "--work-tree" || a.starts_with("--work-tree="));
    if git_dir && !work_tree {
        out.push(".");
    }
    for k in 0..globals {
        let a = args[k].as_str();
        if let Some(v) = a.strip_prefix("--work-tree=") {
            out.push(v);
        } else if matches!(a, "--work-tree" | "-C") {
            if let Some(v) = args.get(k + 1) {
                out.push(v.as_str());
            }
        } else if let Some(v) = a.strip_prefix("-C").filter(|v| !v.is_empty()) {
            out.push(v);
        }
    }
    out
}

/// git's sub-commands that write the work tree.
const WORK_TREE_SUBS: &[&str] = &[
    "checkout",
    "checkout-index",
    "restore",
    "reset",
    "stash",
    "read-tree",
    "switch",
    "merge",
    "pull",
    "rebase",
    "cherry-pick",
    "revert",
    "apply",
    "am",
    "clean",
    "rm",
    "mv",
    "worktree",
];

/// The sub-command of a git command when it writes the work tree
/// (`checkout`, `clean`, `reset`…).
pub(crate) fn git_tree_sub(core: &[String]) -> Option<&str> {
    if core.first().map(String::as_str) != Some("git") {
        return None;
    }
    let args = &core[1..];
    let globals = options::scan(args, 0, &GIT).start;
    let sub = args.get(globals)?.as_str();
    WORK_TREE_SUBS.contains(&sub).then_some(sub)
}
