//! The stages for `bash`: the command is cut into fragments, each judged by the
//! rules, the mode and the caps; a command the gate cannot see through asks.

use super::read_only::{Proof, ReadOnly};
use super::stored::StoredVerdict;
use super::*;

/// Which fragments allow rules cover: `cover[i]` the rule for fragment
/// `i`; `needed` those that need one (not only judged by deny/ask/caps).
struct Coverage<'a> {
    cover: &'a [Option<usize>],
    needed: &'a [usize],
    covered: &'a [usize],
    uncovered: &'a [usize],
}

impl Gate {
    pub(super) fn path_infos(&self, f: &Fragment) -> Vec<PathInfo> {
        f.paths
            .iter()
            .map(|raw| {
                let expanded =
                    paths::expand_user(raw).unwrap_or_else(|| expand_home(raw, &self.home));
                if paths::is_dynamic_path(&expanded.to_string_lossy()) {
                    return PathInfo {
                        raw: raw.clone(),
                        given: None,
                        resolved: None,
                        alt: None,
                        dynamic: true,
                        glob: false,
                    };
                }
                let (given, joined) = if expanded.is_absolute() {
                    (
                        Some(lexical(Path::new("/"), &expanded)),
                        Some(expanded.clone()),
                    )
                } else {
                    (
                        f.cwd.as_ref().map(|c| lexical(c, &expanded)),
                        f.cwd.as_ref().map(|c| c.join(&expanded)),
                    )
                };
                let glob = raw.contains(['*', '?', '[']);
                let resolved = if glob {
                    // The literal prefix resolved, the rest appended.
                    given.as_ref().map(|g| self.resolve_glob(g))
                } else {
                    joined.as_ref().map(|j| self.resolve_physical(j))
                };
                let lex_resolved = given.as_ref().map(|g| self.resolve(g));
                let alt = match (&resolved, lex_resolved) {
                    (Some(r), Some(l)) if *r != l => Some(l),
                    _ => None,
                };
                PathInfo {
                    raw: raw.clone(),
                    given,
                    resolved,
                    alt,
                    dynamic: false,
                    glob,
                }
            })
            .collect()
    }

    /// Extra forms for deny/ask: the seen-through command with its path
    /// arguments replaced by their resolved targets (absolute and relative).
    pub(super) fn resolved_forms(&self, f: &Fragment, infos: &[PathInfo]) -> Vec<String> {
        if infos.is_empty() || f.core.is_empty() {
            return Vec::new();
        }
        let mut plain: Option<String> = None;
        let mut out = Vec::new();
        // The physical resolution, then the lexical one when it differs.
        for use_alt in [false, true] {
            // The words replaced: their place, absolute form and relative form.
            let mut replaced: Vec<(usize, String, Option<String>)> = Vec::new();
            for (wi, w) in f.core.iter().enumerate().skip(1) {
                let Some(info) = infos.iter().find(|p| &p.raw == w) else {
                    continue;
                };
                let r = if use_alt {
                    info.alt.as_ref()
                } else {
                    info.resolved.as_ref()
                };
                let Some(r) = r else {
                    continue;
                };
                replaced.push((wi, r.to_string_lossy().into_owned(), self.rel(r)));
            }
            if replaced.is_empty() {
                continue;
            }
            let mut abs_words = f.core.clone();
            let mut rel_words = f.core.clone();
            for (wi, abs, rel) in replaced {
                if let Some(rel) = rel {
                    rel_words[wi] = rel;
                }
                abs_words[wi] = abs;
            }
            let plain = plain.get_or_insert_with(|| f.core.join(" "));
            for form in [abs_words.join(" "), rel_words.join(" ")] {
                if form != *plain && !out.contains(&form) {
                    out.push(form);
                }
            }
        }
        out
    }

