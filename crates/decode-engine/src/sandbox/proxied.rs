//! The proxy's way into a sandbox bubblewrap builds for one program — a command
//! when no sandbox is kept warm, a project's hook, a stdio MCP server
//! (docs/network.md): bubblewrap waits before it runs the program while Decode
//! makes the proxy's listening sockets on the sandbox's own loopback, as it does
//! for a command entering a kept sandbox. The program then finds the proxy on
//! `127.0.0.1:3128` and `:1080` of its own network, its only way out.

use crate::net::{PROXY_HTTP_PORT, PROXY_SOCKS_PORT};

/// The proxy's listeners, to be made in the sandbox of one bubblewrap run.
pub(crate) struct BwrapProxy(decode_nsenter::BwrapNetwork);

impl BwrapProxy {
    pub(crate) fn new() -> std::io::Result<BwrapProxy> {
        Ok(BwrapProxy(decode_nsenter::BwrapNetwork::new()?))
    }

    /// Has the bubblewrap of `cmd` (made by `Plan::bwrap`, before its `--`) wait
    /// for the listeners.
    pub(crate) fn pass(&self, cmd: &mut tokio::process::Command) {
        self.0.pass(cmd.as_std_mut());
        cmd.args(decode_nsenter::BWRAP_NETWORK_ARGS);
    }

    /// Once bubblewrap is spawned: the listeners in its sandbox's network (none
    /// when they cannot be made: said in the log; the program then has no network).
    /// The program starts when this returns.
    pub(crate) async fn listeners(self) -> Vec<std::net::TcpListener> {
        let made = tokio::task::spawn_blocking(move || {
            self.0.listen(&[PROXY_HTTP_PORT, PROXY_SOCKS_PORT])
        })
        .await
        .map_err(std::io::Error::other)
        .and_then(|r| r);
        match made {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "a sandboxed program has no way to the network proxy: it has no network");
                Vec::new()
            }
        }
    }
}
