//! The stages for an MCP tool (docs/mcp.md): the subject is the call's JSON
//! arguments, rules name the tool (`mcp__SERVER__TOOL`, `mcp__SERVER__*`,
//! `mcp__*`), and the kind is `other` unless the person marked the tool or its
//! server read-only in their own settings. In auto mode an unmarked tool that no
//! allow rule names (with its server spelled out) asks: its effects are unknown
//! (the external-effects cap).

use super::*;

impl Gate {
    pub(super) fn decide_mcp(&self, call: &Call, mode: Mode, mut run: Run) -> Decision {
        let Some(name) = &call.mcp else {
            run.step(Stage::DenyRules, "an MCP call without a tool name");
            return run.finish(
                Verdict::Deny,
                "an MCP call must name its tool (mcp__SERVER__TOOL)".into(),
                true,
                None,
                Vec::new(),
            );
        };
        let args = call.subject.as_str();
        run.add_frag(args);
        let read_only = self.mcp_marked_read_only(name);

        if let Some((i, _)) = self.index.match_mcp(RuleList::Deny, name, args) {
            let r = &self.index.refs[i];
            run.mark(0, Verdict::Deny, Some(r.text.clone()));
            run.step(Stage::DenyRules, format!("matches {}", r.text));
            return run.finish(
                Verdict::Deny,
                format!("denied by rule {}", r.describe()),
                true,
                None,
                Vec::new(),
            );
        }
        run.step(Stage::DenyRules, "no deny rule matches");

        if mode == Mode::Plan {
            if !read_only {
                run.step(
                    Stage::Plan,
                    format!("plan mode stops {name}: an MCP tool not marked read-only"),
                );
                return run.finish(
                    Verdict::Deny,
                    format!(
                        "plan mode: `{name}` is not allowed while planning (an MCP tool you have not marked read-only) — present your plan and call exit_plan_mode to ask for approval"
                    ),
                    true,
                    None,
                    Vec::new(),
                );
            }
            run.step(Stage::Plan, "read-only tools run in plan mode");
        }

        if let Some((i, _)) = self.index.match_mcp(RuleList::Ask, name, args) {
            let r = &self.index.refs[i];
            run.mark(0, Verdict::Ask, Some(r.text.clone()));
            run.step(Stage::AskRules, format!("matches {}", r.text));
            return run.finish(
                Verdict::Ask,
                format!("asks by rule {}", r.describe()),
                true,
                None,
                Vec::new(),
            );
        }
        run.step(Stage::AskRules, "no ask rule matches");

        let always = vec![format!("{name}({})", escape_glob(args))];
        if mode == Mode::Bypass {
            run.step(Stage::Bypass, "bypass mode: allow candidate");
            run.step(Stage::Caps, "no cap applies");
            return run.finish(
                Verdict::Allow,
                "bypass mode allows it".into(),
                false,
                Some(Origin::Bypass),
                Vec::new(),
            );
        }

        let auto = mode == Mode::Auto;
        let allow = self.index.match_mcp(RuleList::Allow, name, args);
        let (origin, reason, names_server) = match allow {
            Some((i, names)) => {
                let r = &self.index.refs[i];
                run.mark(0, Verdict::Allow, Some(r.text.clone()));
                run.step(Stage::AllowRules, format!("matches {}", r.text));
                (
                    if auto { Origin::Wildcard } else { Origin::Rule },
                    format!("allowed by rule {}", r.describe()),
                    names,
                )
            }
            None => {
                run.step(Stage::AllowRules, "no allow rule matches");
                if read_only {
                    run.step(
                        Stage::Mode,
                        format!("you marked {name} read-only: {mode} mode allows read-only tools"),
                    );
                    (
                        if auto { Origin::Wildcard } else { Origin::Mode },
                        format!("you marked `{name}` read-only in your settings: read-only tools are allowed"),
                        false,
                    )
                } else if auto {
                    run.step(Stage::Mode, "auto mode: allow candidate");
                    (Origin::Wildcard, "auto mode allows it".to_string(), false)
                } else {
                    let reason = format!(
                        "{mode} mode asks before using an MCP tool: `{name}`'s effects are unknown (mark it read-only in your settings if it only reads)"
                    );
                    run.step(Stage::Mode, reason.clone());
                    return run.finish(Verdict::Ask, reason, false, None, always);
                }
            }
        };

        if auto && !read_only && !names_server {
            let reason = format!(
                "unknown effects: `{name}` is an MCP tool you have not marked read-only and no allow rule names it ({}__* or {name}), so auto mode asks",
                crate::mcp::PREFIX.to_string() + name.server()
            );
            if let Some(f) = run.frags.get_mut(0) {
                f.cap = Some(CapKind::External);
            }
            run.mark(0, Verdict::Ask, None);
            run.step(Stage::Caps, format!("{}: {reason}", CapKind::External));
            return run.finish(Verdict::Ask, reason, true, None, Vec::new());
        }
        run.step(Stage::Caps, "no cap applies");
        run.finish(Verdict::Allow, reason, false, Some(origin), Vec::new())
    }
}