    pub(super) fn decide_bash(
        &self,
        call: &Call,
        mode: Mode,
        mut run: Run,
        cwd: Option<&Path>,
    ) -> Decision {
        let tool = Tool::Bash;
        let start = match cwd {
            Some(c) => self.resolve(&lexical(&self.root, c)),
            None => self.root.clone(),
        };
        let parsed: Parsed = shell::parse_command(&call.subject, &start, &self.home, &self.shell);
        let frags = &parsed.fragments;
        // Shown with their quotes (each word re-quoted as bash reads it), so
        // `python3 -c "import sys; print(1)"` never reads as two commands.
        for f in frags {
            run.add_frag(if f.canon.is_empty() {
                &f.text
            } else {
                &f.canon
            });
        }
        let want_resolved = self.index.has_text_rules(RuleList::Deny, tool)
            || self.index.has_text_rules(RuleList::Ask, tool);
        // Paths are resolved (file system calls) only when something uses them.
        let mut infos: Vec<Vec<PathInfo>> = if want_resolved {
            frags.iter().map(|f| self.path_infos(f)).collect()
        } else {
            Vec::new()
        };
        let extra_forms: Vec<Vec<String>> = if want_resolved {
            frags
                .iter()
                .zip(&infos)
                .map(|(f, i)| self.resolved_forms(f, i))
                .collect()
        } else {
            vec![Vec::new(); frags.len()]
        };
        let raw = call.subject.trim();

        // 1. deny rules: the whole command, then every fragment (no limit).
        if let Some(d) = self.bash_rules(RuleList::Deny, raw, &parsed, &extra_forms, &mut run) {
            return d;
        }
        // A command proven read-only is judged like `read`: a path a read
        // deny rule covers denies it; it runs in plan mode.
        let known = (infos.len() == frags.len()).then_some(infos.as_slice());
        let cover = self.allow_cover(frags);
        let proof = read_only_proof(frags, &cover, mode);
        let read_only = self.read_only_command(raw, &parsed, known, proof);
        // What git prints from its store is judged like `read` of the files
        // it holds (the sandbox cannot hide them).
        let stored = self.stored_reads_verdict(frags);
        let denied = match (&read_only, &stored) {
            (ReadOnly::Denied(why), _) => Some((format!("read-only command: {why}"), why)),
            (_, Some(StoredVerdict::Deny(why))) => Some((why.clone(), why)),
            _ => None,
        };
        if let Some((step, why)) = denied {
            run.step(Stage::DenyRules, step);
            return run.finish(
                Verdict::Deny,
                format!("denied: {why}"),
                true,
                None,
                Vec::new(),
            );
        }
        let read_only = read_only == ReadOnly::Yes;
        // 2. plan and 3. opaque come between deny and ask rules.
        if mode == Mode::Plan && !read_only {
            run.step(Stage::Plan, "plan mode denies shell commands");
            return run.finish(Verdict::Deny, plan_reason(tool), true, None, Vec::new());
        }
        if mode == Mode::Plan {
            run.step(Stage::Plan, "read-only command: it runs in plan mode");
        }
        if let Some(why) = &parsed.opaque {
            if mode != Mode::Bypass || parsed.strict {
                run.step(Stage::Opaque, why.clone());
                return run.finish(
                    Verdict::Ask,
                    format!("asks: the command is opaque ({why}); no rule can allow it"),
                    true,
                    None,
                    Vec::new(),
                );
            }
            run.step(Stage::Opaque, format!("{why}; bypass mode goes on"));
        } else {
            run.step(Stage::Opaque, "not opaque");
        }
        // 4. ask rules.
        if let Some(d) = self.bash_rules(RuleList::Ask, raw, &parsed, &extra_forms, &mut run) {
            return d;
        }
        if let Some(StoredVerdict::Ask { why, rule }) = stored {
            if rule || mode != Mode::Bypass {
                run.step(Stage::AskRules, why.clone());
                return run.finish(Verdict::Ask, why, true, None, Vec::new());
            }
        }
        // A program the gate does not know, with a command a deny rule, an
        // ask rule or a cap names among its later words: it may run it.
        if let Some((i, why)) = self.hidden_command(frags, mode) {
            run.mark(i, Verdict::Ask, None);
            run.step(Stage::AskRules, why.clone());
            return run.finish(Verdict::Ask, why, true, None, Vec::new());
        }
        if infos.len() != frags.len() {
            infos = frags.iter().map(|f| self.path_infos(f)).collect();
        }
        // 5. bypass: only critical removal.
        if mode == Mode::Bypass {
            run.step(Stage::Bypass, "bypass mode: allow candidate");
            let caps = self.bash_caps(frags, &infos, Origin::Bypass, &[]);
            if let Some(c) = caps.iter().find(|c| c.kind == CapKind::Critical) {
                return self.cap_ask(run, c, Some(Origin::Bypass), Vec::new());
            }
            run.step(Stage::Caps, "no critical removal");
            run.mark_all_unset(Verdict::Allow);
            return run.finish(
                Verdict::Allow,
                "bypass mode allows it".into(),
                false,
                Some(Origin::Bypass),
                Vec::new(),
            );
        }
        self.bash_allow(frags, &infos, &cover, mode, read_only, run)
    }

