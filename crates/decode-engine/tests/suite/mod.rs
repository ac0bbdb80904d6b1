//! One module per part of the engine (see ../all.rs).

mod as_users;
mod channel;
mod chat_session;
mod loop_ask;
mod loop_session;
mod providers_anthropic;
mod providers_gemini;
mod providers_openai;
mod sandbox;
mod sandbox_bounds;
mod sandbox_work;
mod session;
mod tool_races;
mod tools_bash;
mod tools_call_tool;
mod tools_control;
mod tools_edit;
mod tools_glob;
mod tools_grep;
mod tools_past_the_gate;
mod tools_read;
mod tools_web_fetch;
mod tools_write;
mod window_answers;
mod workspace;
