//! The stages for the file tools (`read`, `glob`, `grep`, `write`, `edit`):
//! rules match the path as given and as resolved; the scope and never-automatic
//! caps look at where it lands.

use super::*;

/// A file tool's path, placed: as given, resolved (and lexically resolved
/// when that differs), each as an absolute and a project-relative string,
/// and the probes a search root is also judged by.
struct Placed {
    given: PathBuf,
    resolved: PathBuf,
    alt: Option<PathBuf>,
    gs: String,
    rs: String,
    g_rel: Option<String>,
    r_rel: Option<String>,
    alt_s: Option<String>,
    alt_rel: Option<String>,
    probes: Vec<(String, Option<String>)>,
}

impl Gate {
    pub(super) fn decide_path(&self, call: &Call, mode: Mode, mut run: Run) -> Decision {
        let tool = call.tool;
        // Judged exactly as the tool will use it (no trimming).
        let subject = call.subject.as_str();
        let shown = if subject.is_empty() { "." } else { subject };
        run.add_frag(shown);
        if subject.len() > paths::MAX_PATH_BYTES {
            let why = format!(
                "the path is {} bytes long, over the system's limit of {} bytes",
                subject.len(),
                paths::MAX_PATH_BYTES
            );
            run.step(Stage::PathLimit, why.clone());
            return run.finish(Verdict::Deny, why, true, None, Vec::new());
        }
        if subject.contains('\0') {
            // No file has such a name: the system would cut the path short.
            let why = "the path holds a NUL byte, which no file name can".to_string();
            run.step(Stage::PathLimit, why.clone());
            return run.finish(Verdict::Deny, why, true, None, Vec::new());
        }
        let p = self.placed(tool, shown);

        // 1. deny rules: the path as given or as resolved.
        if let Some(m) = self.path_rule(RuleList::Deny, tool, &p) {
            let r = &self.index.refs[m.rule];
            run.mark(0, Verdict::Deny, Some(r.text.clone()));
            run.step(
                Stage::DenyRules,
                format!("{} matches {}", quote(shown), r.text),
            );
            return run.finish(
                Verdict::Deny,
                format!("denied by rule {}", r.describe()),
                true,
                None,
                Vec::new(),
            );
        }
        run.step(Stage::DenyRules, "no deny rule matches");

        // 2. plan.
        if mode == Mode::Plan && tool.kind() == ToolKind::FileEdit {
            run.step(Stage::Plan, "plan mode denies file edits");
            return run.finish(Verdict::Deny, plan_reason(tool), true, None, Vec::new());
        }
        if mode == Mode::Plan {
            run.step(Stage::Plan, "read-only tools run in plan mode");
        }

        // 4. ask rules.
        if let Some(m) = self.path_rule(RuleList::Ask, tool, &p) {
            let r = &self.index.refs[m.rule];
            run.mark(0, Verdict::Ask, Some(r.text.clone()));
            run.step(
                Stage::AskRules,
                format!("{} matches {}", quote(shown), r.text),
            );
            return run.finish(
                Verdict::Ask,
                format!("asks by rule {}", r.describe()),
                true,
                None,
                Vec::new(),
            );
        }
        run.step(Stage::AskRules, "no ask rule matches");
        if mode != Mode::Bypass {
            if let Some(why) = self.other_names(tool, &p.resolved) {
                run.step(Stage::AskRules, why.clone());
                return run.finish(Verdict::Ask, why, true, None, Vec::new());
            }
        }

        // 5. bypass: no file cap survives bypass.
        if mode == Mode::Bypass {
            run.step(Stage::Bypass, "bypass mode: allow candidate");
            run.step(Stage::Caps, "only critical removal applies in bypass: none");
            return run.finish(
                Verdict::Allow,
                "bypass mode allows it".into(),
                false,
                Some(Origin::Bypass),
                Vec::new(),
            );
        }
        self.path_allow(tool, shown, &p, mode, run)
    }

