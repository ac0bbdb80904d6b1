//! Building one simple command's fragment (docs/permissions.md, "Shell
//! commands: fragments"): the program entries read its words, its paths and
//! write targets are placed in the folder it runs in, and what it runs
//! besides is walked in turn.

use super::arg_paths::{collect_arg_paths, push_path_candidates};
use super::arith;
use super::model::{self, Fragment, Redir, Role};
use super::syntax::git_names_repository;
use super::walker::Walker;
use super::words::{self, Word};
use crate::paths;

impl Walker<'_> {
    /// Builds the fragment(s) of one simple command and records their effects
    /// (`cd`, `git checkout`) on the walker.
    pub(super) fn emit(
        &mut self,
        assigns: Vec<Word>,
        words: Vec<Word>,
        redirs: Vec<Redir>,
        role: Role,
    ) {
        if words
            .first()
            .is_some_and(|w| w.text.trim() != w.text && !w.text.trim().is_empty())
        {
            // `" npm" c` runs a program named ` npm`, not npm.
            self.set_opaque(
                "the command word has blanks at its ends (bash runs that exact name)".into(),
            );
        }
        // What the previous pipeline stage visibly writes is this command's
        // standard input (before its own redirections, which win).
        let mut fed = redirs.clone();
        if let Some(texts) = self.pipe_feed.take() {
            let piped = texts.into_iter().map(|t| Redir {
                text: String::new(),
                path: None,
                ctrl: false,
                canon: String::new(),
                write: false,
                dynamic: false,
                feed: None,
                piped: Some(t),
            });
            fed.splice(0..0, piped);
        }
        let mut analysis = crate::programs::analyse(&assigns, &words, &fed, role, self.config);
        if let Some(why) = &analysis.dynamic {
            self.set_opaque(why.clone());
        }
        let program_resolved = analysis.core_dyn.first() == Some(&true)
            && !self.vars.is_empty()
            && self.program_values(&words, &mut analysis);
        let writes = self.write_targets(&analysis, &redirs);
        let mut paths = self.named_paths(&assigns, &words, &redirs, &analysis);
        for t in &writes {
            if !paths.contains(&t.raw) {
                paths.push(t.raw.clone());
            }
        }
        let frag = self.fragment(&mut analysis, words, paths, writes, program_resolved);
        self.check_analysis(&analysis);
        self.name_arguments(&frag);
        self.track_effects(&frag);
        self.push_and_derive(frag, analysis);
    }

    /// The paths the command names: assignment values, arguments (not
    /// patterns), redirect targets; one built from variables the command
    /// only sets to known text or file globs (`for f in src/*.rs; do wc -l
    /// "$f"`) is judged by those.
    fn named_paths(
        &self,
        assigns: &[Word],
        words: &[Word],
        redirs: &[Redir],
        analysis: &model::Analysis,
    ) -> Vec<String> {
        let mut paths = Vec::new();
        for a in assigns {
            if let Some((_, v)) = a.text.split_once('=') {
                push_path_candidates(v, a, &mut paths);
            }
        }
        let cs = *analysis.levels.last().unwrap_or(&0);
        let patterns: Vec<usize> = crate::programs::pattern_args(&analysis.core)
            .into_iter()
            .map(|k| cs + k)
            .collect();
        collect_arg_paths(words, &patterns, &mut paths);
        for r in redirs {
            if let Some(p) = &r.path {
                paths.push(p.clone());
            }
        }
        let mut substituted = Vec::new();
        paths.retain(|p| {
            if !p.contains('$') {
                return true;
            }
            match arith::substitute(p, &self.vars, 16) {
                Some(values) => {
                    substituted.extend(values);
                    false
                }
                None => true,
            }
        });
        paths.extend(substituted);
        paths
    }

    /// Where the command writes; a target built from variables the command
    /// only ever sets to known text (`for f in a b; do cp x /tmp/$f; done`)
    /// is judged for each of those values.
    fn write_targets(&self, analysis: &model::Analysis, redirs: &[Redir]) -> Vec<model::Target> {
        let mut writes = crate::programs::targets(&analysis.core, &analysis.core_dyn, redirs);
        writes.extend(analysis.own_writes.iter().cloned());
        let mut known = Vec::new();
        writes.retain(|t| {
            if !t.dynamic {
                return true;
            }
            match arith::substitute(&t.raw, &self.vars, 64) {
                Some(values) => {
                    for v in values {
                        let mut k = t.clone();
                        k.raw = v;
                        k.dynamic = false;
                        known.push(k);
                    }
                    false
                }
                None => true,
            }
        });
        writes.extend(known);
        writes
    }

    /// The fragment: what the analysis found, where it runs (`env -C DIR`,
    /// `git -C DIR`), what the walker knows at this point (branch, links,
    /// glob options), and how its program word is dynamic.
    fn fragment(
        &mut self,
        analysis: &mut model::Analysis,
        words: Vec<Word>,
        paths: Vec<String>,
        writes: Vec<model::Target>,
        program_resolved: bool,
    ) -> Fragment {
        let cwd = match &analysis.chdir {
            None => self.cwd.clone(),
            Some(model::Workdir::Unknown) => None,
            Some(model::Workdir::At(d)) => match self.expand_static(d) {
                Some(Some(e)) => self.cwd.as_ref().map(|c| paths::lexical(c, &e)),
                _ => None,
            },
        };
        let mut frag = Fragment {
            text: std::mem::take(&mut analysis.text),
            canon: std::mem::take(&mut analysis.canon),
            role: analysis.role,
            allow_forms: std::mem::take(&mut analysis.allow_forms),
            check_forms: std::mem::take(&mut analysis.check_forms),
            chain: std::mem::take(&mut analysis.chain),
            core: std::mem::take(&mut analysis.core),
            paths,
            cwd,
            branch: self.branch.clone(),
            writes,
            links: self.links.clone(),
            find_roots: analysis.find_roots.take(),
            words,
            levels: std::mem::take(&mut analysis.levels),
            core_dyn: std::mem::take(&mut analysis.core_dyn),
            core_quoted: std::mem::take(&mut analysis.core_quoted),
            program_resolved,
            dotglob: self.dotglob,
            loose_globs: self.loose_globs,
            git_elsewhere: self.git_elsewhere,
            ..Fragment::default()
        };
        self.program_word(&mut frag);
        if frag.core.first().is_some_and(|n| n == "git")
            && (self.git_elsewhere || git_names_repository(&frag.core))
        {
            // Which branch that repository is on is not known here.
            frag.branch = model::Branch::Unknown;
        }
        let by_xargs = frag
            .chain
            .iter()
            .any(|c| matches!(c.as_str(), "xargs" | "parallel"));
        frag.filled = self.filling > 0
            || (by_xargs
                && !matches!(
                    frag.core.first().map(String::as_str),
                    Some("xargs" | "parallel")
                ));
        frag.command_filled = frag.filled
            && analysis.derived.is_empty()
            && frag
                .core
                .first()
                .is_some_and(|p| crate::programs::runs_its_arguments(p));
        if frag.command_filled {
            self.set_opaque(format!(
                "`{}` runs a command that xargs or find fills in when it runs",
                frag.core[0]
            ));
        }
        frag
    }

    /// How a dynamic program word is dynamic: with static parts (`c$(x)rl`),
    /// or free to expand to several words the command controls.
    fn program_word(&self, frag: &mut Fragment) {
        if frag.core_dyn.first() != Some(&true) {
            return;
        }
        let Some(w) = frag.levels.last().and_then(|&cs| frag.words.get(cs)) else {
            return;
        };
        frag.program_partial = if w.segs.is_empty() {
            !w.text.starts_with('$')
        } else {
            w.segs
                .iter()
                .any(|s| matches!(s, words::Seg::Live(t) | words::Seg::Lit(t) if !t.is_empty()))
        };
        frag.program_free = w.text.contains("$(")
            || w.text.contains('`')
            || w.text.contains('@')
            || w.text.contains('*')
            || arith::scan(&w.text)
                .names
                .iter()
                .any(|n| matches!(self.vars.get(n), Some(arith::Val::Unknown)));
    }

    /// What made the analysis incomplete: too many wrappers, a budget, a
    /// control character.
    fn check_analysis(&mut self, analysis: &model::Analysis) {
        if analysis.deep {
            self.too_deep("the command has too many wrappers to judge");
        }
        if let Some(why) = &analysis.over_budget {
            self.too_deep(why);
        }
        if analysis.ctrl {
            self.set_opaque("a word holds an invisible or control character".into());
        }
    }

    /// Records the fragment, then judges what it runs besides itself, where
    /// it runs that (a wrapper that moved its command: `su - -c …`, `env -C /
    /// sh -c …`).
    fn push_and_derive(&mut self, frag: Fragment, analysis: model::Analysis) {
        let same_shell = frag.core.is_empty()
            || frag.chain.iter().chain(frag.core.first()).any(|n| {
                matches!(
                    n.as_str(),
                    "eval" | "trap" | "source" | "." | "mapfile" | "readarray"
                )
            });
        let fills = frag.find_roots.is_some()
            || frag
                .chain
                .iter()
                .any(|c| matches!(c.as_str(), "xargs" | "parallel"))
            || frag.core.first().is_some_and(|c| c == "parallel");
        let outer_cwd = analysis.chdir.is_some().then(|| {
            let outer = self.cwd.clone();
            self.cwd = frag.cwd.clone();
            outer
        });
        self.config_then_used(&frag);
        self.out.push(frag);
        if fills {
            self.filling += 1;
        }
        for d in analysis.derived {
            if !self.derive(d, same_shell) {
                break;
            }
        }
        if fills {
            self.filling -= 1;
        }
        if let Some(outer) = outer_cwd {
            self.cwd = outer;
        }
    }

    /// Judges one command a fragment runs besides itself (once per command
    /// line); `false` when the derived-command budget ran out.
    fn derive(&mut self, d: model::Derived, same_shell: bool) -> bool {
        let key = match &d {
            model::Derived::Words(ws, role) => {
                let t: Vec<&str> = ws.iter().map(|w| w.text.as_str()).collect();
                (t.join("\u{0}"), *role, self.cwd.clone())
            }
            model::Derived::Source(text, role) => (format!("\u{1}{text}"), *role, self.cwd.clone()),
            model::Derived::Typed(text) => {
                (format!("\u{2}{text}"), Role::Checked, self.cwd.clone())
            }
            model::Derived::Find(ws, role, _) => {
                let t: Vec<&str> = ws.iter().map(|w| w.text.as_str()).collect();
                (format!("\u{3}{}", t.join("\u{0}")), *role, self.cwd.clone())
            }
        };
        if self.seen.contains(&key) {
            return true;
        }
        if !self.take_work(key.0.len()) {
            return false;
        }
        self.seen.insert(key);
        self.derived_depth += 1;
        match d {
            model::Derived::Words(ws, role) => {
                self.emit(Vec::new(), ws, Vec::new(), role);
            }
            model::Derived::Source(text, role) => {
                self.reparse(&text, role);
                if same_shell && Self::moves(&text) {
                    // `eval`, `trap`, `source`: run in this shell (a trap
                    // at any time): where they move is not followed.
                    self.cwd = None;
                    self.branch = model::Branch::Unknown;
                }
            }
            model::Derived::Typed(text) => {
                let was = std::mem::replace(&mut self.typing, true);
                self.reparse(&text, Role::Checked);
                self.typing = was;
            }
            model::Derived::Find(ws, role, roots) => {
                let before = self.out.len();
                self.emit(Vec::new(), ws, Vec::new(), role);
                if let Some(f) = self.out.get_mut(before) {
                    f.find_roots = Some(roots);
                }
            }
        }
        self.derived_depth -= 1;
        true
    }

    /// A command word made of variables the command only sets to known
    /// text (`c=rm; $c -rf ~`, `x=(rm -rf ~); "${x[@]}"`): each value is
    /// judged as the command by deny rules, ask rules and caps.
    pub(super) fn program_values(
        &mut self,
        words: &[Word],
        analysis: &mut model::Analysis,
    ) -> bool {
        let cs = *analysis.levels.last().unwrap_or(&0);
        let Some(program) = words.get(cs) else {
            return false;
        };
        let Some(values) = arith::substitute(&program.text, &self.vars, 16) else {
            return false;
        };
        for v in values {
            let mut ws: Vec<Word> = v.split_whitespace().map(Word::raw).collect();
            ws.extend_from_slice(&words[cs + 1..]);
            if !ws.is_empty() {
                analysis
                    .derived
                    .push(model::Derived::Words(ws, Role::Checked));
            }
        }
        true
    }

    /// Every fragment whose program a `hash -p` renamed is judged again as
    /// the program it runs (wherever the `hash` stood: functions and loops
    /// may run it first).
    pub(super) fn hashed_names(&mut self) {
        if self.hashed.is_empty() {
            return;
        }
        let hashed = std::mem::take(&mut self.hashed);
        let renamed: Vec<Vec<Word>> = self
            .out
            .iter()
            .filter_map(|f| {
                let cs = *f.levels.last()?;
                let ws = f.words.get(cs..)?;
                let first = ws.first()?;
                let (_, to) = hashed.iter().find(|(n, _)| *n == first.text)?;
                let mut out: Vec<Word> = to.iter().map(|t| Word::raw(t)).collect();
                out.extend_from_slice(&ws[1..]);
                Some(out)
            })
            .collect();
        for ws in renamed {
            if !self.take_work(ws.len()) {
                break;
            }
            self.emit(Vec::new(), ws, Vec::new(), Role::Checked);
        }
    }
}

