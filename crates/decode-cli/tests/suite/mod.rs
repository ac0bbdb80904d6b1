//! One module per subcommand family.

mod cli;
mod hook_cli;
mod levels_cli;
mod mcp_cli;
mod real_clients;
mod run_cli;
mod sandbox_cli;
mod terminal;
mod tool_cli;
mod undo_cli;
