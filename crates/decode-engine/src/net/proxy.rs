//! The proxy a sandboxed command's connections go through (docs/network.md): HTTP
//! `CONNECT` (HTTPS and any TCP a client tunnels), plain HTTP requests in absolute
//! form, and SOCKS5 `CONNECT` (git over ssh, other TCP). One listener speaks all
//! three: a SOCKS5 greeting starts with byte 5, anything else is read as HTTP.
//!
//! Every destination is resolved by the proxy, once ([`Resolver`]); the host and
//! the addresses are judged by a [`Judge`] (the host policy); an allowed connection
//! goes to exactly the judged addresses; a tunnel's bytes are then copied both
//! ways untouched, and a plain HTTP request is forwarded alone — its head and
//! exactly its body, one request per upstream connection, so every request the
//! server gets was judged. A refused one gets the protocol's refusal with the reason (HTTP 403
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
        format_host_port(&self.host, self.port)
    }

    /// As a `Host` header names it (the port left out when it is HTTP's).
    fn authority(&self) -> String {
        match (self.port, self.host.contains(':')) {
            (80, true) => format!("[{}]", self.host),
            (80, false) => self.host.clone(),
            _ => self.shown(),
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
        let port = self.resolver.connect_port(&t.host, t.port);
        for ip in &resolved.addrs {
            let addr = SocketAddr::new(*ip, port);
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
        // Lines end with CRLF or a bare LF; a CR anywhere else could end a line for
        // the server where it did not for the proxy, so the head is refused.
        let lines: Vec<&str> = text
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect();
        if lines.iter().any(|l| l.contains('\r')) {
            respond(reader.get_mut(), 400, "a bare CR in the request head").await?;
            return Ok(());
        }
        let request_line = lines.first().copied().unwrap_or_default();
        let parts: Vec<&str> = request_line.split(' ').collect();
        let (method, target, version) = match parts[..] {
            [m, t, v] if (v == "HTTP/1.1" || v == "HTTP/1.0") && !m.is_empty() => (m, t, v),
            _ => {
                respond(reader.get_mut(), 400, "not an HTTP proxy request").await?;
                return Ok(());
            }
        };
        let headers: Vec<&str> = lines[1..]
            .iter()
            .copied()
            .filter(|l| !l.is_empty())
            .collect();
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
        // A plain HTTP request in absolute form: `GET http://host[:port]/path HTTP/1.1`,
        // whose `Host` header must name the same host and port (refused before
        // anything is judged, resolved or connected).
        let (t, path) = match absolute_form(target) {
            Ok(x) => x,
            Err(why) => {
                respond(reader.get_mut(), 400, &why).await?;
                return Ok(());
            }
        };
        let has_host = match host_header(&headers, &t) {
            Ok(has) => has,
            Err(why) => {
                tracing::info!(target = %t.shown(), %why, "network proxy: refused");
                respond(reader.get_mut(), 400, &why).await?;
                return Ok(());
            }
        };
        let body = match body_framing(&headers) {
            Ok(b) => b,
            Err(why) => {
                tracing::info!(target = %t.shown(), %why, "network proxy: refused");
                respond(reader.get_mut(), 400, &why).await?;
                return Ok(());
            }
        };
        let upstream = match self.open(&t).await {
            Ok(s) => s,
            Err((kind, reason)) => {
                respond(reader.get_mut(), kind.http_status(), &reason).await?;
                return Ok(());
            }
        };
        // Exactly one request per upstream connection: the head, then exactly its
        // body as its framing says, with `Connection: close`. Nothing else the
        // client sends goes upstream (a pipelined next request was never judged:
        // the client opens a new connection for it, which is judged again).
        let mut out = format!("{method} {path} {version}\r\n");
        if !has_host {
            out.push_str(&format!("Host: {}\r\n", t.authority()));
        }
        for line in headers {
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
        let (up_read, mut up_write) = upstream.into_split();
        up_write.write_all(out.as_bytes()).await?;
        let (client_read, mut client_write) = tokio::io::split(reader);
        let mut client_read = BufReader::new(client_read);
        // The body goes up while the response comes back (a client that sent
        // `Expect: 100-continue` waits for the server before sending its body);
        // the response is relayed until the server closes.
        let send = async {
            forward_body(&mut client_read, &mut up_write, body).await?;
            up_write.flush().await?;
            std::future::pending::<io::Result<()>>().await
        };
        let back = async {
            let mut up_read = BufReader::with_capacity(COPY_BUF, up_read);
            tokio::io::copy_buf(&mut up_read, &mut client_write).await?;
            client_write.flush().await?;
            client_write.shutdown().await
        };
        let r = tokio::select! {
            r = send => r,
            r = back => r,
        };
        // What the client sent after its request is read and dropped (closing a
        // connection with unread bytes would reset it, and the client could lose
        // the end of the response).
        let mut sink = [0u8; 8192];
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            while matches!(client_read.read(&mut sink).await, Ok(n) if n > 0) {}
        })
        .await;
        r
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

/// An absolute-form request target (`http://host[:port]/path?query`) read the way
/// the host policy reads URLs, and the path to send in origin form. Refused (the
/// reason): another scheme, and anything two parsers could read as different hosts
/// — credentials (`user@`), a fragment (`#`), a backslash, spaces, control or
/// non-ASCII characters.
fn absolute_form(target: &str) -> Result<(Target, String), String> {
    let scheme = target.get(..7).unwrap_or_default();
    if !scheme.eq_ignore_ascii_case("http://") {
        return Err("the proxy forwards http:// URLs; use CONNECT for https".into());
    }
    let rest = &target[7..];
    if target.chars().any(|c| !c.is_ascii_graphic()) {
        return Err("the URL holds a space, a control or a non-ASCII character".into());
    }
    if target.contains('#') {
        return Err("the URL holds a fragment (`#`), which a request never sends".into());
    }
    if target.contains('\\') {
        return Err("the URL holds a backslash".into());
    }
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.contains('@') {
        return Err(
            "the URL holds credentials (`user@host`); the proxy takes none (send them in a header)"
                .into(),
        );
    }
    let Some((host, port)) = host_port(authority, Some(80)) else {
        return Err("the URL has no host".into());
    };
    // The whole URL, read as the gate reads URLs, names the same host and port.
    match decode_policy::net::parse_target(target) {
        Some((h, p)) if h == host && p.unwrap_or(80) == port => {}
        _ => return Err("the URL's host reads differently to different parsers".into()),
    }
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    Ok((Target { host, port }, path))
}

/// Whether a plain HTTP request's headers carry a `Host` header, which must name
/// the request's target (host and port): a server behind a shared front (a CDN)
/// picks the site by `Host`, so another one would reach a host the policy never
/// judged (domain fronting). Refused (the reason): another host or port, more
/// than one `Host`, a header line folded onto the one before, a line that is not
/// `NAME: VALUE`.
fn host_header(headers: &[&str], t: &Target) -> Result<bool, String> {
    let mut seen = false;
    for line in headers {
        if line.starts_with([' ', '\t']) {
            return Err("a header line folded onto the one before".into());
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err("a header line without a colon".into());
        };
        if name.is_empty() || name.contains(|c: char| !c.is_ascii_graphic()) {
            return Err("a header name that is not a token".into());
        }
        if !name.eq_ignore_ascii_case("host") {
            continue;
        }
        if seen {
            return Err("more than one Host header".into());
        }
        seen = true;
        let value = value.trim_matches([' ', '\t']);
        let named = (!value.contains(['@', '/', '?', '#', '\\']))
            .then(|| host_port(value, Some(80)))
            .flatten();
        if named.as_ref() != Some(&(t.host.clone(), t.port)) {
            let one_line: String = value.chars().take(100).collect();
            return Err(format!(
                "the Host header names `{one_line}`, not the request's target {} (the Host of a request must name the host it goes to)",
                t.shown()
            ));
        }
    }
    Ok(seen)
}

/// How a plain HTTP request's body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    /// No body.
    None,
    /// `Content-Length: N`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// The body framing of a plain HTTP request, read from headers that
/// [`host_header`] has passed. Refused (the reason) is any framing a server could
/// read otherwise than the proxy — the way a second request is smuggled past it:
/// `Transfer-Encoding` with `Content-Length`, more than one of either, a length
/// that is not plain digits, a transfer coding other than `chunked`.
fn body_framing(headers: &[&str]) -> Result<Body, String> {
    let mut length = None;
    let mut chunked = false;
    for line in headers {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim_matches([' ', '\t']);
        if name.eq_ignore_ascii_case("content-length") {
            if length.is_some() {
                return Err("more than one Content-Length header".into());
            }
            let n = (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()))
                .then(|| value.parse::<u64>().ok())
                .flatten()
                .ok_or_else(|| {
                    let one_line: String = value.chars().take(40).collect();
                    format!("a Content-Length that is not a number of bytes: `{one_line}`")
                })?;
            length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            if chunked {
                return Err("more than one Transfer-Encoding header".into());
            }
            if !value.eq_ignore_ascii_case("chunked") {
                let one_line: String = value.chars().take(40).collect();
                return Err(format!(
                    "a Transfer-Encoding other than `chunked`: `{one_line}`"
                ));
            }
            chunked = true;
        }
    }
    match (length, chunked) {
        (Some(_), true) => Err(
            "both Content-Length and Transfer-Encoding (a server could read the body otherwise than the proxy)"
                .into(),
        ),
        (Some(n), false) => Ok(Body::Length(n)),
        (None, true) => Ok(Body::Chunked),
        (None, false) => Ok(Body::None),
    }
}

/// The longest chunk-size or trailer line of a chunked body.
const MAX_CHUNK_LINE: usize = 8 * 1024;

/// Copies exactly the body `body` frames from `from` to `to`, and nothing after
/// it. A chunked body is read by its framing — each `SIZE[;ext]` line, its bytes
/// and CRLF, the last (zero) chunk and the trailers up to the empty line; a
/// malformed one is an error (the connection is dropped, the request unfinished).
async fn forward_body<R, W>(from: &mut R, to: &mut W, body: Body) -> io::Result<()>
where
    R: tokio::io::AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    match body {
        Body::None => Ok(()),
        Body::Length(n) => copy_exactly(from, to, n).await,
        Body::Chunked => {
            loop {
                let line = read_line(from).await?;
                let size = line.split(';').next().unwrap_or_default();
                let size = size.trim_end_matches([' ', '\t']);
                if size.is_empty()
                    || size.len() > 16
                    || !size.bytes().all(|b| b.is_ascii_hexdigit())
                    || line.bytes().any(|b| b.is_ascii_control() && b != b'\t')
                {
                    return Err(bad("a malformed chunk size line"));
                }
                let n = u64::from_str_radix(size, 16).map_err(|_| bad("a chunk too large"))?;
                to.write_all(line.as_bytes()).await?;
                to.write_all(b"\r\n").await?;
                if n == 0 {
                    break;
                }
                copy_exactly(from, to, n).await?;
                let mut crlf = [0u8; 2];
                from.read_exact(&mut crlf).await?;
                if &crlf != b"\r\n" {
                    return Err(bad("a chunk not followed by CRLF"));
                }
                to.write_all(b"\r\n").await?;
            }
            // Trailers, up to the empty line.
            let mut total = 0;
            loop {
                let line = read_line(from).await?;
                total += line.len();
                if total > MAX_HEAD
                    || line.bytes().any(|b| b.is_ascii_control() && b != b'\t')
                    || (!line.is_empty() && !line.contains(':'))
                {
                    return Err(bad("malformed trailers"));
                }
                to.write_all(line.as_bytes()).await?;
                to.write_all(b"\r\n").await?;
                if line.is_empty() {
                    return Ok(());
                }
            }
        }
    }
}

