//! The stages for the file tools (`read`, `glob`, `grep`, `write`, `edit`):
//! rules match the path as given and as resolved; the scope and never-automatic
//! caps look at where it lands.

use super::*;

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
        let expanded = expand_home(shown, &self.home);
        let given = lexical(&self.root, &expanded);
        // The tool opens the lexically folded path; the kernel applies `..`
        // after symlinks. Both are judged when they differ.
        let lex_resolved = self.resolve(&given);
        let physical = self.resolve_physical(&self.root.join(&expanded));
        let (resolved, alt) = if physical == lex_resolved {
            (lex_resolved, None)
        } else {
            (physical, Some(lex_resolved))
        };
        let alt_s = alt.as_ref().map(|a| a.to_string_lossy().into_owned());
        let alt_rel = alt.as_ref().and_then(|a| self.rel(a));
        let gs = given.to_string_lossy();
        let rs = resolved.to_string_lossy();
        let g_rel = self.rel(&given);
        let r_rel = self.rel(&resolved);
        let gf = PathForms {
            abs: &gs,
            rel: g_rel.as_deref(),
        };
        let rf = PathForms {
            abs: &rs,
            rel: r_rel.as_deref(),
        };

        // A search root is also judged by what lies inside it (`dir/**` rules).
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
        let probe_forms: Vec<PathForms<'_>> = probes
            .iter()
            .map(|(a, r)| PathForms {
                abs: a,
                rel: r.as_deref(),
            })
            .collect();
        let af = alt_s.as_deref().map(|a| PathForms {
            abs: a,
            rel: alt_rel.as_deref(),
        });
        let check = |list: RuleList| {
            self.index
                .match_path(list, tool, &gf)
                .or_else(|| self.index.match_path(list, tool, &rf))
                .or_else(|| {
                    af.as_ref()
                        .and_then(|f| self.index.match_path(list, tool, f))
                })
                .or_else(|| {
                    probe_forms
                        .iter()
                        .find_map(|f| self.index.match_path(list, tool, f))
                })
        };

        // 1. deny rules: the path as given or as resolved.
        if let Some(m) = check(RuleList::Deny) {
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
        let m = check(RuleList::Ask);
        if let Some(m) = m {
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

        // 6. allow rules (resolved path), then the mode.
        let always = vec![format!(
            "{}({})",
            tool.name(),
            escape_glob(&r_rel.clone().unwrap_or_else(|| rs.to_string()))
        )];
        let auto = mode == Mode::Auto;
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
                    _ => {
                        run.step(
                            Stage::Mode,
                            format!("{mode} mode asks before editing files"),
                        );
                        let mut caps = self.path_caps(tool, &given, &resolved, &rs, None);
                        if let (Some(a), Some(s)) = (&alt, &alt_s) {
                            caps.extend(self.path_caps(tool, &given, a, s, None));
                            caps.sort_by_key(|c| c.kind);
                        }
                        let hard = caps.iter().find(|c| c.kind != CapKind::Scope);
                        if let Some(c) = hard {
                            run.frags[0].cap = Some(c.kind);
                            run.step(Stage::Caps, format!("{}: {}", c.kind, c.reason));
                            return run.finish(
                                Verdict::Ask,
                                c.reason.clone(),
                                true,
                                None,
                                Vec::new(),
                            );
                        }
                        let reason = match caps.first() {
                            Some(c) => {
                                format!("{mode} mode asks before editing files; {}", c.reason)
                            }
                            None => format!("{mode} mode asks before editing files"),
                        };
                        return run.finish(Verdict::Ask, reason, false, None, always);
                    }
                }
            }
        };

        // 7. caps.
        let mut caps = self.path_caps(tool, &given, &resolved, &rs, Some(origin));
        if let (Some(a), Some(s)) = (&alt, &alt_s) {
            caps.extend(self.path_caps(tool, &given, a, s, Some(origin)));
            caps.sort_by_key(|c| c.kind);
        }
        if let Some(c) = caps.first() {
            run.frags[0].cap = Some(c.kind);
            run.mark(0, Verdict::Ask, None);
            run.step(Stage::Caps, format!("{}: {}", c.kind, c.reason));
            let capped = c.kind != CapKind::Scope;
            return run.finish(Verdict::Ask, c.reason.clone(), capped, Some(origin), always);
        }
        run.step(Stage::Caps, "no cap applies");
        run.finish(Verdict::Allow, reason, false, Some(origin), Vec::new())
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