    /// The allow rule covering each fragment that needs one (stage 6).
    fn allow_cover(&self, frags: &[Fragment]) -> Vec<Option<usize>> {
        frags
            .iter()
            .map(|f| {
                if f.role == Role::Full {
                    self.index
                        .match_forms(RuleList::Allow, Tool::Bash, &f.allow_forms)
                } else {
                    None
                }
            })
            .collect()
    }

    /// Stage 1 (deny) or 4 (ask) for a command: the whole command, then every
    /// fragment as written, as seen through, with its paths resolved, and —
    /// for words only known when it runs — every rule some value could match.
    fn bash_rules(
        &self,
        list: RuleList,
        raw: &str,
        parsed: &Parsed,
        extra_forms: &[Vec<String>],
        run: &mut Run,
    ) -> Option<Decision> {
        let tool = Tool::Bash;
        let frags = &parsed.fragments;
        let (stage, verdict) = if list == RuleList::Deny {
            (Stage::DenyRules, Verdict::Deny)
        } else {
            (Stage::AskRules, Verdict::Ask)
        };
        let mut hit: Option<(Option<usize>, usize)> = None;
        if let Some(r) = self.index.match_text(list, tool, raw) {
            hit = Some((None, r));
        } else {
            for (i, f) in frags.iter().enumerate() {
                let r = self
                    .index
                    .match_forms(list, tool, &f.check_forms)
                    .or_else(|| self.index.match_forms(list, tool, &extra_forms[i]))
                    .or_else(|| {
                        // A word only known when it runs: the rules that
                        // could match some value of it apply.
                        if f.has_dynamic() {
                            self.index.match_dynamic(list, tool, &f.dynamic_patterns())
                        } else {
                            None
                        }
                    });
                if let Some(r) = r {
                    hit = Some((Some(i), r));
                    break;
                }
            }
        }
        let Some((fi, r)) = hit else {
            run.step(
                stage,
                format!(
                    "no {} rule matches ({} fragment{})",
                    list.name(),
                    frags.len(),
                    if frags.len() == 1 { "" } else { "s" }
                ),
            );
            return None;
        };
        let rr = &self.index.refs[r];
        let what = match fi {
            Some(i) => {
                run.mark(i, verdict, Some(rr.text.clone()));
                quote(&frags[i].text)
            }
            None => {
                for i in 0..frags.len() {
                    run.mark(i, verdict, Some(rr.text.clone()));
                }
                "the command".to_string()
            }
        };
        run.step(stage, format!("{what} matches {}", rr.text));
        let reason = if list == RuleList::Deny {
            format!("denied by rule {}", rr.describe())
        } else {
            format!("asks by rule {}", rr.describe())
        };
        // `finish` consumes the run: hand back a copy of what it holds.
        let done = std::mem::replace(run, Run::new());
        Some(done.finish(verdict, reason, true, None, Vec::new()))
    }

