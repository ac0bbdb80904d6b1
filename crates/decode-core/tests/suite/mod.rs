//! One module per part of the core (see ../all.rs).

mod agents;
mod hostile_files;
mod mcp;
mod settings;
mod state;
