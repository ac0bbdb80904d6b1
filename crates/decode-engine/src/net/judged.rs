//! Judged by name first (docs/network.md): a host is judged by its name alone before
//! anything reaches DNS — a deny or an ask on the name stands, and an attacker's name
//! (`secret-data.attacker.example`) is never looked up — and only a name the policy
//! lets through is resolved and judged again by the addresses it resolves to (a
//! private, loopback or metadata address asks).

use std::net::IpAddr;

use decode_policy::{Call, Decision, Tool, Verdict};

use super::{Resolved, Resolver};
use crate::state::ActiveState;

/// The host name a `net` or `web_fetch` call names, when it is a name (an address
/// is judged as written and never resolved).
pub fn host_name(call: &Call) -> Option<String> {
    let host = match call.tool {
        Tool::Net => decode_policy::net::parse_target(&call.subject)?.0,
        Tool::WebFetch => decode_policy::normalize_url(&call.subject)?
            .host_str()?
            .to_string(),
        _ => return None,
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    (bare.parse::<IpAddr>().is_err() && !bare.is_empty()).then_some(host)
}

/// What kind of non-public address `host` (an address) or one of the addresses it
/// resolved to is — loopback, private, link-local, cloud metadata… — or `None` when
/// all are public. An answer given for one kind never covers another: a name that
/// rebinds from a public address to the host's loopback, or from loopback to the
/// metadata address, asks again.
pub fn private_kind_of(host: &str, addrs: &[IpAddr]) -> Option<&'static str> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<IpAddr>()
        .ok()
        .into_iter()
        .chain(addrs.iter().copied())
        .find_map(decode_policy::net::private_kind)
}

/// Whether [`private_kind_of`] finds a non-public address.
pub fn reaches_private(host: &str, addrs: &[IpAddr]) -> bool {
    private_kind_of(host, addrs).is_some()
}

/// A call judged by name, then (when the name is allowed) by its addresses.
pub struct HostJudgement {
    pub decision: Decision,
    /// The call as finally judged (with the addresses, when it was resolved).
    pub call: Call,
    /// What the name resolved to, when it was resolved; `Err` when it did not
    /// resolve (the verdict by name stands).
    pub resolved: Option<Result<Resolved, String>>,
}

/// Judges `call` by name first, then by the addresses its host resolves to (module
/// docs). A call that names no host name is judged once, as it is.
pub async fn decide_host(active: &ActiveState, call: Call, resolver: &Resolver) -> HostJudgement {
    decide_host_with(&|c| active.decide(c), call, resolver).await
}

/// [`decide_host`] with any judge of calls (a gate in a given mode, say).
pub async fn decide_host_with(
    decide: &(dyn Fn(&Call) -> Decision + Sync),
    call: Call,
    resolver: &Resolver,
) -> HostJudgement {
    let by_name = decide(&call);
    let host = host_name(&call);
    let Some(host) = host.filter(|_| by_name.verdict == Verdict::Allow) else {
        return HostJudgement {
            decision: by_name,
            call,
            resolved: None,
        };
    };
    match resolver.resolve(&host).await {
        Ok(r) => {
            let call = call.with_addrs(r.judged.clone());
            HostJudgement {
                decision: decide(&call),
                call,
                resolved: Some(Ok(r)),
            }
        }
        Err(e) => HostJudgement {
            decision: by_name,
            call,
            resolved: Some(Err(e)),
        },
    }
}

/// [`decide_host_with`] for a surface that connects nowhere (`decode check`, the
/// hooks): the name is resolved only when `addresses_matter` — what it resolves to
/// could change the verdict (`Gate::addresses_matter`: not in bypass mode without a
/// deny or ask rule that could match an address) — and judged by name alone
/// otherwise, nothing looked up.
pub async fn decide_host_if(
    decide: &(dyn Fn(&Call) -> Decision + Sync),
    call: Call,
    resolver: &Resolver,
    addresses_matter: bool,
) -> HostJudgement {
    if !addresses_matter {
        return HostJudgement {
            decision: decide(&call),
            call,
            resolved: None,
        };
    }
    decide_host_with(decide, call, resolver).await
}

/// [`decide_host_if`] for a surface with no runtime of its own (`decode check`, the
/// hooks), with the system resolver. The resolver bounds its own lookup (a few
/// seconds); a name that does not resolve is judged by name alone.
pub fn decide_host_blocking(
    decide: &(dyn Fn(&Call) -> Decision + Sync),
    call: Call,
    addresses_matter: bool,
) -> HostJudgement {
    let by_name = |call: Call, resolved| HostJudgement {
        decision: decide(&call),
        call,
        resolved,
    };
    if host_name(&call).is_none() || !addresses_matter {
        return by_name(call, None);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let Ok(rt) = rt else {
        return by_name(call, None);
    };
    let resolver = Resolver::system();
    rt.block_on(decide_host_if(decide, call, &resolver, addresses_matter))
}
