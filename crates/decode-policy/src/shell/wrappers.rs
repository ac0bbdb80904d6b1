//! Seeing through assignments, wrappers and privilege wrappers (SPEC §4).

use super::words::Word;
use super::{Redir, Role};

/// A command that a fragment runs besides itself.
#[derive(Debug, Clone)]
pub(crate) enum Derived {
    /// Words run as a command (`xargs CMD`, `find -exec CMD ;`, `rg --pre CMD`).
    Words(Vec<Word>, Role),
    /// A string run by a shell (`bash -c`, `su -c`, `eval`, `env -S`).
    Source(String, Role),
}

#[derive(Debug, Clone)]
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
}

/// Wrapper levels seen through with every form recorded; beyond, only the
/// innermost command is (the command is then opaque).
pub(crate) const MAX_SEE_THROUGH: usize = 16;

/// Wrappers allow rules may look past.
const HARMLESS: &[&str] = &["timeout", "time", "nice", "nohup"];

/// Directories whose programs count by their name for allow rules.
const STD_BIN: &[&str] = &[
    "/bin",
    "/usr/bin",
    "/usr/local/bin",
    "/sbin",
    "/usr/sbin",
    "/usr/local/sbin",
    "/opt/homebrew/bin",
];

const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh",
];

/// The name a command word is judged by: its basename.
pub(crate) fn basename(s: &str) -> &str {
    match s.rfind('/') {
        Some(i) if i + 1 < s.len() => &s[i + 1..],
        _ => s,
    }
}

fn std_bin_name(s: &str) -> Option<&str> {
    let i = s.rfind('/')?;
    let dir = if i == 0 { "/" } else { &s[..i] };
    let dir = dir.trim_end_matches('/');
    if STD_BIN.contains(&dir) && i + 1 < s.len() {
        Some(&s[i + 1..])
    } else {
        None
    }
}

fn join(words: &[Word], suffix: &str) -> String {
    let mut s = String::new();
    for w in words {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(&w.text);
    }
    if !suffix.is_empty() {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(suffix);
    }
    s
}

