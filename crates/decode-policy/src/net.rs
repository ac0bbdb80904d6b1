//! The host policy's fixed parts (docs/network.md): which addresses are not
//! public, the default allow-list of package registries and the ports it covers,
//! the hosts (and ports) of a repository's git remotes, and how a `net` subject
//! (`HOST`, `HOST:PORT`) is read.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

/// Hosts allowed without a rule: the package registries of the usual toolchains
/// (and the hosts their downloads come from). Exact names: a subdomain is not
/// covered.
pub const DEFAULT_HOSTS: &[&str] = &[
    // Rust: crates.io, its sparse index and download host, toolchains.
    "crates.io",
    "index.crates.io",
    "static.crates.io",
    "static.rust-lang.org",
    // JavaScript: the npm registry (and yarn's mirror of it).
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    // Python: PyPI and its file host.
    "pypi.org",
    "files.pythonhosted.org",
    // Go: the module proxy and the checksum database.
    "proxy.golang.org",
    "sum.golang.org",
    // Java: Maven Central, the Gradle plugin portal.
    "repo.maven.apache.org",
    "repo1.maven.org",
    "plugins.gradle.org",
    // Ruby, .NET.
    "rubygems.org",
    "index.rubygems.org",
    "api.nuget.org",
    // Docker Hub (pulls: the registry, its token service, its blob CDN).
    "registry-1.docker.io",
    "auth.docker.io",
    "production.cloudflare.docker.com",
];

/// The ports a package registry of [`DEFAULT_HOSTS`] is allowed on without a rule:
/// HTTPS and HTTP. Another port asks like a host no rule allows (a rule
/// `net(domain:HOST)` covers every port).
pub const REGISTRY_PORTS: &[u16] = &[443, 80];

/// The ports a host of the project's git remotes is allowed on without a rule:
/// HTTPS, HTTP, ssh and git's own protocol — and the port a remote's URL names
/// (`ssh://git@host:2222/…`), see [`GitRemote`].
pub const GIT_REMOTE_PORTS: &[u16] = &[443, 80, 22, 9418];

/// `443, 80 and 22`: ports as a reason lists them.
pub fn ports_text(ports: &[u16]) -> String {
    let words: Vec<String> = ports.iter().map(u16::to_string).collect();
    match words.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// Why an address is not public, or `None` for a public address. Loopback,
/// private (RFC 1918, unique-local), shared (CGNAT), link-local, cloud metadata,
/// "this network" (`0.0.0.0/8`, which reaches the host itself), multicast,
/// broadcast and documentation ranges all count; IPv6 forms that carry an IPv4
/// address (mapped, compatible, NAT64, 6to4) are judged by that address.
pub fn private_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(a) => v4_kind(a),
        IpAddr::V6(a) => v6_kind(a),
    }
}

fn v4_kind(a: Ipv4Addr) -> Option<&'static str> {
    let o = a.octets();
    if a == Ipv4Addr::new(169, 254, 169, 254) {
        return Some("cloud metadata");
    }
    if a.is_loopback() {
        return Some("loopback");
    }
    if a.is_private() {
        return Some("private");
    }
    if a.is_link_local() {
        return Some("link-local");
    }
    if o[0] == 100 && (o[1] & 0xc0) == 64 {
        return Some("shared (carrier-grade NAT)");
    }
    if o[0] == 0 {
        return Some("this host (0.0.0.0/8)");
    }
    if a.is_multicast() || a.is_broadcast() || o[0] >= 240 {
        return Some("multicast or reserved");
    }
    if (o[0] == 192 && o[1] == 0 && o[2] == 0) || (o[0] == 198 && (o[1] & 0xfe) == 18) {
        return Some("special-purpose");
    }
    None
}

fn v6_kind(a: Ipv6Addr) -> Option<&'static str> {
    if a == "fd00:ec2::254".parse::<Ipv6Addr>().expect("literal") {
        return Some("cloud metadata");
    }
    if a.is_loopback() {
        return Some("loopback");
    }
    if a.is_unspecified() {
        return Some("this host (::)");
    }
    let s = a.segments();
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d).
    if let Some(v4) = a.to_ipv4() {
        return v4_kind(v4).or(Some("IPv4 inside IPv6"));
    }
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
        return v4_kind(v4);
    }
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return v4_kind(v4);
    }
    if (s[0] & 0xfe00) == 0xfc00 {
        return Some("private (unique local)");
    }
    if (s[0] & 0xffc0) == 0xfe80 {
        return Some("link-local");
    }
    if (s[0] & 0xffc0) == 0xfec0 {
        return Some("site-local");
    }
    if (s[0] & 0xff00) == 0xff00 {
        return Some("multicast");
    }
    if s[0] == 0x2001 && s[1] == 0x0db8 {
        return Some("documentation");
    }
    None
}

