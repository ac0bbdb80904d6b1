//! Commands hidden in options, variables, runners and a shell's standard
//! input (docs/permissions.md, "Fail closed"): package runners (`npx`,
//! `uv run`…) are seen through like `env`; option values and variables that
//! hold a command (`git rebase --exec`, `tar --to-command`,
//! `GIT_SSH_COMMAND=…`) become fragments; a shell reading its script from
//! standard input is judged by that script when it is static text, and is
//! opaque otherwise; aliases defined on the command line are opaque.

use super::words::Word;
use super::wrappers::{Analysis, Derived};
use super::{Redir, Role};
use crate::options::{self, OptionSpec, Scan};

/// Variables whose value is a command some program runs.
const COMMAND_VARS: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "PAGER",
    "GIT_EDITOR",
    "EDITOR",
    "VISUAL",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "GIT_SEQUENCE_EDITOR",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "LESSOPEN",
];

/// Variables that make a program load code, or define aliases, from
/// somewhere the gate cannot read: the command is opaque.
fn opaque_var(name: &str) -> Option<&'static str> {
    match name {
        "LD_PRELOAD" | "LD_AUDIT" | "LD_LIBRARY_PATH" => Some("loads code from a library"),
        "GIT_CONFIG_COUNT"
        | "GIT_CONFIG_PARAMETERS"
        | "GIT_CONFIG"
        | "GIT_CONFIG_GLOBAL"
        | "GIT_CONFIG_SYSTEM"
        | "GIT_EXEC_PATH"
        | "GIT_TEMPLATE_DIR" => {
            Some("changes git's configuration (aliases, hooks, programs it runs)")
        }
        n if n.starts_with("GIT_CONFIG_KEY_") || n.starts_with("GIT_CONFIG_VALUE_") => {
            Some("changes git's configuration (aliases, hooks, programs it runs)")
        }
        n if n.starts_with("CARGO_ALIAS_") => Some("defines a cargo alias"),
        "CARGO_BUILD_RUSTC_WRAPPER" | "RUSTC_WRAPPER" | "CARGO_TARGET_RUNNER" => {
            Some("makes cargo run another program")
        }
        n if n.starts_with("CARGO_TARGET_") && n.ends_with("_RUNNER") => {
            Some("makes cargo run another program")
        }
        "NODE_OPTIONS" | "PYTHONSTARTUP" | "PERL5OPT" | "RUBYOPT" => {
            Some("makes an interpreter load code")
        }
        _ => None,
    }
}

/// Judges `NAME=VALUE` words (prefix assignments, `env` arguments,
/// `export` arguments): a command held in a variable is a fragment.
pub(super) fn assignments<'w>(ws: impl Iterator<Item = &'w Word>, role: Role, a: &mut Analysis) {
    for w in ws {
        let Some((name, value)) = w.text.split_once('=') else {
            continue;
        };
        let name = name.trim_end_matches('+');
        if let Some(why) = opaque_var(name) {
            a.dynamic = Some(format!("`{name}` {why}"));
            continue;
        }
        if matches!(name, "PS0" | "PS1" | "PS2" | "PS3" | "PS4") {
            // Prompt strings are expanded (PS4 under `set -x`): their
            // substitutions run.
            if w.dynamic {
                a.dynamic = Some(format!(
                    "`{name}` holds a prompt only known when it runs (its substitutions run)"
                ));
            } else {
                for inner in super::find_substitutions(value, &[]) {
                    a.derived.push(Derived::Source(inner, Role::Checked));
                }
            }
            continue;
        }
        if COMMAND_VARS.contains(&name) {
            if w.dynamic {
                a.dynamic = Some(format!(
                    "`{name}` holds a command that is only known when it runs"
                ));
            } else if !value.trim().is_empty() {
                a.derived.push(Derived::Source(value.to_string(), role));
            }
        }
    }
}

/// The value of option `opt` at `words[j]`: `--opt=V`, `--opt V`, `-oV`
/// (for a one-letter `opt`) or `-o V`. Returns the value and the index of
/// the last word used.
fn option_value(words: &[Word], j: usize, long: &[&str], short: &[char]) -> Option<(Word, usize)> {
    let t = words[j].text.as_str();
    for l in long {
        if t == *l {
            return words.get(j + 1).map(|w| (w.clone(), j + 1));
        }
        if let Some(v) = t.strip_prefix(l).and_then(|r| r.strip_prefix('=')) {
            let mut w = words[j].clone();
            w.text = v.to_string();
            return Some((w, j));
        }
    }
    if t.starts_with('-') && !t.starts_with("--") && t.len() >= 2 {
        let c = t[1..].chars().next()?;
        if short.contains(&c) {
            let rest = &t[1 + c.len_utf8()..];
            if rest.is_empty() {
                return words.get(j + 1).map(|w| (w.clone(), j + 1));
            }
            let mut w = words[j].clone();
            w.text = rest.to_string();
            return Some((w, j));
        }
    }
    None
}