    /// Stage 6 (allow rules and the mode) and 7 (caps).
    /// `cover`: [`Gate::allow_cover`].
    fn bash_allow(
        &self,
        frags: &[Fragment],
        infos: &[Vec<PathInfo>],
        cover: &[Option<usize>],
        mode: Mode,
        read_only: bool,
        mut run: Run,
    ) -> Decision {
        let needed: Vec<usize> = (0..frags.len())
            .filter(|&i| frags[i].role == Role::Full)
            .collect();
        let covered: Vec<usize> = needed
            .iter()
            .copied()
            .filter(|&i| cover[i].is_some())
            .collect();
        let uncovered: Vec<usize> = needed
            .iter()
            .copied()
            .filter(|&i| cover[i].is_none())
            .collect();
        for &i in &covered {
            if let Some(r) = cover[i] {
                run.mark(i, Verdict::Allow, Some(self.index.refs[r].text.clone()));
            }
        }
        let lifted: Vec<bool> = frags
            .iter()
            .map(|f| {
                let forms = if f.role == Role::Full {
                    &f.allow_forms
                } else {
                    std::slice::from_ref(&f.canon)
                };
                self.index.literal_allow(forms)
            })
            .collect();
        let coverage = Coverage {
            cover,
            needed: &needed,
            covered: &covered,
            uncovered: &uncovered,
        };
        let candidate = self.allow_candidate(frags, &coverage, mode, read_only, &mut run);
        match candidate {
            Err(reason) => {
                for &i in &uncovered {
                    run.mark(i, Verdict::Ask, None);
                }
                self.bash_ask(frags, infos, &uncovered, &lifted, reason, run)
            }
            Ok((origin, reason)) => {
                // 7. caps.
                run.mark_all_unset(Verdict::Allow);
                let caps = self.bash_caps(frags, infos, origin, &lifted);
                if let Some(c) = caps.first() {
                    let rules = if c.kind == CapKind::Scope {
                        let mut rules = Vec::new();
                        for c in &caps {
                            if let Some(i) = c.frag {
                                let r = format!("bash({})", escape_glob(&frags[i].canon));
                                if !rules.contains(&r) {
                                    rules.push(r);
                                }
                            }
                        }
                        rules
                    } else {
                        Vec::new()
                    };
                    return self.cap_ask(run, c, Some(origin), rules);
                }
                run.step(Stage::Caps, "no cap applies");
                run.finish(Verdict::Allow, reason, false, Some(origin), Vec::new())
            }
        }
    }

    /// Stage 6: every fragment covered by an allow rule (an allow candidate
    /// of origin *rule*), some (an ask naming the others — in auto mode the
    /// mode decides), or none (the mode decides).
    fn allow_candidate(
        &self,
        frags: &[Fragment],
        c: &Coverage<'_>,
        mode: Mode,
        read_only: bool,
        run: &mut Run,
    ) -> Result<(Origin, String), String> {
        let (cover, needed, covered, uncovered) = (c.cover, c.needed, c.covered, c.uncovered);
        let auto = mode == Mode::Auto;
        if !needed.is_empty() && uncovered.is_empty() {
            let mut uniq: Vec<String> = Vec::new();
            for r in covered
                .iter()
                .filter_map(|&i| cover[i].map(|r| self.index.refs[r].describe()))
            {
                if !uniq.contains(&r) {
                    uniq.push(r);
                }
            }
            run.step(
                Stage::AllowRules,
                format!("every fragment is covered ({})", uniq.join(", ")),
            );
            let reason = if uniq.len() == 1 {
                format!("allowed by rule {}", uniq[0])
            } else {
                format!(
                    "allowed: every fragment matches an allow rule ({})",
                    uniq.join("; ")
                )
            };
            return Ok((if auto { Origin::Wildcard } else { Origin::Rule }, reason));
        }
        if !covered.is_empty() && !auto && !read_only {
            let names: Vec<String> = uncovered.iter().map(|&i| quote(&frags[i].text)).collect();
            run.step(
                Stage::AllowRules,
                format!(
                    "{} of {} fragments covered; not covered: {}",
                    covered.len(),
                    needed.len(),
                    names.join(", ")
                ),
            );
            return Err(format!(
                "asks: {} {} not covered by any allow rule",
                names.join(", "),
                if names.len() == 1 { "is" } else { "are" }
            ));
        }
        if covered.is_empty() {
            run.step(Stage::AllowRules, "no fragment is covered by an allow rule");
        } else {
            run.step(
                Stage::AllowRules,
                format!(
                    "{} of {} fragments covered; auto mode decides",
                    covered.len(),
                    needed.len()
                ),
            );
        }
        if auto {
            run.step(Stage::Mode, "auto mode: wildcard allow");
            Ok((Origin::Wildcard, "auto mode allows it".to_string()))
        } else if read_only {
            run.step(
                Stage::Mode,
                format!("read-only command: {mode} mode allows it like `read`"),
            );
            Ok((Origin::Mode, "read-only command".to_string()))
        } else {
            run.step(
                Stage::Mode,
                format!("{mode} mode asks before running shell commands"),
            );
            Err(format!("{mode} mode asks before running shell commands"))
        }
    }

