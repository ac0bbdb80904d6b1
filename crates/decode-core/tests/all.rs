//! The engine's integration tests, one module per part (one test binary: linked once).
//! `dirs` and `config` stay binaries of their own: they change process-wide state
//! (environment variables, keyring's default store).

mod fake_model;
mod suite;
mod tools_support;
