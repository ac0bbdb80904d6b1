//! Support for Decode's cross-crate and end-to-end tests: temp projects with an
//! isolated home, and a driver for the real window (tauri-driver + WebKitWebDriver).

pub mod desktop;
pub mod fake_openai;
pub mod project;
pub mod window;
