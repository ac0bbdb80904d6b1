//! The host policy (docs/network.md): `net(domain:…)` rules, the default
//! allow-list, git remote hosts, private addresses by address and by a name
//! that resolves to one, for `net` subjects and `web_fetch` alike.

use std::net::IpAddr;

use decode_policy::{Call, CapKind, Mode, Tool, Verdict};

use crate::common::{run, strings, Proj};
use decode_policy::{Level, LevelRules, RuleLists};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn hosts_by_rule_default_and_mode() {
    let p = Proj::new();
    let g = p.gate(
        &["net(domain:api.example.com)", "net(*.trusted.example)"],
        &["net(domain:ask.example.com)"],
        &["net(domain:crates.io)", "web_fetch(domain:evil.example)"],
    );
    let n = run(
        &p,
        &g,
        &[
            // The default allow-list, in every mode.
            (
                "default",
                "net",
                "static.crates.io:443",
                "allow:package registry",
            ),
            ("auto", "net", "registry.npmjs.org", "allow"),
            ("plan", "net", "pypi.org:443", "allow"),
            // A deny rule wins over the default allow-list.
            (
                "default",
                "net",
                "crates.io:443",
                "deny:net(domain:crates.io)",
            ),
            ("bypass", "net", "crates.io", "deny"),
            // web_fetch(domain:…) rules count for net.
            (
                "auto",
                "net",
                "evil.example:443",
                "deny:web_fetch(domain:evil.example)",
            ),
            (
                "default",
                "net",
                "api.example.com:443",
                "allow:net(domain:api.example.com)",
            ),
            ("default", "net", "API.Example.com.", "allow"),
            ("default", "net", "x.trusted.example:22", "allow"),
            ("default", "net", "trusted.example", "ask"),
            ("default", "net", "ask.example.com", "ask:asks by rule"),
            ("bypass", "net", "ask.example.com", "ask"),
            // No rule: an ask in every mode but bypass, auto included.
            (
                "default",
                "net",
                "example.org:443",
                "ask:no rule allows this host",
            ),
            ("edit", "net", "example.org:443", "ask"),
            ("auto", "net", "example.org:443", "ask"),
            ("plan", "net", "example.org", "ask"),
            ("bypass", "net", "example.org:443", "allow"),
            // Not a subdomain trick.
            ("default", "net", "crates.io.attacker.net", "ask"),
            ("default", "net", "api.example.com.attacker.net", "ask"),
            // Not a host.
            ("default", "net", "a b", "deny:not a host"),
            // A code host is not a registry: it takes uploads (a project whose
            // remote is on it gets it as a remote host).
            (
                "auto",
                "net",
                "github.com:443",
                "ask:no rule allows this host",
            ),
            ("auto", "net", "codeload.github.com", "ask"),
            ("auto", "net", "objects.githubusercontent.com:443", "ask"),
        ],
    );
    assert_eq!(n, 23);
}

#[test]
fn the_ask_offers_a_net_rule_and_the_rule_allows() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let d = g.decide(&Call::new(Tool::Net, "example.org:443"), Mode::Auto);
    assert_eq!(d.verdict, Verdict::Ask);
    assert!(!d.capped);
    assert_eq!(d.always_allow_rules, vec!["net(domain:example.org)"]);
    assert_eq!(d.fragments[0].cap, Some(CapKind::Network));
    let g = p.gate(&["net(domain:example.org)"], &[], &[]);
    let d = g.decide(&Call::new(Tool::Net, "example.org:443"), Mode::Auto);
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
}

