//! What one command leaves to the later ones in the same command line: the
//! folder (`cd`, `pushd`), the branch (`git checkout`), links (`ln`), names
//! that run other programs (`hash -p`, `alias`), and the names bash
//! evaluates arithmetically (`declare`, `read`, `printf -v`).

use std::path::PathBuf;

use super::arith;
use super::model::{self, Fragment};
use super::syntax::{git_names_repository, sourced_file_is_inert};
use super::walker::Walker;
use super::words::basename;
use crate::paths;

impl Walker<'_> {
    /// `cd DIR`, `pushd DIR`: where the shell goes. Only the shell's own
    /// `cd` moves it (`command cd`, `builtin cd` too): `env cd x`, `nohup cd
    /// x`, `timeout 5 cd x` run a program named cd in a child. `pushd -n`
    /// does not move it; `cd a b` may not (bash 5 refuses, older bash went to
    /// `a`); a folder that does not exist (and that the command did not make)
    /// or a file may not be entered — then where the shell is afterwards is
    /// not known unless what follows runs only on success (`cd x && …`).
    fn change_dir(&mut self, frag: &Fragment) {
        let own = frag
            .chain
            .iter()
            .rev()
            .skip(1)
            .all(|c| matches!(c.as_str(), "command" | "builtin"));
        if !own {
            return;
        }
        let core = &frag.core;
        let name = core[0].as_str();
        // Options (`-L`, `-P`, `-e`, `-@`, pushd's `-n`), then the folder. An
        // option bash does not know, or a redirection that may fail (`cd src
        // < /missing`), leaves the shell where it was or not: unknown.
        let mut k = 1;
        let mut no_move = false;
        let mut unsure = self.redirect_may_fail(frag);
        while k < core.len() && core[k].len() > 1 && core[k].starts_with('-') {
            no_move |= name == "pushd" && !core[k].starts_with("--") && core[k].contains('n');
            // `-@` only where bash was built with extended attributes.
            let known = if name == "pushd" { "n" } else { "LPe" };
            unsure |= core[k] != "--"
                && !(pushd_rotates(name, &core[k])
                    || core[k][1..].chars().all(|c| known.contains(c)));
            k += 1;
            if core[k - 1] == "--" {
                break;
            }
        }
        if unsure {
            self.cwd = None;
            return;
        }
        if no_move {
            return;
        }
        let pushd = name == "pushd";
        if core.len() > k + 1 {
            self.cwd = None;
            return;
        }
        let before = self.cwd.clone();
        let target = match core.get(k) {
            // Bare `pushd` swaps the top two folders; bare `cd` goes home.
            None if pushd => None,
            None => Some(self.home.to_path_buf()),
            // `cd -` (OLDPWD may come from Decode's own environment),
            // `pushd +N` / `pushd -N` (rotate the stack).
            Some(t) if t == "-" || (pushd && t.starts_with(['+', '-'])) => None,
            Some(t) => {
                let dynamic = frag.core_dyn[k] && !self.is_static_var(t);
                match self.expand_static(t) {
                    Some(Some(e)) if !dynamic => {
                        self.cwd.as_ref().and_then(|c| self.cd_place(c, &e))
                    }
                    _ => None,
                }
            }
        };
        // A folder reached through a file descriptor or /proc is wherever
        // that points; HOME/CDPATH changed: unknown.
        let placed = target.filter(|c| {
            !self.cd_unsure
                && !c.starts_with("/proc")
                && !c.starts_with("/dev")
                && c.as_os_str().len() <= 1024
                && c.components().count() <= 64
        });
        let sure = placed.as_ref().is_some_and(|c| {
            self.made.iter().any(|m| m.starts_with(c))
                || std::fs::metadata(c).is_ok_and(|m| m.is_dir())
        });
        if !sure && placed != before {
            self.cwd_any = Some(None);
        }
        self.cwd = placed;
    }

    /// Where `cd TARGET` from `cwd` lands, when that is certain. bash folds `..`
    /// by the text (`cd -L`), but goes where the links lead instead when the
    /// folded folder is not there, and always with `cd -P`, `set -P` or `shopt
    /// -s physical`: through a link (`up -> ..`), `up/../x` is then another
    /// folder. A target with `..` is placed only where both readings agree and
    /// the command made no link before it.
    fn cd_place(&self, cwd: &std::path::Path, target: &std::path::Path) -> Option<PathBuf> {
        let folded = paths::lexical(cwd, target);
        let climbs = target
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir));
        if !climbs {
            return Some(folded);
        }
        if !self.links.as_ref().is_some_and(|l| l.is_empty()) {
            return None;
        }
        let physical = paths::resolve(&cwd.join(target));
        (physical == paths::resolve(&folded)).then_some(folded)
    }

    /// `let EXPR…`, and the NAME arguments of `declare`, `read`, `printf -v`,
    /// `unset`, `test -v`: bash evaluates them (their subscripts) as
    /// arithmetic. A name given through a variable is judged by every text
    /// the command assigns to it, and is opaque when that is unknown; so is
    /// the value of a nameref (`declare -n r=NAME`).
    pub(super) fn name_arguments(&mut self, frag: &Fragment) {
        let core = &frag.core;
        let role = frag.role;
        let Some(name) = core.first() else {
            return;
        };
        let dynamic = |k: usize| frag.core_dyn.get(k).copied().unwrap_or(false);
        let mut names: Vec<(usize, bool)> = Vec::new();
        match name.as_str() {
            "let" => {
                for a in &core[1..] {
                    self.arith(a, role, 0);
                }
            }
            "declare" | "typeset" | "local" | "export" | "readonly" | "read" | "unset"
            | "mapfile" | "readarray" => {
                let nameref = matches!(name.as_str(), "declare" | "typeset" | "local")
                    && core[1..]
                        .iter()
                        .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('n'));
                for (k, a) in core.iter().enumerate().skip(1) {
                    if !a.starts_with('-') {
                        names.push((k, nameref));
                    }
                }
            }
            _ => {}
        }
        if matches!(name.as_str(), "printf" | "test" | "[" | "[[") {
            for k in 1..core.len() {
                if core[k] == "-v" && k + 1 < core.len() {
                    names.push((k + 1, false));
                }
            }
        }
        // `wait -p NAME` (also in a cluster, `-np NAME`) and `getopts
        // OPTSTRING NAME` assign to NAME: its subscript is evaluated.
        if name == "wait" {
            for k in 1..core.len() {
                let a = core[k].as_str();
                if a.starts_with('-')
                    && !a.starts_with("--")
                    && a.ends_with('p')
                    && k + 1 < core.len()
                {
                    names.push((k + 1, false));
                }
            }
        }
        if name == "getopts" && core.len() > 2 {
            names.push((2, false));
        }
        // `{NAME[SUB]}>FILE` (`exec {fd}>x` and any command's redirect):
        // bash assigns the descriptor to NAME, evaluating SUB. A word of
        // that shape anywhere counts (as a plain argument it is literal
        // text, so judging it costs nothing but a rare ask).
        for w in core.iter() {
            if let Some(inner) = w.strip_prefix('{').and_then(|x| x.strip_suffix('}')) {
                if let Some(sub) = arith::name_subscript(inner) {
                    let sub = sub.to_string();
                    self.arith(&sub, role, 0);
                }
            }
        }
        let reads_in = matches!(name.as_str(), "read" | "mapfile" | "readarray" | "printf");
        for (k, nameref) in names {
            let a = core[k].clone();
            let (target, value) = match a.split_once('=') {
                Some((n, v)) if !matches!(name.as_str(), "read" | "mapfile" | "readarray") => {
                    (n.trim_end_matches('+').to_string(), Some(v.to_string()))
                }
                _ => (a.clone(), None),
            };
            let mut judge = vec![target.clone()];
            if nameref {
                judge.extend(value.clone());
            }
            for n in judge {
                if dynamic(k) && n.contains(['$', '`']) {
                    match arith::substitute_literal(&n, &self.vars, 16) {
                        Some(values) => {
                            for v in values {
                                if let Some(sub) = arith::name_subscript(&v) {
                                    let sub = sub.to_string();
                                    self.arith(&sub, role, 0);
                                }
                            }
                        }
                        None => {
                            self.set_opaque(format!(
                                "`{name}` takes a variable name only known when it runs (bash evaluates its subscript)"
                            ));
                        }
                    }
                } else if let Some(sub) = arith::name_subscript(&n) {
                    let sub = sub.to_string();
                    self.arith(&sub, role, 0);
                }
            }
            if reads_in && self.integers.contains(arith::name_of(&target)) {
                self.set_opaque(format!(
                    "`{name}` stores text only known when it runs in an integer variable (bash evaluates it)"
                ));
            }
        }
    }

    pub(super) fn track_effects(&mut self, frag: &Fragment) {
        let core = &frag.core;
        let Some(name) = core.first() else {
            return;
        };
        match name.as_str() {
            "cd" | "pushd" => self.change_dir(frag),
            "popd" => self.cwd = None,
            "mkdir" => {
                // Folders it makes: a later `cd` into one goes there.
                for t in frag.writes.iter().filter(|t| !t.dynamic) {
                    let made = self
                        .expand_static(&t.raw)
                        .flatten()
                        .zip(frag.cwd.as_ref())
                        .map(|(e, c)| paths::lexical(c, &e));
                    self.made.extend(made);
                }
            }
            // A sourced file runs in this shell: where it moves is unknown,
            // unless it is a file on disk that names no command that moves
            // (a virtualenv's `activate`) and nothing earlier in the
            // command wrote anything.
            "source" | "." => {
                let inert = core.len() >= 2
                    && !frag.core_dyn[1]
                    && !self.out.iter().any(|f| !f.writes.is_empty())
                    && self
                        .expand_static(&core[1])
                        .flatten()
                        .zip(self.cwd.as_ref())
                        .is_some_and(|(e, c)| sourced_file_is_inert(&paths::lexical(c, &e)));
                if !inert {
                    self.cwd = None;
                    self.branch = model::Branch::Unknown;
                }
            }
            "hash" => {
                // `hash -p PATH NAME…`: NAME runs PATH from here on.
                let mut k = 1;
                let mut path = None;
                while k < core.len() && core[k].starts_with('-') && core[k] != "--" {
                    if core[k].contains('p') {
                        path = core.get(k + 1).cloned();
                        k += 1;
                    }
                    k += 1;
                }
                if let Some(p) = path {
                    self.set_opaque("`hash -p` makes a name run another program".into());
                    let dynamic = frag.core_dyn.get(k - 1).copied().unwrap_or(true);
                    if dynamic {
                        self.strict = true;
                    }
                    let program = basename(&p).to_string();
                    for n in core
                        .iter()
                        .skip(k + usize::from(core.get(k).is_some_and(|t| t == "--")))
                    {
                        self.hashed.push((n.clone(), vec![program.clone()]));
                    }
                }
            }
            "alias" => {
                for a in &core[1..] {
                    if let Some((n, v)) = a.split_once('=') {
                        let ws: Vec<String> = v.split_whitespace().map(str::to_string).collect();
                        if !ws.is_empty() {
                            self.hashed.push((n.to_string(), ws));
                        }
                    }
                }
            }
            "enable" if core.iter().any(|a| a.starts_with('-') && a.contains('f')) => {
                self.set_opaque("`enable -f` loads a builtin from a file".into());
            }
            "git" => {
                if let Some(to) =
                    crate::branches::switch_target(core, &frag.core_dyn, frag.cwd.as_deref())
                {
                    if self.git_elsewhere || git_names_repository(core) {
                        // It may have moved another repository's HEAD, or this one's.
                        self.branch = model::Branch::Unknown;
                        self.last_switch = None;
                    } else {
                        self.branch = self.branch.switched(to.as_deref(), false);
                        self.last_switch = to.map(|b| (self.out.len(), b));
                    }
                }
            }
            "ln" => {
                for t in frag.writes.iter().filter(|t| t.link && t.from.is_none()) {
                    let place = if t.dynamic {
                        None
                    } else {
                        self.expand_static(&t.raw)
                            .flatten()
                            .and_then(|e| frag.cwd.as_ref().map(|c| paths::lexical(c, &e)))
                    };
                    match (place, self.links.as_mut()) {
                        (Some(p), Some(links)) => links.push(p),
                        (None, _) => self.links = None,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether a script run in this shell may move its folder or branch:
    /// it names `cd`, `pushd`, `popd` or a command that moves HEAD.
    pub(super) fn moves(text: &str) -> bool {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| {
                matches!(
                    w,
                    "cd" | "pushd" | "popd" | "checkout" | "switch" | "symbolic" | "update"
                )
            })
    }

    /// `$HOME`, `${HOME}`, `$PWD`, `$TMPDIR` and `~` expanded: `Some(None)`
    /// when the path still holds something only known when it runs.
    pub(super) fn expand_static(&self, t: &str) -> Option<Option<PathBuf>> {
        let mut s = t.to_string();
        if let Some(c) = &self.cwd {
            let cwd = c.to_string_lossy();
            for v in ["${PWD}", "$PWD"] {
                if let Some(rest) = s.strip_prefix(v) {
                    s = format!("{cwd}{rest}");
                }
            }
        }
        for v in ["${TMPDIR}", "$TMPDIR"] {
            if let Some(rest) = s.strip_prefix(v) {
                s = format!("/tmp{rest}");
            }
        }
        let e = paths::expand_home(&s, self.home);
        let es = e.to_string_lossy();
        if es.contains('$') || es.contains('`') || es.starts_with('~') {
            return Some(None);
        }
        Some(Some(e))
    }

    /// `$HOME`, `$PWD`, `$TMPDIR` (alone or starting a path): known values.
    pub(super) fn is_static_var(&self, t: &str) -> bool {
        matches!(self.expand_static(t), Some(Some(_)))
    }
}

impl Walker<'_> {
    /// Whether a redirection of the fragment may fail, so that bash does not
    /// run it: reading a file that is not there, writing into a folder that
    /// is not there.
    fn redirect_may_fail(&self, frag: &Fragment) -> bool {
        let Some(cwd) = self.cwd.as_deref() else {
            return true;
        };
        // Reading a file, or copying a descriptor (`<&9`, `>&9`), may fail;
        // a `cd` reads nothing, so any of them is a reason to doubt it.
        if frag.text.contains('<') || frag.text.contains(">&") {
            return true;
        }
        // Writing into a folder that is not there, or onto a folder, fails.
        frag.writes.iter().any(|t| {
            let p = paths::lexical(cwd, std::path::Path::new(&t.raw));
            t.dynamic
                || (!paths::is_harmless_device(&p)
                    && (p
                        .parent()
                        .is_none_or(|d| std::fs::symlink_metadata(d).is_err())
                        || p.is_dir()))
        })
    }
}

/// `pushd -N`, `pushd +N`: rotate the folder stack (no option).
fn pushd_rotates(name: &str, word: &str) -> bool {
    name == "pushd" && word.len() > 1 && word[1..].chars().all(|c| c.is_ascii_digit())
}
