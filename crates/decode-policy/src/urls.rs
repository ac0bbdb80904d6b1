//! URLs as `web_fetch` fetches them: normalised, and the host a rule matches.

/// A URL as rules see it and as it is fetched: parsed the WHATWG way
/// (backslashes, `https:host`, percent-encoding, full-width dots, IDNA), user
/// info dropped, host lower-cased without a trailing dot, default port
/// dropped, an IPv4-mapped IPv6 address written as IPv4. `None` when it does
/// not parse or has no host.
pub fn normalize_url(url: &str) -> Option<url::Url> {
    let mut u = url::Url::parse(url.trim()).ok()?;
    let _ = u.set_username("");
    let _ = u.set_password(None);
    let host = match u.host()? {
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if d.is_empty() {
                return None;
            }
            d
        }
        url::Host::Ipv4(a) => a.to_string(),
        url::Host::Ipv6(a) => match a.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{a}]"),
        },
    };
    if u.host_str() != Some(host.as_str()) {
        u.set_host(Some(&host)).ok()?;
    }
    Some(u)
}

/// A host pattern of a rule (`domain:HOST`, or the host of a URL rule)
/// written as URLs' hosts are: lower-cased, a trailing dot and a port
/// removed, IDNA to ASCII (`bücher.de` is `xn--bcher-kva.de`; a label with
/// a glob is only lower-cased), an IPv4-mapped IPv6 address as IPv4.
pub(crate) fn normal_host_pattern(h: &str) -> String {
    let h = h.trim();
    // A port (`:443`) after the host (not inside an IPv6 address).
    let h = match h.rsplit_once(':') {
        Some((host, port))
            if !host.is_empty()
                && !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && (!host.contains(':') || host.ends_with(']')) =>
        {
            host
        }
        _ => h,
    };
    let h = h.trim_end_matches('.');
    if h.starts_with('[') || h.contains(':') {
        let inner = h.trim_start_matches('[').trim_end_matches(']');
        return match inner.parse::<std::net::Ipv6Addr>() {
            Ok(a) => match a.to_ipv4_mapped() {
                Some(v4) => v4.to_string(),
                None => a.to_string(),
            },
            Err(_) => h.to_ascii_lowercase(),
        };
    }
    let ascii = |label: &str| -> String {
        if label.contains(['*', '?', '[', ']', '{', '}', '\\']) || label.is_ascii() {
            return label.to_ascii_lowercase();
        }
        match url::Host::parse(label) {
            Ok(url::Host::Domain(d)) => d,
            _ => label.to_lowercase(),
        }
    };
    h.split('.').map(ascii).collect::<Vec<_>>().join(".")
}

/// A URL rule's pattern written as URLs are normalised before rules see
/// them: scheme and host lower-cased, user info dropped, the host as
/// [`normal_host_pattern`] writes it, a default port dropped. The path is
/// left as written. Text that is not `SCHEME://…` is left as it is.
pub(crate) fn normal_url_pattern(p: &str) -> String {
    let Some((scheme, rest)) = p.split_once("://") else {
        return p.to_string();
    };
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.*".contains(c))
    {
        return p.to_string();
    }
    let scheme = scheme.to_ascii_lowercase();
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let default_port = match scheme.as_str() {
        "https" | "wss" => Some("443"),
        "http" | "ws" => Some("80"),
        "ftp" => Some("21"),
        _ => None,
    };
    let (host, port) = match host_port.rsplit_once(':') {
        Some((h, port))
            if !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && (!h.contains(':') || h.ends_with(']')) =>
        {
            (h, Some(port.trim_start_matches('0')))
        }
        _ => (host_port, None),
    };
    let mut host = normal_host_pattern(host);
    if host.contains(':') {
        host = format!("[{host}]");
    }
    match port {
        Some(port) if Some(port) != default_port && !port.is_empty() => {
            format!("{scheme}://{host}:{port}{tail}")
        }
        _ => format!("{scheme}://{host}{tail}"),
    }
}

