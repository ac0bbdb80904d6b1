//! What the gate knows about programs, as data (docs/architecture.md,
//! "Where to add a program"): one entry per program, families in their own
//! files, read by a small interpreter.
//!
//! - `schema`: the shape of an entry (options, sub-commands, what it runs,
//!   writes and removes, where it moves, its effect, hooks, examples);
//! - the families: `wrappers`, `privilege`, `packages`, `build`, `vcs`,
//!   `forges`, `archives`, `coreutils`, `net`, `cloud`, `shells`, `launchers`,
//!   `viewers` (editors, pagers, debuggers);
//!   `variables` for the environment variables that hold commands;
//! - the interpreter: `see` (what a command runs, level by level), `node`
//!   (one entry's data applied), `writes` (where it writes, what it
//!   removes, which words are patterns), `effects` (external effects and
//!   privilege), `unknown` (a program no entry describes);
//! - `registry`: every entry by name.

mod archives;
mod awk;
mod build;
mod cloud;
mod coreutils;
mod effects;
mod forges;
mod git_stored;
mod launchers;
mod net;
mod node;
mod packages;
mod privilege;
mod read_only;
mod registry;
mod schema;
mod see;
mod shells;
mod support;
mod unknown;
mod variables;
pub(crate) mod vcs;
mod viewers;
mod wrappers;
mod writes;

pub(crate) use cloud::container_removal;
pub(crate) use coreutils::{find_removes, FIND_PATTERNS};
pub(crate) use effects::{external_effect, knows_program, might_cap};
pub(crate) use git_stored::{stored_reads, StoredReads};
pub(crate) use read_only::read_only;
pub(crate) use see::{analyse, runs_its_arguments};
pub(crate) use vcs::{git_config_write, git_subcommand, git_tree_sub};
pub(crate) use writes::{pattern_args, removal_targets, targets};

#[cfg(test)]
mod tests;
