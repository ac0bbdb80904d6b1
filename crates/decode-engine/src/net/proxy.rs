//! The proxy a sandboxed command's connections go through (docs/network.md): HTTP
//! `CONNECT` (HTTPS and any TCP a client tunnels), plain HTTP requests in absolute
//! form, and SOCKS5 `CONNECT` (git over ssh, other TCP). One listener speaks all
//! three: a SOCKS5 greeting starts with byte 5, anything else is read as HTTP.
//!
//! Every destination is resolved by the proxy, once ([`Resolver`]); the host and
//! the addresses are judged by a [`Judge`] (the host policy); an allowed connection
//! goes to exactly the judged addresses and the bytes are then copied both ways
//! untouched. A refused one gets the protocol's refusal with the reason (HTTP 403
//! with the reason in the body and an `X-Decode-Refused` header; SOCKS5 reply 2,
//! "not allowed by ruleset") and nothing is connected. SOCKS5 `BIND` and
//! `UDP ASSOCIATE` are refused: the proxy carries TCP streams only.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::Resolver;

/// The longest HTTP request head the proxy reads.
const MAX_HEAD: usize = 64 * 1024;
/// How long a client may take to say where it goes.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// The buffer of each direction of a connection (large: a download is mostly
/// big reads, and each copy is a system call pair).
const COPY_BUF: usize = 256 * 1024;
/// How long connecting upstream may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the host policy says of one destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetVerdict {
    Allow,
    /// Refused, with a one-line reason for the command's output.
    Refuse(String),
}

/// Judges destinations: `host` normalised (lower-case, no trailing dot, IPv6
/// without brackets), `addrs` what it resolved to as the gate must see them
/// (empty for a name the resolver was told is public).
#[async_trait]
pub trait Judge: Send + Sync {
    /// The verdict on connecting to `host` at `addrs` (what it resolved to).
    async fn judge(&self, host: &str, port: u16, addrs: &[IpAddr]) -> NetVerdict;

    /// The verdict on the name alone, before it is resolved (docs/network.md, "Judged
    /// by name first"): a refusal is final; an allowance is provisional — the
    /// addresses are judged next — and is not reported as a connection.
    async fn judge_name(&self, host: &str, port: u16) -> NetVerdict {
        self.judge(host, port, &[]).await
    }
}

/// The proxy: a resolver and a judge.
pub struct Proxy {
    resolver: Arc<Resolver>,
    judge: Arc<dyn Judge>,
}

/// Where a client asked to go.
struct Target {
    host: String,
    port: u16,
}

