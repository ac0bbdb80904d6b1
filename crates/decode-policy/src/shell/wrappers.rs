//! Seeing through assignments, wrappers and privilege wrappers (docs/permissions.md, "Shell commands: fragments").

use std::path::Path;

use super::runners::{self, Script};
use super::words::Word;
use super::wrapper_table::WRAPPERS;
use super::writes::Target;
use super::{Redir, Role};
use crate::options::{self, OptionSpec};

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
    pub(super) fn move_to(&mut self, dir: Workdir) {
        self.chdir = match (self.chdir.take(), dir) {
            (Some(Workdir::Unknown), _) | (_, Workdir::Unknown) => Some(Workdir::Unknown),
            (Some(Workdir::At(base)), Workdir::At(d)) if !d.starts_with(['/', '~']) => {
                Some(Workdir::At(format!("{}/{d}", base.trim_end_matches('/'))))
            }
            (_, d) => Some(d),
        };
    }
}

/// Wrapper levels seen through with every form recorded; beyond, only the
/// innermost command is (the command is then opaque).
pub(crate) const MAX_SEE_THROUGH: usize = 16;

/// Tools whose `run` sub-command runs a command (the table reads `NAME run …`).
const RUN_TOOLS: &[&str] = &[
    "uv",
    "uvx",
    "pipx",
    "poetry",
    "pdm",
    "hatch",
    "rye",
    "pipenv",
    "conda",
    "mamba",
    "micromamba",
];

/// pnpm's own commands (any other word is run with `pnpm exec`).
const PNPM_COMMANDS: &[&str] = &[
    "add",
    "i",
    "install",
    "ci",
    "update",
    "up",
    "upgrade",
    "remove",
    "rm",
    "uninstall",
    "un",
    "link",
    "ln",
    "unlink",
    "import",
    "rebuild",
    "rb",
    "prune",
    "fetch",
    "patch",
    "patch-commit",
    "patch-remove",
    "audit",
    "list",
    "ls",
    "ll",
    "la",
    "outdated",
    "why",
    "licenses",
    "run",
    "run-script",
    "test",
    "t",
    "tst",
    "start",
    "exec",
    "dlx",
    "create",
    "publish",
    "pack",
    "store",
    "root",
    "bin",
    "env",
    "setup",
    "init",
    "deploy",
    "doctor",
    "config",
    "c",
    "get",
    "set",
    "server",
    "recursive",
    "multi",
    "m",
    "help",
    "cache",
    "self-update",
    "approve-builds",
    "ignored-builds",
    "cat-file",
    "cat-index",
    "find-hash",
    "dedupe",
    "sbom",
    "version",
    "catalog",
    "restart",
    "stop",
    "owner",
    "whoami",
    "login",
    "logout",
    "adduser",
    "dist-tag",
    "deprecate",
    "docs",
    "search",
    "view",
    "info",
    "show",
    "unpublish",
    "x",
];

/// bun's own commands (any other word, and `bun run NAME` without such a script,
/// runs a program from PATH).
const BUN_COMMANDS: &[&str] = &[
    "run",
    "test",
    "x",
    "exec",
    "install",
    "i",
    "add",
    "a",
    "remove",
    "rm",
    "update",
    "outdated",
    "link",
    "unlink",
    "pm",
    "build",
    "init",
    "create",
    "c",
    "upgrade",
    "publish",
    "patch",
    "patch-commit",
    "audit",
    "info",
    "why",
    "repl",
    "help",
    "completions",
    "feedback",
    "ci",
];

/// Wrappers allow rules may look past.
const HARMLESS: &[&str] = &["timeout", "time", "nice", "nohup"];

/// Directories whose programs count by their name for allow rules.
const STD_BIN: &[&str] = &["/bin", "/usr/bin", "/sbin", "/usr/sbin"];

/// Folders that count like [`STD_BIN`] only when the person running Decode
/// cannot write them (a user-owned `/usr/local/bin` is not a system folder).
const LOCAL_BIN: &[&str] = &["/usr/local/bin", "/usr/local/sbin", "/opt/homebrew/bin"];

/// Whether the person running Decode may write `dir` (or cannot tell):
/// root, the owner with write permission, or group or other write bits.
fn may_write(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = std::fs::metadata(dir) else {
        return false; // Missing: nothing runs from it.
    };
    // The effective user owns /proc/self (Linux); elsewhere, the home folder's owner.
    let me = std::fs::metadata("/proc/self")
        .or_else(|_| std::fs::metadata(std::env::var_os("HOME").unwrap_or_default()))
        .map(|m| m.uid());
    let Ok(me) = me else {
        return true;
    };
    me == 0 || (m.uid() == me && m.mode() & 0o200 != 0) || m.mode() & 0o022 != 0
}

