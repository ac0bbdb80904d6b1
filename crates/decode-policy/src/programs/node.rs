//! Applying one [`Node`]'s data to a simple command: what it runs and where
//! (docs/permissions.md, "Shell commands: fragments"). Used by the
//! interpreter for every entry, and by hooks for the sub-commands they find
//! themselves (git's, after its configuration options).

use super::schema::{Ctx, Moves, Node, Place, Runs};
use super::support::{is_assignment, join, run_string, runner_start, shell_stdin, value_word};
use crate::options::{self, OptionSpec};
use crate::shell::model::{Analysis, Derived, Role, Workdir};

/// Whether the node says anything about what it runs.
pub(crate) fn sees(node: &Node) -> bool {
    !node.runs.is_empty() || node.hooks.see.is_some()
}

/// Applies the node's data, then its hook: where the command it runs
/// starts, if it runs one as its operands.
pub(crate) fn see(node: &Node, c: &Ctx<'_>, a: &mut Analysis) -> Option<usize> {
    let start = runs(node, c, a);
    match node.hooks.see {
        Some(hook) => hook(c, start, a),
        None => start,
    }
}

/// What the node's `runs` say.
pub(crate) fn runs(node: &Node, c: &Ctx<'_>, a: &mut Analysis) -> Option<usize> {
    let mut start = None;
    let runs_command = node.runs.iter().any(|r| matches!(r, Runs::Command { .. }));
    if !runs_command {
        // Options anywhere move what it runs (`git rebase -x CMD` runs CMD at
        // the top of the work tree).
        moves(&node.moves, &node.options, &c.words[c.at..], false, a);
    }
    for r in node.runs {
        match *r {
            Runs::Command { skip, assignments } => {
                start = command(node, c, skip, assignments, a);
            }
            Runs::Next => start = (c.at < c.words.len()).then_some(c.at),
            Runs::Line { skip } => {
                let j = options::scan(c.words, c.at, &node.options).start + skip;
                if j < c.words.len() {
                    a.derived
                        .push(Derived::Source(join(&c.words[j..], ""), Role::Checked));
                }
            }
            Runs::OptionLine(opts) => {
                for v in options::values(&c.words[c.at..], &node.options, opts) {
                    a.derived.push(Derived::Source(v.text, Role::Checked));
                }
            }
            Runs::Lines => {
                let args = &c.words[c.at..];
                let what = format!("`{}`", c.name);
                for k in options::operands(args, &node.options) {
                    run_string(&args[k], c.role, &what, a);
                }
            }
            Runs::OptionCommand(opts) => {
                let args = &c.words[c.at..];
                for v in options::values(args, &node.options, opts) {
                    let what = format!("`{}`", c.name);
                    run_string(&value_word(args, &v), c.role, &what, a);
                }
            }
            Runs::OptionWords { opts, until } => option_words(c, opts, until, a),
            Runs::ShellWithout => {
                if start.is_none() {
                    shell_stdin(c.name, c.redirs, Role::Checked, false, a);
                }
            }
            Runs::SubAfterOptions(sub) => sub_after_options(c, sub, a),
            Runs::Script {
                opts,
                files,
                plus,
                plain,
            } => script(node, c, (opts, files, plain), plus, a),
            Runs::Opaque { options, keys, why } => {
                // Words after `--` are the operands' (`npm run x -- --shell`).
                let args = &c.words[c.at..];
                let args = &args[..args
                    .iter()
                    .position(|w| w.text == "--")
                    .unwrap_or(args.len())];
                let set = args.iter().position(|w| w.text == "set");
                let named = args.iter().enumerate().any(|(k, w)| {
                    let keys = if set.is_some_and(|s| k > s) {
                        keys
                    } else {
                        &[]
                    };
                    names_option(&w.text, options, keys)
                });
                if named {
                    a.dynamic = Some(format!("`{}` {why}", c.name));
                }
            }
        }
    }
    start
}

/// `Runs::Command`: the command after the node's options (and `skip` words).
fn command(
    node: &Node,
    c: &Ctx<'_>,
    skip: usize,
    assignments: bool,
    a: &mut Analysis,
) -> Option<usize> {
    let end = options::scan(c.words, c.at, &node.options).start;
    moves(&node.moves, &node.options, &c.words[c.at..end], true, a);
    let at = runner_start(c.words, c.at, &node.options, a)?;
    let mut at = at + skip;
    if assignments {
        while at < c.words.len() && is_assignment(&c.words[at].text) {
            at += 1;
        }
    }
    (at < c.words.len()).then_some(at)
}