#[test]
fn private_addresses_ask_by_address_and_by_name() {
    let p = Proj::new();
    let g = p.gate(&["net(*.example.com)", "net(domain:10.9.9.9)"], &[], &[]);
    for host in [
        "127.0.0.1:8080",
        "169.254.169.254:80",
        "[::1]:22",
        "[fd00:ec2::254]:80",
        "10.0.0.1",
        "192.168.0.10",
        "[::ffff:127.0.0.1]:80",
        "0.0.0.0:80",
    ] {
        for mode in [Mode::Default, Mode::Auto, Mode::Edit, Mode::Plan] {
            let d = g.decide(&Call::new(Tool::Net, host), mode);
            assert_eq!(d.verdict, Verdict::Ask, "{host} {mode}: {}", d.reason);
            assert!(d.reason.contains("address"), "{}", d.reason);
        }
        let d = g.decide(&Call::new(Tool::Net, host), Mode::Bypass);
        assert_eq!(d.verdict, Verdict::Allow, "{host}");
    }
    // A name that resolves to a private address asks, even when a wildcard
    // allow rule covers the name; a registry name too.
    let d = g.decide(
        &Call::new(Tool::Net, "intranet.example.com:443").with_addrs(vec![ip("10.1.1.1")]),
        Mode::Auto,
    );
    assert_eq!(d.verdict, Verdict::Ask);
    assert!(d.reason.contains("resolves to 10.1.1.1"), "{}", d.reason);
    let d = g.decide(
        &Call::new(Tool::Net, "crates.io:443").with_addrs(vec![ip("1.2.3.4"), ip("127.0.0.1")]),
        Mode::Default,
    );
    assert_eq!(d.verdict, Verdict::Ask, "{}", d.reason);
    // A public resolution is fine.
    let d = g.decide(
        &Call::new(Tool::Net, "crates.io:443").with_addrs(vec![ip("1.2.3.4")]),
        Mode::Default,
    );
    assert_eq!(d.verdict, Verdict::Allow);
    // A rule that names the address exactly lifts it.
    let d = g.decide(
        &Call::new(Tool::Net, "db.example.com:5432").with_addrs(vec![ip("10.9.9.9")]),
        Mode::Default,
    );
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
    // A rule that names the host exactly lifts it too.
    let g = p.gate(&["net(domain:localhost)"], &[], &[]);
    let d = g.decide(
        &Call::new(Tool::Net, "localhost:3000").with_addrs(vec![ip("127.0.0.1")]),
        Mode::Default,
    );
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
}

#[test]
fn a_deny_by_address_refuses_the_names_that_resolve_to_it() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &["net(domain:203.0.113.7)"]);
    let d = g.decide(
        &Call::new(Tool::Net, "innocent.example:443").with_addrs(vec![ip("203.0.113.7")]),
        Mode::Bypass,
    );
    assert_eq!(d.verdict, Verdict::Deny, "{}", d.reason);
    let d = g.decide(
        &Call::new(Tool::WebFetch, "https://innocent.example/").with_addrs(vec![ip("203.0.113.7")]),
        Mode::Auto,
    );
    assert_eq!(d.verdict, Verdict::Deny, "{}", d.reason);
}

#[test]
fn web_fetch_of_private_addresses_asks() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &["net(domain:blocked.example)"]);
    let n = run(
        &p,
        &g,
        &[
            (
                "default",
                "web_fetch",
                "http://169.254.169.254/latest/meta-data/",
                "ask:cloud metadata",
            ),
            ("auto", "web_fetch", "http://169.254.169.254/", "ask"),
            (
                "plan",
                "web_fetch",
                "http://127.0.0.1:8080/",
                "ask:loopback",
            ),
            ("auto", "web_fetch", "http://[::1]/", "ask"),
            ("auto", "web_fetch", "http://[::ffff:a9fe:a9fe]/", "ask"),
            ("auto", "web_fetch", "http://0x7f000001/", "ask"),
            ("auto", "web_fetch", "http://2130706433/", "ask"),
            ("auto", "web_fetch", "http://10.0.0.1/", "ask"),
            ("bypass", "web_fetch", "http://169.254.169.254/", "allow"),
            ("default", "web_fetch", "https://example.org/", "allow"),
            // A net deny rule stops web_fetch too.
            (
                "bypass",
                "web_fetch",
                "https://blocked.example/x",
                "deny:net(domain:blocked.example)",
            ),
        ],
    );
    assert_eq!(n, 11);
    let d = g.decide(
        &Call::new(Tool::WebFetch, "http://rebind.example/").with_addrs(vec![ip("127.0.0.1")]),
        Mode::Auto,
    );
    assert_eq!(d.verdict, Verdict::Ask);
    assert!(d.reason.contains("resolves to 127.0.0.1"), "{}", d.reason);
    assert_eq!(d.always_allow_rules, vec!["net(domain:rebind.example)"]);
    let g = p.gate(&["net(domain:rebind.example)"], &[], &[]);
    let d = g.decide(
        &Call::new(Tool::WebFetch, "http://rebind.example/").with_addrs(vec![ip("127.0.0.1")]),
        Mode::Default,
    );
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
    // web_fetch(domain:…) names the host exactly too.
    let g = p.gate(&["web_fetch(domain:169.254.169.254)"], &[], &[]);
    let d = g.decide(
        &Call::new(Tool::WebFetch, "http://169.254.169.254/"),
        Mode::Default,
    );
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
}

