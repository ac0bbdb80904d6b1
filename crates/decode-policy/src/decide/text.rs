//! The stages for the tools whose subject is text, not a path (`web_fetch`'s
//! URL, `todo_write`).

use super::*;
use crate::urls::{url_host, url_loose_forms, url_normal};

impl Gate {
    pub(super) fn decide_text(&self, call: &Call, mode: Mode, mut run: Run) -> Decision {
        let tool = call.tool;
        let subject = call.subject.trim();
        run.add_frag(subject);
        let host = if tool == Tool::WebFetch {
            url_host(subject)
        } else {
            None
        };
        let normal = if tool == Tool::WebFetch {
            url_normal(subject)
        } else {
            None
        };
        // The URL's looser spellings, made once for the deny and the ask rules.
        let loose = std::cell::OnceCell::new();
        let matcher = |list: RuleList| -> Option<usize> {
            if tool == Tool::WebFetch {
                // The host's rules, once for every spelling of the URL.
                let by_host = host
                    .as_deref()
                    .and_then(|h| self.index.match_url_host(list, h));
                if list == RuleList::Allow {
                    // An unparsable URL (or one without a host) matches no
                    // allow rule; a parsed one is matched as it will be fetched.
                    host.as_ref()?;
                    let n = normal.as_deref()?;
                    return self.index.match_url(list, n, by_host);
                }
                // Deny and ask: the raw string, the parsed form, and the
                // forms many servers treat alike (`%73ecret`, `//secret`, `SECRET`).
                self.index
                    .match_url(list, subject, by_host)
                    .or_else(|| {
                        normal
                            .as_deref()
                            .and_then(|n| self.index.match_url(list, n, by_host))
                    })
                    .or_else(|| {
                        loose
                            .get_or_init(|| url_loose_forms(subject))
                            .iter()
                            .find_map(|n| self.index.match_url(list, n, by_host))
                    })
                    .or_else(|| {
                        // The addresses the host resolved to (`net(domain:ADDR)`).
                        call.addrs.iter().find_map(|a| {
                            self.index
                                .match_host(list, &crate::net::normal_ip(*a), false)
                        })
                    })
            } else {
                self.index.match_text(list, tool, subject)
            }
        };
        if let Some(i) = matcher(RuleList::Deny) {
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
            run.step(Stage::Plan, "read-only tools run in plan mode");
        }
        if let Some(i) = matcher(RuleList::Ask) {
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
        if let Some(h) = host.as_deref() {
            let about = || format!("web_fetch of {}", quote(subject));
            run = match self.private_stage(h, &call.addrs, mode, run, &about, None) {
                Ok(run) => run,
                Err(decided) => return decided,
            };
        }
        let (origin, reason) = match matcher(RuleList::Allow) {
            Some(i) => {
                let r = &self.index.refs[i];
                run.mark(0, Verdict::Allow, Some(r.text.clone()));
                run.step(Stage::AllowRules, format!("matches {}", r.text));
                (
                    if auto { Origin::Wildcard } else { Origin::Rule },
                    format!("allowed by rule {}", r.describe()),
                )
            }
            None => {
                run.step(Stage::AllowRules, "no allow rule matches");
                run.step(Stage::Mode, format!("{mode} mode allows read-only tools"));
                (
                    if auto { Origin::Wildcard } else { Origin::Mode },
                    "read-only tools are allowed".to_string(),
                )
            }
        };
        run.step(Stage::Caps, "no cap applies");
        run.finish(Verdict::Allow, reason, false, Some(origin), Vec::new())
    }
}
