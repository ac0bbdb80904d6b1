//! The command line, run as a person runs it (one test binary: linked once).

mod common;
mod suite;
