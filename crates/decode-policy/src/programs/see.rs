//! Seeing through one simple command (docs/permissions.md, "Shell commands:
//! fragments"): each program's entry says what it runs; the levels found
//! give the forms rules match (as written, past harmless wrappers for allow
//! rules, past everything for deny/ask rules and caps).

use std::path::Path;

use super::registry;
use super::schema::{Args, Ctx, Node, Program};
use super::{node, unknown};
use crate::options;
use crate::shell::config::ShellConfig;
use crate::shell::model::{Analysis, Redir, Role};
use crate::shell::words::{basename, Word};

/// Wrapper levels seen through with every form recorded; beyond, only the
/// innermost command is (the command is then opaque).
pub(crate) const MAX_SEE_THROUGH: usize = 16;

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

fn join_named(name: &str, rest: &[Word], suffix: &str) -> String {
    let mut s = name.to_string();
    let tail = super::support::join(rest, suffix);
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

/// The words of one simple command as written and canonically re-quoted.
struct Texts {
    suffix: String,
    csuffix: String,
    cwords: Vec<Word>,
}

/// Analyses one simple command: its levels (each wrapper seen through), the
/// command it finally runs, the forms rules match, what it runs besides.
pub(crate) fn analyse(
    assigns: &[Word],
    words: &[Word],
    redirs: &[Redir],
    role: Role,
    config: &ShellConfig,
) -> Analysis {
    let (mut a, texts) = start(assigns, words, redirs, role);
    super::variables::assignments(assigns.iter(), role, &mut a);
    if words.is_empty() {
        if role == Role::Full {
            let canon = a.canon.clone();
            a.allow_forms.push(canon);
        }
        return a;
    }
    let (levels, allow_levels, i) = peel(assigns, words, redirs, role, config, &mut a);
    let core_start = *levels.last().unwrap_or(&0);
    a.core = words[core_start..].iter().map(|w| w.text.clone()).collect();
    a.core_dyn = words[core_start..].iter().map(|w| w.dynamic).collect();
    a.core_quoted = words[core_start..].iter().map(|w| w.quoted).collect();
    if let Some(first) = a.core.first_mut() {
        *first = basename(first).to_string();
    }
    debug_assert!(i >= core_start);
    forms(&mut a, words, &levels, &allow_levels, &texts);
    a.levels = levels;
    a
}

/// The analysis before any wrapper is seen through: the text as written
/// and canonical, the first check forms.
fn start(assigns: &[Word], words: &[Word], redirs: &[Redir], role: Role) -> (Analysis, Texts) {
    let suffix = redirs
        .iter()
        .map(|r| r.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let mut all: Vec<Word> = assigns.to_vec();
    all.extend(words.iter().cloned());
    let text = super::support::join(&all, &suffix);
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
    let canon = super::support::join(&call_words, &csuffix);
    let mut a = Analysis {
        text: text.clone(),
        canon: canon.clone(),
        role,
        check_forms: vec![text.clone()],
        ctrl: assigns.iter().chain(words).any(|w| w.ctrl) || redirs.iter().any(|r| r.ctrl),
        ..Analysis::default()
    };
    if canon != text {
        a.check_forms.push(canon);
    }
    (
        a,
        Texts {
            suffix,
            csuffix,
            cwords,
        },
    )
}

/// Sees through each wrapper in turn: the levels (where each command
/// starts), those allow rules may see, and where the innermost starts.
fn peel(
    assigns: &[Word],
    words: &[Word],
    redirs: &[Redir],
    role: Role,
    config: &ShellConfig,
    a: &mut Analysis,
) -> (Vec<usize>, Vec<usize>, usize) {
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
        let c = Ctx {
            name: &name,
            words,
            i,
            at: i + 1,
            role,
            allow_ok,
            redirs,
            config,
        };
        let next = see_through(&c, a);
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
    (levels, allow_levels, i)
}

/// The forms deny/ask rules and caps match (every level, by its name too,
/// and an entry's other spellings) and those allow rules match.
fn forms(a: &mut Analysis, words: &[Word], levels: &[usize], allow_levels: &[usize], t: &Texts) {
    for &lvl in levels {
        let tail = &words[lvl..];
        if tail.is_empty() {
            continue;
        }
        push_unique(&mut a.check_forms, super::support::join(tail, &t.suffix));
        let name = basename(&tail[0].text);
        push_unique(&mut a.check_forms, join_named(name, &tail[1..], &t.suffix));
    }
    let extra = a
        .core
        .first()
        .and_then(|n| registry::find(n))
        .and_then(|p| p.node.hooks.forms)
        .map(|f| f(&a.core))
        .unwrap_or_default();
    for f in extra {
        let f = if t.suffix.is_empty() {
            f
        } else {
            format!("{f} {}", t.suffix)
        };
        push_unique(&mut a.check_forms, f);
    }
    if a.role == Role::Full {
        let canon = a.canon.clone();
        push_unique(&mut a.allow_forms, canon);
        for &lvl in allow_levels {
            let tail = &t.cwords[lvl..];
            push_unique(&mut a.allow_forms, super::support::join(tail, &t.csuffix));
            if let Some(name) = std_bin_name(&tail[0].text) {
                push_unique(&mut a.allow_forms, join_named(name, &tail[1..], &t.csuffix));
            }
        }
    }
}

/// Where the command that `c.name` runs starts (`None`: it runs none the
/// gate can place); records what else it runs.
fn see_through(c: &Ctx<'_>, a: &mut Analysis) -> Option<usize> {
    let Some(p) = registry::find(c.name) else {
        unknown::see(c, a);
        return None;
    };
    if p.node.hooks.see.is_some() {
        // The entry reads its own sub-commands (git after its options).
        return node::see(&p.node, c, a);
    }
    let (sub, at) = exact_path(p, c.words, c.at);
    if node::sees(sub) {
        return node::see(sub, &Ctx { at, ..*c }, a);
    }
    if node::sees(&p.node) {
        return node::see(&p.node, c, a);
    }
    if p.args == Args::Unread {
        unknown::see(c, a);
    }
    None
}

/// The deepest sub-command whose words follow the program's options where
/// those options can be read one way only (`uv run`, `uv tool run`,
/// `podman --log-level x unshare`), and where its own words start.
fn exact_path<'p>(p: &'p Program, words: &[Word], from: usize) -> (&'p Node, usize) {
    let mut node = &p.node;
    let mut subs = p.subs;
    let mut at = from;
    loop {
        let s = options::scan(words, at, &node.options);
        if !s.alternatives.is_empty() || s.start >= words.len() {
            break;
        }
        let w = words[s.start].text.as_str();
        match subs.iter().find(|x| x.names.contains(&w)) {
            Some(x) => {
                node = &x.node;
                subs = x.subs;
                at = s.start + 1;
            }
            None => break,
        }
    }
    (node, at)
}

/// Whether `name` runs its arguments as a command (a wrapper, a runner, a
/// shell): given its command by xargs or find, what runs is only known then.
pub(crate) fn runs_its_arguments(name: &str) -> bool {
    registry::find(basename(name)).is_some_and(|p| p.takes_command)
}
