//! The window-less subcommands of SPEC §10. Each is a thin adapter: parse, call
//! `decode-core` / `decode-policy`, print.

pub mod agents;
pub mod check;
pub mod trust;
