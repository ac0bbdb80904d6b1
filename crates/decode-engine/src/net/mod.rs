//! The network of sandboxed commands and `web_fetch` (docs/network.md).
//!
//! - [`Resolver`], [`Pins`]: names resolved once; the addresses the gate judged are
//!   the ones connected to;
//! - [`proxy`]: the proxy a sandboxed command's connections go through (HTTP
//!   `CONNECT`, plain HTTP, SOCKS5 `CONNECT`), each destination judged by the host
//!   policy.

mod judged;
pub mod proxy;
mod resolve;
mod splice;

pub use judged::{
    decide_host, decide_host_blocking, decide_host_if, decide_host_with, host_name,
    private_kind_of, reaches_private, HostJudgement,
};
pub use proxy::{GateJudge, Judge, NetEvent, NetVerdict, Proxy};
pub use resolve::{Pins, Resolved, Resolver, TEST_HOSTS_VAR};

/// Serves the proxy on `listeners` (a sandboxed program's, on its own loopback),
/// each destination judged by `judge`, until the returned handle is dropped.
pub fn serve(
    resolver: std::sync::Arc<Resolver>,
    judge: std::sync::Arc<dyn Judge>,
    listeners: Vec<std::net::TcpListener>,
) -> Serving {
    let proxy = std::sync::Arc::new(Proxy::new(resolver, judge));
    let mut tasks = Vec::new();
    for l in listeners {
        let l = match l
            .set_nonblocking(true)
            .and_then(|()| tokio::net::TcpListener::from_std(l))
        {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "cannot serve the network proxy to a sandboxed program");
                continue;
            }
        };
        tasks.push(tokio::spawn(proxy.clone().serve_tcp(l)));
    }
    Serving(tasks)
}

/// The tasks serving one program's proxy listeners (stopped when dropped).
pub struct Serving(Vec<tokio::task::JoinHandle<()>>);

impl Drop for Serving {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

static PROXY_OFF: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For the cost bench: with `false`, sandboxed commands get no network of their own
/// and no proxy (they share the kept sandbox's network, which has no way out: what
/// Decode did before the proxy). On by default.
pub fn give_commands_the_proxy(on: bool) {
    PROXY_OFF.store(!on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether sandboxed commands get a network of their own served by the proxy.
pub(crate) fn commands_get_the_proxy() -> bool {
    !PROXY_OFF.load(std::sync::atomic::Ordering::Relaxed)
}

/// Where a sandboxed command reaches the proxy: ports on 127.0.0.1 of its own
/// network namespace (each command has one; nothing else listens there when it
/// starts). Both ports speak every protocol of the proxy; the variables name the
/// HTTP one for HTTP and HTTPS and the SOCKS one for the rest.
pub const PROXY_HTTP_PORT: u16 = 3128;
/// See [`PROXY_HTTP_PORT`].
pub const PROXY_SOCKS_PORT: u16 = 1080;

/// The proxy variables of a sandboxed command's environment (docs/network.md):
/// `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and their lower-case forms, `NO_PROXY`
/// for the command's own loopback, and `GIT_SSH_COMMAND` with a `ProxyCommand` that
/// tunnels git's ssh through the proxy with bash alone (an HTTP `CONNECT` over
/// bash's `/dev/tcp`).
pub fn proxy_env() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let http = format!("http://127.0.0.1:{PROXY_HTTP_PORT}");
    let socks = format!("socks5h://127.0.0.1:{PROXY_SOCKS_PORT}");
    let no_proxy = "localhost,127.0.0.1,::1";
    let mut v: Vec<(String, String)> = Vec::new();
    for (k, val) in [
        ("HTTP_PROXY", http.as_str()),
        ("HTTPS_PROXY", http.as_str()),
        ("ALL_PROXY", socks.as_str()),
        ("NO_PROXY", no_proxy),
    ] {
        v.push((k.to_string(), val.to_string()));
        v.push((k.to_ascii_lowercase(), val.to_string()));
    }
    v.push((
        "GIT_SSH_COMMAND".into(),
        // No connection sharing: its master socket is a local socket, which a
        // command cannot make (docs/sandbox.md), and `ControlMaster auto` in the
        // person's ssh config would stop ssh before it connects.
        format!("ssh -o ControlMaster=no -o ControlPath=none -o 'ProxyCommand=bash -c \"${SSH_PROXY_VAR}\" decode-proxy %h:%p'"),
    ));
    v.push((SSH_PROXY_VAR.into(), ssh_tunnel_script()));
    v.into_iter().map(|(k, v)| (k.into(), v.into())).collect()
}

/// The variable holding the tunnel script of [`GIT_SSH_COMMAND`'s](proxy_env)
/// `ProxyCommand` (in a variable, so that neither git's shell nor ssh's `%`
/// expansion touches it).
pub const SSH_PROXY_VAR: &str = "DECODE_SSH_PROXY";

/// The tunnel: an HTTP `CONNECT` to `$1` (`host:port`) through the proxy with bash
/// alone. bash reads a socket a byte at a time, so reading the proxy's answer line
/// by line loses nothing of the tunnel; it fails unless the answer is `200`, then
/// copies both ways. When the far end closes, the copy towards it is stopped too:
/// ssh sees the end at once, not when it next writes.
fn ssh_tunnel_script() -> String {
    format!(
        r#"exec 3<>/dev/tcp/127.0.0.1/{PROXY_HTTP_PORT} || exit 1
printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' "$1" "$1" >&3
IFS= read -r status <&3
case "$status" in "HTTP/1."?" 200"*) ;; *) echo "decode proxy: ${{status%$'\r'}}" >&2; exit 1;; esac
while IFS= read -r line <&3; do [ -z "${{line%$'\r'}}" ] && break; done
cat <&0 >&3 & w=$!
cat <&3
kill "$w" 2>/dev/null
"#
    )
}