impl Target {
    fn shown(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl Proxy {
    pub fn new(resolver: Arc<Resolver>, judge: Arc<dyn Judge>) -> Proxy {
        Proxy { resolver, judge }
    }

    /// Serves every connection `listener` accepts until it fails.
    pub async fn serve_tcp(self: Arc<Self>, listener: tokio::net::TcpListener) {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    let me = Arc::clone(&self);
                    tokio::spawn(async move { me.handle(stream).await });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "network proxy: accept failed; the listener stops");
                    return;
                }
            }
        }
    }

    /// Serves one client connection to its end.
    pub async fn handle<S>(&self, stream: S)
    where
        S: Client,
    {
        let mut reader = BufReader::new(stream);
        let first = match tokio::time::timeout(HEAD_TIMEOUT, reader.fill_buf()).await {
            Ok(Ok(b)) if !b.is_empty() => b[0],
            _ => return,
        };
        let r = if first == 5 {
            self.socks5(reader).await
        } else {
            self.http(reader).await
        };
        if let Err(e) = r {
            tracing::debug!(error = %e, "network proxy: connection ended");
        }
    }

    /// Judges `t` by its name (nothing reaches DNS for a host the policy refuses or
    /// the person refuses), then resolves it and judges the addresses, then connects
    /// to the judged addresses.
    async fn open(&self, t: &Target) -> Result<TcpStream, (Refusal, String)> {
        if let NetVerdict::Refuse(reason) = self.judge.judge_name(&t.host, t.port).await {
            tracing::info!(target = %t.shown(), %reason, "network proxy: refused by name");
            return Err((Refusal::Policy, reason));
        }
        let resolved = self
            .resolver
            .resolve(&t.host)
            .await
            .map_err(|e| (Refusal::Unreachable, e))?;
        match self.judge.judge(&t.host, t.port, &resolved.judged).await {
            NetVerdict::Allow => {}
            NetVerdict::Refuse(reason) => {
                tracing::info!(target = %t.shown(), %reason, "network proxy: refused");
                return Err((Refusal::Policy, reason));
            }
        }
        let mut last = String::from("no address");
        for ip in &resolved.addrs {
            let addr = SocketAddr::new(*ip, t.port);
            match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
                Ok(Ok(s)) => {
                    let _ = s.set_nodelay(true);
                    return Ok(s);
                }
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = "timed out".into(),
            }
        }
        Err((
            Refusal::Unreachable,
            format!("cannot connect to {}: {last}", t.shown()),
        ))
    }

    async fn http<S>(&self, mut reader: BufReader<S>) -> io::Result<()>
    where
        S: Client,
    {
        let head = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut reader)).await {
            Ok(Ok(h)) => h,
            Ok(Err(e)) => {
                let _ = respond(reader.get_mut(), 400, &e.to_string()).await;
                return Ok(());
            }
            Err(_) => return Ok(()),
        };
        let text = String::from_utf8_lossy(&head).into_owned();
        let mut lines = text.split("\r\n");
        let request_line = lines.next().unwrap_or_default();
        let mut parts = request_line.split(' ');
        let (method, target, version) = match (parts.next(), parts.next(), parts.next()) {
            (Some(m), Some(t), Some(v)) if v.starts_with("HTTP/") => (m, t, v),
            _ => {
                respond(reader.get_mut(), 400, "not an HTTP proxy request").await?;
                return Ok(());
            }
        };
        if method.eq_ignore_ascii_case("CONNECT") {
            let Some((host, port)) = host_port(target, None) else {
                respond(reader.get_mut(), 400, "CONNECT needs HOST:PORT").await?;
                return Ok(());
            };
            let t = Target { host, port };
            let mut upstream = match self.open(&t).await {
                Ok(s) => s,
                Err((kind, reason)) => {
                    respond(reader.get_mut(), kind.http_status(), &reason).await?;
                    return Ok(());
                }
            };
            reader
                .get_mut()
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await?;
            // Bytes the client sent after the head (a TLS hello) go first.
            let early = reader.buffer().to_vec();
            if !early.is_empty() {
                upstream.write_all(&early).await?;
            }
            relay(reader.into_inner(), upstream).await?;
            return Ok(());
        }
        // A plain HTTP request in absolute form: `GET http://host[:port]/path HTTP/1.1`.
        let Some(rest) = target
            .strip_prefix("http://")
            .or_else(|| target.strip_prefix("HTTP://"))
        else {
            respond(
                reader.get_mut(),
                400,
                "the proxy forwards http:// URLs; use CONNECT for https",
            )
            .await?;
            return Ok(());
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let authority = authority.rsplit('@').next().unwrap_or(authority);
        let Some((host, port)) = host_port(authority, Some(80)) else {
            respond(reader.get_mut(), 400, "the URL has no host").await?;
            return Ok(());
        };
        let t = Target { host, port };
        let mut upstream = match self.open(&t).await {
            Ok(s) => s,
            Err((kind, reason)) => {
                respond(reader.get_mut(), kind.http_status(), &reason).await?;
                return Ok(());
            }
        };
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_string()
        };
        // One request per connection: a client that reuses it for another host
        // would reach this one, so the server is told to close after answering.
        let mut out = format!("{method} {path} {version}\r\n");
        for line in lines {
            if line.is_empty() {
                continue;
            }
            let name = line.split(':').next().unwrap_or("").trim();
            if name.eq_ignore_ascii_case("proxy-connection")
                || name.eq_ignore_ascii_case("proxy-authorization")
                || name.eq_ignore_ascii_case("connection")
                || name.eq_ignore_ascii_case("keep-alive")
            {
                continue;
            }
            out.push_str(line);
            out.push_str("\r\n");
        }
        out.push_str("Connection: close\r\n\r\n");
        upstream.write_all(out.as_bytes()).await?;
        let early = reader.buffer().to_vec();
        if !early.is_empty() {
            upstream.write_all(&early).await?;
        }
        relay(reader.into_inner(), upstream).await
    }

    async fn socks5<S>(&self, mut reader: BufReader<S>) -> io::Result<()>
    where
        S: Client,
    {
        // Greeting: VER NMETHODS METHODS…; only "no authentication" is offered.
        let mut h = [0u8; 2];
        reader.read_exact(&mut h).await?;
        let mut methods = vec![0u8; h[1] as usize];
        reader.read_exact(&mut methods).await?;
        if !methods.contains(&0) {
            reader.get_mut().write_all(&[5, 0xff]).await?;
            return Ok(());
        }
        reader.get_mut().write_all(&[5, 0]).await?;
        // Request: VER CMD RSV ATYP ADDR PORT.
        let mut req = [0u8; 4];
        reader.read_exact(&mut req).await?;
        let host = match req[3] {
            1 => {
                let mut a = [0u8; 4];
                reader.read_exact(&mut a).await?;
                IpAddr::from(a).to_string()
            }
            4 => {
                let mut a = [0u8; 16];
                reader.read_exact(&mut a).await?;
                IpAddr::from(a).to_string()
            }
            3 => {
                let mut len = [0u8; 1];
                reader.read_exact(&mut len).await?;
                let mut name = vec![0u8; len[0] as usize];
                reader.read_exact(&mut name).await?;
                String::from_utf8_lossy(&name).into_owned()
            }
            _ => {
                socks_reply(reader.get_mut(), 8).await?;
                return Ok(());
            }
        };
        let mut p = [0u8; 2];
        reader.read_exact(&mut p).await?;
        let port = u16::from_be_bytes(p);
        if req[1] != 1 {
            // BIND and UDP ASSOCIATE: not carried.
            socks_reply(reader.get_mut(), 7).await?;
            return Ok(());
        }
        let Some((host, port)) = host_port(&format_host_port(&host, port), None) else {
            socks_reply(reader.get_mut(), 4).await?;
            return Ok(());
        };
        let t = Target { host, port };
        let mut upstream = match self.open(&t).await {
            Ok(s) => s,
            Err((kind, _)) => {
                socks_reply(reader.get_mut(), kind.socks_code()).await?;
                return Ok(());
            }
        };
        socks_reply(reader.get_mut(), 0).await?;
        let early = reader.buffer().to_vec();
        if !early.is_empty() {
            upstream.write_all(&early).await?;
        }
        relay(reader.into_inner(), upstream).await
    }
}

