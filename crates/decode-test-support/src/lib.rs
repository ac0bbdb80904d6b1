//! Test support shared by the workspace's suites (see this crate's README): a
//! temporary project beside an isolated home ([`TempProject`]) and the model
//! providers' streaming wire formats ([`wire`]).

mod project;
pub mod wire;

pub use project::TempProject;
