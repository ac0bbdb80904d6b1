//! Spec tables, bypass classes, round-2 classes, the bash oracle and the invariants.

mod bypasses;
mod enclosing;
mod invariants;
mod levels;
mod options;
mod oracle;
mod review2;
mod round2;
mod round3;
mod round4;
mod spec;