    /// An ask from the rules or the mode: would a cap ask anyway? Then only
    /// allow-once fits; else "always allow" offers one rule per fragment
    /// not covered (and per fragment the path scope stopped).
    fn bash_ask(
        &self,
        frags: &[Fragment],
        infos: &[Vec<PathInfo>],
        uncovered: &[usize],
        lifted: &[bool],
        reason: String,
        mut run: Run,
    ) -> Decision {
        let caps = self.bash_caps(frags, infos, Origin::Rule, lifted);
        if let Some(c) = caps.iter().find(|c| c.kind != CapKind::Scope) {
            return self.cap_ask(run, c, None, Vec::new());
        }
        let mut rules = Vec::new();
        let mut add = |i: usize| {
            let r = format!("bash({})", escape_glob(&frags[i].canon));
            if !rules.contains(&r) {
                rules.push(r);
            }
        };
        for &i in uncovered {
            add(i);
        }
        for c in &caps {
            if let Some(i) = c.frag {
                add(i);
            }
        }
        if !caps.is_empty() {
            run.step(Stage::Caps, format!("path scope: {}", caps[0].reason));
        }
        if frags.is_empty() {
            rules.clear();
        }
        run.finish(Verdict::Ask, reason, false, None, rules)
    }

    /// `foo run curl x` under `deny: bash(curl *)`: a later unquoted word of
    /// a program the gate does not know starts a command that a deny rule,
    /// an ask rule or a cap names (in bypass: only critical removal).
    pub(super) fn hidden_command(&self, frags: &[Fragment], mode: Mode) -> Option<(usize, String)> {
        let has_rules = self.index.has_text_rules(RuleList::Deny, Tool::Bash)
            || self.index.has_text_rules(RuleList::Ask, Tool::Bash);
        for (i, f) in frags.iter().enumerate() {
            let known = f
                .core
                .first()
                .is_none_or(|n| crate::programs::knows_program(n));
            if known {
                continue;
            }
            for k in f.later_words() {
                // `eatmydata /usr/bin/curl x`: the word is judged by its name.
                let t = f.tail(k);
                let text = t.core.join(" ");
                let why = |what: String| {
                    format!("{} may run {} ({what}): asks", quote(&f.text), quote(&text))
                };
                if has_rules {
                    for list in [RuleList::Deny, RuleList::Ask] {
                        if let Some(r) = self.index.match_text(list, Tool::Bash, &text) {
                            let rr = &self.index.refs[r];
                            return Some((i, why(format!("{} rule {}", list.name(), rr.text))));
                        }
                    }
                }
                if !has_rules && !crate::programs::might_cap(&t.core) {
                    continue;
                }
                if let Some(r) = self.critical_removal(&t) {
                    return Some((i, why(r)));
                }
                if mode == Mode::Bypass {
                    continue;
                }
                if let Some(r) = crate::programs::external_effect(&t.core, &t.core_dyn, &[]) {
                    return Some((i, why(r)));
                }
                if let Some(r) = crate::programs::container_removal(&t.core) {
                    return Some((i, why(r)));
                }
            }
        }
        None
    }

    pub(super) fn cap_ask(
        &self,
        mut run: Run,
        c: &Cap,
        origin: Option<Origin>,
        always: Vec<String>,
    ) -> Decision {
        if let Some(i) = c.frag {
            run.mark(i, Verdict::Ask, None);
            if let Some(f) = run.frags.get_mut(i) {
                f.cap = Some(c.kind);
            }
        }
        run.step(Stage::Caps, format!("{}: {}", c.kind, c.reason));
        let capped = c.kind != CapKind::Scope;
        run.finish(Verdict::Ask, c.reason.clone(), capped, origin, always)
    }

