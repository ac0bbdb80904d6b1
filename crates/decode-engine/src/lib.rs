//! Decode's engine: what runs a prompt, on top of `decode-core`.
//!
//! - [`tools`]: the tools the agent calls (each through the gate);
//! - [`mcp`]: MCP servers (stdio and streamable HTTP) whose tools go through the gate;
//! - [`sandbox`]: the bubblewrap sandbox every unapproved bash command runs in;
//! - [`net`]: names resolved once for the host policy (`web_fetch`, the proxy);
//! - [`providers`]: the model providers (Gemini, Anthropic, OpenAI-compatible, script);
//! - [`agent_loop`]: the loop that runs a prompt through model turns and gated tool calls;
//! - [`checkpoints`]: what each turn changed, and undoing it;
//! - [`channel`]: the one queue of decisions every surface answers;
//! - [`session`]: the JSONL transcripts of conversations, and resuming them;
//! - [`config`]: the app's config file and API keys (env vars, OS keyring);
//! - [`secret`]: an API key that never reaches a log, a transcript or the UI;
//! - [`session_rules`]: "allow for this session" rules, kept in memory;
//! - [`rule_check`]: checks rules a person edits before they are kept or saved;
//! - [`preview`]: the diff a write or edit would make, for the approval dialog;
//! - [`chat`]: one window's chat session: the loop, its transcript and its status;
//! - [`demo`]: the offline demo (a sample project and a script);
//! - [`workspace`]: what the window's screens around the chat read and change;
//! - [`workbench`]: one project at a time — state, chat, decisions — and every way to
//!   move it (another folder, a session, a new model setup, a new conversation).

pub mod agent_loop;
pub mod channel;
pub mod chat;
pub mod checkpoints;
pub mod config;
pub mod demo;
pub mod mcp;
pub mod net;
pub mod preview;
pub mod providers;
pub mod rule_check;
pub mod sandbox;
pub mod secret;
pub mod session;
pub mod session_rules;
pub mod tools;
pub mod workbench;
pub mod workspace;

// The core's modules, so the engine's own paths (`crate::state`, …) read as one crate.
pub(crate) use decode_core::{
    beneath, decision, fsutil, projects, running_commands, settings, state,
};
