//! Shells and the builtins that run code or change the shell: `bash -c`,
//! `sh script`, a shell reading its script from standard input, `source`,
//! `alias`, `export NAME=VALUE`, `mapfile -C` (docs/permissions.md, "Fail
//! closed").

use super::schema::{Args, Ctx, Effect, Hooks, Node, Program, Reads};
use super::support::{
    fed_scripts, option_value, piped_script, piped_script_text, run_string, shell_script,
    shell_stdin, skip_opts, stdin_script, Script,
};
use crate::shell::model::{Analysis, Derived, Role};
use crate::shell::words::Word;

/// The shells the gate reads (`-c STRING`, a script file, standard input).
pub(crate) const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh",
];

/// Shells whose language is not bash's (or not only): what they run from a
/// string or their standard input the gate cannot read.
const FOREIGN_SHELLS: &[&str] = &[
    "nu",
    "nushell",
    "elvish",
    "xonsh",
    "pwsh",
    "powershell",
    "rc",
    "es",
    "ion",
    "murex",
    "osh",
    "ysh",
    "oil",
    "oksh",
    "loksh",
    "pdksh",
    "ksh93",
    "posh",
    "rbash",
    "hush",
    "scsh",
    "closh",
    "ngs",
    "oh",
    "rush",
    "tclsh",
    "wish",
];

/// Names that end like a shell's but are not one.
const NOT_SHELLS: &[&str] = &[
    "ssh", "hash", "flash", "flush", "push", "crash", "smash", "trash", "wash", "mesh", "fresh",
    "mosh", "stash", "shell", "brush",
];

/// Whether `name` is a shell the gate does not read, by name or by shape
/// (`…sh`, `…shell`, with a version: `oksh`, `bash5`, `zsh-5.9`).
pub(crate) fn foreign_shell(name: &str) -> bool {
    if SHELLS.contains(&name) {
        return false;
    }
    let bare = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    if FOREIGN_SHELLS.contains(&bare) || SHELLS.contains(&bare) {
        return true;
    }
    // By shape: a short lower-case name ending in `sh`, or one ending in
    // `shell` (not a script file such as `build.sh`, not `git-push`).
    let word = !bare.is_empty() && bare.bytes().all(|b| b.is_ascii_lowercase());
    word && !NOT_SHELLS.contains(&bare)
        && ((bare.ends_with("sh") && bare.len() <= 6) || bare.ends_with("shell"))
}

/// Whether `name` is a shell the gate knows not to read (by name only: a
/// later word of a command is judged as a shell only when it is one).
pub(crate) fn is_foreign(name: &str) -> bool {
    FOREIGN_SHELLS.contains(&name)
}

/// Whether the words after a shell's name give it a string to run (`-c`,
/// `--command`, `-Command`, `-EncodedCommand`, `--commands`, `-e`).
pub(crate) fn runs_a_string(args: &[Word]) -> Option<usize> {
    for (k, w) in args.iter().enumerate() {
        let t = w.text.as_str();
        if t == "--" {
            return None;
        }
        if !t.starts_with('-') || t.len() < 2 {
            continue;
        }
        let lower = t.to_ascii_lowercase();
        let long = lower.trim_start_matches('-');
        let named = matches!(
            long,
            "c" | "e"
                | "command"
                | "commands"
                | "encodedcommand"
                | "ec"
                | "exec"
                | "eval"
                | "init-command"
        ) || long.starts_with("command=")
            || long.starts_with("commands=")
            || long.starts_with("init-command=");
        let cluster = !t.starts_with("--") && t[1..].contains(['c', 'C']);
        if named || cluster {
            return Some(k);
        }
    }
    None
}

