//! One module per part of the engine (see ../all.rs).

mod channel;
mod chat_session;
mod checkpoints;
mod loop_ask;
mod loop_session;
mod providers_anthropic;
mod providers_gemini;
mod providers_keys;
mod providers_openai;
mod sandbox;
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
mod trust_round3;
mod window_answers;
mod workspace;