/// A `net` subject read: `HOST`, `HOST:PORT`, `[V6]:PORT`, a bare IPv6
/// address, or a URL (its host and port). The host comes back normalised the
/// way `web_fetch` URLs are (lower-case, IDNA, no trailing dot, IPv4-mapped
/// IPv6 as IPv4, IPv6 without brackets). `None` when there is no usable host.
pub fn parse_target(subject: &str) -> Option<(String, Option<u16>)> {
    let s = subject.trim();
    if s.is_empty() || s.chars().any(char::is_whitespace) {
        return None;
    }
    if s.contains("://") {
        let u = crate::normalize_url(s)?;
        let host = bare_host(u.host_str()?);
        return Some((host, u.port_or_known_default()));
    }
    // A bare IPv6 address (more than one colon, no brackets).
    if !s.starts_with('[') && s.matches(':').count() > 1 {
        let ip: Ipv6Addr = s.parse().ok()?;
        return Some((normal_ip(IpAddr::V6(ip)), None));
    }
    let u = crate::normalize_url(&format!("http://{s}/"))?;
    if u.path() != "/" || u.query().is_some() || u.fragment().is_some() {
        return None;
    }
    // The default port of `http:` is dropped by the parser: put it back when given.
    let port = u.port().or_else(|| s.ends_with(":80").then_some(80));
    Some((bare_host(u.host_str()?), port))
}

/// An address as hosts are written (IPv4-mapped IPv6 as IPv4).
pub fn normal_ip(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(a) => match a.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => a.to_string(),
        },
        IpAddr::V4(a) => a.to_string(),
    }
}

fn bare_host(h: &str) -> String {
    h.strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(h)
        .to_string()
}

/// A host of the project's git remotes and the port its URL names, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitRemote {
    pub host: String,
    /// The port written in the URL (`ssh://git@host:2222/…`), or the URL scheme's
    /// known port (`https:` 443); `None` for scp-like `user@host:path`, `ssh://`
    /// and `git://` without one.
    pub port: Option<u16>,
}

/// The hosts of the remotes in a repository's git config (`url = …` of every
/// `[remote "…"]` section): `https://host/…`, `ssh://user@host:port/…`,
/// `git://host/…` and scp-like `user@host:path`. Local paths and `file://`
/// remotes have no host.
pub fn git_remote_hosts(git_dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in git_remotes(git_dir) {
        if !out.contains(&r.host) {
            out.push(r.host);
        }
    }
    out
}