    /// Where a file tool's path lands: as given, resolved (the kernel applies
    /// `..` after symlinks; the tool opens the lexically folded path — both
    /// are judged when they differ), relative to the project, and for a
    /// search the root probed as `ROOT/x` (`dir/**` rules).
    fn placed(&self, tool: Tool, shown: &str) -> Placed {
        let expanded = expand_home(shown, &self.home);
        let given = lexical(&self.root, &expanded);
        let lex_resolved = self.resolve(&given);
        let physical = self.resolve_physical(&self.root.join(&expanded));
        let (resolved, alt) = if physical == lex_resolved {
            (lex_resolved, None)
        } else {
            (physical, Some(lex_resolved))
        };
        let gs = given.to_string_lossy().into_owned();
        let rs = resolved.to_string_lossy().into_owned();
        let g_rel = self.rel(&given);
        let r_rel = self.rel(&resolved);
        let alt_s = alt.as_ref().map(|a| a.to_string_lossy().into_owned());
        let alt_rel = alt.as_ref().and_then(|a| self.rel(a));
        let probes: Vec<(String, Option<String>)> = if matches!(tool, Tool::Glob | Tool::Grep) {
            [(&gs, &g_rel), (&rs, &r_rel)]
                .into_iter()
                .map(|(a, r)| {
                    let join = |s: &str| {
                        if s == "." {
                            "x".to_string()
                        } else {
                            format!("{}/x", s.trim_end_matches('/'))
                        }
                    };
                    (join(a), r.as_deref().map(join))
                })
                .collect()
        } else {
            Vec::new()
        };
        Placed {
            given,
            resolved,
            alt,
            gs,
            rs,
            g_rel,
            r_rel,
            alt_s,
            alt_rel,
            probes,
        }
    }

