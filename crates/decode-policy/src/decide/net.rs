//! The host policy (docs/network.md): every connection a sandboxed command opens
//! (a `net` subject: `HOST` or `HOST:PORT`, with the addresses it resolved to) and
//! the hosts `web_fetch` reaches.
//!
//! Stages: deny rules → ask rules → bypass → a private, loopback, link-local or
//! metadata address asks unless an allow rule names the host or address exactly →
//! allow rules → the default allow-list (package registries, the project's git
//! remotes) → any other host asks, in auto mode too (the *network* cap).

use std::net::IpAddr;

use super::*;
use crate::net::{normal_ip, parse_target, private_kind, DEFAULT_HOSTS};

/// Where a host or one of its addresses is not public.
pub(super) struct PrivateHit {
    /// The host or address, as written in the reason.
    pub what: String,
    pub kind: &'static str,
}

impl Gate {
    /// The hosts allowed without a rule: [`DEFAULT_HOSTS`] and the hosts of the
    /// project's git remotes.
    pub fn default_hosts(&self) -> Vec<String> {
        let mut out: Vec<String> = DEFAULT_HOSTS.iter().map(|h| h.to_string()).collect();
        for h in &self.remote_hosts {
            if !out.contains(h) {
                out.push(h.clone());
            }
        }
        out
    }

    /// The first rule of `list` that matches `host` or one of `addrs`.
    fn host_rule(&self, list: RuleList, host: &str, addrs: &[IpAddr], bare: bool) -> Option<usize> {
        self.index.match_host(list, host, bare).or_else(|| {
            addrs
                .iter()
                .find_map(|a| self.index.match_host(list, &normal_ip(*a), false))
        })
    }

    /// Whether `host` (a name or an address) or an address it resolved to is
    /// not public, unless an allow rule names that host or address exactly.
    pub(super) fn private_hit(&self, host: &str, addrs: &[IpAddr]) -> Option<PrivateHit> {
        if self.index.literal_host(RuleList::Allow, host).is_some() {
            return None;
        }
        if let Ok(ip) = host.parse::<IpAddr>() {
            if let Some(kind) = private_kind(ip) {
                return Some(PrivateHit {
                    what: host.to_string(),
                    kind,
                });
            }
        }
        addrs.iter().find_map(|a| {
            let kind = private_kind(*a)?;
            let written = normal_ip(*a);
            if self.index.literal_host(RuleList::Allow, &written).is_some() {
                return None;
            }
            Some(PrivateHit {
                what: if written == host {
                    written
                } else {
                    format!("{host} (resolves to {written})")
                },
                kind,
            })
        })
    }

    /// Stages for a `net` subject.
    pub(super) fn decide_net(&self, call: &Call, mode: Mode, mut run: Run) -> Decision {
        let subject = call.subject.trim();
        run.add_frag(subject);
        let Some((host, port)) = parse_target(subject) else {
            run.step(Stage::DenyRules, "not a host");
            return run.finish(
                Verdict::Deny,
                format!("{} is not a host (write HOST or HOST:PORT)", quote(subject)),
                true,
                None,
                Vec::new(),
            );
        };
        let shown = match port {
            Some(p) if host.contains(':') => format!("[{host}]:{p}"),
            Some(p) => format!("{host}:{p}"),
            None => host.clone(),
        };
        let addrs = &call.addrs;
        if let Some(i) = self.host_rule(RuleList::Deny, &host, addrs, true) {
            let r = &self.index.refs[i];
            run.mark(0, Verdict::Deny, Some(r.text.clone()));
            run.step(Stage::DenyRules, format!("matches {}", r.text));
            return run.finish(
                Verdict::Deny,
                format!("connection to {shown} denied by rule {}", r.describe()),
                true,
                None,
                Vec::new(),
            );
        }
        run.step(Stage::DenyRules, "no deny rule matches");
        if let Some(i) = self.host_rule(RuleList::Ask, &host, addrs, true) {
            let r = &self.index.refs[i];
            run.mark(0, Verdict::Ask, Some(r.text.clone()));
            run.step(Stage::AskRules, format!("matches {}", r.text));
            return run.finish(
                Verdict::Ask,
                format!("connection to {shown}: asks by rule {}", r.describe()),
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
                "bypass mode allows every host".into(),
                false,
                Some(Origin::Bypass),
                Vec::new(),
            );
        }
        let always = vec![format!("net(domain:{})", escape_glob(&host))];
        if let Some(hit) = self.private_hit(&host, addrs) {
            if let Some(f) = run.frags.get_mut(0) {
                f.cap = Some(CapKind::Network);
            }
            run.step(
                Stage::Caps,
                format!("network: {} is a {} address", hit.what, hit.kind),
            );
            return run.finish(
                Verdict::Ask,
                format!(
                    "connection to {shown}: {} is a {} address; no rule names it",
                    hit.what, hit.kind
                ),
                false,
                None,
                always,
            );
        }
        let auto = mode == Mode::Auto;
        let origin = if auto { Origin::Wildcard } else { Origin::Rule };
        if let Some(i) = self.host_rule(RuleList::Allow, &host, addrs, true) {
            let r = &self.index.refs[i];
            run.mark(0, Verdict::Allow, Some(r.text.clone()));
            run.step(Stage::AllowRules, format!("matches {}", r.text));
            run.step(Stage::Caps, "no cap applies");
            return run.finish(
                Verdict::Allow,
                format!("connection to {shown} allowed by rule {}", r.describe()),
                false,
                Some(origin),
                Vec::new(),
            );
        }
        if DEFAULT_HOSTS.contains(&host.as_str()) {
            run.step(
                Stage::AllowRules,
                format!("{host} is a package registry (default allow-list)"),
            );
            run.step(Stage::Caps, "no cap applies");
            return run.finish(
                Verdict::Allow,
                format!("connection to {shown}: a package registry, allowed by default"),
                false,
                Some(origin),
                Vec::new(),
            );
        }
        if self.remote_hosts.contains(&host) {
            run.step(
                Stage::AllowRules,
                format!("{host} is a git remote of the project"),
            );
            run.step(Stage::Caps, "no cap applies");
            return run.finish(
                Verdict::Allow,
                format!("connection to {shown}: a git remote of the project, allowed by default"),
                false,
                Some(origin),
                Vec::new(),
            );
        }
        run.step(Stage::AllowRules, "no allow rule matches");
        if let Some(f) = run.frags.get_mut(0) {
            f.cap = Some(CapKind::Network);
        }
        run.step(
            Stage::Caps,
            format!("network: no rule allows {host} (in every mode but bypass)"),
        );
        run.finish(
            Verdict::Ask,
            format!("connection to {shown}: no rule allows this host"),
            false,
            None,
            always,
        )
    }
}