/// [`git_remote_hosts`] with the port each remote URL names.
pub fn git_remotes(git_dir: &Path) -> Vec<GitRemote> {
    let mut configs = vec![git_dir.join("config")];
    // A linked worktree's folder names the repository's common folder.
    if let Ok(common) = std::fs::read_to_string(git_dir.join("commondir")) {
        configs.push(git_dir.join(common.trim()).join("config"));
    }
    let mut out: Vec<GitRemote> = Vec::new();
    for c in configs {
        let Ok(md) = std::fs::metadata(&c) else {
            continue;
        };
        if !md.is_file() || md.len() > 1024 * 1024 {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&c) else {
            continue;
        };
        let mut in_remote = false;
        for line in text.lines() {
            let l = line.trim();
            if l.starts_with('[') {
                in_remote = l.to_ascii_lowercase().starts_with("[remote ");
                continue;
            }
            if !in_remote {
                continue;
            }
            let Some((key, value)) = l.split_once('=') else {
                continue;
            };
            if !key.trim().eq_ignore_ascii_case("url") {
                continue;
            }
            if let Some((host, port)) = remote_target(value.trim().trim_matches('"')) {
                let r = GitRemote { host, port };
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
    }
    out
}

/// The host of one remote URL.
pub fn remote_host(url: &str) -> Option<String> {
    remote_target(url).map(|(h, _)| h)
}

/// The host of one remote URL and the port it names (see [`GitRemote::port`]).
fn remote_target(url: &str) -> Option<(String, Option<u16>)> {
    if url.contains("://") {
        if url.starts_with("file:") {
            return None;
        }
        return parse_target(url);
    }
    // scp-like: [user@]host:path (a colon before any slash).
    let colon = url.find(':')?;
    if url[..colon].contains('/') {
        return None;
    }
    let host = url[..colon].rsplit('@').next()?;
    if host.is_empty() {
        return None;
    }
    parse_target(host).map(|(h, _)| (h, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<&'static str> {
        private_kind(s.parse().unwrap())
    }

    #[test]
    fn private_addresses() {
        for a in [
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "127.0.0.1",
            "127.8.9.10",
            "169.254.169.254",
            "169.254.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "::1",
            "::",
            "fc00::1",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            assert!(kind(a).is_some(), "{a}");
        }
        for a in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "64:ff9b::808:808",
        ] {
            assert_eq!(kind(a), None, "{a}");
        }
        assert_eq!(kind("169.254.169.254"), Some("cloud metadata"));
        assert_eq!(kind("fd00:ec2::254"), Some("cloud metadata"));
    }

    #[test]
    fn targets() {
        assert_eq!(
            parse_target("Example.COM."),
            Some(("example.com".into(), None))
        );
        assert_eq!(
            parse_target("example.com:8443"),
            Some(("example.com".into(), Some(8443)))
        );
        assert_eq!(parse_target("[::1]:22"), Some(("::1".into(), Some(22))));
        assert_eq!(parse_target("::1"), Some(("::1".into(), None)));
        assert_eq!(
            parse_target("[::ffff:127.0.0.1]:80"),
            Some(("127.0.0.1".into(), Some(80)))
        );
        assert_eq!(
            parse_target("https://u@Bad.Example./x"),
            Some(("bad.example".into(), Some(443)))
        );
        assert_eq!(parse_target("a b"), None);
        assert_eq!(parse_target(""), None);
        assert_eq!(parse_target("evil.com/x"), None);
    }

    #[test]
    fn remotes() {
        assert_eq!(
            remote_host("git@github.com:o/r.git").as_deref(),
            Some("github.com")
        );
        assert_eq!(
            remote_host("https://gitlab.example.com/o/r").as_deref(),
            Some("gitlab.example.com")
        );
        assert_eq!(
            remote_host("ssh://git@git.example.org:2222/r").as_deref(),
            Some("git.example.org")
        );
        assert_eq!(remote_host("/srv/git/r.git"), None);
        assert_eq!(remote_host("../r"), None);
        assert_eq!(remote_host("file:///srv/r"), None);
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("config"),
            "[core]\n\turl = https://not-a-remote.example/\n[remote \"origin\"]\n\turl = git@git.example.org:o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[remote \"up\"]\n\turl = https://mirror.example.net/r\n",
        )
        .unwrap();
        assert_eq!(
            git_remote_hosts(d.path()),
            vec![
                "git.example.org".to_string(),
                "mirror.example.net".to_string()
            ]
        );
        // The port a remote's URL names is kept (the default ports are added by
        // the gate).
        std::fs::write(
            d.path().join("config"),
            "[remote \"a\"]\n\turl = ssh://git@git.example.org:2222/r\n[remote \"b\"]\n\turl = git@git.example.org:o/r.git\n[remote \"c\"]\n\turl = https://tok@mirror.example.net:8443/r\n[remote \"d\"]\n\turl = git://plain.example/r\n",
        )
        .unwrap();
        let remote = |host: &str, port: Option<u16>| GitRemote {
            host: host.to_string(),
            port,
        };
        assert_eq!(
            git_remotes(d.path()),
            vec![
                remote("git.example.org", Some(2222)),
                remote("git.example.org", None),
                remote("mirror.example.net", Some(8443)),
                remote("plain.example", None),
            ]
        );
    }

    #[test]
    fn ports_read_as_a_list() {
        assert_eq!(ports_text(&[443]), "443");
        assert_eq!(ports_text(REGISTRY_PORTS), "443 and 80");
        assert_eq!(ports_text(GIT_REMOTE_PORTS), "443, 80, 22 and 9418");
    }
}
