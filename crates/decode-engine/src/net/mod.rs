//! The network of sandboxed commands and `web_fetch` (docs/network.md).
//!
//! - [`Resolver`], [`Pins`]: names resolved once; the addresses the gate judged are
//!   the ones connected to;
//! - [`proxy`]: the proxy a sandboxed command's connections go through (HTTP
//!   `CONNECT`, plain HTTP, SOCKS5 `CONNECT`), each destination judged by the host
//!   policy.

pub mod proxy;
mod resolve;

pub use proxy::{GateJudge, Judge, NetEvent, NetVerdict, Proxy};
pub use resolve::{Pins, Resolved, Resolver, TEST_HOSTS_VAR};
