//! The engine's integration tests, one module per part (one test binary: linked once).
//! `config` stays a binary of its own: it changes process-wide state (keyring's
//! default store).

mod fake_model;
mod suite;
mod tools_support;