/// Where the options `given` move the command: to an option's folder, to a
/// place the gate cannot know (a new root, a login shell, and — for a
/// wrapper, `unknown_names_folder` — an option it does not know that names a
/// folder), or nowhere.
pub(crate) fn moves(
    m: &Moves,
    spec: &OptionSpec<'_>,
    given: &[crate::shell::words::Word],
    unknown_names_folder: bool,
    a: &mut Analysis,
) {
    match m.default {
        Place::Here => {}
        Place::Lost => a.move_to(Workdir::Unknown),
        Place::LostUnless(keep) => {
            if !options::flagged(given, spec, keep) {
                a.move_to(Workdir::Unknown);
            }
        }
    }
    if !m.lost.is_empty() && options::flagged(given, spec, m.lost) {
        a.move_to(Workdir::Unknown);
    }
    for v in options::values(given, spec, m.to) {
        a.move_to(Workdir::At(v.text));
    }
    let kept: &[&str] = match m.default {
        Place::LostUnless(keep) => keep,
        _ => &[],
    };
    let names_a_folder = unknown_names_folder
        && given.iter().any(|w| {
            let name = w.text.split('=').next().unwrap_or("");
            name.starts_with("--")
                && !m.to.contains(&name)
                && !m.lost.contains(&name)
                && !kept.contains(&name)
                && !spec.flags.contains(&name)
                && ["dir", "cwd", "wd", "root"]
                    .iter()
                    .any(|d| name.contains(d))
        });
    if names_a_folder {
        a.move_to(Workdir::Unknown);
    }
}

/// `fd -x CMD ;`: each of `opts` starts a command that runs to `until`.
fn option_words(c: &Ctx<'_>, opts: &[&str], until: &[&str], a: &mut Analysis) {
    let words = c.words;
    let mut j = c.at;
    while j < words.len() {
        if opts.contains(&words[j].text.as_str()) {
            let start = j + 1;
            let mut end = start;
            while end < words.len() && !until.contains(&words[end].text.as_str()) {
                end += 1;
            }
            if end > start {
                a.derived
                    .push(Derived::Words(words[start..end].to_vec(), c.role));
            }
            j = end + 1;
        } else {
            j += 1;
        }
    }
}

/// `uv -q run …`, `poetry -C dir run …`, `hatch env run …`: options (or other
/// words) before `run`, whose arity the gate does not read. Opaque; and what
/// `NAME run …` would run is judged too, so deny rules and the
/// critical-removal cap see it (bypass included).
fn sub_after_options(c: &Ctx<'_>, sub: &str, a: &mut Analysis) {
    let words = c.words;
    let Some(r) = words[c.at..].iter().position(|w| w.text == sub) else {
        return;
    };
    a.dynamic = Some(format!(
        "`{}` runs a command after options or words the gate does not read",
        c.name
    ));
    // Global options that move it (`uv --directory /`, `poetry -C /`), or
    // any other option naming a folder: what runs runs there.
    let before = &words[c.at..c.at + r];
    let dirs = OptionSpec {
        value: &["--directory", "-C", "--cwd", "--project", "-P"],
        ..OptionSpec::NONE
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
        let mut ws = vec![words[c.i].clone(), words[c.at + r].clone()];
        ws.extend_from_slice(&words[c.at + r + 1..]);
        a.derived.push(Derived::Words(ws, Role::Checked));
    }
}