    /// Why reading a file with other names (hard links) asks, if it does:
    /// a read rule may cover another name of the same file (`notes.txt`
    /// made a name of `.env`). The file tools write by replacing the name,
    /// so a write leaves the other names alone.
    fn other_names(&self, tool: Tool, resolved: &Path) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        if tool.kind() != ToolKind::ReadOnly || !self.filters_searches() {
            return None;
        }
        let meta = std::fs::symlink_metadata(resolved).ok()?;
        if !meta.is_file() || meta.nlink() < 2 {
            return None;
        }
        Some(format!(
            "asks: {} has {} names (hard links), and a read rule may cover another of them",
            resolved.display(),
            meta.nlink()
        ))
    }

    /// The first rule of `list` matching the path in any of its forms.
    fn path_rule(
        &self,
        list: RuleList,
        tool: Tool,
        p: &Placed,
    ) -> Option<crate::matcher::PathMatch> {
        let form = |abs: &str, rel: &Option<String>| {
            self.index.match_path(
                list,
                tool,
                &PathForms {
                    abs,
                    rel: rel.as_deref(),
                },
            )
        };
        // The resolved path is judged too when it differs (the same strings
        // would match the same rules).
        let resolved_differs = p.rs != p.gs || p.r_rel != p.g_rel;
        form(&p.gs, &p.g_rel)
            .or_else(|| resolved_differs.then(|| form(&p.rs, &p.r_rel)).flatten())
            .or_else(|| p.alt_s.as_ref().and_then(|a| form(a, &p.alt_rel)))
            .or_else(|| {
                p.probes
                    .iter()
                    .enumerate()
                    // A probe the same as the one before it matches the same.
                    .filter(|&(i, pr)| i == 0 || p.probes[i - 1] != *pr)
                    .find_map(|(_, (a, r))| form(a, r))
            })
    }

    /// Stages 6 (allow rules, then the mode) and 7 (caps) for a file tool.
    fn path_allow(
        &self,
        tool: Tool,
        shown: &str,
        p: &Placed,
        mode: Mode,
        mut run: Run,
    ) -> Decision {
        // The rule "always allow" offers, only made for an ask.
        let always = || {
            vec![format!(
                "{}({})",
                tool.name(),
                escape_glob(p.r_rel.as_deref().unwrap_or(&p.rs))
            )]
        };
        let auto = mode == Mode::Auto;
        let rf = PathForms {
            abs: &p.rs,
            rel: p.r_rel.as_deref(),
        };
        let (origin, reason) = match self.index.match_path(RuleList::Allow, tool, &rf) {
            Some(m) => {
                let r = &self.index.refs[m.rule];
                run.mark(0, Verdict::Allow, Some(r.text.clone()));
                run.step(
                    Stage::AllowRules,
                    format!("{} matches {}", quote(shown), r.text),
                );
                (
                    if auto { Origin::Wildcard } else { Origin::Rule },
                    format!("allowed by rule {}", r.describe()),
                )
            }
            None => {
                run.step(Stage::AllowRules, "no allow rule matches");
                match (tool.kind(), mode) {
                    (ToolKind::ReadOnly, _) => {
                        run.step(Stage::Mode, format!("{mode} mode allows read-only tools"));
                        (
                            if auto { Origin::Wildcard } else { Origin::Mode },
                            "read-only tools are allowed".to_string(),
                        )
                    }
                    (_, Mode::Edit) => {
                        run.step(Stage::Mode, "edit mode allows file edits");
                        (Origin::Mode, "edit mode allows file edits".to_string())
                    }
                    (_, Mode::Auto) => {
                        run.step(Stage::Mode, "auto mode: wildcard allow");
                        (Origin::Wildcard, "auto mode allows it".to_string())
                    }
                    _ => return self.path_mode_ask(tool, p, mode, always(), run),
                }
            }
        };
        // 7. caps.
        let caps = self.all_path_caps(tool, p, Some(origin));
        if let Some(c) = caps.first() {
            run.frags[0].cap = Some(c.kind);
            run.mark(0, Verdict::Ask, None);
            run.step(Stage::Caps, format!("{}: {}", c.kind, c.reason));
            let capped = c.kind != CapKind::Scope;
            return run.finish(
                Verdict::Ask,
                c.reason.clone(),
                capped,
                Some(origin),
                always(),
            );
        }
        run.step(Stage::Caps, "no cap applies");
        run.finish(Verdict::Allow, reason, false, Some(origin), Vec::new())
    }

    /// The mode asks before editing: a cap that would ask anyway makes it
    /// an ask only "allow once" answers.
    fn path_mode_ask(
        &self,
        tool: Tool,
        p: &Placed,
        mode: Mode,
        always: Vec<String>,
        mut run: Run,
    ) -> Decision {
        run.step(
            Stage::Mode,
            format!("{mode} mode asks before editing files"),
        );
        let caps = self.all_path_caps(tool, p, None);
        if let Some(c) = caps.iter().find(|c| c.kind != CapKind::Scope) {
            run.frags[0].cap = Some(c.kind);
            run.step(Stage::Caps, format!("{}: {}", c.kind, c.reason));
            return run.finish(Verdict::Ask, c.reason.clone(), true, None, Vec::new());
        }
        let reason = match caps.first() {
            Some(c) => format!("{mode} mode asks before editing files; {}", c.reason),
            None => format!("{mode} mode asks before editing files"),
        };
        run.finish(Verdict::Ask, reason, false, None, always)
    }

    /// The caps of the path as resolved, and as lexically resolved when that
    /// differs, most severe first.
    fn all_path_caps(&self, tool: Tool, p: &Placed, origin: Option<Origin>) -> Vec<Cap> {
        let mut caps = self.path_caps(tool, &p.given, &p.resolved, &p.rs, origin);
        if let (Some(a), Some(s)) = (&p.alt, &p.alt_s) {
            caps.extend(self.path_caps(tool, &p.given, a, s, origin));
            caps.sort_by_key(|c| c.kind);
        }
        caps
    }

    pub(super) fn path_caps(
        &self,
        tool: Tool,
        given: &Path,
        resolved: &Path,
        rs: &str,
        origin: Option<Origin>,
    ) -> Vec<Cap> {
        let mut out = Vec::new();
        if tool.kind() == ToolKind::FileEdit {
            if let Some(label) = self
                .protected_label(resolved)
                .or_else(|| self.protected_label(given))
            {
                out.push(Cap {
                    kind: CapKind::NeverAuto,
                    reason: format!(
                        "`{tool}` of {} ({}) is never automatic: asks every time",
                        label,
                        resolved.display()
                    ),
                    frag: None,
                });
            }
        }
        if origin != Some(Origin::Wildcard)
            && !self.in_scope(resolved)
            && !is_harmless_device(given)
            && self.index.anchored_allow(tool, rs).is_none()
        {
            out.push(Cap {
                kind: CapKind::Scope,
                reason: format!("{} is outside the project: asks", resolved.display()),
                frag: None,
            });
        }
        out
    }
}