fn join_named(name: &str, rest: &[Word], suffix: &str) -> String {
    let mut s = name.to_string();
    let tail = join(rest, suffix);
    if !tail.is_empty() {
        s.push(' ');
        s.push_str(&tail);
    }
    s
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

fn is_assignment(s: &str) -> bool {
    match s.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// Skips options from `i`: short options in `short_arg` and long options in
/// `long_arg` take a value (attached or the next word). Returns the index of
/// the first non-option word.
fn skip_opts(words: &[Word], mut i: usize, short_arg: &str, long_arg: &[&str]) -> usize {
    while i < words.len() {
        let t = words[i].text.as_str();
        if t == "--" {
            return i + 1;
        }
        if let Some(long) = t.strip_prefix("--") {
            if long.contains('=') {
                i += 1;
            } else if long_arg.contains(&t) {
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            let mut consumed = 1;
            for (pos, c) in t[1..].char_indices() {
                if short_arg.contains(c) {
                    if pos + c.len_utf8() == t.len() - 1 {
                        consumed = 2;
                    }
                    break;
                }
            }
            i += consumed;
            continue;
        }
        return i;
    }
    i
}

/// Analyses one simple command.
pub(crate) fn analyse(assigns: &[Word], words: &[Word], redirs: &[Redir], role: Role) -> Analysis {
    let suffix = redirs
        .iter()
        .map(|r| r.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let mut all: Vec<Word> = assigns.to_vec();
    all.extend(words.iter().cloned());
    let text = join(&all, &suffix);
    // Canonical forms: what allow rules match.
    let csuffix = redirs
        .iter()
        .map(|r| r.canon.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let canon_of = |ws: &[Word]| -> Vec<Word> {
        ws.iter()
            .map(|w| Word {
                text: w.canon_text().to_string(),
                ..Word::default()
            })
            .collect()
    };
    let call_words = canon_of(&all);
    let cwords = canon_of(words);
    let canon = join(&call_words, &csuffix);
    let mut a = Analysis {
        text: text.clone(),
        canon: canon.clone(),
        role,
        allow_forms: Vec::new(),
        check_forms: vec![text.clone()],
        chain: Vec::new(),
        core: Vec::new(),
        derived: Vec::new(),
        dynamic: None,
        deep: false,
        ctrl: assigns.iter().chain(words).any(|w| w.ctrl) || redirs.iter().any(|r| r.ctrl),
        levels: Vec::new(),
        core_dyn: Vec::new(),
    };
    if canon != text {
        a.check_forms.push(canon.clone());
    }
    if words.is_empty() {
        if role == Role::Full {
            a.allow_forms.push(canon);
        }
        return a;
    }

    let mut levels: Vec<usize> = vec![0];
    let mut allow_levels: Vec<usize> = if assigns.is_empty() { vec![0] } else { vec![] };
    let mut allow_ok = assigns.is_empty();
    let mut i = 0;
    loop {
        let w = &words[i];
        if w.dynamic || w.glob || w.brace {
            a.dynamic = Some(format!("the command word `{}` is dynamic", w.text));
            break;
        }
        if w.expanded && a.dynamic.is_none() {
            // `{rm,-rf,x}`, `cat${IFS}x`: judged as bash expands it, but no
            // rule can allow a command word made by an expansion.
            a.dynamic = Some(format!(
                "the command word `{}` is made by an expansion",
                w.text
            ));
        }
        let name = basename(&w.text).to_string();
        if levels.len() >= MAX_SEE_THROUGH {
            a.deep = true;
        }
        let next = see_through(&name, words, i, role, allow_ok, &mut a);
        if !a.deep {
            a.chain.push(name.clone());
        }
        match next {
            Some(j) if j < words.len() && j > i => {
                if !HARMLESS.contains(&name.as_str()) {
                    allow_ok = false;
                }
                i = j;
                if !a.deep {
                    levels.push(j);
                    if allow_ok {
                        allow_levels.push(j);
                    }
                }
            }
            _ => break,
        }
    }
    if a.deep {
        // Only the innermost command is judged beyond the limit.
        if levels.last() != Some(&i) {
            levels.push(i);
        }
        let name = basename(&words[i].text).to_string();
        if a.chain.last() != Some(&name) {
            a.chain.push(name);
        }
    }
    let core_start = *levels.last().unwrap_or(&0);
    a.core = words[core_start..].iter().map(|w| w.text.clone()).collect();
    a.core_dyn = words[core_start..].iter().map(|w| w.dynamic).collect();
    if let Some(first) = a.core.first_mut() {
        *first = basename(first).to_string();
    }

    for &lvl in &levels {
        let tail = &words[lvl..];
        if tail.is_empty() {
            continue;
        }
        push_unique(&mut a.check_forms, join(tail, &suffix));
        let name = basename(&tail[0].text);
        push_unique(&mut a.check_forms, join_named(name, &tail[1..], &suffix));
    }
    a.levels = levels;
    if a.role == Role::Full {
        push_unique(&mut a.allow_forms, canon);
        for &lvl in &allow_levels {
            let tail = &cwords[lvl..];
            push_unique(&mut a.allow_forms, join(tail, &csuffix));
            if let Some(name) = std_bin_name(&tail[0].text) {
                push_unique(&mut a.allow_forms, join_named(name, &tail[1..], &csuffix));
            }
        }
    }
    a
}

/// Returns the index of the command a wrapper runs, or `None` when `name`
/// is not a wrapper (or runs nothing further). Records derived commands.
fn see_through(
    name: &str,
    words: &[Word],
    i: usize,
    role: Role,
    allow_ok: bool,
    a: &mut Analysis,
) -> Option<usize> {
    match name {
        "env" => env_next(words, i, a),
        "command" => Some(skip_opts(words, i + 1, "", &[])),
        "builtin" | "busybox" => Some(skip_opts(words, i + 1, "", &[])),
        "exec" => Some(skip_opts(words, i + 1, "a", &[])),
        "nohup" | "setsid" | "unbuffer" => Some(skip_opts(words, i + 1, "", &[])),
        "time" => Some(skip_opts(words, i + 1, "fo", &["--format", "--output"])),
        "nice" => Some(skip_opts(words, i + 1, "n", &["--adjustment"])),
        "timeout" => {
            let j = skip_opts(words, i + 1, "sk", &["--signal", "--kill-after"]);
            Some(j + 1)
        }
        "stdbuf" => Some(skip_opts(
            words,
            i + 1,
            "ioe",
            &["--input", "--output", "--error"],
        )),
        "ionice" => Some(skip_opts(
            words,
            i + 1,
            "cnPpu",
            &["--class", "--classdata", "--pid", "--pgid", "--uid"],
        )),
        "taskset" => {
            let j = skip_opts(words, i + 1, "", &[]);
            Some(j + 1)
        }
        "chrt" => {
            // `chrt [OPTIONS] PRIORITY COMMAND…`
            let j = skip_opts(
                words,
                i + 1,
                "TPD",
                &["--sched-runtime", "--sched-period", "--sched-deadline"],
            );
            Some(j + 1)
        }
        "flock" => {
            // `flock [OPTIONS] FILE COMMAND…` or `flock FILE -c STRING`.
            let short = "wEc";
            let long = ["--timeout", "--wait", "--conflict-exit-code", "--command"];
            let mut j = i + 1;
            let mut file_seen = false;
            while j < words.len() {
                let t = words[j].text.as_str();
                let cmd = if t == "-c" || t == "--command" {
                    words.get(j + 1).map(|w| w.text.clone())
                } else {
                    t.strip_prefix("--command=").map(str::to_string)
                };
                if let Some(c) = cmd {
                    a.derived.push(Derived::Source(c, Role::Checked));
                    return None;
                }
                if t.starts_with('-') && t.len() > 1 {
                    j = skip_opts(words, j, short, &long).max(j + 1);
                    if t == "--" {
                        return (j < words.len()).then_some(j);
                    }
                    continue;
                }
                if file_seen {
                    return Some(j);
                }
                file_seen = true;
                j += 1;
            }
            None
        }
        "script" => {
            // `script [OPTIONS] [FILE]`; `-c STRING` (also clustered: `-qc`).
            let with_arg = "cEIOBTmot";
            let mut j = i + 1;
            while j < words.len() {
                let t = words[j].text.as_str();
                if t == "--" {
                    break;
                }
                let mut cmd = None;
                if t == "--command" {
                    cmd = words.get(j + 1).map(|w| w.text.clone());
                    j += 1;
                } else if let Some(v) = t.strip_prefix("--command=") {
                    cmd = Some(v.to_string());
                } else if t.starts_with('-') && !t.starts_with("--") && t.len() > 1 {
                    for (pos, c) in t[1..].char_indices() {
                        if with_arg.contains(c) {
                            let rest = &t[1 + pos + c.len_utf8()..];
                            let value = if rest.is_empty() {
                                j += 1;
                                words.get(j).map(|w| w.text.clone())
                            } else {
                                Some(rest.to_string())
                            };
                            if c == 'c' {
                                cmd = value;
                            }
                            break;
                        }
                    }
                }
                if let Some(c) = cmd {
                    a.derived.push(Derived::Source(c, Role::Checked));
                }
                j += 1;
            }
            None
        }
        "strace" | "ltrace" => Some(skip_opts(
            words,
            i + 1,
            if name == "strace" {
                "abeEIoOpPsSuXU"
            } else {
                "aADeFlnopsuwxL"
            },
            &[
                "--output",
                "--attach",
                "--user",
                "--trace",
                "--signal",
                "--status",
                "--string-limit",
                "--env",
                "--expr",
                "--trace-path",
                "--columns",
                "--align",
                "--library",
                "--config",
                "--indent",
                "--depth",
            ],
        )),
        "coproc" => {
            // `coproc [NAME] COMMAND`: a NAME only before a compound command.
            Some(i + 1)
        }
        "xargs" => {
            let j = skip_opts(
                words,
                i + 1,
                "adEILnPs",
                &[
                    "--arg-file",
                    "--delimiter",
                    "--eof",
                    "--max-args",
                    "--max-procs",
                    "--max-chars",
                    "--process-slot-var",
                ],
            );
            if j < words.len() && !a.deep {
                a.derived.push(Derived::Words(words[j..].to_vec(), role));
            }
            Some(j)
        }
        "sudo" | "doas" | "pkexec" | "run0" => {
            let (short, long): (&str, &[&str]) = match name {
                "sudo" => (
                    "ugpCDrtTUR",
                    &[
                        "--user",
                        "--group",
                        "--prompt",
                        "--close-from",
                        "--chdir",
                        "--role",
                        "--type",
                        "--command-timeout",
                        "--other-user",
                        "--chroot",
                        "--host",
                    ],
                ),
                "doas" => ("uC", &[]),
                "pkexec" => ("", &["--user"]),
                _ => (
                    "ugD",
                    &[
                        "--user",
                        "--group",
                        "--chdir",
                        "--setenv",
                        "--property",
                        "--description",
                        "--slice",
                        "--unit",
                        "--machine",
                        "--nice",
                        "--background",
                    ],
                ),
            };
            let mut j = skip_opts(words, i + 1, short, long);
            while j < words.len() && is_assignment(&words[j].text) {
                j += 1;
            }
            Some(j)
        }
        "su" => {
            let mut j = i + 1;
            while j < words.len() {
                let t = words[j].text.as_str();
                let cmd = if t == "-c" || t == "--command" {
                    j += 1;
                    words.get(j).map(|w| w.text.clone())
                } else if let Some(v) = t.strip_prefix("--command=") {
                    Some(v.to_string())
                } else if let Some(v) = t.strip_prefix("-c").filter(|v| !v.is_empty()) {
                    Some(v.to_string())
                } else {
                    if matches!(
                        t,
                        "-s" | "--shell"
                            | "-g"
                            | "--group"
                            | "-G"
                            | "--supp-group"
                            | "-w"
                            | "--whitelist-environment"
                    ) {
                        j += 1;
                    }
                    None
                };
                if let Some(c) = cmd {
                    a.derived.push(Derived::Source(c, Role::Checked));
                }
                j += 1;
            }
            None
        }
        "find" => {
            let mut j = i + 1;
            while j < words.len() {
                let t = words[j].text.as_str();
                if matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let start = j + 1;
                    let mut end = start;
                    while end < words.len() && !matches!(words[end].text.as_str(), ";" | "+") {
                        end += 1;
                    }
                    if end > start {
                        a.derived
                            .push(Derived::Words(words[start..end].to_vec(), role));
                    }
                    j = end + 1;
                } else {
                    j += 1;
                }
            }
            None
        }
        "rg" | "ripgrep" => {
            let mut j = i + 1;
            while j < words.len() {
                let t = words[j].text.as_str();
                if t == "--" {
                    break;
                }
                let pre = if t == "--pre" {
                    j += 1;
                    words.get(j).cloned()
                } else {
                    t.strip_prefix("--pre=").map(|v| Word {
                        text: v.to_string(),
                        ..words[j].clone()
                    })
                };
                if let Some(p) = pre {
                    if !p.text.is_empty() {
                        a.derived.push(Derived::Words(vec![p], role));
                    }
                }
                j += 1;
            }
            None
        }
        "eval" => {
            a.dynamic = Some("`eval` runs a string as a command".into());
            if !a.deep {
                let s = join(&words[i + 1..], "");
                if !s.trim().is_empty() {
                    a.derived.push(Derived::Source(s, Role::Checked));
                }
            }
            // Deny/ask rules and caps also see `eval A B` as `A B`.
            let j = skip_opts(words, i + 1, "", &[]);
            (j < words.len()).then_some(j)
        }
        "git" => {
            // `git -c core.pager=CMD …`, `-c alias.x='!CMD'`, `core.sshCommand`,
            // `core.editor`…: configuration values that git runs with a shell.
            let mut j = i + 1;
            while j < words.len() {
                let t = words[j].text.as_str();
                if t == "-c" {
                    if let Some(kv) = words.get(j + 1) {
                        if let Some(cmd) = git_config_command(&kv.text) {
                            a.derived.push(Derived::Source(cmd, role));
                        }
                    }
                    j += 2;
                } else if t == "-C" || t == "--config-env" {
                    j += 2;
                } else if t.starts_with('-') {
                    j += 1;
                } else {
                    break;
                }
            }
            None
        }
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => {
            if words[i + 1..].iter().any(|w| awk_runs_commands(&w.text)) {
                a.dynamic = Some("the awk program runs shell commands".into());
            }
            None
        }
        "sed" | "gsed" => {
            if words[i + 1..].iter().any(|w| sed_runs_commands(&w.text)) {
                a.dynamic = Some("the sed script runs shell commands (`e`)".into());
            }
            None
        }
        "trap" => {
            // `trap 'CMD' SIGNAL` runs CMD later.
            let j = skip_opts(words, i + 1, "", &[]);
            if let Some(w) = words.get(j) {
                if w.text != "-" && !w.text.is_empty() {
                    a.derived
                        .push(Derived::Source(w.text.clone(), Role::Checked));
                }
            }
            None
        }
        "fd" | "fdfind" => {
            // `fd … -x CMD` / `--exec CMD` / `-X` / `--exec-batch` run CMD per match.
            let mut j = i + 1;
            while j < words.len() {
                let t = words[j].text.as_str();
                if matches!(t, "-x" | "--exec" | "-X" | "--exec-batch") {
                    let start = j + 1;
                    let mut end = start;
                    while end < words.len() && words[end].text != ";" {
                        end += 1;
                    }
                    if end > start {
                        a.derived
                            .push(Derived::Words(words[start..end].to_vec(), role));
                    }
                    j = end + 1;
                } else {
                    j += 1;
                }
            }
            None
        }
        "parallel" => {
            let j = skip_opts(words, i + 1, "jSPI", &["--jobs", "--sshlogin", "--joblog"]);
            let end = words[j..]
                .iter()
                .position(|w| w.text.starts_with(":::"))
                .map_or(words.len(), |k| j + k);
            if end > j {
                a.derived.push(Derived::Words(words[j..end].to_vec(), role));
            }
            None
        }
        "watch" => {
            let j = skip_opts(
                words,
                i + 1,
                "dnq",
                &["--differences", "--interval", "--equexit"],
            );
            if j < words.len() {
                a.derived
                    .push(Derived::Source(join(&words[j..], ""), Role::Checked));
            }
            None
        }
        n if SHELLS.contains(&n) => {
            if let Some(s) = shell_string(words, i) {
                if role == Role::Full && allow_ok {
                    // `bash -c 'X'` is judged by X: the string's fragments need
                    // allow rules, the wrapper itself only deny/ask/caps.
                    a.role = Role::Checked;
                    a.derived.push(Derived::Source(s, Role::Full));
                } else {
                    a.derived.push(Derived::Source(s, Role::Checked));
                }
            }
            None
        }
        _ => None,
    }
}

/// A `git -c KEY=VALUE` whose value git runs as a shell command.
fn git_config_command(kv: &str) -> Option<String> {
    let (key, value) = kv.split_once('=')?;
    let key = key.to_ascii_lowercase();
    let runs = key.starts_with("alias.") && value.trim_start().starts_with('!')
        || matches!(
            key.as_str(),
            "core.pager"
                | "core.sshcommand"
                | "core.editor"
                | "core.fsmonitor"
                | "core.askpass"
                | "sequence.editor"
                | "diff.external"
                | "gpg.program"
                | "credential.helper"
                | "uploadpack.packobjectshook"
        )
        || key.starts_with("pager.")
        || key.ends_with(".textconv")
        || key.ends_with(".command")
        || key.ends_with(".cmd")
        || key.ends_with(".clean")
        || key.ends_with(".smudge")
        || key.ends_with(".process");
    if !runs || value.trim().is_empty() {
        return None;
    }
    Some(value.trim_start().trim_start_matches('!').to_string())
}

/// awk programs can run commands: `system(…)`, `print | "cmd"`, `"cmd" | getline`.
fn awk_runs_commands(prog: &str) -> bool {
    prog.contains("system(")
        || prog.contains("system (")
        || prog.contains("|&")
        || prog.contains("| getline")
        || prog.contains("|getline")
        || prog.contains("| \"")
        || prog.contains("|\"")
}

/// GNU sed runs commands with the `e` command and the `e` flag of `s`.
fn sed_runs_commands(script: &str) -> bool {
    if script.starts_with('-') && !script.starts_with("-e") && !script.starts_with("--expression=")
    {
        return false;
    }
    let script = script
        .strip_prefix("--expression=")
        .or_else(|| script.strip_prefix("-e"))
        .unwrap_or(script);
    // An `e` command: a command that is just `e` or `e …`.
    for cmd in script.split([';', '\n']) {
        let c = cmd.trim_start_matches(|ch: char| {
            ch.is_whitespace() || ch.is_ascii_digit() || matches!(ch, '$' | ',' | '!' | '{' | '}')
        });
        if c == "e" || c.starts_with("e ") || c.starts_with("e\t") {
            return true;
        }
    }
    // `s/a/b/FLAGS` with an `e` among the flags.
    let b = script.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let at_cmd = i == 0
            || matches!(
                b[i - 1],
                b';' | b'\n' | b' ' | b'{' | b'}' | b'0'..=b'9' | b'$' | b'/' | b'!'
            );
        if b[i] == b's' && at_cmd && i + 1 < b.len() {
            let d = b[i + 1];
            if d.is_ascii_alphanumeric() || d == b'\\' || d == b'\n' || d == b' ' {
                i += 1;
                continue;
            }
            let mut j = i + 2;
            let mut seen = 0;
            while j < b.len() && seen < 2 {
                if b[j] == b'\\' {
                    j += 2;
                    continue;
                }
                if b[j] == d {
                    seen += 1;
                }
                j += 1;
            }
            if seen == 2 {
                while j < b.len()
                    && matches!(
                        b[j],
                        b'g' | b'p' | b'i' | b'I' | b'm' | b'M' | b'e' | b'0'..=b'9'
                    )
                {
                    if b[j] == b'e' {
                        return true;
                    }
                    j += 1;
                }
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    false
}

/// `env [OPTIONS] [NAME=VALUE]… COMMAND`; `-S STRING` is split and run.
fn env_next(words: &[Word], i: usize, a: &mut Analysis) -> Option<usize> {
    let mut j = i + 1;
    while j < words.len() {
        let t = words[j].text.as_str();
        if t == "--" {
            j += 1;
            break;
        }
        let split = if t == "-S" || t == "--split-string" {
            let v = words.get(j + 1).map(|w| w.text.clone());
            j += 1;
            v
        } else {
            t.strip_prefix("--split-string=")
                .or_else(|| t.strip_prefix("-S"))
                .map(str::to_string)
        };
        if let Some(s) = split {
            let mut line = s;
            let rest = join(&words[(j + 1).min(words.len())..], "");
            if !rest.is_empty() {
                line.push(' ');
                line.push_str(&rest);
            }
            a.derived.push(Derived::Source(line, Role::Checked));
            return None;
        }
        if matches!(t, "--unset" | "--chdir") {
            j += 2;
            continue;
        }
        if t.starts_with("--") {
            j += 1;
            continue;
        }
        if t.starts_with('-') && t.len() > 1 {
            // A cluster (`-iu NAME`, `-iS'…'`): `u`, `C` and `S` take a value,
            // the rest of the cluster or the next word.
            let mut consumed = 1;
            for (pos, c) in t[1..].char_indices() {
                if matches!(c, 'u' | 'C' | 'S') {
                    let rest = &t[1 + pos + 1..];
                    let value = if rest.is_empty() {
                        consumed = 2;
                        words.get(j + 1).map(|w| w.text.clone())
                    } else {
                        Some(rest.to_string())
                    };
                    if c == 'S' {
                        let mut line = value.unwrap_or_default();
                        let rest = join(&words[(j + consumed).min(words.len())..], "");
                        if !rest.is_empty() {
                            line.push(' ');
                            line.push_str(&rest);
                        }
                        a.derived.push(Derived::Source(line, Role::Checked));
                        return None;
                    }
                    break;
                }
            }
            j += consumed;
            continue;
        }
        break;
    }
    while j < words.len() && is_assignment(&words[j].text) {
        j += 1;
    }
    Some(j)
}

/// The command string of `bash -c STRING` (any option cluster holding `c`).
fn shell_string(words: &[Word], i: usize) -> Option<String> {
    let mut j = i + 1;
    let mut has_c = false;
    while j < words.len() {
        let t = words[j].text.as_str();
        if t == "--" || t == "-" {
            j += 1;
            break;
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
            j += 1;
            continue;
        }
        break;
    }
    if has_c {
        words.get(j).map(|w| w.text.clone())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(s: &str) -> Vec<Word> {
        s.split(' ').map(Word::raw).collect()
    }

    #[test]
    fn commands_hidden_in_arguments() {
        assert!(sed_runs_commands("s/a/b/e"));
        assert!(sed_runs_commands("1e rm -rf x"));
        assert!(sed_runs_commands("-es/x/y/ge"));
        assert!(!sed_runs_commands("s/a/b/g"));
        assert!(!sed_runs_commands("s/e/f/"));
        assert!(!sed_runs_commands("/etc/passwd"));
        assert!(!sed_runs_commands("-i"));
        assert!(awk_runs_commands("BEGIN { system(\"rm x\") }"));
        assert!(awk_runs_commands("{ print | \"sh\" }"));
        assert!(!awk_runs_commands("{ print $1 }"));
        assert_eq!(
            git_config_command("core.pager=rm -rf x").as_deref(),
            Some("rm -rf x")
        );
        assert_eq!(
            git_config_command("alias.x=!curl y").as_deref(),
            Some("curl y")
        );
        assert_eq!(git_config_command("user.name=x"), None);
    }

    #[test]
    fn peel() {
        let a = analyse(
            &[],
            &ws("env X=1 /usr/bin/sudo -u x rm -rf /"),
            &[],
            Role::Full,
        );
        assert_eq!(a.core, ["rm", "-rf", "/"]);
        assert_eq!(a.chain, ["env", "sudo", "rm"]);
        assert!(a.check_forms.contains(&"sudo -u x rm -rf /".to_string()));
        assert!(a.check_forms.contains(&"rm -rf /".to_string()));
        assert_eq!(a.allow_forms, ["env X=1 /usr/bin/sudo -u x rm -rf /"]);

        let a = analyse(
            &[],
            &ws("timeout 30 nice -n 5 /usr/bin/npm test"),
            &[],
            Role::Full,
        );
        assert!(a.allow_forms.contains(&"npm test".to_string()));
        assert!(a.allow_forms.contains(&"/usr/bin/npm test".to_string()));
    }
}