#[test]
fn git_remote_hosts_are_allowed_by_default() {
    let p = Proj::with_git("main");
    std::fs::write(
        p.root.join(".git/config"),
        "[remote \"origin\"]\n\turl = git@git.example.org:team/repo.git\n",
    )
    .unwrap();
    let g = p.gate(&[], &[], &[]);
    let d = g.decide(&Call::new(Tool::Net, "git.example.org:22"), Mode::Auto);
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
    assert!(d.reason.contains("git remote"), "{}", d.reason);
    assert!(g.default_hosts().contains(&"git.example.org".to_string()));
    // On the ports of git's transports only (https, http, ssh, git://).
    for port in [443, 80, 22, 9418] {
        let d = g.decide(
            &Call::new(Tool::Net, format!("git.example.org:{port}")),
            Mode::Auto,
        );
        assert_eq!(d.verdict, Verdict::Allow, "{port}: {}", d.reason);
    }
    let d = g.decide(&Call::new(Tool::Net, "git.example.org:8443"), Mode::Auto);
    assert_eq!(d.verdict, Verdict::Ask, "{}", d.reason);
    assert!(
        d.reason
            .contains("a git remote of the project is allowed by default on ports 443, 80, 22 and 9418 only; no rule allows port 8443"),
        "{}",
        d.reason
    );
    assert_eq!(d.always_allow_rules, vec!["net(domain:git.example.org)"]);
    // …but not when it resolves to a private address.
    let d = g.decide(
        &Call::new(Tool::Net, "git.example.org:22").with_addrs(vec![ip("192.168.1.5")]),
        Mode::Auto,
    );
    assert_eq!(d.verdict, Verdict::Ask);
}

/// The default allow-list covers the ports its services use: a registry on 443 and
/// 80, a git remote host on 443, 80, 22, 9418 and the port its URL names. Another
/// port asks like a host no rule allows; a person's `net(domain:HOST)` rule covers
/// every port of HOST.
#[test]
fn default_hosts_are_allowed_on_their_ports_only() {
    let p = Proj::with_git("main");
    std::fs::write(
        p.root.join(".git/config"),
        "[remote \"origin\"]\n\turl = ssh://git@git.example.org:2222/team/repo.git\n",
    )
    .unwrap();
    let g = p.gate(&["net(domain:files.pythonhosted.org)"], &[], &[]);
    let n = run(
        &p,
        &g,
        &[
            ("auto", "net", "static.crates.io:443", "allow:ports 443 and 80"),
            ("default", "net", "pypi.org:80", "allow:a package registry"),
            ("auto", "net", "pypi.org", "allow:ports 443 and 80"),
            (
                "auto",
                "net",
                "static.crates.io:25",
                "ask:a package registry is allowed by default on ports 443 and 80 only; no rule allows port 25",
            ),
            ("default", "net", "pypi.org:8001", "ask:port 8001"),
            ("edit", "net", "registry.npmjs.org:8443", "ask"),
            ("plan", "net", "[::ffff:1.2.3.4]:25", "ask"),
            ("bypass", "net", "pypi.org:8001", "allow"),
            // A rule naming the host covers every port.
            (
                "auto",
                "net",
                "files.pythonhosted.org:8001",
                "allow:net(domain:files.pythonhosted.org)",
            ),
            // The git remote: the port its URL names, and git's usual ports.
            ("auto", "net", "git.example.org:2222", "allow:git remote"),
            ("auto", "net", "git.example.org:9418", "allow"),
            ("auto", "net", "git.example.org:8001", "ask:port 8001"),
        ],
    );
    assert_eq!(n, 12);
    let d = g.decide(&Call::new(Tool::Net, "pypi.org:8001"), Mode::Auto);
    assert_eq!(d.always_allow_rules, vec!["net(domain:pypi.org)"]);
    assert_eq!(d.fragments[0].cap, Some(CapKind::Network));
    assert_eq!(
        g.default_ports("git.example.org"),
        Some((vec![443, 80, 22, 9418, 2222], "a git remote of the project"))
    );
    assert_eq!(g.default_ports("example.org"), None);
}

fn level(level: Level, file: &str, allow: &[&str]) -> LevelRules {
    LevelRules {
        level,
        file: file.into(),
        rules: RuleLists {
            allow: strings(allow),
            ask: Vec::new(),
            deny: Vec::new(),
        },
        external_caps: Vec::new(),
        saved_allow: Vec::new(),
    }
}

