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
    "RSYNC_RSH",
    "RSYNC_CONNECT_PROG",
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
        // Options a program reads from the environment (`TAR_OPTIONS=--to-command=…`).
        "TAR_OPTIONS" | "MAKEFLAGS" | "MFLAGS" | "GNUMAKEFLAGS" | "ZIPOPT" | "UNZIP" | "GZIP"
        | "XZ_OPT" | "GREP_OPTIONS" => Some("gives a program options the gate does not read"),
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
        if name.starts_with("BASH_FUNC_") {
            // `BASH_FUNC_ls%%=() { …; }`: bash imports a function that a later
            // `ls` runs. Its body meets the deny rules and caps.
            a.dynamic = Some(format!("`{name}` defines a shell function"));
            let body = value.trim_start().trim_start_matches("()");
            if !body.trim().is_empty() {
                a.derived
                    .push(Derived::Source(body.to_string(), Role::Checked));
            }
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
                // What can be seen of it still meets the deny rules and caps.
                if !value.trim().is_empty() {
                    a.derived
                        .push(Derived::Source(value.to_string(), Role::Checked));
                }
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
        // What can be seen of it still meets deny rules, ask rules and caps
        // (`"rm -rf /home $X"`).
        if !w.text.trim().is_empty() {
            a.derived
                .push(Derived::Source(w.text.clone(), Role::Checked));
        }
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
            if let crate::options::Step::Option { unsure: true, .. } = crate::caps::GIT.step(t) {
                // A global option the gate does not know (`--shallow-file x`) may
                // take the next word: git is also judged as if it did.
                if j + 2 < words.len() && !a.deep {
                    let mut ws = vec![words[i].clone()];
                    ws.extend_from_slice(&words[j + 2..]);
                    a.derived.push(Derived::Words(ws, Role::Checked));
                }
            }
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
    for w in &words[i + 1..] {
        if let Some(cmd) = ext_command(&w.text) {
            // An `ext::` remote is a command git runs (when `protocol.ext.allow` lets it).
            a.dynamic = Some("`git` with an `ext::` URL runs a command".into());
            a.derived.push(Derived::Source(cmd, Role::Checked));
        }
    }
    // Sub-command options whose value git runs, in any spelling (clusters,
    // abbreviations, attached or not): the value is judged as a command.
    let (short_value, glued, runs): (&str, &str, &[&str]) = match subname {
        "rebase" => ("xsXC", "", &["-x", "--exec"]),
        "fetch" | "fetch-pack" | "pull" | "ls-remote" | "archive" => {
            ("", "", &["--upload-pack", "--exec"])
        }
        "clone" => ("uocb", "", &["-u", "--upload-pack", "--exec"]),
        "push" | "send-pack" => ("o", "", &["--receive-pack", "--exec"]),
        "difftool" | "mergetool" => ("xt", "", &["-x", "--extcmd"]),
        // `-O[PAGER]`: the pager only attached.
        "grep" => ("efABC", "O", &["-O", "--open-files-in-pager"]),
        "send-email" => (
            "",
            "",
            &[
                "--to-cmd",
                "--cc-cmd",
                "--header-cmd",
                "--sendmail-cmd",
                "--smtp-server",
            ],
        ),
        "filter-branch" => (
            "d",
            "",
            &[
                "--setup",
                "--tree-filter",
                "--index-filter",
                "--msg-filter",
                "--env-filter",
                "--commit-filter",
                "--parent-filter",
                "--tag-name-filter",
            ],
        ),
        _ => ("", "", &[]),
    };
    if !runs.is_empty() {
        let spec = OptionSpec {
            short_value,
            glued,
            value: runs,
            ..OptionSpec::default()
        };
        let found = options::values(rest, &spec, runs);
        if !found.is_empty()
            && matches!(
                subname,
                "rebase" | "difftool" | "mergetool" | "filter-branch"
            )
        {
            // What they run runs at the top of the work tree (filter-branch: in
            // a folder of its own), not here.
            a.move_to(super::wrappers::Workdir::Unknown);
        }
        for v in found {
            let mut w = rest[v.at].clone();
            w.text = v.text;
            source(&w, role, &format!("`git {subname}`"), a);
        }
    }
    if subname == "clone" {
        // `git clone -c KEY=VALUE`: configuration like `git -c`.
        let spec = OptionSpec {
            short_value: "cuob",
            value: &["--config", "--upload-pack", "--origin", "--branch"],
            ..OptionSpec::default()
        };
        for v in options::values(rest, &spec, &["-c", "--config"]) {
            let (key, value) = v.text.split_once('=').unwrap_or((v.text.as_str(), ""));
            match crate::caps::git_key_runs(key) {
                Some(false) => {
                    a.dynamic = Some(format!("`git clone -c {key}=…` changes how git runs"));
                }
                Some(true) => {
                    let mut w = rest[v.at].clone();
                    w.text = value.to_string();
                    source(&w, role, &format!("`git clone -c {key}`"), a);
                }
                None => {}
            }
        }
    }
    match subname {
        "bisect" if rest.first().is_some_and(|w| w.text == "run") && rest.len() > 1 => {
            // It runs at the top of the work tree, not here.
            a.move_to(super::wrappers::Workdir::Unknown);
            a.derived.push(Derived::Words(rest[1..].to_vec(), role));
        }
        "submodule" => {
            if let Some(f) = rest.iter().position(|w| w.text == "foreach") {
                // It runs in each submodule's folder.
                a.move_to(super::wrappers::Workdir::Unknown);
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
    let spec = OptionSpec {
        short_value: "bCfFgHIKLNTVX",
        value: &[
            "--checkpoint-action",
            "--to-command",
            "--use-compress-program",
            "--info-script",
            "--new-volume-script",
            "--rsh-command",
            "--rmt-command",
            "--directory",
            "--file",
        ],
        ..OptionSpec::default()
    };
    let args = &words[i + 1..];
    for v in options::values(args, &spec, &["--checkpoint-action"]) {
        // `exec=CMD`, also after other actions (`echo,exec=CMD`).
        if let Some((_, cmd)) = v.text.split_once("exec=") {
            let mut w = args[v.at].clone();
            w.text = cmd.to_string();
            source(&w, role, "`tar --checkpoint-action=exec`", a);
        }
    }
    let runs = [
        "-I",
        "-F",
        "--to-command",
        "--use-compress-program",
        "--info-script",
        "--new-volume-script",
        "--rsh-command",
        "--rmt-command",
    ];
    for v in options::values(args, &spec, &runs) {
        let mut w = args[v.at].clone();
        w.text = v.text;
        source(&w, role, "`tar`", a);
    }
    // Old style (`tar cIf CMD x.tar .`): each letter that takes a value takes
    // the next word in turn.
    if let Some(first) = args.first().filter(|w| !w.text.starts_with('-')) {
        let valued = first.text.chars().filter(|c| spec.short_value.contains(*c));
        for (next, c) in (1..).zip(valued) {
            if let Some(w) = args.get(next).filter(|_| matches!(c, 'I' | 'F')) {
                source(w, role, "`tar`", a);
            }
        }
    }
}

/// `rsync -e CMD`, `--rsh=CMD`, `--rsync-path=CMD`.
pub(super) fn rsync(words: &[Word], i: usize, role: Role, a: &mut Analysis) {
    let args = &words[i + 1..];
    for v in options::values(
        args,
        &super::writes::RSYNC,
        &["-e", "--rsh", "--rsync-path"],
    ) {
        let mut w = args[v.at].clone();
        w.text = v.text;
        source(&w, role, "`rsync`", a);
    }
}

/// `make SHELL=…` (and `.SHELLFLAGS`): the program make runs recipes with.
pub(super) fn make(words: &[Word], i: usize, role: Role, a: &mut Analysis) {
    // `--eval TEXT` / `-E TEXT`: makefile text, which may run `$(shell …)`.
    let spec = OptionSpec {
        short_value: "CEfIjlOoW",
        value: &[
            "--directory",
            "--eval",
            "--file",
            "--makefile",
            "--include-dir",
            "--jobs",
            "--load-average",
            "--old-file",
            "--assume-old",
            "--what-if",
            "--new-file",
            "--assume-new",
            "--output-sync",
        ],
        complete: true,
        ..OptionSpec::default()
    };
    for v in options::values(&words[i + 1..], &spec, &["-E", "--eval"]) {
        a.dynamic = Some("`make --eval` runs makefile text given on the command line".into());
        // Its `$(shell CMD)` calls meet the deny rules and caps.
        for cmd in make_shell_calls(&v.text) {
            a.derived.push(Derived::Source(cmd, Role::Checked));
        }
    }
    for w in &words[i + 1..] {
        if let Some(v) = w.text.strip_prefix("SHELL=") {
            let mut v2 = w.clone();
            v2.text = v.to_string();
            source(&v2, role, "`make SHELL=…`", a);
        }
    }
}

/// The commands of make's `$(shell CMD)` and `${shell CMD}` calls in `text`.
fn make_shell_calls(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [("$(shell ", ')'), ("${shell ", '}')] {
        let mut rest = text;
        while let Some(at) = rest.find(open) {
            let body = &rest[at + open.len()..];
            let opener = if close == ')' { '(' } else { '{' };
            let mut depth = 1;
            let mut end = body.len();
            for (k, c) in body.char_indices() {
                if c == opener {
                    depth += 1;
                } else if c == close {
                    depth -= 1;
                    if depth == 0 {
                        end = k;
                        break;
                    }
                }
            }
            out.push(body[..end].to_string());
            rest = &body[end..];
        }
    }
    out
}

/// What an `ext::` remote runs, as a shell line: git splits `ext::CMD ARGS`
/// at spaces, with `% ` a space inside an argument and `%%` a percent sign.
pub(super) fn ext_command(url: &str) -> Option<String> {
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

/// `ssh [options] HOST COMMAND…` (and `scp`, `sftp`): the command, and the
/// `-o …Command=…` options, which run here.
pub(super) fn ssh(words: &[Word], i: usize, role: Role, a: &mut Analysis) {
    let name = super::wrappers::basename(&words[i].text);
    let short_value = match name {
        "scp" => "cFiJloPSX",
        "sftp" => "BbcDFiJlPRSsoX",
        _ => "BbcDEeFIiJLlmOopQRSWw",
    };
    let spec = OptionSpec {
        short_value,
        complete: true,
        ..OptionSpec::default()
    };
    let args = &words[i + 1..];
    let host = options::scan(args, 0, &spec).start;
    if name == "sftp" {
        // `-D PROGRAM`: a local sftp server program it runs.
        for v in options::values(&args[..host], &spec, &["-D"]) {
            let mut c = args[v.at].clone();
            c.text = v.text;
            source(&c, role, "`sftp -D`", a);
        }
    }
    for v in options::values(&args[..host], &spec, &["-o"]) {
        let lower = v.text.to_ascii_lowercase();
        for key in [
            "proxycommand",
            "localcommand",
            "remotecommand",
            "knownhostscommand",
        ] {
            if let Some(rest) = lower.strip_prefix(key) {
                let value = rest.trim_start_matches([' ', '=', '\t']);
                let mut c = args[v.at].clone();
                c.text = v.text[v.text.len() - value.len()..].to_string();
                source(&c, role, "`ssh -o …Command`", a);
            }
        }
    }
    if name != "ssh" || host >= args.len() {
        return;
    }
    let cmd = &args[host + 1..];
    if cmd.iter().any(|w| w.dynamic) {
        a.dynamic = Some("`ssh` runs a remote command only known when it runs".into());
    } else if !cmd.is_empty() {
        let s: Vec<&str> = cmd.iter().map(|w| w.text.as_str()).collect();
        a.derived.push(Derived::Source(s.join(" "), Role::Checked));
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
            // Each `o`/`O` in a cluster takes the next word (`bash -oc posix
            // 'SCRIPT'`, `-eo pipefail`).
            j += 1 + t[1..].chars().filter(|c| matches!(c, 'o' | 'O')).count();
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