/// Whether `dir` is a system binary folder for allow rules.
fn system_bin(dir: &str) -> bool {
    if STD_BIN.contains(&dir) {
        return true;
    }
    if !LOCAL_BIN.contains(&dir) {
        return false;
    }
    static WRITABLE: std::sync::OnceLock<Vec<bool>> = std::sync::OnceLock::new();
    let writable =
        WRITABLE.get_or_init(|| LOCAL_BIN.iter().map(|d| may_write(Path::new(d))).collect());
    LOCAL_BIN
        .iter()
        .position(|d| *d == dir)
        .is_some_and(|k| !writable[k])
}

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
    if system_bin(dir) && i + 1 < s.len() {
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
/// `long_arg` take a value (attached or the next word), any other takes none.
/// Returns the index of the first non-option word.
pub(super) fn skip_opts(words: &[Word], i: usize, short_arg: &str, long_arg: &[&str]) -> usize {
    let spec = OptionSpec {
        short_value: short_arg,
        value: long_arg,
        complete: true,
        ..OptionSpec::default()
    };
    options::scan(words, i, &spec).start
}

/// Analyses one simple command.
pub(crate) fn analyse(
    assigns: &[Word],
    words: &[Word],
    redirs: &[Redir],
    role: Role,
    config: &super::ShellConfig,
) -> Analysis {
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
        core_quoted: Vec::new(),
        chdir: None,
        own_writes: Vec::new(),
        find_roots: None,
        over_budget: None,
    };
    if canon != text {
        a.check_forms.push(canon.clone());
    }
    runners::assignments(assigns.iter(), role, &mut a);
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
        let next = see_through(&name, words, i, role, allow_ok, redirs, config, &mut a);
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
    a.core_quoted = words[core_start..].iter().map(|w| w.quoted).collect();
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
    if a.core.first().is_some_and(|n| n == "rm") {
        // `rm -fr x`, `rm -r -f x`, `rm --recursive --force x`: deny and ask
        // rules written as `rm -rf …` see them too.
        for f in rm_forms(&a.core) {
            let f = if suffix.is_empty() {
                f
            } else {
                format!("{f} {suffix}")
            };
            push_unique(&mut a.check_forms, f);
        }
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

/// `rm` with its recursive and force options spelled `-rf` / `-fr` / `-r`
/// / `-f` (other options dropped), then its operands.
fn rm_forms(core: &[String]) -> Vec<String> {
    let (mut r, mut f) = (false, false);
    let mut operands = Vec::new();
    let mut done = false;
    for a in &core[1..] {
        if done || !a.starts_with('-') || a == "-" {
            operands.push(a.as_str());
        } else if a == "--" {
            done = true;
        } else if let Some(long) = a.strip_prefix("--") {
            r |= long == "recursive";
            f |= long == "force";
        } else {
            r |= a.contains(['r', 'R']);
            f |= a.contains('f');
        }
    }
    let ops = operands.join(" ");
    let flags: &[&str] = match (r, f) {
        (true, true) => &["-rf", "-fr"],
        (true, false) => &["-r"],
        (false, true) => &["-f"],
        (false, false) => &[],
    };
    flags
        .iter()
        .map(|fl| {
            if ops.is_empty() {
                format!("rm {fl}")
            } else {
                format!("rm {fl} {ops}")
            }
        })
        .collect()
}

/// Returns the index of the command a wrapper runs, or `None` when `name`
/// is not a wrapper (or runs nothing further). Records derived commands.
#[allow(clippy::too_many_arguments)]
fn see_through(
    name: &str,
    words: &[Word],
    i: usize,
    role: Role,
    allow_ok: bool,
    redirs: &[Redir],
    config: &super::ShellConfig,
    a: &mut Analysis,
) -> Option<usize> {
    if let Some(spec) = WRAPPERS.iter().find(|w| w.matches(name, words, i)) {
        let start = spec.start(words, i, a);
        if start.is_none() && matches!(name, "chroot" | "unshare" | "nsenter" | "firejail") {
            // Without a command it starts a shell, which reads its script from
            // standard input (`unshare -r <<< 'rm -rf ~'`).
            runners::shell_stdin(name, redirs, Role::Checked, false, a);
        }
        if matches!(name, "strace" | "ltrace") {
            // `strace -o '|CMD'` (or `!CMD`) pipes the trace into CMD.
            let opts = &words[i + 1..start.unwrap_or(words.len())];
            for v in options::values(opts, &spec.options(), &["-o", "--output"]) {
                match v.text.strip_prefix(['|', '!']) {
                    Some(cmd) => a
                        .derived
                        .push(Derived::Source(cmd.to_string(), Role::Checked)),
                    None => a.own_writes.push(Target::new(&v.text, opts[v.at].dynamic)),
                }
            }
        }
        // `hatch run ENV:CMD` runs CMD in ENV.
        if let Some(j) = start.filter(|&j| name == "hatch" && words[j].text.contains(':')) {
            a.dynamic = Some(
                "`hatch run ENV:COMMAND` names an environment and a command in one word".into(),
            );
            if let Some((_, cmd)) = words[j].text.split_once(':') {
                let mut ws = vec![Word::raw(cmd)];
                ws.extend_from_slice(&words[j + 1..]);
                a.derived.push(Derived::Words(ws, Role::Checked));
            }
        }
        return start;
    }
    if let Some(r) = words[i + 1..].iter().position(|w| w.text == "run") {
        if RUN_TOOLS.contains(&name) {
            // `uv -q run …`, `poetry -C dir run …`, `hatch env run …`: global
            // options (or other words) before `run`, whose arity the gate does not
            // know. Opaque; and what `NAME run …` would run is judged too, so deny
            // rules and the critical-removal cap see it (bypass included).
            a.dynamic = Some(format!(
                "`{name}` runs a command after options or words the gate does not read"
            ));
            // Global options that move it (`uv --directory /`, `poetry -C /`), or
            // any other option naming a folder: what runs runs there.
            let before = &words[i + 1..i + 1 + r];
            let dirs = OptionSpec {
                value: &["--directory", "-C", "--cwd", "--project", "-P"],
                ..OptionSpec::default()
            };
            let moved = options::values(before, &dirs, &["--directory", "-C", "--cwd"]);
            let folder_option = before.iter().any(|w| {
                let n = w.text.split('=').next().unwrap_or("");
                n.starts_with("--")
                    && ["dir", "cwd", "root", "project"]
                        .iter()
                        .any(|d| n.contains(d))
            });
            for v in &moved {
                a.move_to(Workdir::At(v.text.clone()));
            }
            if moved.is_empty() && folder_option {
                a.move_to(Workdir::Unknown);
            }
            if !a.deep {
                let mut ws = vec![words[i].clone(), words[i + 1 + r].clone()];
                ws.extend_from_slice(&words[i + 2 + r..]);
                a.derived.push(Derived::Words(ws, Role::Checked));
            }
            return None;
        }
    }
    let sub = |k: usize| words.get(i + k).map(|w| w.text.as_str());
    match name {
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            runners::assignments(words[i + 1..].iter(), role, a);
            None
        }
        "alias" => {
            if words[i + 1..].iter().any(|w| w.text.contains('=')) {
                a.dynamic =
                    Some("an alias defined in the command changes what later words run".into());
            }
            // What an alias runs is judged by deny rules, ask rules and caps.
            for w in &words[i + 1..] {
                if let Some((_, v)) = w.text.split_once('=') {
                    if !v.trim().is_empty() {
                        a.derived
                            .push(Derived::Source(v.to_string(), Role::Checked));
                    }
                }
            }
            None
        }
        "source" | "." => {
            let j = skip_opts(words, i + 1, "", &[]);
            match words.get(j) {
                Some(w) if runners::stdin_script(w) => {
                    runners::shell_stdin(name, redirs, role, allow_ok, a);
                }
                Some(w) if runners::piped_script(w) => {
                    a.dynamic = Some(format!(
                        "`{name}` reads a script from a pipe, which the gate cannot see"
                    ));
                    runners::fed_scripts(name, redirs, a);
                }
                _ => {}
            }
            None
        }
        "mapfile" | "readarray" => {
            runners::mapfile(words, i, a);
            None
        }
        "tar" | "gtar" | "bsdtar" => {
            runners::tar(words, i, role, a);
            None
        }
        "rsync" => {
            runners::rsync(words, i, role, a);
            None
        }
        "make" | "gmake" => {
            runners::make(words, i, role, a);
            None
        }
        "ssh" | "scp" | "sftp" => {
            runners::ssh(words, i, role, a);
            None
        }
        "cargo" => {
            let texts: Vec<String> = words[i + 1..].iter().map(|w| w.text.clone()).collect();
            let skip = usize::from(texts.first().is_some_and(|t| t.starts_with('+')));
            if let Some(&k) = crate::caps::subcommand_candidates(
                &texts[skip..],
                &crate::caps::global_options(&[
                    "--config",
                    "-Z",
                    "-C",
                    "--color",
                    "--manifest-path",
                ]),
            )
            .first()
            {
                let at = i + 1 + skip + k;
                if let Some(exp) = config.cargo_alias(&words[at].text) {
                    let mut ws = words[i..at].to_vec();
                    ws.extend(exp.iter().map(|e| Word::raw(e)));
                    ws.extend_from_slice(&words[at + 1..]);
                    a.derived.push(Derived::Words(ws, role));
                }
            }
            let mut j = i + 1;
            while j < words.len() {
                let t = words[j].text.as_str();
                let value = if t == "--config" {
                    words.get(j + 1).map(|w| w.text.as_str())
                } else {
                    t.strip_prefix("--config=")
                };
                if let Some(v) = value {
                    if v.trim_start().starts_with("alias") || !v.contains('=') {
                        a.dynamic = Some(
                            "`cargo --config` defines an alias or loads configuration from a file"
                                .into(),
                        );
                    }
                    if let Some((key, program)) = v.split_once('=').filter(|(k, _)| {
                        let k = k.to_ascii_lowercase();
                        k.ends_with("runner") || k.contains("rustc") || k.ends_with("linker")
                    }) {
                        // `target.….runner="rm"`: `cargo run -- ARGS` runs it with ARGS.
                        a.dynamic = Some(format!("`cargo --config {key}` runs another program"));
                        let program = program.trim().trim_matches(['"', '\'', '[', ']']);
                        let mut ws = vec![Word::raw(program)];
                        if let Some(d) = words.iter().position(|w| w.text == "--") {
                            ws.extend_from_slice(&words[d + 1..]);
                        }
                        a.derived.push(Derived::Words(ws, Role::Checked));
                    }
                }
                j += 1;
            }
            None
        }
        "npx" | "bunx" | "pnpx" => {
            let spec = OptionSpec {
                short_value: "pc",
                value: &[
                    "--package",
                    "--call",
                    "--registry",
                    "--cache",
                    "--userconfig",
                    "--prefix",
                ],
                flags: &["--yes", "-y", "--no", "--quiet", "-q", "--ignore-existing"],
                ..OptionSpec::default()
            };
            package_exec(words, i + 1, &spec, role, a)
        }
        "npm" | "pnpm" | "yarn" | "bun" => {
            // npm's `-w` takes a workspace; pnpm's and bun's take none, so for
            // them both readings are candidates.
            let with_arg = crate::caps::pkg_with_arg(name);
            let subs = crate::caps::subcommand_candidates(
                &words.iter().map(|w| w.text.clone()).collect::<Vec<_>>()[i + 1..],
                &crate::caps::global_options(&with_arg),
            );
            let exec_like = |w: &str| {
                (name == "npm" && crate::aliases::npm_command(w) == Some("exec"))
                    || matches!(
                        (name, w),
                        ("pnpm", "exec" | "dlx") | ("yarn", "exec" | "dlx") | ("bun", "x" | "exec")
                    )
            };
            // An option of unknown arity before the sub-command (`pnpm -w exec`,
            // where `-w` takes no value but npm's does): if any reading runs a
            // command, where it starts is not known.
            if subs
                .iter()
                .skip(1)
                .any(|&k| exec_like(words[i + 1 + k].text.as_str()))
            {
                a.dynamic = Some(format!(
                    "`{name}`: an option before the sub-command may or may not take a value, and one reading runs a command"
                ));
                return None;
            }
            let &k = subs.first()?;
            let at = i + 1 + k;
            // `npm --prefix DIR`, `pnpm -C DIR`, `yarn --cwd DIR`: what it runs
            // runs there.
            let spec = crate::caps::global_options(&with_arg);
            let dirs = ["--prefix", "-C", "--dir", "--cwd"];
            for v in options::values(&words[i + 1..at], &spec, &dirs) {
                a.move_to(Workdir::At(v.text));
            }
            // Workspaces (`npm exec -w x`, `--ws`, `pnpm -r`, `--filter`, `yarn
            // workspace x`): what runs runs in each workspace's folder.
            let workspaces = [
                "-w",
                "--workspace",
                "--ws",
                "--workspaces",
                "--filter",
                "-F",
                "-r",
                "--recursive",
            ];
            // (pnpm's and bun's `-w` is the workspace root, not a workspace.)
            let listed = if matches!(name, "pnpm" | "bun") {
                &workspaces[1..]
            } else {
                &workspaces[..]
            };
            let in_workspaces = options::flagged(&words[i + 1..], &spec, listed);
            if in_workspaces
                || (name == "yarn" && matches!(words[at].text.as_str(), "workspace" | "workspaces"))
            {
                a.move_to(Workdir::Unknown);
            }
            if name == "npm" && words[at].text == "explore" {
                // `npm explore PKG -- CMD` runs CMD in a shell in the package's folder.
                a.move_to(Workdir::Unknown);
                if let Some(d) = words[at..].iter().position(|w| w.text == "--") {
                    let line: Vec<&str> = words[at + d + 1..]
                        .iter()
                        .map(|w| w.text.as_str())
                        .collect();
                    if !line.is_empty() {
                        a.derived
                            .push(Derived::Source(line.join(" "), Role::Checked));
                    }
                } else {
                    runners::shell_stdin("sh", redirs, role, allow_ok, a);
                }
            }
            if name == "bun" && words[at].text == "exec" {
                // `bun exec "…"` runs the string in Bun's shell.
                if at + 1 < words.len() {
                    a.derived
                        .push(Derived::Source(join(&words[at + 1..], ""), Role::Checked));
                }
                return None;
            }
            let sub_word = words[at].text.as_str();
            // The first word after the sub-command's own options.
            let operand = |from: usize| {
                let mut j = from;
                while j < words.len() && words[j].text.starts_with('-') {
                    j += 1;
                    if words[j - 1].text == "--" {
                        break;
                    }
                }
                j
            };
            if name == "pnpm" && exec_like(sub_word) {
                // Shell mode (`pnpm -c exec 'CMD'`, `-rc`, `--shell-mode`, before or
                // after `exec`): the command is a string for the shell.
                // Only pnpm's and exec's own options: `pnpm exec sh -c …` is sh's `-c`.
                let exec_options = OptionSpec {
                    value: &[
                        "--filter",
                        "-F",
                        "--workspace-concurrency",
                        "--reporter",
                        "-C",
                        "--dir",
                    ],
                    ..OptionSpec::default()
                };
                let end = options::scan(words, at + 1, &exec_options).start;
                let shell_mode = words[i + 1..end]
                    .iter()
                    .take_while(|w| w.text != "--")
                    .filter(|w| w.text.starts_with('-'))
                    .any(|w| {
                        w.text == "--shell-mode"
                            || (!w.text.starts_with("--") && w.text[1..].contains('c'))
                    });
                if shell_mode {
                    let j = operand(at + 1);
                    if j < words.len() {
                        a.derived
                            .push(Derived::Source(join(&words[j..], ""), Role::Checked));
                    }
                    return None;
                }
            }
            // pnpm runs a command it does not know with `exec`; bun runs one (and
            // `bun run NAME` without such a script) from PATH.
            let runs_program = match name {
                "pnpm" => !PNPM_COMMANDS.contains(&sub_word) && !exec_like(sub_word),
                "bun" => !BUN_COMMANDS.contains(&sub_word) || sub_word == "run",
                _ => false,
            };
            if runs_program && !a.deep {
                let j = if sub_word == "run" {
                    operand(at + 1)
                } else {
                    at
                };
                if j < words.len() {
                    a.derived
                        .push(Derived::Words(words[j..].to_vec(), Role::Checked));
                }
                return None;
            }
            match (name, words[at].text.as_str()) {
                // (`bun exec` returned above: its string is judged.)
                (_, w) if exec_like(w) => {
                    if name == "yarn" && w == "exec" && at + 1 < words.len() {
                        // Yarn 2 and later run `yarn exec`'s arguments as a shell script.
                        let line: Vec<&str> =
                            words[at + 1..].iter().map(|w| w.text.as_str()).collect();
                        a.derived
                            .push(Derived::Source(line.join(" "), Role::Checked));
                    }
                    // (`-w` takes a workspace in npm and none in pnpm: read both ways.)
                    let spec = OptionSpec {
                        short_value: "pc",
                        value: &[
                            "--package",
                            "--call",
                            "--registry",
                            "--cache",
                            "--filter",
                            "--workspace",
                        ],
                        flags: &["--yes", "-y", "--no", "--quiet", "-q", "--recursive", "-r"],
                        ..OptionSpec::default()
                    };
                    package_exec(words, at + 1, &spec, role, a)
                }
                ("yarn", "workspace") if at + 2 < words.len() => {
                    let mut ws = vec![words[i].clone()];
                    ws.extend_from_slice(&words[at + 2..]);
                    a.derived.push(Derived::Words(ws, role));
                    None
                }
                ("yarn", "workspaces") if sub(1 + k + 1) == Some("foreach") => {
                    let spec = OptionSpec {
                        short_value: "j",
                        value: &["--jobs", "--from", "--include", "--exclude"],
                        flags: &[
                            "-A",
                            "--all",
                            "-R",
                            "--recursive",
                            "-W",
                            "--worktree",
                            "-v",
                            "--verbose",
                            "-p",
                            "--parallel",
                            "-i",
                            "--interlaced",
                            "-t",
                            "--topological",
                            "--topological-dev",
                            "--no-private",
                        ],
                        ..OptionSpec::default()
                    };
                    let j = runners::runner_start(words, at + 2, &spec, a).unwrap_or(words.len());
                    if j < words.len() {
                        let mut ws = vec![words[i].clone()];
                        ws.extend_from_slice(&words[j..]);
                        a.derived.push(Derived::Words(ws, role));
                    }
                    None
                }
                _ => None,
            }
        }
        "sg" => {
            // `sg [-] GROUP [-c] COMMAND`: the command is a string `/bin/sh -c` runs,
            // with or without `-c`.
            let mut j = i + 1;
            if sub(1) == Some("-") {
                j += 1;
            }
            j += 1;
            if words.get(j).is_some_and(|w| w.text == "-c") {
                j += 1;
            }
            if j < words.len() {
                a.derived
                    .push(Derived::Source(join(&words[j..], ""), Role::Checked));
            }
            None
        }
        "env" => env_next(words, i, a),
        "time" => {
            // Bash's `time` keyword knows only `-p`: `time -50 cmd` runs `-50`,
            // while /usr/bin/time (after `env`, say) reads `-f FMT`. Which one runs
            // depends on where the word stands, so any other option asks.
            if sub(1).is_some_and(|t| t.starts_with('-') && t != "-p" && t != "--") {
                a.dynamic = Some(
                    "`time` with an option other than -p: bash's keyword and /usr/bin/time read it differently"
                        .into(),
                );
            }
            Some(skip_opts(words, i + 1, "fo", &["--format", "--output"]))
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
                if t == "--" {
                    // After `--`: the file (unless it came before), then the command.
                    let at = if file_seen { j + 1 } else { j + 2 };
                    return (at < words.len()).then_some(at);
                }
                if t.starts_with('-') && t.len() > 1 {
                    j = skip_opts(words, j, short, &long).max(j + 1);
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
        "cc" | "gcc" | "g++" | "c++" | "clang" | "clang++" => {
            // `-wrapper PROG,ARGS` runs each compiler pass under PROG.
            for (k, w) in words.iter().enumerate().skip(i + 1) {
                if w.text == "-wrapper" {
                    if let Some(list) = words.get(k + 1) {
                        let ws: Vec<Word> = list.text.split(',').map(Word::raw).collect();
                        a.derived.push(Derived::Words(ws, Role::Checked));
                    }
                }
            }
            None
        }
        "gh" => {
            // `gh alias set NAME 'EXPANSION'`: later `gh NAME` runs the expansion.
            let args: Vec<&str> = words[i + 1..].iter().map(|w| w.text.as_str()).collect();
            if let Some(k) = args.iter().position(|w| *w == "alias") {
                if matches!(args.get(k + 1), Some(&"set" | &"import")) {
                    a.dynamic =
                        Some("`gh alias set` defines what a later `gh` command runs".into());
                }
            }
            None
        }
        "cmake" if sub(1) == Some("-E") => {
            // `cmake -E chdir DIR CMD…`, `env … CMD…`, `time CMD…` run CMD;
            // `remove_directory DIR…` removes like `rm -rf`.
            let at = i + 3;
            match sub(2) {
                Some("chdir") if at + 1 < words.len() => {
                    a.move_to(Workdir::At(words[at].text.clone()));
                    Some(at + 1)
                }
                Some("env") => {
                    let mut j = at;
                    while j < words.len()
                        && (words[j].text.starts_with("--") || is_assignment(&words[j].text))
                    {
                        j += 1;
                    }
                    (j < words.len()).then_some(j)
                }
                Some("time") => (at < words.len()).then_some(at),
                Some("remove_directory" | "rm") => {
                    let mut ws = vec![Word::raw("rm"), Word::raw("-rf")];
                    ws.extend(
                        words[at..]
                            .iter()
                            .filter(|w| !w.text.starts_with('-'))
                            .cloned(),
                    );
                    a.derived.push(Derived::Words(ws, Role::Checked));
                    None
                }
                _ => None,
            }
        }
        "man" => {
            // `-P PAGER` / `--pager=PAGER` is a command man runs.
            let spec = OptionSpec {
                short_value: "CMPSsemLRTHEp",
                value: &[
                    "--pager",
                    "--config-file",
                    "--manpath",
                    "--sections",
                    "--extension",
                    "--locale",
                    "--encoding",
                    "--html",
                    "--preprocessor",
                ],
                ..OptionSpec::default()
            };
            for v in options::values(&words[i + 1..], &spec, &["-P", "--pager", "-H", "--html"]) {
                a.derived.push(Derived::Source(v.text, Role::Checked));
            }
            None
        }
        "split" => {
            // `--filter=COMMAND` runs COMMAND for each piece.
            for v in options::values(&words[i + 1..], &super::writes::SPLIT, &["--filter"]) {
                a.derived.push(Derived::Source(v.text, Role::Checked));
            }
            None
        }
        "zip" => {
            // `-TT CMD` / `--unzip-command CMD` tests the archive with CMD.
            for (k, w) in words.iter().enumerate().skip(i + 1) {
                let cmd = match w.text.as_str() {
                    "-TT" | "--unzip-command" => words.get(k + 1).map(|n| n.text.clone()),
                    t => t.strip_prefix("--unzip-command=").map(str::to_string),
                };
                if let Some(c) = cmd {
                    a.derived.push(Derived::Source(c, Role::Checked));
                }
            }
            None
        }
        "start-stop-daemon" => {
            // `--exec PROGRAM` (or `--startas`), its arguments after `--`.
            let spec = OptionSpec {
                short_value: "xanpudcgrNPIksRO",
                value: &[
                    "--exec",
                    "--startas",
                    "--name",
                    "--pidfile",
                    "--user",
                    "--chdir",
                    "--chuid",
                    "--group",
                    "--chroot",
                    "--nicelevel",
                    "--procsched",
                    "--iosched",
                    "--umask",
                    "--signal",
                    "--retry",
                    "--output",
                    "--notify-timeout",
                ],
                complete: true,
                ..OptionSpec::default()
            };
            let args = &words[i + 1..];
            let end = args
                .iter()
                .position(|w| w.text == "--")
                .unwrap_or(args.len());
            let opts = &args[..end];
            for v in options::values(opts, &spec, &["-d", "--chdir"]) {
                a.move_to(Workdir::At(v.text));
            }
            if !options::values(opts, &spec, &["-r", "--chroot"]).is_empty() {
                a.move_to(Workdir::Unknown);
            }
            let program = options::values(opts, &spec, &["-a", "--startas"])
                .pop()
                .or_else(|| options::values(opts, &spec, &["-x", "--exec"]).pop());
            if let Some(v) = program {
                let mut w = opts[v.at].clone();
                w.text = v.text;
                let mut ws = vec![w];
                ws.extend_from_slice(args.get(end + 1..).unwrap_or(&[]));
                a.derived.push(Derived::Words(ws, Role::Checked));
            }
            None
        }
        "script" => {
            // `script [OPTIONS] [FILE]`; `-c STRING` (also `-qc`, `--comm=…`).
            let commands = options::values(
                &words[i + 1..],
                &super::writes::SCRIPT,
                &["-c", "--command"],
            );
            if commands.is_empty() {
                // Without `-c` it starts a shell that reads standard input.
                runners::shell_stdin(name, redirs, Role::Checked, false, a);
            }
            for v in commands {
                a.derived.push(Derived::Source(v.text, Role::Checked));
            }
            None
        }
        "coproc" => {
            // `coproc [NAME] COMMAND`: a NAME only before a compound command.
            Some(i + 1)
        }
        "xargs" => {
            // `-e[EOF]`, `-i[R]`, `-l[N]`: optional values, attached only.
            let spec = OptionSpec {
                short_value: "adEILnPs",
                glued: "eil",
                value: &[
                    "--arg-file",
                    "--delimiter",
                    "--max-args",
                    "--max-procs",
                    "--max-chars",
                    "--process-slot-var",
                ],
                complete: true,
                ..OptionSpec::default()
            };
            let j = options::scan(words, i + 1, &spec).start;
            // `-I R`/`-iR`/`--replace=R`: words holding R are filled in when it
            // runs (`xargs -I{} git {}` may run any sub-command).
            let opts = &words[i + 1..j];
            let mut replace: Vec<String> = options::values(opts, &spec, &["-I", "-i"])
                .into_iter()
                .map(|v| v.text)
                .collect();
            if options::flagged(opts, &spec, &["-i", "--replace"]) && replace.is_empty() {
                replace.push("{}".into());
            }
            for w in opts {
                if let Some(r) = w.text.strip_prefix("--replace=") {
                    replace.push(r.to_string());
                }
            }
            if j < words.len() && !a.deep {
                let filled: Vec<Word> = words[j..]
                    .iter()
                    .map(|w| {
                        let mut w = w.clone();
                        w.dynamic |= replace
                            .iter()
                            .any(|r| !r.is_empty() && w.text.contains(r.as_str()));
                        w
                    })
                    .collect();
                a.derived.push(Derived::Words(filled, role));
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
            // `sudo -D DIR`, `run0 --chdir DIR`; `sudo -R ROOT` re-roots it.
            let spec = OptionSpec {
                short_value: short,
                value: long,
                complete: true,
                ..OptionSpec::default()
            };
            for v in options::values(&words[i + 1..j], &spec, &["-D", "--chdir"]) {
                a.move_to(Workdir::At(v.text));
            }
            if !options::values(&words[i + 1..j], &spec, &["-R", "--chroot"]).is_empty()
                || (name == "sudo" && options::flagged(&words[i + 1..j], &spec, &["-i", "--login"]))
                || (name == "pkexec" && !options::flagged(&words[i + 1..j], &spec, &["--keep-cwd"]))
            {
                // A new root, or a login shell (or pkexec, unless it keeps the folder)
                // that starts in the user's home.
                a.move_to(Workdir::Unknown);
            }
            while j < words.len() && is_assignment(&words[j].text) {
                j += 1;
            }
            Some(j)
        }
        "su" | "runuser" => {
            // `su [OPTIONS] [-] [USER [ARGS]]`, `-c CMD` (also `-lc CMD`, `--comm=CMD`,
            // `--session-command CMD`); `runuser -u USER CMD…` runs CMD itself.
            let args = &words[i + 1..];
            let spec = if name == "su" { SU } else { RUNUSER };
            if options::flagged(args, &spec, &["-l", "--login"])
                || args.iter().any(|w| w.text == "-")
            {
                // A login shell starts in the user's home.
                a.move_to(Workdir::Unknown);
            }
            for v in options::values(args, &spec, &["-c", "--command", "--session-command"]) {
                a.derived.push(Derived::Source(v.text, Role::Checked));
            }
            let operands: Vec<usize> = options::operands(args, &spec)
                .into_iter()
                .skip_while(|&k| args[k].text == "-")
                .collect();
            if name == "runuser" && !options::values(args, &spec, &["-u", "--user"]).is_empty() {
                return operands.first().map(|k| i + 1 + k);
            }
            // The words after the user go to the shell (`su root -- -c CMD`), and
            // `-s PROGRAM` is the shell (`su -s /bin/rm root -- -rf /`).
            let shell = options::values(args, &spec, &["-s", "--shell"]).pop();
            let shell_args = operands.get(1..).unwrap_or(&[]);
            // `-p`/`-m` keep the environment, whose SHELL is then the shell.
            let env_shell = options::flagged(args, &spec, &["-p", "-m", "--preserve-environment"]);
            let has_command =
                !options::values(args, &spec, &["-c", "--command", "--session-command"]).is_empty();
            if !has_command && shell.is_none() && shell_args.is_empty() {
                // `su <<< 'CMD'`: the user's shell reads its script from input.
                runners::shell_stdin(name, redirs, Role::Checked, false, a);
            }
            if shell.is_some() || env_shell || !shell_args.is_empty() {
                let program = shell.map_or_else(
                    || {
                        if env_shell {
                            Word {
                                text: "$SHELL".into(),
                                dynamic: true,
                                ..Word::default()
                            }
                        } else {
                            Word::raw("sh")
                        }
                    },
                    |v| {
                        let mut w = args[v.at].clone();
                        w.text = v.text;
                        w
                    },
                );
                let mut ws = vec![program];
                ws.extend(shell_args.iter().map(|&k| args[k].clone()));
                a.derived.push(Derived::Words(ws, Role::Checked));
            }
            None
        }
        "find" => {
            // Leading options (GNU: -H -L -P -D LIST -OLEVEL; BSD: -E -X -d
            // -s -x, -f ROOT), then the starting points: the words before
            // the first expression.
            let mut j = i + 1;
            let mut roots = Vec::new();
            while j < words.len() {
                match words[j].text.as_str() {
                    "-H" | "-L" | "-P" | "-E" | "-X" | "-d" | "-s" | "-x" => j += 1,
                    "-D" => j += 2,
                    "-f" => {
                        roots.push(
                            words
                                .get(j + 1)
                                .and_then(|w| (!w.dynamic).then(|| w.text.clone())),
                        );
                        j += 2;
                    }
                    "--" => {
                        j += 1;
                        break;
                    }
                    t if t.starts_with("-O") || (t.starts_with("-D") && t.len() > 2) => j += 1,
                    _ => break,
                }
            }
            while j < words.len() {
                let t = words[j].text.as_str();
                if t.starts_with('-') || t == "(" || t == "!" || t == "," {
                    break;
                }
                roots.push(if words[j].dynamic {
                    None
                } else {
                    Some(t.to_string())
                });
                j += 1;
            }
            if roots.is_empty() {
                roots.push(Some(".".to_string()));
            }
            // `-files0-from FILE`: starting points read from a file.
            if words[j.min(words.len())..]
                .iter()
                .any(|w| w.text == "-files0-from")
            {
                roots.push(None);
            }
            // `-L`/`-follow`: find follows links, so what lies under a starting
            // point may be anywhere.
            if words[i + 1..]
                .iter()
                .any(|w| matches!(w.text.as_str(), "-L" | "-follow"))
            {
                roots = vec![None];
            }
            a.find_roots = Some(roots.clone());
            while j < words.len() {
                let t = words[j].text.as_str();
                if matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let start = j + 1;
                    let mut end = start;
                    while end < words.len() && !matches!(words[end].text.as_str(), ";" | "+") {
                        end += 1;
                    }
                    if end > start {
                        // `-exec {} …`: the program is what find found.
                        let mut ws = words[start..end].to_vec();
                        ws[0].dynamic |= ws[0].text.contains("{}");
                        a.derived.push(Derived::Find(ws, role, roots.clone()));
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
                        // rg runs `PRE FILE` for each file it searches, like
                        // `find PATHS -exec PRE {} \;`.
                        let paths: Vec<Option<String>> = words[i + 1..]
                            .iter()
                            .filter(|w| !w.text.starts_with('-'))
                            .skip(1)
                            .map(|w| (!w.dynamic).then(|| w.text.clone()))
                            .collect();
                        let roots = if paths.is_empty() {
                            vec![Some(".".to_string())]
                        } else {
                            paths
                        };
                        a.derived.push(Derived::Words(vec![p.clone()], role));
                        a.derived
                            .push(Derived::Find(vec![p, Word::raw("{}")], role, roots));
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
            runners::git(words, i, role, a);
            let texts: Vec<String> = words[i + 1..].iter().map(|w| w.text.clone()).collect();
            let globals = options::scan(&texts, 0, &crate::caps::GIT).start;
            for v in options::values(&texts[..globals], &crate::caps::GIT, &["-C"]) {
                a.move_to(Workdir::At(v.text));
            }
            if let Some(&k) = crate::caps::subcommand_candidates(&texts, &crate::caps::GIT).first()
            {
                let at = i + 1 + k;
                if let Some(exp) = config.git_alias(&words[at].text) {
                    let rest: Vec<&str> = words[at + 1..].iter().map(|w| w.text.as_str()).collect();
                    match exp.trim_start().strip_prefix('!') {
                        // Run by a shell, the arguments appended.
                        Some(cmd) => a.derived.push(Derived::Source(
                            format!("{cmd} {}", rest.join(" ")).trim_end().to_string(),
                            role,
                        )),
                        None => {
                            let mut ws = words[i..at].to_vec();
                            ws.extend(exp.split_whitespace().map(Word::raw));
                            ws.extend_from_slice(&words[at + 1..]);
                            a.derived.push(Derived::Words(ws, role));
                        }
                    }
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
            // `parallel [OPTIONS] CMD … ::: ARGS`: the command line (run by a
            // shell) gets the arguments appended, from `:::`, files or input.
            let start = runners::runner_start(words, i + 1, &PARALLEL, a);
            let opts = &words[i + 1..start.unwrap_or(words.len())];
            for v in options::values(opts, &PARALLEL, &["--wd", "--workdir"]) {
                a.move_to(Workdir::At(v.text));
            }
            if let Some(j) = start {
                let end = words[j..]
                    .iter()
                    .position(|w| w.text.starts_with("::::") || w.text.starts_with(":::"))
                    .map_or(words.len(), |k| j + k);
                if end > j {
                    a.derived.push(Derived::Words(words[j..end].to_vec(), role));
                    let line: Vec<&str> = words[j..end].iter().map(|w| w.text.as_str()).collect();
                    a.derived
                        .push(Derived::Source(line.join(" "), Role::Checked));
                }
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
            match runners::shell_script(words, i) {
                Script::String(s) => {
                    // The string may run a shell that reads the command's input.
                    runners::fed_scripts(n, redirs, a);
                    if role == Role::Full && allow_ok {
                        // `bash -c 'X'` is judged by X: the string's fragments need
                        // allow rules, the wrapper itself only deny/ask/caps.
                        a.role = Role::Checked;
                        a.derived.push(Derived::Source(s, Role::Full));
                    } else {
                        a.derived.push(Derived::Source(s, Role::Checked));
                    }
                }
                Script::File(j) if runners::stdin_script(&words[j]) => {
                    runners::shell_stdin(n, redirs, role, allow_ok, a);
                }
                Script::File(j) => {
                    if runners::piped_script(&words[j]) {
                        a.dynamic = Some(format!(
                            "`{n}` reads its script from a pipe, which the gate cannot see"
                        ));
                        runners::fed_scripts(n, redirs, a);
                    }
                }
                Script::Stdin => runners::shell_stdin(n, redirs, role, allow_ok, a),
                Script::None => {}
            }
            None
        }
        "capsh" => {
            // `capsh [--shell=PROG] -- ARGS` runs PROG (bash) with ARGS.
            if let Some(d) = words[i + 1..].iter().position(|w| w.text == "--") {
                let shell = words[i + 1..i + 1 + d]
                    .iter()
                    .find_map(|w| w.text.strip_prefix("--shell=").map(Word::raw))
                    .unwrap_or_else(|| Word::raw("bash"));
                let mut ws = vec![shell];
                ws.extend_from_slice(&words[i + 2 + d..]);
                if ws.len() == 1 {
                    runners::shell_stdin(name, redirs, Role::Checked, false, a);
                } else {
                    a.derived.push(Derived::Words(ws, Role::Checked));
                }
            }
            None
        }
        n if !crate::external::knows_program(n) => {
            // A program that starts a shell when given no command (`newgrp`,
            // `setarch ARCH`, `fakeroot`), or any other followed by a shell that
            // reads standard input (`perf stat bash <<< …`): the script is judged.
            let starts_shell = matches!(n, "newgrp" | "fakeroot" | "linux32" | "linux64")
                || (n == "setarch" && words.len() <= i + 2);
            let fed = redirs.iter().any(|r| r.feed.is_some());
            let later_stdin_shell = fed
                && (i + 1..words.len()).any(|k| {
                    !words[k].dynamic
                        && SHELLS.contains(&basename(&words[k].text))
                        && !words
                            .get(k + 1)
                            .is_some_and(|o| o.text.starts_with('-') && o.text[1..].contains('c'))
                });
            if starts_shell || later_stdin_shell {
                runners::shell_stdin(n, redirs, Role::Checked, false, a);
            }
            // A program the gate does not know that runs a shell later on its
            // line (`mise exec -- sh -c 'CMD'`, `direnv exec . bash -c …`): the
            // shell's string meets deny rules, ask rules and caps.
            let shells = (i + 1..words.len()).filter(|&k| {
                let w = &words[k];
                !w.dynamic
                    && SHELLS.contains(&basename(&w.text))
                    && words
                        .get(k + 1)
                        .is_some_and(|o| o.text.starts_with('-') && o.text[1..].contains('c'))
            });
            for k in shells.take(4) {
                a.derived
                    .push(Derived::Words(words[k..].to_vec(), Role::Checked));
            }
            None
        }
        _ => None,
    }
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
/// The command line `env -S STRING REST…` runs, as the shell reads it: env's own
/// escapes are applied where they change words (`\_` is a space, a `#` starting a
/// word ends the string, before REST is appended). A string with any escape,
/// comment or variable is opaque too: env's reading is not bash's.
fn env_split_line(s: &str, rest: &str, a: &mut Analysis) -> String {
    if s.contains(['\\', '#', '$']) {
        a.dynamic = Some(
            "`env -S` with escapes, comments or variables: env splits the string its own way"
                .into(),
        );
    }
    let mut line = String::new();
    let mut chars = s.chars().peekable();
    let mut word_start = true;
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'_') {
            chars.next();
            line.push(' ');
            word_start = true;
            continue;
        }
        // `\c` ends the string (`rm -rf /home/\cx` runs `rm -rf /home/`).
        if (c == '#' && word_start) || (c == '\\' && chars.peek() == Some(&'c')) {
            break;
        }
        word_start = c.is_whitespace();
        line.push(c);
    }
    if !rest.is_empty() {
        line.push(' ');
        line.push_str(rest);
    }
    line
}

/// GNU parallel's options that take a value (others it has are read both ways).
const PARALLEL: OptionSpec<'static> = OptionSpec {
    short_value: "ajSPIdECnNLsl",
    glued: "",
    value: &[
        "--arg-file",
        "--jobs",
        "--sshlogin",
        "--sshloginfile",
        "--joblog",
        "--delimiter",
        "--colsep",
        "--wd",
        "--workdir",
        "--tmpdir",
        "--results",
        "--max-args",
        "--max-replace-args",
        "--max-chars",
        "--timeout",
        "--retries",
        "--delay",
        "--load",
        "--memfree",
        "--basefile",
        "--return",
        "--transferfile",
        "--tagstring",
        "--env",
        "--header",
        "--semaphorename",
        "--id",
    ],
    flags: &[
        "-k",
        "-q",
        "-u",
        "-v",
        "-X",
        "--keep-order",
        "--quote",
        "--ungroup",
        "--verbose",
        "--will-cite",
        "--dry-run",
        "--progress",
        "--bar",
        "--eta",
        "--tag",
        "--group",
        "--line-buffer",
        "--null",
        "-0",
    ],
    complete: false,
};

/// util-linux su's options (runuser's add `-u USER`).
const SU: OptionSpec<'static> = OptionSpec {
    short_value: "csgGw",
    glued: "",
    value: &[
        "--command",
        "--session-command",
        "--shell",
        "--group",
        "--supp-group",
        "--whitelist-environment",
    ],
    flags: &[],
    complete: true,
};
const RUNUSER: OptionSpec<'static> = OptionSpec {
    short_value: "csgGwu",
    value: &[
        "--command",
        "--session-command",
        "--shell",
        "--group",
        "--supp-group",
        "--whitelist-environment",
        "--user",
    ],
    ..SU
};

/// A package runner's command (`npx`, `npm exec`…): `-c STRING` (`--call`)
/// runs a string in a shell; otherwise the command starts after the options.
fn package_exec(
    words: &[Word],
    from: usize,
    spec: &OptionSpec<'_>,
    role: Role,
    a: &mut Analysis,
) -> Option<usize> {
    let end = options::scan(words, from, spec).start;
    let calls = options::values(&words[from..end], spec, &["-c", "--call"]);
    if !calls.is_empty() {
        for v in calls {
            a.derived.push(Derived::Source(v.text, role));
        }
        return None;
    }
    runners::runner_start(words, from, spec, a)
}

/// Whether `name` runs its arguments as a command (a wrapper, a runner, a
/// shell): given its command by xargs or find, what runs is only known then.
pub(crate) fn runs_its_arguments(name: &str) -> bool {
    let name = basename(name);
    SHELLS.contains(&name)
        || WRAPPERS
            .iter()
            .any(|w| w.sub.is_empty() && w.names.contains(&name))
        || matches!(
            name,
            "env"
                | "xargs"
                | "parallel"
                | "sudo"
                | "doas"
                | "pkexec"
                | "run0"
                | "su"
                | "runuser"
                | "sg"
                | "time"
                | "flock"
                | "watch"
                | "eval"
                | "exec"
                | "command"
                | "builtin"
                | "script"
                | "ssh"
                | "start-stop-daemon"
        )
}

/// GNU env's long options (without the dashes).
const ENV_LONG: &[&str] = &[
    "ignore-environment",
    "null",
    "unset",
    "chdir",
    "split-string",
    "block-signal",
    "default-signal",
    "ignore-signal",
    "list-signal-handling",
    "debug",
    "help",
    "version",
    "argv0",
];

fn env_next(words: &[Word], i: usize, a: &mut Analysis) -> Option<usize> {
    let mut j = i + 1;
    while j < words.len() {
        let t = words[j].text.as_str();
        if t == "--" {
            j += 1;
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            // GNU env's long options, or a unique abbreviation of one (`--ch=/`).
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let matching: Vec<&str> = ENV_LONG
                .iter()
                .copied()
                .filter(|l| l.starts_with(name))
                .collect();
            let full = if ENV_LONG.contains(&name) {
                Some(name)
            } else if matching.len() == 1 && !name.is_empty() {
                Some(matching[0])
            } else {
                None
            };
            let takes_value = matches!(full, Some("unset" | "chdir" | "split-string" | "argv0"));
            let value = match (takes_value, attached) {
                (true, Some(v)) => Some(v.to_string()),
                (true, None) => words.get(j + 1).map(|w| w.text.clone()),
                (false, _) => None,
            };
            match full {
                Some("split-string") => {
                    let after = if attached.is_some() { j + 1 } else { j + 2 };
                    let rest = join(&words[after.min(words.len())..], "");
                    let line = env_split_line(&value.unwrap_or_default(), &rest, a);
                    a.derived.push(Derived::Source(line, Role::Checked));
                    return None;
                }
                Some("chdir") => {
                    if let Some(d) = value {
                        a.move_to(Workdir::At(d));
                    }
                }
                Some(_) => {}
                None => {
                    // An ambiguous abbreviation or an option of another env:
                    // where the command starts is not known.
                    a.dynamic = Some(format!(
                        "`env --{name}`: an option the gate does not know, so where the command starts is not known"
                    ));
                }
            }
            j += if takes_value && attached.is_none() {
                2
            } else {
                1
            };
            continue;
        }
        let split = if t == "-S" {
            let v = words.get(j + 1).map(|w| w.text.clone());
            j += 1;
            v
        } else {
            t.strip_prefix("-S").map(str::to_string)
        };
        if let Some(s) = split {
            let rest = join(&words[(j + 1).min(words.len())..], "");
            let line = env_split_line(&s, &rest, a);
            a.derived.push(Derived::Source(line, Role::Checked));
            return None;
        }
        if t == "-" {
            // A lone `-` is `-i`.
            j += 1;
            continue;
        }
        if t.starts_with('-') && t.len() > 1 {
            // A cluster (`-iu NAME`, `-iS'…'`): `u`, `C`, `S`, `a` (argv0) and `P`
            // (BSD's search path) take a value, the rest of the cluster or the
            // next word; a letter the gate does not know makes the start unknown.
            let mut consumed = 1;
            for (pos, c) in t[1..].char_indices() {
                if !matches!(c, 'i' | '0' | 'v' | 'u' | 'C' | 'S' | 'a' | 'P') {
                    a.dynamic = Some(format!(
                        "`env -{c}`: an option the gate does not know, so where the command starts is not known"
                    ));
                }
                if matches!(c, 'u' | 'C' | 'S' | 'a' | 'P') {
                    let rest = &t[1 + pos + 1..];
                    let value = if rest.is_empty() {
                        consumed = 2;
                        words.get(j + 1).map(|w| w.text.clone())
                    } else {
                        Some(rest.to_string())
                    };
                    if let Some(d) = value.clone().filter(|_| c == 'C') {
                        a.move_to(Workdir::At(d));
                    }
                    if c == 'S' {
                        let rest = join(&words[(j + consumed).min(words.len())..], "");
                        let line = env_split_line(&value.unwrap_or_default(), &rest, a);
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
    // env takes any word holding `=` as an assignment (`BASH_FUNC_ls%%=…`).
    let first = j;
    while j < words.len() && words[j].text.find('=').is_some_and(|k| k > 0) {
        j += 1;
    }
    runners::assignments(words[first..j].iter(), Role::Checked, a);
    Some(j)
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
    }

    #[test]
    fn peel() {
        let a = analyse(
            &[],
            &ws("env X=1 /usr/bin/sudo -u x rm -rf /"),
            &[],
            Role::Full,
            &crate::shell::ShellConfig::default(),
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
            &crate::shell::ShellConfig::default(),
        );
        assert!(a.allow_forms.contains(&"npm test".to_string()));
        assert!(a.allow_forms.contains(&"/usr/bin/npm test".to_string()));
    }
}