/// One line of a chunked body, which must end with CRLF (without it).
async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(from: &mut R) -> io::Result<String> {
    let mut line = Vec::new();
    (&mut *from)
        .take(MAX_CHUNK_LINE as u64)
        .read_until(b'\n', &mut line)
        .await?;
    match line.strip_suffix(b"\r\n") {
        Some(l) if !l.contains(&b'\r') => String::from_utf8(l.to_vec())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a non-UTF-8 chunk line")),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a chunk line that does not end with CRLF",
        )),
    }
}

/// Copies exactly `n` bytes from `from` to `to`; an early end is an error.
async fn copy_exactly<R, W>(from: &mut R, to: &mut W, n: u64) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let copied = tokio::io::copy(&mut (&mut *from).take(n), to).await?;
    if copied < n {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the request body ended early",
        ));
    }
    Ok(())
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

    fn target(host: &str, port: u16) -> Target {
        Target {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn absolute_form_targets_read_as_the_gate_reads_them() {
        let ok = |u: &str| absolute_form(u).map(|(t, path)| (t.host, t.port, path));
        assert_eq!(
            ok("http://Pypi.ORG./simple/x?y=1"),
            Ok(("pypi.org".into(), 80, "/simple/x?y=1".into()))
        );
        assert_eq!(
            ok("HTTP://[::1]:8080?q"),
            Ok(("::1".into(), 8080, "/?q".into()))
        );
        assert_eq!(
            ok("http://2130706433/"),
            Ok(("127.0.0.1".into(), 80, "/".into()))
        );
        for (bad, why) in [
            (
                "http://127.0.0.1:8001#@r14.rebind.test:8001/abs6",
                "fragment",
            ),
            ("http://a.test/x#y", "fragment"),
            (
                "http://c20.pub.test:8001@c20b.attacker.example/",
                "credentials",
            ),
            ("http://u:p@a.test/", "credentials"),
            ("http://a.test\\@b.test/", "backslash"),
            ("http://a.test/\u{7f}", "control"),
            ("http://ａ.test/", "non-ASCII"),
            ("https://a.test/", "CONNECT"),
            ("ftp://a.test/", "http://"),
            ("/origin-form", "http://"),
            ("http:///x", "no host"),
            ("http://a.test:99999/", "no host"),
        ] {
            let got = absolute_form(bad).map(|(t, _)| t.shown());
            assert!(matches!(&got, Err(e) if e.contains(why)), "{bad}: {got:?}");
        }
    }

    #[test]
    fn the_host_header_must_name_the_target() {
        let t = target("pypi.org", 80);
        assert_eq!(host_header(&["Accept: */*"], &t), Ok(false));
        assert_eq!(host_header(&["Host: pypi.org"], &t), Ok(true));
        assert_eq!(host_header(&["host:PyPI.org.:80"], &t), Ok(true));
        let t8 = target("a.test", 8001);
        assert_eq!(host_header(&["HOST: a.test:8001"], &t8), Ok(true));
        let v6 = target("::1", 8080);
        assert_eq!(host_header(&["Host: [::1]:8080"], &v6), Ok(true));
        for (headers, why) in [
            (vec!["Host: files.example"], "names `files.example`"),
            (
                vec!["Host: 127.0.0.1:8001"],
                "not the request's target pypi.org:80",
            ),
            (vec!["Host: pypi.org:8080"], "Host header"),
            (
                vec!["Host: pypi.org", "Host: evil.example"],
                "more than one",
            ),
            (vec!["Host: pypi.org", "host: pypi.org"], "more than one"),
            (vec!["Host: pypi.org@evil.example"], "Host header"),
            (vec!["Host: evil.example/pypi.org"], "Host header"),
            (vec!["Host:"], "Host header"),
            (vec!["Host: pypi.org", " evil.example"], "folded"),
            (vec!["Host pypi.org"], "colon"),
            (vec!["Host : evil.example"], "token"),
        ] {
            let got = host_header(&headers, &t);
            assert!(
                matches!(&got, Err(e) if e.contains(why)),
                "{headers:?}: {got:?}"
            );
        }
        assert_eq!(target("pypi.org", 80).authority(), "pypi.org");
        assert_eq!(target("::1", 80).authority(), "[::1]");
        assert_eq!(target("a.test", 8001).authority(), "a.test:8001");
    }

    #[test]
    fn a_body_is_framed_one_way_or_refused() {
        assert_eq!(body_framing(&["Accept: */*"]), Ok(Body::None));
        assert_eq!(body_framing(&["Content-Length: 12"]), Ok(Body::Length(12)));
        assert_eq!(
            body_framing(&["transfer-encoding:  Chunked "]),
            Ok(Body::Chunked)
        );
        for (headers, why) in [
            (
                vec!["Content-Length: 5", "Transfer-Encoding: chunked"],
                "both",
            ),
            (
                vec!["Transfer-Encoding: chunked", "Content-Length: 5"],
                "both",
            ),
            (
                vec!["Content-Length: 5", "Content-Length: 5"],
                "more than one",
            ),
            (
                vec!["Content-Length: 5", "content-length: 6"],
                "more than one",
            ),
            (vec!["Content-Length: 5, 5"], "not a number"),
            (vec!["Content-Length: +5"], "not a number"),
            (vec!["Content-Length: 0x5"], "not a number"),
            (vec!["Content-Length:"], "not a number"),
            (
                vec!["Content-Length: 99999999999999999999999"],
                "not a number",
            ),
            (vec!["Transfer-Encoding: gzip, chunked"], "other than"),
            (vec!["Transfer-Encoding: identity"], "other than"),
            (
                vec!["Transfer-Encoding: chunked", "Transfer-Encoding: chunked"],
                "more than one",
            ),
        ] {
            let got = body_framing(&headers);
            assert!(
                matches!(&got, Err(e) if e.contains(why)),
                "{headers:?}: {got:?}"
            );
        }
    }

    async fn forwarded(input: &[u8], body: Body) -> (io::Result<()>, Vec<u8>, Vec<u8>) {
        let mut from = BufReader::new(input);
        let mut to = Vec::new();
        let r = forward_body(&mut from, &mut to, body).await;
        let mut rest = Vec::new();
        from.read_to_end(&mut rest).await.unwrap();
        (r, to, rest)
    }

    #[tokio::test]
    async fn exactly_the_body_is_forwarded_and_nothing_after_it() {
        let next = b"GET http://evil.example/ HTTP/1.1\r\n\r\n";
        let (r, to, rest) = forwarded(&[b"hello".as_slice(), next].concat(), Body::Length(5)).await;
        assert!(r.is_ok());
        assert_eq!(to, b"hello");
        assert_eq!(rest, next);
        let (r, to, rest) = forwarded(next, Body::None).await;
        assert!(r.is_ok());
        assert!(to.is_empty());
        assert_eq!(rest, next);
        let chunked =
            b"5;ext=1\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Sum: 1\r\n\r\n";
        let (r, to, rest) = forwarded(&[chunked.as_slice(), next].concat(), Body::Chunked).await;
        assert!(r.is_ok());
        assert_eq!(to, chunked);
        assert_eq!(rest, next);
        // Short or malformed bodies are errors (the connection is dropped).
        for (input, body) in [
            (b"hel".as_slice(), Body::Length(5)),
            (b"5\r\nhelloX\r\n0\r\n\r\n", Body::Chunked),
            (b"5\nhello\r\n0\r\n\r\n", Body::Chunked),
            (b"-5\r\nhello\r\n0\r\n\r\n", Body::Chunked),
            (b"\r\n", Body::Chunked),
            (b"0\r\nnot a trailer\r\n\r\n", Body::Chunked),
            (b"0\r\n", Body::Chunked),
        ] {
            let (r, _, _) = forwarded(input, body).await;
            assert!(r.is_err(), "{:?}", String::from_utf8_lossy(input));
        }
    }
}
