//! Sandboxed commands and the network (docs/network.md): each command has a network
//! of its own whose only way out is Decode's proxy, reached on its loopback through
//! the usual proxy variables; every destination is judged by the host policy, and a
//! host it asks about is put to the person once, bound to the command. Local fakes
//! only: servers on the host's 127.0.0.1 that the test resolver calls public hosts.
//! Each test runs as this user and, under root, as `nobody` too (`as_users.rs`).

// A tool that is not installed is skipped with a printed reason.
#![allow(clippy::print_stderr)]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use decode_core::decision::{DecisionAnswer, DecisionRequest};
use decode_engine::net::Resolver;
use decode_engine::tools::{ToolContext, ToolResult};
use decode_policy::{Mode, Tool};
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::suite::as_users::{in_child, inner};
use crate::tools_support::{exec, Project, Scripted};

const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

fn enforced() {
    assert!(
        matches!(
            decode_engine::sandbox::support(),
            decode_engine::sandbox::Support::Enforced {
                own_network: true,
                ..
            }
        ),
        "these tests need bubblewrap with network namespaces: {:?}",
        decode_engine::sandbox::support()
    );
}

/// A context for `p` in `mode` whose resolver calls `web.test`, `exfil.test`,
/// `ssh.test`, `registry.npmjs.org` and `pypi.org` public hosts at 127.0.0.1.
fn ctx(p: &Project, mode: Mode, surface: Arc<Scripted>) -> ToolContext {
    ctx_serving(p, mode, surface, &[])
}

/// [`ctx`] where each `(name, local_port)` of `serving` is that host's port 80
/// (a registry is allowed by default on its usual ports only; the fake listens on
/// `local_port` of 127.0.0.1).
fn ctx_serving(
    p: &Project,
    mode: Mode,
    surface: Arc<Scripted>,
    serving: &[(&str, u16)],
) -> ToolContext {
    let mut resolver = Resolver::default()
        .with_public("web.test", LOCAL)
        .with_public("exfil.test", LOCAL)
        .with_public("ssh.test", LOCAL)
        .with_public("registry.npmjs.org", LOCAL)
        .with_public("pypi.org", LOCAL);
    for (name, local_port) in serving {
        resolver = resolver.with_public_port(name, 80, LOCAL, *local_port);
    }
    ToolContext::new(p.state(mode), surface).with_resolver(Arc::new(resolver))
}

async fn bash(ctx: &ToolContext, command: &str) -> ToolResult {
    let r = exec(
        ctx,
        Tool::Bash,
        json!({ "command": command, "timeout_s": 120 }),
    )
    .await;
    assert_eq!(r.sandboxed, Some(true), "{command}");
    r
}

async fn upstream(body: &str) -> MockServer {
    let s = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body.to_string(), "text/plain"))
        .mount(&s)
        .await;
    s
}

fn port(s: &MockServer) -> u16 {
    s.address().port()
}