/// A connection the proxy serves: any stream, and where it is a TCP connection
/// (what a command's listener accepts), the tunnel is relayed inside the kernel.
pub trait Client: AsyncRead + AsyncWrite + Unpin + Send {
    /// The TCP connection it is, if it is one.
    fn tcp(&self) -> Option<&TcpStream> {
        None
    }
}

impl Client for TcpStream {
    fn tcp(&self) -> Option<&TcpStream> {
        Some(self)
    }
}

impl Client for tokio::net::UnixStream {}
impl Client for tokio::io::DuplexStream {}

/// Relays a tunnel to its end: spliced between two TCP connections (no copy
/// through Decode), copied through buffers otherwise.
async fn relay<S: Client>(mut client: S, mut upstream: TcpStream) -> io::Result<()> {
    if let Some(c) = client.tcp() {
        super::splice::both(c, &upstream).await?;
        return Ok(());
    }
    tokio::io::copy_bidirectional_with_sizes(&mut client, &mut upstream, COPY_BUF, COPY_BUF)
        .await?;
    Ok(())
}

/// What the proxy did with one destination, for the call's result and trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetEvent {
    /// `host:port`.
    pub target: String,
    /// Allowed, or the reason it was refused.
    pub verdict: NetVerdict,
}

/// The host policy of a project as the proxy applies it: the gate's `net`
/// decision for the host, its port and its addresses. An allow passes; a deny
/// refuses; an ask passes when the person allowed that host for this session
/// (once per host per session) and is refused otherwise, the reason saying which
/// rule would allow it. Every destination is recorded ([`GateJudge::events`]).
pub struct GateJudge {
    active: Arc<crate::state::ActiveState>,
    session_hosts: std::sync::Mutex<std::collections::HashSet<String>>,
    events: std::sync::Mutex<Vec<NetEvent>>,
}

impl GateJudge {
    pub fn new(active: Arc<crate::state::ActiveState>) -> GateJudge {
        GateJudge {
            active,
            session_hosts: Default::default(),
            events: Default::default(),
        }
    }

    /// Lets `host` through for the rest of this session (an answer "for this session").
    pub fn allow_for_session(&self, host: &str) {
        if let Ok(mut s) = self.session_hosts.lock() {
            s.insert(host.to_ascii_lowercase());
        }
    }