    /// Caps of every fragment, most severe first. Bypass: only critical removal;
    /// wildcard: no path scope. `lifted[i]`: a literal allow rule names fragment i.
    pub(super) fn bash_caps(
        &self,
        frags: &[Fragment],
        infos: &[Vec<PathInfo>],
        origin: Origin,
        lifted: &[bool],
    ) -> Vec<Cap> {
        let mut out: Vec<Cap> = Vec::new();
        for (i, f) in frags.iter().enumerate() {
            if let Some(reason) = self.critical_removal(f) {
                out.push(Cap {
                    kind: CapKind::Critical,
                    reason,
                    frag: Some(i),
                });
            }
            if origin == Origin::Bypass {
                continue;
            }
            if let Some(reason) = self.never_auto(f, &infos[i]) {
                out.push(Cap {
                    kind: CapKind::NeverAuto,
                    reason,
                    frag: Some(i),
                });
            }
            // Words xargs or parallel appends could be any sub-command
            // (`echo push | xargs git`).
            let (core, core_dyn) = if f.filled {
                let mut core = f.core.clone();
                let mut core_dyn = f.core_dyn.clone();
                core_dyn.resize(core.len(), false);
                // `find push -exec git {} \;`: `{}` is filled in too.
                for (d, w) in core_dyn.iter_mut().zip(&core) {
                    *d |= w.contains("{}");
                }
                core.push("{}".into());
                core_dyn.push(true);
                (core, core_dyn)
            } else {
                (f.core.clone(), f.core_dyn.clone())
            };
            if let Some(reason) = crate::programs::external_effect(&core, &core_dyn, &f.chain) {
                out.push(Cap {
                    kind: CapKind::External,
                    reason,
                    frag: Some(i),
                });
            } else if let Some(r) = self.index.match_external(&f.check_forms).or_else(|| {
                if f.has_dynamic() {
                    self.index.match_external_dynamic(&f.dynamic_patterns())
                } else {
                    None
                }
            }) {
                out.push(Cap {
                    kind: CapKind::External,
                    reason: format!(
                        "{} matches caps.external pattern `{}`: asks every time",
                        quote(&f.text),
                        self.index.refs[r].text
                    ),
                    frag: Some(i),
                });
            }
            if origin != Origin::Wildcard && !lifted.get(i).copied().unwrap_or(false) {
                if let Some(c) = &f.cwd {
                    if !self.in_scope(c) {
                        out.push(Cap {
                            kind: CapKind::Scope,
                            reason: format!(
                                "{} runs in {}, outside the project: asks",
                                quote(&f.text),
                                c.display()
                            ),
                            frag: Some(i),
                        });
                        continue;
                    }
                }
                for p in &infos[i] {
                    let outside = match (&p.given, &p.resolved) {
                        (Some(g), Some(r)) => {
                            !is_harmless_device(g)
                                && (!self.in_scope(r)
                                    || p.alt.as_ref().is_some_and(|a| !self.in_scope(a)))
                        }
                        _ => true,
                    };
                    if outside {
                        let reason = match &p.resolved {
                            Some(r) => format!(
                                "{} names {}, outside the project: asks",
                                quote(&f.text),
                                r.display()
                            ),
                            None => format!(
                                "{} names {} in an unknown directory: asks",
                                quote(&f.text),
                                p.raw
                            ),
                        };
                        out.push(Cap {
                            kind: CapKind::Scope,
                            reason,
                            frag: Some(i),
                        });
                        break;
                    }
                }
            }
        }
        out.sort_by_key(|c| c.kind);
        out
    }
}

/// How much of the read-only proof the rest of the judgement uses: whether the
/// command is read-only only matters in plan mode, and where the mode decides
/// for fragments no allow rule covers (not in auto or bypass mode).
fn read_only_proof(frags: &[Fragment], cover: &[Option<usize>], mode: Mode) -> Proof {
    let needed = frags
        .iter()
        .zip(cover)
        .filter(|(f, _)| f.role == Role::Full);
    let every_covered = needed.clone().next().is_some() && needed.clone().all(|(_, c)| c.is_some());
    let mode_decides = !matches!(mode, Mode::Auto | Mode::Bypass);
    if mode == Mode::Plan || (mode_decides && !every_covered) {
        Proof::Full
    } else {
        Proof::DenyOnly
    }
}
