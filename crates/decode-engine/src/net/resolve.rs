//! Names resolved once for the host policy (docs/network.md): the addresses the
//! gate judged are the addresses Decode connects to.
//!
//! [`Resolver`] resolves a host with the system resolver. For tests on one
//! machine it can be told that a name is a *public* host at a local address
//! ([`Resolver::with_public`]): the gate then judges that name without its
//! addresses, so a fake server on 127.0.0.1 stands for a registry or a web site;
//! and that one port of such a name is served on another local port
//! ([`Resolver::with_public_port`]), so a fake stands for a registry on port 80.
//! In debug builds only, the variable `DECODE_NET_TEST_HOSTS`
//! (`name=ip[,name=ip…]`) does the same for a whole process (the command-line
//! tests); release builds never read it.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a name may take to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// The test-only variable naming public hosts at local addresses (debug builds).
pub const TEST_HOSTS_VAR: &str = "DECODE_NET_TEST_HOSTS";

/// What a host resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Every address, in the resolver's order: what is connected to.
    pub addrs: Vec<IpAddr>,
    /// What the gate is shown: empty for a name the resolver was told is public
    /// (tests), else `addrs`.
    pub judged: Vec<IpAddr>,
}

/// Resolves names once; see the module docs.
#[derive(Debug, Default)]
pub struct Resolver {
    public: HashMap<String, Vec<IpAddr>>,
    /// Tests: `(name, port)` of a public name served on another local port.
    ports: HashMap<(String, u16), u16>,
}

impl Resolver {
    /// The system resolver (plus, in debug builds, the names of
    /// `DECODE_NET_TEST_HOSTS`).
    pub fn system() -> Resolver {
        let mut r = Resolver::default();
        if cfg!(debug_assertions) {
            if let Ok(v) = std::env::var(TEST_HOSTS_VAR) {
                for item in v.split(',') {
                    if let Some((name, ip)) = item.split_once('=') {
                        if let Ok(ip) = ip.trim().parse::<IpAddr>() {
                            r.public
                                .entry(name.trim().to_ascii_lowercase())
                                .or_default()
                                .push(ip);
                        }
                    }
                }
            }
        }
        r
    }

    /// The same resolver with `name` a public host at `ip` (tests).
    pub fn with_public(mut self, name: &str, ip: IpAddr) -> Resolver {
        self.public
            .entry(name.to_ascii_lowercase())
            .or_default()
            .push(ip);
        self
    }

    /// The same resolver with `name` a public host at `ip` whose `port` is served
    /// on `local_port` of that address (tests: a fake registry on an unprivileged
    /// port stands for `name:80`; the policy judges `name:port`).
    pub fn with_public_port(
        mut self,
        name: &str,
        port: u16,
        ip: IpAddr,
        local_port: u16,
    ) -> Resolver {
        let name = name.to_ascii_lowercase();
        self.ports.insert((name.clone(), port), local_port);
        let at = self.public.entry(name).or_default();
        if !at.contains(&ip) {
            at.push(ip);
        }
        self
    }

    /// The port to connect to for `host:port`: `port`, but for a name that
    /// [`Resolver::with_public_port`] serves elsewhere.
    pub fn connect_port(&self, host: &str, port: u16) -> u16 {
        if self.ports.is_empty() {
            return port;
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.ports.get(&(host, port)).copied().unwrap_or(port)
    }

    /// Resolves `host` (a name, or an address, which is itself). An error is one
    /// line naming the host.
    pub async fn resolve(&self, host: &str) -> Result<Resolved, String> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let bare = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(&host);
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Ok(Resolved {
                addrs: vec![ip],
                judged: vec![ip],
            });
        }
        if let Some(addrs) = self.public.get(&host) {
            return Ok(Resolved {
                addrs: addrs.clone(),
                judged: Vec::new(),
            });
        }
        let lookup = tokio::net::lookup_host((host.as_str(), 0));
        let found = match tokio::time::timeout(RESOLVE_TIMEOUT, lookup).await {
            Ok(Ok(it)) => it.map(|a: SocketAddr| a.ip()).collect::<Vec<_>>(),
            Ok(Err(e)) => return Err(format!("cannot resolve {host}: {e}")),
            Err(_) => return Err(format!("cannot resolve {host}: timed out")),
        };
        let mut addrs: Vec<IpAddr> = Vec::new();
        for a in found {
            if !addrs.contains(&a) {
                addrs.push(a);
            }
        }
        if addrs.is_empty() {
            return Err(format!("cannot resolve {host}: no address"));
        }
        Ok(Resolved {
            judged: addrs.clone(),
            addrs,
        })
    }
}

/// Hosts pinned to the addresses the gate judged, for one HTTP client: a name
/// that was not judged does not resolve at all (fail closed).
#[derive(Debug, Clone, Default)]
pub struct Pins(Arc<Mutex<HashMap<String, Vec<IpAddr>>>>);

impl Pins {
    /// Pins `host` to `addrs`.
    pub fn pin(&self, host: &str, addrs: Vec<IpAddr>) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(host.to_ascii_lowercase(), addrs);
        }
    }

    /// The addresses `host` is pinned to.
    pub fn get(&self, host: &str) -> Option<Vec<IpAddr>> {
        self.0.lock().ok()?.get(&host.to_ascii_lowercase()).cloned()
    }
}

impl reqwest::dns::Resolve for Pins {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let found = self.get(name.as_str());
        let host = name.as_str().to_string();
        Box::pin(async move {
            match found {
                Some(addrs) => {
                    let it: reqwest::dns::Addrs =
                        Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)));
                    Ok(it)
                }
                None => Err(format!(
                    "{host} was not judged by the host policy (docs/network.md); not connecting"
                )
                .into()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn addresses_and_public_names() {
        let r = Resolver::default().with_public("Fake.Test", "127.0.0.1".parse().unwrap());
        let got = r.resolve("fake.test.").await.unwrap();
        assert_eq!(got.addrs, vec!["127.0.0.1".parse::<IpAddr>().unwrap()]);
        assert!(got.judged.is_empty());
        let got = r.resolve("[::1]").await.unwrap();
        assert_eq!(got.judged, vec!["::1".parse::<IpAddr>().unwrap()]);
        let got = r.resolve("localhost").await.unwrap();
        assert!(!got.judged.is_empty());
        assert!(got.judged.iter().all(|a| a.is_loopback()), "{got:?}");
        assert!(r.resolve("no-such-host.invalid").await.is_err());
        let r = r.with_public_port("Registry.Test", 80, "127.0.0.1".parse().unwrap(), 8123);
        assert_eq!(r.connect_port("registry.test.", 80), 8123);
        assert_eq!(r.connect_port("registry.test", 443), 443);
        assert_eq!(r.connect_port("fake.test", 80), 80);
        assert!(r.resolve("registry.test").await.unwrap().judged.is_empty());
    }
}
