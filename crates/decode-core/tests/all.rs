//! The core's integration tests, one module per part (one test binary: linked once).
//! `dirs` stays a binary of its own: it changes process-wide state (environment
//! variables).

mod suite;
