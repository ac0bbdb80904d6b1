//! What hooks and the interpreter share: where a runner's command starts, a
//! shell reading its script, a command given as a string, `NAME=VALUE` words
//! (docs/permissions.md, "Fail closed").

use crate::options::{self, OptionSpec, Scan};
use crate::shell::model::{Analysis, Derived, Redir, Role};
use crate::shell::words::Word;

/// The words joined by single spaces, then `suffix`.
pub(crate) fn join(words: &[Word], suffix: &str) -> String {
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

/// `NAME=VALUE` with a shell variable's NAME.
pub(crate) fn is_assignment(s: &str) -> bool {
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
pub(crate) fn skip_opts(words: &[Word], i: usize, short_arg: &str, long_arg: &[&str]) -> usize {
    let spec = OptionSpec {
        short_value: short_arg,
        value: long_arg,
        complete: true,
        ..OptionSpec::NONE
    };
    options::scan(words, i, &spec).start
}

/// A string a shell runs (`git rebase -x`, `tar --to-command`): judged with
/// `role`; one only known when it runs makes the command opaque, and what can
/// be seen of it still meets the deny rules and caps.
pub(crate) fn run_string(w: &Word, role: Role, what: &str, a: &mut Analysis) {
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

/// A runner's command start: skips its options as `spec` reads them. Options
/// the spec does not know could take a value too: each such reading's command
/// is judged as well (deny rules, ask rules and caps).
pub(crate) fn runner_start(
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
pub(crate) enum Script {
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
pub(crate) fn shell_script(words: &[Word], i: usize) -> Script {
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
pub(crate) fn piped_script(w: &Word) -> bool {
    let t = w.text.as_str();
    t.starts_with("<(")
        || t.starts_with(">(")
        || t == "/dev/stdin"
        || t.starts_with("/dev/fd/")
        || t.starts_with("/proc/self/fd/")
        || t == "-"
}

/// What a process substitution standing as a script visibly writes: `<(echo
/// ARGS)` writes ARGS joined, which is what `eval ARGS` runs; judged that
/// way by deny rules and caps (`source <(echo 'rm -rf ~')`).
pub(crate) fn piped_script_text(w: &Word) -> Option<String> {
    let inner = w.text.strip_prefix("<(")?.strip_suffix(')')?.trim();
    let rest = inner.strip_prefix("echo ")?.trim_start();
    let option = rest
        .split_whitespace()
        .next()
        .is_some_and(|o| o.starts_with('-'));
    let plain = !rest.contains(['$', '`', ';', '|', '&', '<', '>', '(', ')', '\\', '\n']);
    (plain && !option && !rest.is_empty()).then(|| format!("eval {rest}"))
}

/// Whether a script operand is the shell's standard input.
pub(crate) fn stdin_script(w: &Word) -> bool {
    matches!(
        w.text.as_str(),
        "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0" | "-"
    )
}

/// Every here-string and here-document of the command judged as a script
/// (what the command runs may read them: `sh -c sh <<< …`,
/// `bash /dev/fd/3 3<<< …`).
pub(crate) fn fed_scripts(name: &str, redirs: &[Redir], a: &mut Analysis) {
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
pub(crate) fn shell_stdin(
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
            None if !r.write && r.path.is_some() => {
                stdin = if r.path.as_deref() == Some("/dev/null") {
                    Stdin::Text(String::new())
                } else {
                    Stdin::File
                }
            }
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
        // It reads standard input, and standard input is a file: a
        // script the gate cannot see (docs/permissions.md, "Fail closed").
        Stdin::File => {
            a.dynamic = Some(format!(
                "`{name}` reads its script from a file on its standard input, which the gate does not read"
            ));
        }
        Stdin::Dynamic => {
            a.dynamic = Some(format!(
                "`{name}` reads a script with expansions from a here-document"
            ));
        }
        Stdin::Pipe => {
            a.dynamic = Some(format!(
                "`{name}` reads its script from standard input, which the gate cannot see"
            ));
            // What an earlier pipeline stage visibly writes (`echo TEXT |
            // sh`) still meets deny rules and caps, bypass included.
            for text in redirs.iter().filter_map(|r| r.piped.as_ref()) {
                if !text.trim().is_empty() {
                    a.derived.push(Derived::Source(text.clone(), Role::Checked));
                }
            }
        }
    }
}

/// The value of option `opt` at `words[j]`: `--opt=V`, `--opt V`, `-oV`
/// (for a one-letter `opt`) or `-o V`. Returns the value and the index of
/// the last word used.
pub(crate) fn option_value(
    words: &[Word],
    j: usize,
    long: &[&str],
    short: &[char],
) -> Option<(Word, usize)> {
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

/// The word holding an option's value, with the value as its text.
pub(crate) fn value_word(args: &[Word], v: &options::OptValue) -> Word {
    let mut w = args[v.at].clone();
    w.text = v.text.clone();
    w
}

/// The options before a program's sub-command when the gate knows only
/// those in `value` take a value: the common flags take none, any other
/// option is read both ways.
pub(crate) const fn global_options<'a>(value: &'a [&'a str]) -> OptionSpec<'a> {
    OptionSpec {
        short_value: "",
        glued: "",
        value,
        flags: COMMON_FLAGS,
        complete: false,
    }
}

/// Options that never take a value, whatever the program.
pub(crate) const COMMON_FLAGS: &[&str] = &[
    "-v",
    "-q",
    "-h",
    "-y",
    "--verbose",
    "--quiet",
    "--silent",
    "--help",
    "--version",
    "--dry-run",
    "--force",
    "--yes",
    "--no-color",
    "--color",
    "--debug",
    "--json",
    "--all",
    "--recursive",
    "-r",
    "--frozen",
    "--locked",
    "--offline",
];