/// `mapfile -C CALLBACK` / `readarray -C`: the callback is run (with two
/// words appended) every `-c` lines.
pub(super) fn mapfile(words: &[Word], i: usize, a: &mut Analysis) {
    let mut j = i + 1;
    while j < words.len() {
        if words[j].text == "--" || !words[j].text.starts_with('-') {
            break;
        }
        if let Some((mut v, last)) = option_value(words, j, &[], &['C']) {
            // Called with the index and the line appended.
            v.text.push_str(" \"$MAPFILE_INDEX\" \"$MAPFILE_LINE\"");
            source(&v, Role::Checked, "`mapfile -C`", a);
            j = last + 1;
            continue;
        }
        // Options with a value: -d, -n, -O, -s, -u, -c.
        let t = words[j].text.as_str();
        let takes = t.len() == 2 && matches!(&t[1..], "d" | "n" | "O" | "s" | "u" | "c");
        j += if takes { 2 } else { 1 };
    }
}

fn source(w: &Word, role: Role, what: &str, a: &mut Analysis) {
    if w.dynamic {
        a.dynamic = Some(format!("{what} runs a command only known when it runs"));
    } else if !w.text.trim().is_empty() {
        a.derived.push(Derived::Source(w.text.clone(), role));
    }
}

/// `git [global options] SUB …`: configuration given on the command line,
/// and the options of subcommands that run commands.
pub(super) fn git(words: &[Word], i: usize, role: Role, a: &mut Analysis) {
    let mut j = i + 1;
    let mut sub = None;
    while j < words.len() {
        let t = words[j].text.as_str();
        if t == "-c" || t == "--config-env" || t.starts_with("--config-env=") {
            let (kv, last) = if let Some(v) = t.strip_prefix("--config-env=") {
                (Some(v.to_string()), j)
            } else {
                (words.get(j + 1).map(|w| w.text.clone()), j + 1)
            };
            if let Some(kv) = kv {
                let (key, value) = kv.split_once('=').unwrap_or((kv.as_str(), ""));
                match crate::caps::git_key_runs(key) {
                    Some(false) => {
                        a.dynamic = Some(format!(
                            "`git -c {key}=…` defines an alias or loads configuration from a file"
                        ));
                        // Deny rules, ask rules and caps still see what the
                        // alias runs.
                        let dynamic = words.get(j + 1).is_some_and(|w| w.dynamic);
                        if t == "-c" && !dynamic && key.to_ascii_lowercase().starts_with("alias.") {
                            let v = value.trim_start();
                            match v.strip_prefix('!') {
                                Some(cmd) => a
                                    .derived
                                    .push(Derived::Source(cmd.to_string(), Role::Checked)),
                                None => a
                                    .derived
                                    .push(Derived::Source(format!("git {v}"), Role::Checked)),
                            }
                        }
                    }
                    Some(true) if t == "-c" => {
                        let dynamic = words.get(j + 1).is_some_and(|w| w.dynamic);
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
            j = last + 1;
            continue;
        }
        if t.starts_with("--exec-path=") {
            a.dynamic = Some("`git --exec-path=…` runs git's programs from another folder".into());
        }
        if matches!(
            t,
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" | "--attr-source"
        ) {
            j += 2;
            continue;
        }
        if t.starts_with('-') {
            j += 1;
            continue;
        }
        sub = Some(j);
        break;
    }
    let Some(s) = sub else {
        return;
    };
    let subname = words[s].text.as_str();
    let rest = &words[s + 1..];
    if rest.iter().any(|w| w.text.starts_with("ext::")) {
        // An `ext::` remote is a command git runs (when `protocol.ext.allow` lets it).
        a.dynamic = Some("`git` with an `ext::` URL runs a command".into());
    }
    let base = s + 1;
    let mut k = 0;
    while k < rest.len() {
        let j = base + k;
        let hit = match subname {
            "rebase" => option_value(words, j, &["--exec"], &['x']),
            "fetch" | "fetch-pack" | "clone" | "pull" | "ls-remote" | "archive" => {
                option_value(words, j, &["--upload-pack", "--exec"], &[]).or_else(|| {
                    if subname == "clone" {
                        option_value(words, j, &[], &['u'])
                    } else {
                        None
                    }
                })
            }
            "push" | "send-pack" => option_value(words, j, &["--receive-pack", "--exec"], &[]),
            "difftool" | "mergetool" => option_value(words, j, &["--extcmd"], &['x']),
            _ => None,
        };
        if let Some((w, last)) = hit {
            source(&w, role, &format!("`git {subname}`"), a);
            k = last + 1 - base;
            continue;
        }
        k += 1;
    }
    match subname {
        "bisect" if rest.first().is_some_and(|w| w.text == "run") && rest.len() > 1 => {
            a.derived.push(Derived::Words(rest[1..].to_vec(), role));
        }
        "submodule" => {
            if let Some(f) = rest.iter().position(|w| w.text == "foreach") {
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
                    a.derived.push(Derived::Source(s.join(" "), role));
                }
            }
        }
        _ => {}
    }
}

/// `tar`: `--to-command`, `--checkpoint-action=exec=`, `-I`/`--use-compress-program`,
/// `--info-script`/`-F`, `--new-volume-script`, `--rsh-command`, `--rmt-command`.
pub(super) fn tar(words: &[Word], i: usize, role: Role, a: &mut Analysis) {
    let mut j = i + 1;
    while j < words.len() {
        let t = words[j].text.as_str();
        if let Some(v) = t.strip_prefix("--checkpoint-action=") {
            if let Some(cmd) = v.strip_prefix("exec=") {
                let mut w = words[j].clone();
                w.text = cmd.to_string();
                source(&w, role, "`tar --checkpoint-action=exec`", a);
            }
            j += 1;
            continue;
        }
        if let Some((w, last)) = option_value(
            words,
            j,
            &[
                "--to-command",
                "--use-compress-program",
                "--info-script",
                "--new-volume-script",
                "--rsh-command",
                "--rmt-command",
            ],
            &['I', 'F'],
        ) {
            source(&w, role, "`tar`", a);
            j = last + 1;
            continue;
        }
        j += 1;
    }
}

/// `rsync -e CMD`, `--rsh=CMD`, `--rsync-path=CMD`.
pub(super) fn rsync(words: &[Word], i: usize, role: Role, a: &mut Analysis) {
    let mut j = i + 1;
    while j < words.len() {
        if let Some((w, last)) = option_value(words, j, &["--rsh", "--rsync-path"], &['e']) {
            source(&w, role, "`rsync`", a);
            j = last + 1;
            continue;
        }
        j += 1;
    }
}

/// `make SHELL=…` (and `.SHELLFLAGS`): the program make runs recipes with.
pub(super) fn make(words: &[Word], i: usize, role: Role, a: &mut Analysis) {
    for w in &words[i + 1..] {
        if let Some(v) = w.text.strip_prefix("SHELL=") {
            let mut v2 = w.clone();
            v2.text = v.to_string();
            source(&v2, role, "`make SHELL=…`", a);
        }
    }
}

/// `ssh [options] HOST COMMAND…`: the command (and `-o ProxyCommand=…`,
/// `-o LocalCommand=…`, which run here).
pub(super) fn ssh(words: &[Word], i: usize, role: Role, a: &mut Analysis) {
    const WITH_VALUE: &str = "bcDEeFIiJLlmOopQRSWw";
    let mut j = i + 1;
    let mut host = None;
    while j < words.len() {
        let t = words[j].text.as_str();
        if t == "--" {
            host = (j + 1 < words.len()).then_some(j + 1);
            break;
        }
        if let Some((w, last)) = option_value(words, j, &[], &['o']) {
            let lower = w.text.to_ascii_lowercase();
            for key in [
                "proxycommand",
                "localcommand",
                "remotecommand",
                "knownhostscommand",
            ] {
                if let Some(v) = lower.strip_prefix(key) {
                    let v = v.trim_start_matches([' ', '=']);
                    let start = w.text.len() - v.len();
                    let mut c = w.clone();
                    c.text = w.text[start..].to_string();
                    source(&c, role, "`ssh -o …Command`", a);
                }
            }
            j = last + 1;
            continue;
        }
        if t.starts_with('-') && t.len() > 1 {
            let last = t.chars().last().unwrap_or('-');
            j += if WITH_VALUE.contains(last) && t.len() == 2 {
                2
            } else {
                1
            };
            continue;
        }
        host = Some(j);
        break;
    }
    if let Some(h) = host {
        let cmd = &words[h + 1..];
        if cmd.iter().any(|w| w.dynamic) {
            a.dynamic = Some("`ssh` runs a remote command only known when it runs".into());
        } else if !cmd.is_empty() {
            let s: Vec<&str> = cmd.iter().map(|w| w.text.as_str()).collect();
            a.derived.push(Derived::Source(s.join(" "), Role::Checked));
        }
    }
}

/// A runner's command start: skips its options as `spec` reads them. Options
/// the spec does not know could take a value too: each such reading's command
/// is judged as well (deny rules, ask rules and caps).
pub(super) fn runner_start(
    words: &[Word],
    from: usize,
    spec: &OptionSpec<'_>,
    a: &mut Analysis,
) -> Option<usize> {
    let Scan {
        start: j,
        mut alternatives,
        ..
    } = options::scan(words, from, spec);
    // Beyond a few options of unknown arity the readings multiply: opaque.
    if alternatives.len() > 4 {
        a.over_budget =
            Some("too many options of unknown arity before the command a runner runs".into());
        alternatives.truncate(4);
    }
    for alt in alternatives {
        if alt < words.len() && alt != j {
            a.derived
                .push(Derived::Words(words[alt..].to_vec(), Role::Checked));
        }
    }
    (j < words.len()).then_some(j)
}

/// What a shell reads its script from.
pub(super) enum Script {
    /// `-c STRING` (or `--command`).
    String(String),
    /// A script file operand at this index.
    File(usize),
    /// Nothing: it reads standard input.
    Stdin,
    /// It runs no script (`--version`, `--help`).
    None,
}

/// How a shell invocation gets its script.
pub(super) fn shell_script(words: &[Word], i: usize) -> Script {
    let mut j = i + 1;
    let mut has_c = false;
    let mut stdin = false;
    while j < words.len() {
        let t = words[j].text.as_str();
        if t == "--" || t == "-" {
            if t == "-" {
                stdin = true;
            }
            j += 1;
            break;
        }
        if matches!(t, "--version" | "--help") && !has_c {
            return Script::None;
        }
        if matches!(t, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            j += 2;
            continue;
        }
        if t.starts_with("--") {
            j += 1;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            if t[1..].contains('c') {
                has_c = true;
            }
            if t[1..].contains('s') || t[1..].contains('i') {
                stdin = true;
            }
            j += 1;
            continue;
        }
        break;
    }
    if has_c {
        return match words.get(j) {
            Some(w) => Script::String(w.text.clone()),
            None => Script::Stdin,
        };
    }
    if stdin {
        return Script::Stdin;
    }
    match words.get(j) {
        Some(_) => Script::File(j),
        None => Script::Stdin,
    }
}

/// Whether a script operand is read from a pipe rather than a file the
/// gate could name (`<(…)`, `/dev/stdin`, `/dev/fd/N`, `/proc/self/fd/N`).
pub(super) fn piped_script(w: &Word) -> bool {
    let t = w.text.as_str();
    t.starts_with("<(")
        || t.starts_with(">(")
        || t == "/dev/stdin"
        || t.starts_with("/dev/fd/")
        || t.starts_with("/proc/self/fd/")
        || t == "-"
}

/// Whether a script operand is the shell's standard input.
pub(super) fn stdin_script(w: &Word) -> bool {
    matches!(
        w.text.as_str(),
        "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0" | "-"
    )
}

/// Every here-string and here-document of the command judged as a script
/// (what the command runs may read them: `sh -c sh <<< …`,
/// `bash /dev/fd/3 3<<< …`).
pub(super) fn fed_scripts(name: &str, redirs: &[Redir], a: &mut Analysis) {
    for r in redirs {
        match &r.feed {
            Some(Some(text)) if !text.trim().is_empty() => {
                a.derived.push(Derived::Source(text.clone(), Role::Checked));
            }
            Some(None) => {
                a.dynamic = Some(format!(
                    "`{name}` may read a script with expansions from a here-document"
                ));
            }
            _ => {}
        }
    }
}

/// A shell reading standard input: the static text fed to it (here-string
/// or here-document) is its script; a file redirected to it is a script file
/// like any other; anything else (a pipe) is unknown.
pub(super) fn shell_stdin(
    name: &str,
    redirs: &[Redir],
    role: Role,
    allow_ok: bool,
    a: &mut Analysis,
) {
    enum Stdin {
        Pipe,
        File,
        Text(String),
        Dynamic,
    }
    let mut stdin = Stdin::Pipe;
    for r in redirs {
        match &r.feed {
            Some(Some(text)) => stdin = Stdin::Text(text.clone()),
            Some(None) => stdin = Stdin::Dynamic,
            None if !r.write && r.path.is_some() => stdin = Stdin::File,
            None => {}
        }
    }
    match stdin {
        Stdin::Text(text) => {
            if text.trim().is_empty() {
                return;
            }
            if role == Role::Full && allow_ok {
                a.role = Role::Checked;
                a.derived.push(Derived::Source(text, Role::Full));
            } else {
                a.derived.push(Derived::Source(text, Role::Checked));
            }
        }
        Stdin::File => {}
        Stdin::Dynamic => {
            a.dynamic = Some(format!(
                "`{name}` reads a script with expansions from a here-document"
            ));
        }
        Stdin::Pipe => {
            a.dynamic = Some(format!(
                "`{name}` reads its script from standard input, which the gate cannot see"
            ));
        }
    }
}