/// Programs that read aliases (and what they run) from configuration files,
/// and those files' shapes, as trailing path components.
const ALIAS_READERS: &[(&str, &[&[&str]])] = &[
    (
        "git",
        &[&[".gitconfig"], &["git", "config"], &[".git", "config"]],
    ),
    (
        "cargo",
        &[&[".cargo", "config"], &[".cargo", "config.toml"]],
    ),
    ("gh", &[&["gh", "config.yml"]]),
    ("glab", &[&["glab-cli", "config.yml"]]),
    // `script-shell`, `node-options`, `onload-script`, `git`, `yarnPath`,
    // bun's `preload`: a program (or a script) they run.
    ("npm", NPM_CONFIG),
    ("npx", NPM_CONFIG),
    ("pnpm", NPM_CONFIG),
    ("pnpx", NPM_CONFIG),
    ("yarn", NPM_CONFIG),
    ("bun", NPM_CONFIG),
    ("bunx", NPM_CONFIG),
    // An `exec` credential plugin, a `credential_process`: a command run on use.
    ("kubectl", &[&[".kube", "config"]]),
    ("helm", &[&[".kube", "config"]]),
    ("aws", &[&[".aws", "config"], &[".aws", "credentials"]]),
];

const NPM_CONFIG: &[&[&str]] = &[
    &[".npmrc"],
    &["npmrc"],
    &[".yarnrc"],
    &[".yarnrc.yml"],
    &["bunfig.toml"],
    &[".bunfig.toml"],
];

impl Walker<'_> {
    /// Configuration written earlier in the same command, then used: a
    /// command that writes a file one of [`ALIAS_READERS`] reads its aliases
    /// from (or runs `git config` that sets a value, `gh alias`) makes what
    /// a later command of that program runs unknown (opaque).
    fn config_then_used(&mut self, frag: &Fragment) {
        let name = frag.core.first().map(String::as_str).unwrap_or("");
        if self.config_written && ALIAS_READERS.iter().any(|(p, _)| *p == name) {
            self.set_opaque(format!(
                "`{name}` runs after the same command wrote configuration it reads (an alias or a program named there runs something the gate cannot see)"
            ));
        }
        let git_config = name == "git"
            && matches!(
                crate::programs::git_subcommand(&frag.core),
                Some(("config", _))
            )
            && crate::programs::git_config_write(&frag.core).is_some();
        let written = frag.writes.iter().any(|t| {
            let comps: Vec<&str> = t.raw.split('/').filter(|c| !c.is_empty()).collect();
            ALIAS_READERS
                .iter()
                .flat_map(|(_, files)| files.iter())
                .any(|f| comps.len() >= f.len() && comps[comps.len() - f.len()..] == **f)
        });
        self.config_written |= git_config || written;
    }
}