const fn builtin(
    names: &'static [&'static str],
    see: super::schema::SeeHook,
    examples: &'static [(&'static str, &'static str)],
) -> Program {
    Program {
        names,
        node: Node {
            hooks: Hooks {
                see: Some(see),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples,
        ..Program::BASE
    }
}

pub(crate) const PROGRAMS: &[Program] = &[
    Program {
        names: SHELLS,
        node: Node {
            hooks: Hooks {
                see: Some(shell),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        args: Args::Read,
        takes_command: true,
        examples: &[
            ("bash -c 'git push'", "runs 'git push'"),
            ("sh -eo pipefail -c 'make'", "runs 'make'"),
            ("bash script.sh", "plain"),
            ("bash", "opaque"),
            ("bash --version", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: FOREIGN_SHELLS,
        node: Node {
            hooks: Hooks {
                see: Some(foreign),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        args: Args::Read,
        takes_command: true,
        examples: &[
            ("nu -c 'rm -rf ~'", "opaque; runs 'rm -rf ~'"),
            (
                "pwsh -Command 'Remove-Item -Recurse ~'",
                "opaque; runs 'Remove-Item -Recurse ~'",
            ),
            ("xonsh script.xsh", "plain"),
            ("elvish", "opaque"),
        ],
        ..Program::BASE
    },
    builtin(
        &["source", "."],
        source,
        &[
            ("source venv/bin/activate", "plain"),
            ("source /dev/stdin", "opaque"),
        ],
    ),
    builtin(
        &["alias"],
        alias,
        &[("alias ls='rm -rf x'", "opaque; runs 'rm -rf x'")],
    ),
    builtin(
        &["export", "declare", "typeset", "local", "readonly"],
        declare,
        &[("export GIT_EDITOR='rm -rf x'", "runs 'rm -rf x'")],
    ),
    builtin(
        &["mapfile", "readarray"],
        mapfile,
        &[(
            "mapfile -C 'rm -rf x' -c 1 arr",
            "runs 'rm -rf x \"$MAPFILE_INDEX\" \"$MAPFILE_LINE\"'",
        )],
    ),
    // `cd DIR` only moves the shell (the gate follows it) when bash cannot
    // look DIR up in `CDPATH`: an absolute path, `.`, `..`, `./…`, `../…`.
    Program {
        names: &["cd"],
        node: Node {
            effect: Effect::ReadOnly,
            reads: Reads {
                by: Some(cd_to_a_known_folder),
                ..Reads::ANY
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[("cd upload", "plain"), ("cd /srv/app", "read-only")],
        ..Program::BASE
    },
    Program {
        names: &["pushd", "unset", "set", "read", "exit", "return", "wait"],
        generic_verbs: false,
        examples: &[("cd upload", "plain")],
        ..Program::BASE
    },
];

/// `cd DIR` with one operand that bash never looks up in `CDPATH`, and
/// only the options `-L` and `-P`.
fn cd_to_a_known_folder(args: &[String]) -> bool {
    let (opts, rest): (Vec<&String>, Vec<&String>) = args.iter().partition(|a| a.starts_with('-'));
    let dir = match rest.as_slice() {
        [d] => d.as_str(),
        _ => return false,
    };
    opts.iter().all(|o| matches!(o.as_str(), "-L" | "-P"))
        && (dir.starts_with('/')
            || dir == "."
            || dir == ".."
            || dir.starts_with("./")
            || dir.starts_with("../"))
}

/// `bash -c 'X'` is judged by X (its fragments need allow rules, the shell
/// itself only deny/ask/caps); a script file is the file's business; a
/// shell reading standard input runs what is fed to it.
fn shell(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let n = c.name;
    if n == "fish" {
        fish_strings(c, a);
    }
    match shell_script(c.words, c.i) {
        Script::String(s) => {
            // The string may run a shell that reads the command's input.
            fed_scripts(n, c.redirs, a);
            if c.role == Role::Full && c.allow_ok {
                a.role = Role::Checked;
                a.derived.push(Derived::Source(s, Role::Full));
            } else {
                a.derived.push(Derived::Source(s, Role::Checked));
            }
        }
        Script::File(j) if stdin_script(&c.words[j]) => {
            shell_stdin(n, c.redirs, c.role, c.allow_ok, a);
        }
        Script::File(j) => {
            if piped_script(&c.words[j]) {
                a.dynamic = Some(format!(
                    "`{n}` reads its script from a pipe, which the gate cannot see"
                ));
                fed_scripts(n, c.redirs, a);
                if let Some(text) = piped_script_text(&c.words[j]) {
                    a.derived.push(Derived::Source(text, Role::Checked));
                }
            }
        }
        Script::Stdin => shell_stdin(n, c.redirs, c.role, c.allow_ok, a),
        Script::None => {}
    }
    None
}

/// fish's other string options (`-C`/`--init-command`, `--command`): fish's
/// language, run before or instead of anything else — opaque, and every
/// later word is judged as a command string (the caps still read it).
fn fish_strings(c: &Ctx<'_>, a: &mut Analysis) {
    let args = &c.words[(c.i + 1).min(c.words.len())..];
    for (k, w) in args.iter().enumerate() {
        let t = w.text.as_str();
        let glued = ["--init-command=", "--command="]
            .iter()
            .find_map(|p| t.strip_prefix(p));
        let named = matches!(t, "--init-command" | "--command")
            || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains('C'));
        if glued.is_none() && !named {
            continue;
        }
        a.dynamic = Some(format!(
            "`{}` runs a string in fish's language, which the gate does not read",
            c.name
        ));
        let later = args[k + 1..].iter().filter(|w| w.text != "--");
        for v in glued
            .map(str::to_string)
            .into_iter()
            .chain(later.map(|w| w.text.clone()))
        {
            if !v.trim().is_empty() {
                a.derived.push(Derived::Source(v, Role::Checked));
            }
        }
        return;
    }
}

/// `source FILE` (and `.`): from standard input or a pipe, it is judged
/// like a shell reading them.
fn source(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let j = skip_opts(c.words, c.at, "", &[]);
    match c.words.get(j) {
        Some(w) if stdin_script(w) => {
            shell_stdin(c.name, c.redirs, c.role, c.allow_ok, a);
        }
        Some(w) if piped_script(w) => {
            a.dynamic = Some(format!(
                "`{}` reads a script from a pipe, which the gate cannot see",
                c.name
            ));
            fed_scripts(c.name, c.redirs, a);
            if let Some(text) = piped_script_text(w) {
                a.derived.push(Derived::Source(text, Role::Checked));
            }
        }
        _ => {}
    }
    None
}

/// An alias defined in the command changes what later words run: opaque,
/// and what it runs is judged by deny rules, ask rules and caps.
fn alias(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    if c.words[c.at..].iter().any(|w| w.text.contains('=')) {
        a.dynamic = Some("an alias defined in the command changes what later words run".into());
    }
    for w in &c.words[c.at..] {
        if let Some((_, v)) = w.text.split_once('=') {
            if !v.trim().is_empty() {
                a.derived
                    .push(Derived::Source(v.to_string(), Role::Checked));
            }
        }
    }
    None
}

/// `export NAME=VALUE` (and `declare`, `local`…): a command held in a
/// variable is a fragment.
fn declare(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    super::variables::assignments(c.words[c.at..].iter(), c.role, a);
    None
}

/// `mapfile -C CALLBACK` / `readarray -C`: the callback is run (with two
/// words appended) every `-c` lines.
fn mapfile(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    let mut j = c.at;
    while j < words.len() {
        if words[j].text == "--" || !words[j].text.starts_with('-') {
            break;
        }
        if let Some((mut v, last)) = option_value(words, j, &[], &['C']) {
            // Called with the index and the line appended.
            v.text.push_str(" \"$MAPFILE_INDEX\" \"$MAPFILE_LINE\"");
            run_string(&v, Role::Checked, "`mapfile -C`", a);
            j = last + 1;
            continue;
        }
        // Options with a value: -d, -n, -O, -s, -u, -c.
        let t = words[j].text.as_str();
        let takes = t.len() == 2 && matches!(&t[1..], "d" | "n" | "O" | "s" | "u" | "c");
        j += if takes { 2 } else { 1 };
    }
    None
}

/// A shell whose language the gate does not read: a string it runs (`-c`,
/// `-Command`) or a script on its standard input makes the command opaque;
/// the string still meets the deny rules and caps as bash would read it.
pub(crate) fn foreign(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at.min(c.words.len())..];
    if let Some(k) = runs_a_string(args) {
        a.dynamic = Some(format!(
            "`{}` runs a string in a shell language the gate does not read",
            c.name
        ));
        // Which word is the string is the shell's business (`nu -c --
        // 'STRING'`, options between): every later word is judged as one.
        let t = args[k].text.as_str();
        let glued = match t.split_once('=') {
            Some((_, v)) if t.starts_with("--") => Some(v.to_string()),
            _ => None,
        };
        let later = args[k + 1..]
            .iter()
            .filter(|w| w.text != "--")
            .map(|w| w.text.clone());
        for v in glued.into_iter().chain(later) {
            if !v.trim().is_empty() {
                a.derived.push(Derived::Source(v, Role::Checked));
            }
        }
        return None;
    }
    let script = args.iter().find(|w| !w.text.starts_with('-'));
    if script.is_none_or(|w| stdin_script(w) || piped_script(w)) {
        a.dynamic = Some(format!(
            "`{}` reads a script in a shell language the gate does not read from its input",
            c.name
        ));
    }
    None
}
