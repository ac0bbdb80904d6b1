//! The gate's integration tests, one module per concern (one test binary: linked once).

mod common;
mod suite;
mod support;
