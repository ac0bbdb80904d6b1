//! The host policy (docs/network.md): every connection a sandboxed command opens
//! (a `net` subject: `HOST` or `HOST:PORT`, with the addresses it resolved to) and
//! the hosts `web_fetch` reaches.
//!
//! Stages: deny rules → ask rules → bypass → a private, loopback, link-local or
//! metadata address asks unless an allow rule names the host or address exactly
//! (that rule decides) → allow rules → the default allow-list (package registries on
//! ports 443 and 80, the project's git remotes on 443, 80, 22, 9418 and the ports
//! their URLs name) → any other host or port asks, in auto mode too (the *network*
//! cap).

use std::net::IpAddr;

use super::*;
use crate::net::{
    normal_ip, parse_target, ports_text, private_kind, DEFAULT_HOSTS, GIT_REMOTE_PORTS,
    REGISTRY_PORTS,
};

/// Where a host or one of its addresses is not public.
pub(super) struct PrivateHit {
    /// The host or address, as written in the reason.
    pub what: String,
    pub kind: &'static str,
}

/// What the private-address stage found.
pub(super) enum Reach {
    /// The host and every address it resolved to are public.
    Public,
    /// Not public, and no allow rule names the host or that address exactly: asks.
    Private(PrivateHit),
    /// Not public, but an allow rule names the host or the address exactly: that
    /// rule (an index into the rules) is what allows it — a wildcard cannot.
    Named(usize, PrivateHit),
}

impl Gate {
    /// The hosts allowed without a rule: [`DEFAULT_HOSTS`] and the hosts of the
    /// project's git remotes (each on its own ports: [`Gate::default_ports`]).
    pub fn default_hosts(&self) -> Vec<String> {
        let mut out: Vec<String> = DEFAULT_HOSTS.iter().map(|h| h.to_string()).collect();
        for (host, _) in &self.remote_hosts {
            if !out.contains(host) {
                out.push(host.clone());
            }
        }
        out
    }

    /// The ports `host` is allowed on without a rule, and what it is (a package
    /// registry, a git remote of the project), or `None` for a host not on the
    /// default allow-list.
    pub fn default_ports(&self, host: &str) -> Option<(Vec<u16>, &'static str)> {
        let remote: Vec<Option<u16>> = self
            .remote_hosts
            .iter()
            .filter(|(h, _)| h == host)
            .map(|(_, port)| *port)
            .collect();
        let registry = DEFAULT_HOSTS.contains(&host);
        if !registry && remote.is_empty() {
            return None;
        }
        let mut ports: Vec<u16> = Vec::new();
        if registry {
            ports.extend_from_slice(REGISTRY_PORTS);
        }
        if !remote.is_empty() {
            for p in GIT_REMOTE_PORTS
                .iter()
                .copied()
                .chain(remote.iter().flatten().copied())
            {
                if !ports.contains(&p) {
                    ports.push(p);
                }
            }
        }
        let what = if registry {
            "a package registry"
        } else {
            "a git remote of the project"
        };
        Some((ports, what))
    }

    /// Whether the addresses a host resolves to could change the verdict on a
    /// `net` or `web_fetch` call in `mode`: in every mode but bypass (a private
    /// address asks), and in bypass only when a deny or an ask rule could match an
    /// address (`net(domain:203.0.113.7)` refuses the names that resolve to it). A
    /// surface that connects nowhere (`decode check`) resolves a name only then.
    pub fn addresses_matter(&self, mode: Mode) -> bool {
        mode != Mode::Bypass
            || self.index.host_rules_may_name_an_address(RuleList::Deny)
            || self.index.host_rules_may_name_an_address(RuleList::Ask)
    }

    /// The first rule of `list` that matches `host` or one of `addrs`.
    fn host_rule(&self, list: RuleList, host: &str, addrs: &[IpAddr], bare: bool) -> Option<usize> {
        self.index.match_host(list, host, bare).or_else(|| {
            addrs
                .iter()
                .find_map(|a| self.index.match_host(list, &normal_ip(*a), false))
        })
    }

    /// Whether `host` (a name or an address) or an address it resolved to is not
    /// public, and if so whether an allow rule names that host or address exactly.
    pub(super) fn private_reach(&self, host: &str, addrs: &[IpAddr]) -> Reach {
        let by_host = self.index.literal_host(RuleList::Allow, host);
        let mut named: Option<(usize, PrivateHit)> = None;
        if let Ok(ip) = host.parse::<IpAddr>() {
            if let Some(kind) = private_kind(ip) {
                let hit = PrivateHit {
                    what: host.to_string(),
                    kind,
                };
                match by_host {
                    Some(i) => named = Some((i, hit)),
                    None => return Reach::Private(hit),
                }
            }
        }
        for a in addrs {
            let Some(kind) = private_kind(*a) else {
                continue;
            };
            let written = normal_ip(*a);
            let rule = by_host.or_else(|| self.index.literal_host(RuleList::Allow, &written));
            let hit = PrivateHit {
                what: if written == host {
                    written
                } else {
                    format!("{host} (resolves to {written})")
                },
                kind,
            };
            match rule {
                Some(i) => {
                    named.get_or_insert((i, hit));
                }
                None => return Reach::Private(hit),
            }
        }
        match named {
            Some((i, hit)) => Reach::Named(i, hit),
            None => Reach::Public,
        }
    }

