//! Spec tables, bypass classes, round-2 classes, the bash oracle and the invariants.

mod bypasses;
mod enclosing;
mod invariants;
mod layout;
mod levels;
mod mcp;
mod net;
mod options;
mod oracle;
mod protected;
mod read_only;
mod review2;
mod round2;
mod round3;
mod round4;
mod round5;
mod round6;
mod round7;
mod rule_spelling;
mod spec;
mod stored;
