//! Helpers shared by this crate's integration tests.
pub(crate) mod oracle;