/// A wildcard cannot lift the private-address ask, so when an exact rule does, the
/// reason and the trace name that rule and its level — not a wildcard of another
/// level that also matches the name.
#[test]
fn the_exact_rule_that_lifts_a_private_address_is_the_one_named() {
    let p = Proj::new();
    let g = p.gate_with(|i| {
        i.trusted = true;
        i.levels = vec![level(
            Level::User,
            "~/.config/decode/settings.json",
            &["net(*.loop.test)", "net(*.example.com)"],
        )];
        i.project_rules.allow = strings(&["net(domain:a.loop.test)", "net(domain:10.9.9.9)"]);
    });
    let loopback = vec![ip("127.0.0.1")];
    for (tool, subject) in [
        (Tool::Net, "a.loop.test:8001"),
        (Tool::WebFetch, "http://a.loop.test:8001/x"),
    ] {
        let d = g.decide(
            &Call::new(tool, subject).with_addrs(loopback.clone()),
            Mode::Auto,
        );
        assert_eq!(d.verdict, Verdict::Allow, "{subject}: {}", d.reason);
        assert!(
            d.reason.contains(
                "allowed by rule net(domain:a.loop.test) from .decode/settings.json (project)"
            ),
            "{subject}: {}",
            d.reason
        );
        assert!(!d.reason.contains("*.loop.test"), "{}", d.reason);
        assert!(
            d.trace
                .iter()
                .any(|t| t.result.starts_with("matches net(domain:a.loop.test)")),
            "{:?}",
            d.trace
        );
        assert_eq!(
            d.fragments[0].rule.as_deref(),
            Some("net(domain:a.loop.test)")
        );
    }
    // Without the exact rule the wildcard does not lift it.
    let d = g.decide(
        &Call::new(Tool::Net, "b.loop.test:8001").with_addrs(loopback.clone()),
        Mode::Auto,
    );
    assert_eq!(d.verdict, Verdict::Ask, "{}", d.reason);
    // A rule naming the address lifts it, and is the one named.
    let d = g.decide(
        &Call::new(Tool::Net, "db.example.com:5432").with_addrs(vec![ip("10.9.9.9")]),
        Mode::Auto,
    );
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
    assert!(
        d.reason
            .contains("rule net(domain:10.9.9.9) from .decode/settings.json (project)"),
        "{}",
        d.reason
    );
    // A public address: the first rule that matches decides, as before (here the
    // user's wildcard, which comes first).
    let d = g.decide(
        &Call::new(Tool::Net, "a.loop.test:443").with_addrs(vec![ip("93.184.216.34")]),
        Mode::Auto,
    );
    assert_eq!(d.verdict, Verdict::Allow, "{}", d.reason);
    assert!(
        d.reason
            .contains("net(*.loop.test) from ~/.config/decode/settings.json (user)"),
        "{}",
        d.reason
    );
}

/// In bypass mode only a deny or an ask rule that could match an address reads the
/// addresses a name resolves to: without one, `decode check` need not resolve.
#[test]
fn addresses_matter_in_bypass_only_for_rules_that_name_addresses() {
    let p = Proj::new();
    let g = p.gate(
        &["net(domain:10.9.9.9)"],
        &["net(domain:ask.example)"],
        &["net(*.denied.example)", "web_fetch(domain:evil.example)"],
    );
    assert!(!g.addresses_matter(Mode::Bypass));
    for mode in [Mode::Default, Mode::Edit, Mode::Plan, Mode::Auto] {
        assert!(g.addresses_matter(mode), "{mode}");
    }
    for (ask, deny) in [
        (vec![], vec!["net(domain:203.0.113.7)"]),
        (vec!["net(domain:fd00::1)"], vec![]),
        (vec![], vec!["net(10.*)"]),
        (vec![], vec!["web_fetch(domain:203.0.113.7)"]),
    ] {
        let g = p.gate(&[], &ask, &deny);
        assert!(g.addresses_matter(Mode::Bypass), "{ask:?} {deny:?}");
        // …as the verdict shows: the address decides.
        let d = g.decide(
            &Call::new(Tool::Net, "innocent.example:443").with_addrs(vec![
                ip("203.0.113.7"),
                ip("fd00::1"),
                ip("10.1.1.1"),
            ]),
            Mode::Bypass,
        );
        assert_ne!(d.verdict, Verdict::Allow, "{ask:?} {deny:?}: {}", d.reason);
    }
}

#[test]
fn net_is_no_tool_of_an_agent() {
    assert!(!Tool::ALL.contains(&Tool::Net));
    assert_eq!(Tool::from_name("net"), Some(Tool::Net));
    assert!(!Tool::Net.is_model_tool());
}