/// The host of a URL as [`normalize_url`] writes it (IPv6 without brackets).
pub(crate) fn url_host(url: &str) -> Option<String> {
    let u = normalize_url(url)?;
    let h = u.host_str()?;
    Some(
        h.strip_prefix('[')
            .and_then(|x| x.strip_suffix(']'))
            .unwrap_or(h)
            .to_string(),
    )
}

/// Looser spellings of a URL's path that servers commonly serve as the
/// same resource: unreserved characters percent-decoded, repeated slashes
/// folded, and (for deny and ask rules only) the path lower-cased.
pub(crate) fn url_loose_forms(url: &str) -> Vec<String> {
    let Some(mut u) = normalize_url(url) else {
        return Vec::new();
    };
    let path = u.path().to_string();
    let mut decoded = String::with_capacity(path.len());
    let b = path.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = &path[i + 1..i + 3];
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') {
                    decoded.push(v as char);
                    i += 3;
                    continue;
                }
            }
        }
        if b[i] == b'/' && decoded.ends_with('/') {
            i += 1;
            continue;
        }
        decoded.push(b[i] as char);
        i += 1;
    }
    let mut out = Vec::new();
    for p in [decoded.clone(), decoded.to_ascii_lowercase()] {
        u.set_path(&p);
        let s = u.as_str().to_string();
        if s != url && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The URL as it is fetched, normalised.
pub(crate) fn url_normal(url: &str) -> Option<String> {
    normalize_url(url).map(|u| u.as_str().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_patterns_are_written_as_urls_are() {
        assert_eq!(normal_host_pattern("Bad.Example.:443"), "bad.example");
        assert_eq!(normal_host_pattern("bücher.de"), "xn--bcher-kva.de");
        assert_eq!(normal_host_pattern("*.Bücher.de"), "*.xn--bcher-kva.de");
        assert_eq!(normal_host_pattern("[::ffff:127.0.0.1]"), "127.0.0.1");
        assert_eq!(normal_host_pattern("[::1]:8080"), "::1");
        assert_eq!(
            normal_url_pattern("HTTPS://u:p@Bad.Example.:443/A/*"),
            "https://bad.example/A/*"
        );
        assert_eq!(
            normal_url_pattern("http://x.example:8080/*"),
            "http://x.example:8080/*"
        );
        assert_eq!(
            normal_url_pattern("http://x.example:80"),
            "http://x.example"
        );
        assert_eq!(normal_url_pattern("*/admin/*"), "*/admin/*");
        assert_eq!(
            normal_url_pattern("https://*.Example.com/*"),
            "https://*.example.com/*"
        );
    }

    #[test]
    fn hosts() {
        assert_eq!(
            url_host("https://Example.com/x").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            url_host("https://user@example.com.attacker.net:443/").as_deref(),
            Some("example.com.attacker.net")
        );
        assert_eq!(
            url_host("https://a@b@evil.com/").as_deref(),
            Some("evil.com")
        );
        assert_eq!(url_host("not a url"), None);
        assert_eq!(
            url_normal("https://u:p@Bad.Example.:443/x").as_deref(),
            Some("https://bad.example/x")
        );
        assert_eq!(
            url_normal("http://[::ffff:127.0.0.1]:80/a").as_deref(),
            Some("http://127.0.0.1/a")
        );
        assert_eq!(url_host("http://[::1]/").as_deref(), Some("::1"));
        for u in [
            "https://evil.com\\@example.com/",
            "https:evil.com/",
            "https:/evil.com/",
            "https:\\\\evil.com/",
            "https://%65vil.com/",
            "https://evil%2Ecom/",
            "https://evil\u{3002}com/",
            "https://\u{ff45}\u{ff56}\u{ff49}\u{ff4c}.com/",
            "https://ev\til.com/",
        ] {
            assert_eq!(url_host(u).as_deref(), Some("evil.com"), "{u}");
        }
    }
}