fn have(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Serves `dir` over HTTP on 127.0.0.1 (python's `http.server`) until the child
/// is killed; its port.
fn serve_folder(dir: &std::path::Path) -> (std::process::Child, u16) {
    let free = std::net::TcpListener::bind((LOCAL, 0)).unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let server = std::process::Command::new("python3")
        .args([
            "-m",
            "http.server",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if std::net::TcpStream::connect((LOCAL, port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    (server, port)
}

fn network_asks(s: &Scripted) -> Vec<(String, u16, String)> {
    s.asked()
        .into_iter()
        .filter_map(|r| match r {
            DecisionRequest::Network {
                host,
                port,
                command,
                ..
            } => Some((host, port, command)),
            _ => None,
        })
        .collect()
}

#[test]
fn curl_wget_and_git_reach_allowed_hosts_through_the_proxy() {
    in_child(
        "suite::sandbox_net::inner_curl_wget_and_git_reach_allowed_hosts_through_the_proxy",
        &[],
    );
    // The same when bubblewrap builds the sandbox for each command.
    in_child(
        "suite::sandbox_net::inner_curl_wget_and_git_reach_allowed_hosts_through_the_proxy",
        &[(decode_engine::sandbox::warm::WARM_ENV, "0")],
    );
}

#[tokio::test]
#[ignore = "run by its outer test"]
async fn inner_curl_wget_and_git_reach_allowed_hosts_through_the_proxy() {
    if !inner() {
        return;
    }
    enforced();
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions":{"allow":["net(domain:web.test)"]}}"#,
    );
    let s = upstream("hello through the proxy").await;
    let surface = Scripted::new(vec![]);
    let c = ctx(&p, Mode::Auto, surface.clone());
    let url = format!("http://web.test:{}/x", port(&s));
    // The variables are set, and point at the command's own loopback.
    let r = bash(&c, "echo $HTTP_PROXY $https_proxy $ALL_PROXY $NO_PROXY").await;
    assert!(
        r.content
            .contains("http://127.0.0.1:3128 http://127.0.0.1:3128 socks5h://127.0.0.1:1080 localhost,127.0.0.1,::1"),
        "{}",
        r.content
    );
    // Plain HTTP, a CONNECT tunnel and SOCKS5 with the name resolved by the proxy.
    for cmd in [
        format!("curl -sS --max-time 20 {url}"),
        format!("curl -sS --max-time 20 --proxytunnel {url}"),
        format!("curl -sS --max-time 20 -x \"$ALL_PROXY\" {url}"),
        format!("wget -q -O - {url}"),
    ] {
        let r = bash(&c, &cmd).await;
        assert!(!r.is_error, "{cmd}: {}", r.content);
        assert!(
            r.content.contains("hello through the proxy"),
            "{cmd}: {}",
            r.content
        );
    }
    assert!(network_asks(&surface).is_empty());
    // git fetch over (dumb) HTTP from a bare repository a local server serves.
    let served = tempfile::tempdir().unwrap();
    let bare = served.path().join("repo.git");
    let git = |dir: &std::path::Path, args: &[&str]| {
        let o = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    let src = served.path().join("src");
    std::fs::create_dir(&src).unwrap();
    git(&src, &["init", "-q", "-b", "main"]);
    std::fs::write(src.join("f.txt"), "fetched\n").unwrap();
    git(&src, &["add", "."]);
    git(
        &src,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "one",
        ],
    );
    git(served.path(), &["clone", "-q", "--bare", "src", "repo.git"]);
    git(&bare, &["update-server-info"]);
    let http = std::net::TcpListener::bind((LOCAL, 0)).unwrap();
    let http_port = http.local_addr().unwrap().port();
    drop(http);
    let mut server = std::process::Command::new("python3")
        .args([
            "-m",
            "http.server",
            &http_port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .current_dir(served.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if std::net::TcpStream::connect((LOCAL, http_port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let r = bash(
        &c,
        &format!(
            "git init -q clone && cd clone && git fetch -q http://web.test:{http_port}/repo.git main && git show FETCH_HEAD:f.txt"
        ),
    )
    .await;
    let _ = server.kill();
    let _ = server.wait();
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.contains("fetched"), "{}", r.content);
}

#[test]
fn a_host_no_rule_allows_is_asked_once_per_command_and_bound_to_it() {
    in_child(
        "suite::sandbox_net::inner_a_host_no_rule_allows_is_asked_once_per_command_and_bound_to_it",
        &[],
    );
    // The same when bubblewrap builds the sandbox for each command.
    in_child(
        "suite::sandbox_net::inner_a_host_no_rule_allows_is_asked_once_per_command_and_bound_to_it",
        &[(decode_engine::sandbox::warm::WARM_ENV, "0")],
    );
}

#[tokio::test]
#[ignore = "run by its outer test"]
async fn inner_a_host_no_rule_allows_is_asked_once_per_command_and_bound_to_it() {
    if !inner() {
        return;
    }
    enforced();
    let p = Project::new();
    let s = upstream("secret accepted").await;
    let url = format!("http://exfil.test:{}/leak", port(&s));
    // Denied: refused, never connected, said in the result; asked once for two
    // connections.
    let surface = Scripted::new(vec![DecisionAnswer::Deny { feedback: None }]);
    let c = ctx(&p, Mode::Auto, surface.clone());
    let cmd = format!("curl -sS --max-time 20 {url}; curl -sfS --max-time 20 {url}");
    let r = bash(&c, &cmd).await;
    assert!(r.is_error, "{}", r.content);
    assert!(!r.content.contains("secret accepted"), "{}", r.content);
    assert!(
        r.content.contains(&format!(
            "[network: the connection to exfil.test:{} was refused: the person refused it",
            port(&s)
        )),
        "{}",
        r.content
    );
    assert_eq!(
        network_asks(&surface),
        vec![("exfil.test".to_string(), port(&s), cmd.clone())]
    );
    assert!(s.received_requests().await.unwrap().is_empty());
    // A denial refuses nothing run outside it: the policy holds, no run-outside.
    assert!(r.bound.is_none(), "{:?}", r.bound);

    // Allowed once: this command connects (twice, one ask); the next one asks again.
    let surface = Scripted::new(vec![
        DecisionAnswer::AllowOnce,
        DecisionAnswer::Deny { feedback: None },
    ]);
    let c = ctx(&p, Mode::Auto, surface.clone());
    let cmd = format!("curl -sS --max-time 20 {url} && curl -sS --max-time 20 {url}");
    let r = bash(&c, &cmd).await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(
        r.content.matches("secret accepted").count(),
        2,
        "{}",
        r.content
    );
    assert!(
        r.content
            .contains("[network: the person allowed exfil.test"),
        "{}",
        r.content
    );
    assert_eq!(network_asks(&surface).len(), 1);
    let r = bash(&c, &format!("curl -sfS --max-time 20 {url}")).await;
    assert!(r.is_error, "{}", r.content);
    assert_eq!(network_asks(&surface).len(), 2);

    // For this session: no ask for the next command.
    let surface = Scripted::new(vec![DecisionAnswer::AllowForSession {
        rules: vec!["net(domain:exfil.test)".into()],
    }]);
    let c = ctx(&p, Mode::Auto, surface.clone());
    for _ in 0..2 {
        let r = bash(&c, &format!("curl -sS --max-time 20 {url}")).await;
        assert!(r.content.contains("secret accepted"), "{}", r.content);
    }
    assert_eq!(network_asks(&surface).len(), 1);

    // Always: the rule is saved where always-allow saves rules (this project, only me).
    let surface = Scripted::new(vec![DecisionAnswer::AlwaysAllow {
        target: None,
        rules: vec!["net(domain:exfil.test)".into()],
    }]);
    let c = ctx(&p, Mode::Auto, surface.clone());
    let r = bash(&c, &format!("curl -sS --max-time 20 {url}")).await;
    assert!(r.content.contains("secret accepted"), "{}", r.content);
    let saved = std::fs::read_to_string(decode_core::settings::local_settings_path(&p.root))
        .unwrap_or_else(|e| panic!("{e}: {}", r.content));
    assert!(saved.contains("net(domain:exfil.test)"), "{saved}");

    // Bypass mode: allowed without an ask.
    let p2 = Project::new();
    let surface = Scripted::new(vec![]);
    let c = ctx(&p2, Mode::Bypass, surface.clone());
    let r = bash(&c, &format!("curl -sS --max-time 20 {url}")).await;
    assert!(r.content.contains("secret accepted"), "{}", r.content);
    assert!(network_asks(&surface).is_empty());
}

#[test]
fn what_skips_the_proxy_reaches_nothing() {
    in_child(
        "suite::sandbox_net::inner_what_skips_the_proxy_reaches_nothing",
        &[],
    );
    // The same when bubblewrap builds the sandbox for each command.
    in_child(
        "suite::sandbox_net::inner_what_skips_the_proxy_reaches_nothing",
        &[(decode_engine::sandbox::warm::WARM_ENV, "0")],
    );
}

#[tokio::test]
#[ignore = "run by its outer test"]
async fn inner_what_skips_the_proxy_reaches_nothing() {
    if !inner() {
        return;
    }
    enforced();
    let p = Project::new();
    let s = upstream("reached").await;
    let surface = Scripted::new(vec![]);
    let c = ctx(&p, Mode::Bypass, surface.clone());
    // A raw socket to the host's loopback, to an address, a UDP datagram, a name
    // resolved directly: nothing leaves the command's own network.
    let script = format!(
        r#"
import socket
for addr in [("127.0.0.1", {port}), ("203.0.113.7", 80), ("10.0.0.1", 80)]:
    try:
        socket.create_connection(addr, timeout=3)
        print("CONNECTED", addr)
    except OSError as e:
        print("refused", addr, e)
try:
    socket.getaddrinfo("made-up-name-for-decode.example", 80)
    print("RESOLVED")
except OSError as e:
    print("no name", e)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"x", ("8.8.8.8", 53))
    print("SENT")
except OSError as e:
    print("no udp", e)
"#,
        port = port(&s)
    );
    p.write("probe.py", &script);
    let r = bash(&c, "python3 probe.py").await;
    assert!(!r.content.contains("CONNECTED"), "{}", r.content);
    assert!(!r.content.contains("RESOLVED"), "{}", r.content);
    assert!(!r.content.contains("SENT"), "{}", r.content);
    assert!(s.received_requests().await.unwrap().is_empty());
    for tool in ["dig", "nslookup", "host"] {
        if !have(tool) {
            eprintln!("skipped {tool}: not installed");
            continue;
        }
        let r = bash(&c, &format!("{tool} made-up-name-for-decode.example")).await;
        assert!(r.is_error, "{tool}: {}", r.content);
    }
    let r = bash(&c, "getent hosts made-up-name-for-decode.example").await;
    assert!(r.is_error, "{}", r.content);
    // The proxy ignores nothing either: curl to an address through it is judged
    // as that address (the host's loopback asks; nobody answers here).
    let r = bash(
        &Project::ctx_with(&p, Mode::Auto, Scripted::new(vec![])),
        &format!(
            "curl -sfS --max-time 20 http://127.0.0.1:{}/ -x http://127.0.0.1:3128",
            port(&s)
        ),
    )
    .await;
    assert!(r.is_error, "{}", r.content);
    assert!(s.received_requests().await.unwrap().is_empty());
}

#[test]
fn a_net_deny_rule_beats_a_registry_default() {
    in_child(
        "suite::sandbox_net::inner_a_net_deny_rule_beats_a_registry_default",
        &[],
    );
}

#[tokio::test]
#[ignore = "run by its outer test"]
async fn inner_a_net_deny_rule_beats_a_registry_default() {
    if !inner() {
        return;
    }
    enforced();
    let s = upstream("{\"name\":\"left-pad\"}").await;
    // The registry's port 80 (served by the fake on its own port).
    let url = "http://registry.npmjs.org/left-pad";
    let serving = [("registry.npmjs.org", port(&s))];
    // Allowed by default.
    let p = Project::new();
    let surface = Scripted::new(vec![]);
    let r = bash(
        &ctx_serving(&p, Mode::Auto, surface.clone(), &serving),
        &format!("curl -sS --max-time 20 {url}"),
    )
    .await;
    assert!(r.content.contains("left-pad"), "{}", r.content);
    // Denied by a rule, in bypass mode too; nobody is asked.
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions":{"deny":["net(domain:registry.npmjs.org)"]}}"#,
    );
    let before = s.received_requests().await.unwrap().len();
    let r = bash(
        &ctx_serving(&p, Mode::Bypass, surface.clone(), &serving),
        &format!("curl -sfS --max-time 20 {url}"),
    )
    .await;
    assert!(r.is_error, "{}", r.content);
    assert!(
        r.content
            .contains("[network: the connection to registry.npmjs.org:"),
        "{}",
        r.content
    );
    assert_eq!(s.received_requests().await.unwrap().len(), before);
    assert!(network_asks(&surface).is_empty());
}

#[test]
fn a_loopback_server_inside_one_command_works() {
    in_child(
        "suite::sandbox_net::inner_a_loopback_server_inside_one_command_works",
        &[],
    );
}

#[tokio::test]
#[ignore = "run by its outer test"]
async fn inner_a_loopback_server_inside_one_command_works() {
    if !inner() {
        return;
    }
    enforced();
    let p = Project::new();
    p.write("www/index.html", "served on loopback\n");
    let surface = Scripted::new(vec![]);
    let c = ctx(&p, Mode::Auto, surface.clone());
    let r = bash(
        &c,
        "cd www && (python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &) && \
         for i in $(seq 50); do curl -sf http://127.0.0.1:8765/ && break; sleep 0.1; done; \
         curl -sf http://localhost:8765/index.html",
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(
        r.content.matches("served on loopback").count(),
        2,
        "{}",
        r.content
    );
    assert!(network_asks(&surface).is_empty());
}

#[test]
fn git_over_ssh_goes_through_the_proxy() {
    in_child(
        "suite::sandbox_net::inner_git_over_ssh_goes_through_the_proxy",
        &[],
    );
}

#[tokio::test]
#[ignore = "run by its outer test"]
async fn inner_git_over_ssh_goes_through_the_proxy() {
    if !inner() {
        return;
    }
    enforced();
    if !have("ssh") {
        eprintln!("skipped: ssh is not installed");
        return;
    }
    // A fake ssh server: it records the client's greeting and closes.
    let listener = tokio::net::TcpListener::bind((LOCAL, 0)).await.unwrap();
    let ssh_port = listener.local_addr().unwrap().port();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut s, _)) = listener.accept().await {
            let _ = s.write_all(b"SSH-2.0-FakeServer\r\n").await;
            let mut buf = vec![0u8; 256];
            let n = s.read(&mut buf).await.unwrap_or(0);
            let _ = tx.send(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    });
    let p = Project::new();
    p.write(
        ".decode/settings.json",
        r#"{"permissions":{"allow":["net(domain:ssh.test)"]}}"#,
    );
    let c = ctx(&p, Mode::Auto, Scripted::new(vec![]));
    let r = bash(
        &c,
        &format!("git ls-remote ssh://git@ssh.test:{ssh_port}/repo.git 2>&1; echo done"),
    )
    .await;
    let greeting = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv())
        .await
        .unwrap_or_else(|_| panic!("the fake ssh server got nothing: {}", r.content))
        .unwrap();
    assert!(
        greeting.starts_with("SSH-2.0-"),
        "{greeting:?} / {}",
        r.content
    );
}

/// Never answers (a person away from the window).
struct Away {
    asked: std::sync::Mutex<usize>,
}

#[async_trait::async_trait]
impl decode_core::decision::DecisionSurface for Away {
    async fn ask(&self, _request: DecisionRequest) -> DecisionAnswer {
        *self.asked.lock().unwrap() += 1;
        std::future::pending().await
    }
}

#[test]
fn an_ask_still_open_when_the_command_ends_is_withdrawn() {
    in_child(
        "suite::sandbox_net::inner_an_ask_still_open_when_the_command_ends_is_withdrawn",
        &[],
    );
}

#[tokio::test]
#[ignore = "run by its outer test"]
async fn inner_an_ask_still_open_when_the_command_ends_is_withdrawn() {
    if !inner() {
        return;
    }
    enforced();
    let p = Project::new();
    let s = upstream("late").await;
    let away = Arc::new(Away {
        asked: std::sync::Mutex::new(0),
    });
    let c = ToolContext::new(p.state(Mode::Auto), away.clone()).with_resolver(Arc::new(
        Resolver::default().with_public("exfil.test", LOCAL),
    ));
    let started = std::time::Instant::now();
    let r = bash(
        &c,
        &format!("curl -sfS --max-time 2 http://exfil.test:{}/", port(&s)),
    )
    .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(r.is_error, "{}", r.content);
    assert_eq!(*away.asked.lock().unwrap(), 1);
    assert!(
        r.content.contains("the command ended before the answer"),
        "{}",
        r.content
    );
    assert!(s.received_requests().await.unwrap().is_empty());
}

#[test]
fn pip_download_and_npm_view_reach_local_registries_through_the_proxy() {
    in_child(
        "suite::sandbox_net::inner_pip_download_and_npm_view_reach_local_registries_through_the_proxy",
        &[],
    );
    // The same when bubblewrap builds the sandbox for each command.
    in_child(
        "suite::sandbox_net::inner_pip_download_and_npm_view_reach_local_registries_through_the_proxy",
        &[(decode_engine::sandbox::warm::WARM_ENV, "0")],
    );
}

#[tokio::test]
#[ignore = "run by its outer test"]
async fn inner_pip_download_and_npm_view_reach_local_registries_through_the_proxy() {
    if !inner() {
        return;
    }
    enforced();
    // No rule: the registries' names are on the default allow-list (the fakes are
    // `pypi.org` and `registry.npmjs.org` at 127.0.0.1 for the proxy's resolver).
    let p = Project::new();
    let surface = Scripted::new(vec![]);
    let pip = std::process::Command::new("python3")
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if pip {
        // A simple index (PEP 503) with one wheel, served by python's http.server.
        let served = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("python3")
            .arg("-c")
            .arg(
                r#"
import os, zipfile
os.makedirs("simple/fakepkg"); os.makedirs("files")
name = "fakepkg-1.0-py3-none-any.whl"
with zipfile.ZipFile("files/" + name, "w") as z:
    z.writestr("fakepkg/__init__.py", "")
    z.writestr("fakepkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: fakepkg\nVersion: 1.0\n")
    z.writestr("fakepkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: decode-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("fakepkg-1.0.dist-info/RECORD", "")
open("simple/fakepkg/index.html", "w").write('<html><body><a href="../../files/%s">%s</a></body></html>' % (name, name))
"#,
            )
            .current_dir(served.path())
            .status()
            .unwrap();
        assert!(made.success());
        let (mut server, port) = serve_folder(served.path());
        let c = ctx_serving(&p, Mode::Auto, surface.clone(), &[("pypi.org", port)]);
        let r = bash(
            &c,
            "python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check \
             --index-url http://pypi.org/simple/ --trusted-host pypi.org \
             -d dl fakepkg==1.0 && ls dl",
        )
        .await;
        let _ = server.kill();
        let _ = server.wait();
        assert!(!r.is_error, "{}", r.content);
        assert!(
            r.content.contains("fakepkg-1.0-py3-none-any.whl"),
            "{}",
            r.content
        );
        assert!(p.path("dl/fakepkg-1.0-py3-none-any.whl").is_file());
    } else {
        eprintln!("skipped pip download: pip is not installed (python3 -m pip)");
    }
    if have("npm") {
        // A registry answering every package document with one package.
        let s = MockServer::start().await;
        let doc = json!({
            "_id": "fakepkg",
            "name": "fakepkg",
            "dist-tags": {"latest": "1.2.3"},
            "versions": {"1.2.3": {
                "name": "fakepkg",
                "version": "1.2.3",
                "dist": {"tarball": "http://registry.npmjs.org/fakepkg/-/fakepkg-1.2.3.tgz", "shasum": "0"}
            }},
            "time": {"created": "2020-01-01T00:00:00.000Z", "modified": "2020-01-01T00:00:00.000Z", "1.2.3": "2020-01-01T00:00:00.000Z"}
        });
        Mock::given(method("GET"))
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(doc.to_string(), "application/json"),
            )
            .mount(&s)
            .await;
        let c = ctx_serving(
            &p,
            Mode::Auto,
            surface.clone(),
            &[("registry.npmjs.org", port(&s))],
        );
        let r = bash(
            &c,
            "npm view fakepkg version --registry http://registry.npmjs.org/ \
             --cache \"$PWD/.npm-cache\" --no-update-notifier",
        )
        .await;
        assert!(!r.is_error, "{}", r.content);
        assert!(r.content.contains("1.2.3"), "{}", r.content);
        assert!(!s.received_requests().await.unwrap().is_empty());
    } else {
        eprintln!("skipped npm view: npm is not installed");
    }
    assert!(network_asks(&surface).is_empty());
}