    /// The private-address stage of `net` and `web_fetch` (after bypass): a host or
    /// an address that is not public asks unless an allow rule names it exactly,
    /// and then that rule is what allows it (named in the reason and the trace; a
    /// wildcard that also matches cannot lift it). `Err` with the decision when the
    /// stage decides, `Ok` with the run to go on. `about` makes the start of an ask's
    /// reason (`connection to HOST:PORT`; made only for one), `allowed` an allow's
    /// (`None`: "allowed by rule…").
    pub(super) fn private_stage(
        &self,
        host: &str,
        addrs: &[IpAddr],
        mode: Mode,
        mut run: Run,
        about: &dyn Fn() -> String,
        allowed: Option<&str>,
    ) -> Result<Run, Decision> {
        match self.private_reach(host, addrs) {
            Reach::Public => Ok(run),
            Reach::Private(hit) => {
                if let Some(f) = run.frags.get_mut(0) {
                    f.cap = Some(CapKind::Network);
                }
                run.step(
                    Stage::Caps,
                    format!("network: {} is a {} address", hit.what, hit.kind),
                );
                Err(run.finish(
                    Verdict::Ask,
                    format!(
                        "{}: {} is a {} address; no rule names it",
                        about(),
                        hit.what,
                        hit.kind
                    ),
                    false,
                    None,
                    vec![format!("net(domain:{})", escape_glob(host))],
                ))
            }
            Reach::Named(i, hit) => {
                let r = &self.index.refs[i];
                run.mark(0, Verdict::Allow, Some(r.text.clone()));
                run.step(
                    Stage::AllowRules,
                    format!(
                        "matches {}, which names {} exactly ({} address)",
                        r.text, hit.what, hit.kind
                    ),
                );
                run.step(Stage::Caps, "no cap applies");
                let lead = allowed
                    .map(|a| format!("{a} allowed"))
                    .unwrap_or_else(|| "allowed".into());
                Err(run.finish(
                    Verdict::Allow,
                    format!(
                        "{lead} by rule {} ({} is a {} address the rule names exactly)",
                        r.describe(),
                        hit.what,
                        hit.kind
                    ),
                    false,
                    Some(if mode == Mode::Auto {
                        Origin::Wildcard
                    } else {
                        Origin::Rule
                    }),
                    Vec::new(),
                ))
            }
        }
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
        let origin = if mode == Mode::Auto {
            Origin::Wildcard
        } else {
            Origin::Rule
        };
        let about = format!("connection to {shown}");
        let mut run =
            match self.private_stage(&host, addrs, mode, run, &|| about.clone(), Some(&about)) {
                Ok(run) => run,
                Err(decided) => return decided,
            };
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
        // The default allow-list, each host on the ports its service uses; a check
        // without a port (`decode check net pypi.org`) is answered for those ports.
        let mut other_port = None;
        if let Some((ports, what)) = self.default_ports(&host) {
            let listed = ports_text(&ports);
            match port {
                Some(p) if !ports.contains(&p) => {
                    run.step(
                        Stage::AllowRules,
                        format!(
                            "{host} is {what} (default allow-list) on ports {listed} only, not {p}; no allow rule matches"
                        ),
                    );
                    other_port = Some(format!(
                        "{what} is allowed by default on ports {listed} only; no rule allows port {p}"
                    ));
                }
                _ => {
                    run.step(
                        Stage::AllowRules,
                        format!("{host} is {what} (default allow-list, ports {listed})"),
                    );
                    run.step(Stage::Caps, "no cap applies");
                    return run.finish(
                        Verdict::Allow,
                        format!(
                            "connection to {shown}: {what}, allowed by default (ports {listed})"
                        ),
                        false,
                        Some(origin),
                        Vec::new(),
                    );
                }
            }
        }
        if other_port.is_none() {
            run.step(Stage::AllowRules, "no allow rule matches");
        }
        if let Some(f) = run.frags.get_mut(0) {
            f.cap = Some(CapKind::Network);
        }
        run.step(
            Stage::Caps,
            format!("network: no rule allows {shown} (in every mode but bypass)"),
        );
        run.finish(
            Verdict::Ask,
            format!(
                "connection to {shown}: {}",
                other_port.as_deref().unwrap_or("no rule allows this host")
            ),
            false,
            None,
            always,
        )
    }
}