/// `Runs::Script`: a script in the program's own language (`vim -c CMD`,
/// `gdb -ex CMD`, `less +CMD`, `vim -S FILE`) makes the command opaque; the
/// shell command it holds after `!` or `shell` meets deny rules and caps.
fn script(
    node: &Node,
    c: &Ctx<'_>,
    (opts, files, plain): (&[&str], &[&str], &[&str]),
    plus: bool,
    a: &mut Analysis,
) {
    let args = &c.words[c.at..];
    let mut texts: Vec<String> = options::values(args, &node.options, opts)
        .into_iter()
        .filter(|v| args[v.at].dynamic || !plain_command(&v.text, plain))
        .map(|v| v.text)
        .collect();
    if plus {
        let end = args
            .iter()
            .position(|w| w.text == "--")
            .unwrap_or(args.len());
        for w in &args[..end] {
            if let Some(cmd) = w.text.strip_prefix('+') {
                let cmd = cmd.strip_prefix('+').unwrap_or(cmd);
                if w.dynamic || !plain_start_command(cmd) {
                    texts.push(cmd.to_string());
                }
            }
        }
    }
    // Single-dash long options take `=VALUE` too (`gdb -eval-command=CMD`).
    let glued = |list: &[&str]| -> Vec<String> {
        args.iter()
            .filter_map(|w| {
                list.iter()
                    .filter(|o| !o.starts_with("--") && o.len() > 2)
                    .find_map(|o| w.text.strip_prefix(o)?.strip_prefix('='))
                    .map(str::to_string)
            })
            .collect()
    };
    texts.extend(glued(opts));
    let from_file = !glued(files).is_empty()
        || options::values(args, &node.options, files)
            .iter()
            .any(|v| !matches!(v.text.as_str(), "NONE" | "NORC" | "DEFAULTS"));
    if texts.is_empty() && !from_file {
        return;
    }
    a.dynamic = Some(format!(
        "`{}` runs commands in its own language (they can run shell commands and write files), which the gate does not read",
        c.name
    ));
    for t in texts {
        if let Some(cmd) = shell_part(&t) {
            a.derived.push(Derived::Source(cmd, Role::Checked));
        }
    }
}

/// A debugger's command that only runs or inspects the program debugged:
/// its first word is one of `plain`, and it holds nothing that evaluates,
/// expands or redirects.
fn plain_command(text: &str, plain: &[&str]) -> bool {
    let first = text.split_whitespace().next().unwrap_or("");
    plain.contains(&first)
        && !text.contains(['(', '$', '!', '|', ';', '&', '<', '>', '`', '\n', '{'])
}

/// A `+CMD` start-up word that only moves in the file: a line number, a
/// search without `!` or `|`, `G`, `g`, `F`, or nothing.
fn plain_start_command(cmd: &str) -> bool {
    let search = (cmd.starts_with('/') || cmd.starts_with('?')) && !cmd.contains(['!', '|']);
    cmd.is_empty()
        || cmd.bytes().all(|b| b.is_ascii_digit())
        || search
        || matches!(cmd, "G" | "g" | "F")
}

/// The shell command a debugger's or an editor's command runs: the text
/// after its first `!`, or after a `shell` word (`!rm x`, `silent !rm x`,
/// `shell rm x`, `platform shell rm x`).
fn shell_part(text: &str) -> Option<String> {
    let rest = match text.split_once('!') {
        Some((_, rest)) => rest,
        None => {
            let k = text.split_whitespace().position(|w| w == "shell")?;
            let words: Vec<&str> = text.split_whitespace().collect();
            return Some(words[k + 1..].join(" ")).filter(|s| !s.is_empty());
        }
    };
    Some(rest.trim().to_string()).filter(|s| !s.is_empty())
}

/// Whether a word gives one of `options` (`--opt`, `--opt=V`, a short
/// option with its value attached: `-oV`) or names one of `keys` (`KEY`,
/// `KEY=V`).
fn names_option(word: &str, options: &[&str], keys: &[&str]) -> bool {
    // `--config.KEY=V` (pnpm) and `--script_shell` (npm) name the same
    // options.
    let (name, value) = match word.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (word, None),
    };
    let name = match name.strip_prefix("--config.") {
        Some(rest) => format!("--{rest}"),
        None => name.to_string(),
    };
    let normal = match (name.starts_with("--"), value) {
        (true, Some(v)) => format!("{}={v}", name.replace('_', "-")),
        (true, None) => name.replace('_', "-"),
        (false, _) => word.to_string(),
    };
    let word = normal.as_str();
    let given = |o: &str| {
        word.strip_prefix(o).is_some_and(|rest| {
            rest.is_empty() || rest.starts_with('=') || (o.len() == 2 && !o.starts_with("--"))
        })
    };
    let key = |k: &str| {
        word.strip_prefix(k)
            .is_some_and(|r| r.is_empty() || r.starts_with('='))
    };
    // npm (nopt) takes any unambiguous beginning of a long option
    // (`--script-she=…`, `--userc`): a beginning of one of `options` names it.
    let abbreviated = |o: &str| {
        let body = word.split('=').next().unwrap_or(word);
        o.starts_with("--") && body.starts_with("--") && body.len() >= 5 && o.starts_with(body)
    };
    options.iter().any(|o| given(o) || abbreviated(o)) || keys.iter().any(|k| key(k))
}