    /// Takes what happened since the last call.
    pub fn take_events(&self) -> Vec<NetEvent> {
        self.events
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default()
    }
}

impl GateJudge {
    fn verdict(&self, host: &str, port: u16, addrs: &[IpAddr]) -> NetVerdict {
        use decode_policy::{Call, Tool, Verdict};
        let target = format_host_port(host, port);
        let d = self
            .active
            .decide(&Call::new(Tool::Net, target.as_str()).with_addrs(addrs.to_vec()));
        match d.verdict {
            Verdict::Allow => NetVerdict::Allow,
            Verdict::Deny => NetVerdict::Refuse(d.reason),
            Verdict::Ask => {
                // An answer for the session covers the host's public addresses only.
                let session = !super::reaches_private(host, addrs)
                    && self
                        .session_hosts
                        .lock()
                        .map(|s| s.contains(host))
                        .unwrap_or(false);
                if session && !d.capped {
                    NetVerdict::Allow
                } else {
                    NetVerdict::Refuse(format!(
                        "{} (allow it with the rule net(domain:{host}))",
                        d.reason
                    ))
                }
            }
        }
    }

    fn record(&self, host: &str, port: u16, verdict: &NetVerdict) {
        if let Ok(mut e) = self.events.lock() {
            e.push(NetEvent {
                target: format_host_port(host, port),
                verdict: verdict.clone(),
            });
        }
    }
}

#[async_trait]
impl Judge for GateJudge {
    async fn judge(&self, host: &str, port: u16, addrs: &[IpAddr]) -> NetVerdict {
        let verdict = self.verdict(host, port, addrs);
        self.record(host, port, &verdict);
        verdict
    }

    async fn judge_name(&self, host: &str, port: u16) -> NetVerdict {
        let verdict = self.verdict(host, port, &[]);
        if verdict != NetVerdict::Allow {
            self.record(host, port, &verdict);
        }
        verdict
    }
}

/// Why a destination was not connected.
#[derive(Debug, Clone, Copy)]
enum Refusal {
    /// The host policy refused it.
    Policy,
    /// It does not resolve or does not answer.
    Unreachable,
}

impl Refusal {
    fn http_status(self) -> u16 {
        match self {
            Refusal::Policy => 403,
            Refusal::Unreachable => 502,
        }
    }

    fn socks_code(self) -> u8 {
        match self {
            Refusal::Policy => 2,
            Refusal::Unreachable => 4,
        }
    }
}

/// `HOST:PORT` (or `[V6]:PORT`, or a bare host with `default` port) normalised
/// the way rules see hosts; `None` without a usable host or port.
fn host_port(s: &str, default: Option<u16>) -> Option<(String, u16)> {
    let (host, port) = decode_policy::net::parse_target(s)?;
    let port = port.or(default)?;
    (port != 0).then_some((host, port))
}

pub(crate) fn format_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Reads an HTTP head up to and including the empty line.
async fn read_head<S: AsyncRead + Unpin>(reader: &mut BufReader<S>) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(1024);
    loop {
        let n = reader.read_until(b'\n', &mut head).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the request head ended early",
            ));
        }
        if head.len() > MAX_HEAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the request head is too long",
            ));
        }
        if head.ends_with(b"\r\n\r\n") || head == b"\r\n" || head.ends_with(b"\n\n") {
            return Ok(head);
        }
    }
}

async fn respond<W: AsyncWrite + Unpin>(w: &mut W, status: u16, reason: &str) -> io::Result<()> {
    let phrase = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        _ => "Bad Gateway",
    };
    let one_line: String = reason
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let body = format!("Decode's network proxy: {one_line}\n");
    let text = format!(
        "HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\nX-Decode-Refused: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        one_line.replace(|c: char| !c.is_ascii(), "?"),
        body.len()
    );
    w.write_all(text.as_bytes()).await?;
    w.flush().await
}

async fn socks_reply<W: AsyncWrite + Unpin>(w: &mut W, code: u8) -> io::Result<()> {
    w.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        assert_eq!(
            host_port("Example.COM:443", None),
            Some(("example.com".into(), 443))
        );
        assert_eq!(host_port("example.com", None), None);
        assert_eq!(
            host_port("example.com", Some(80)),
            Some(("example.com".into(), 80))
        );
        assert_eq!(host_port("[::1]:22", None), Some(("::1".into(), 22)));
        assert_eq!(host_port("example.com:0", None), None);
        assert_eq!(host_port("a b:80", None), None);
    }
}
