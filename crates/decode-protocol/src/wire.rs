//! The window's wire, declared once: every command the page calls (its arguments and
//! what it returns) and every event the backend pushes (its payload). From this one
//! list come the TypeScript map the page's `backend.ts` is typed by
//! (`ui/src/lib/gen/wire.ts`) and the list the shell registers and grants (a test of
//! `src-tauri` checks its handlers and `capabilities/main.json` against [`COMMANDS`]).
//! To add a command: a line here, its handler in `src-tauri/src/commands.rs`, its grant
//! in `capabilities/main.json` and `build.rs` (docs/architecture.md, "Add a command").

use ts_rs::{Config, TS};

use crate::checkpoints::{TurnCheckpoint, UndoPlan, UndoReport};
use crate::decision::{ChannelEvent, DecisionAnswer, DecisionId, PendingDecision, RuleCheck};
use crate::events::LoopEvent;
use crate::policy_ts::{ModeTs, RuleListTs};
use crate::status::{ChatStatus, Snapshot};
use crate::workspace::{
    CallCheck, KeyStatus, McpServerView, ProjectOpened, ProjectRules, ProviderChoice, ProviderName,
    ProviderSave, ProviderView, RecentProject, SessionSummary, SessionView, SettingsList,
    TrustPreview,
};

/// The Tauri channel a prompt's events stream on (`send_prompt`): not a value the
/// page builds by hand, so its TypeScript is opaque here and `backend.ts` passes it.
pub struct EventChannel;

impl TS for EventChannel {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;
    fn name(_: &Config) -> String {
        "unknown".to_string()
    }
    fn inline(cfg: &Config) -> String {
        Self::name(cfg)
    }
    fn decl(_: &Config) -> String {
        String::new()
    }
    fn decl_concrete(_: &Config) -> String {
        String::new()
    }
}

/// Nothing (a command that returns no value).
pub type Unit = ();

macro_rules! wire {
    (
        commands {
            $( $(#[doc = $doc:literal])* $name:ident ( $( $arg:ident : $aty:ty ),* ) -> $ret:ty ; )*
        }
        events {
            $( $(#[doc = $edoc:literal])* $event:ident : $ety:ty ; )*
        }
    ) => {
        /// Every command the page may call, by name (`args: null` in the TypeScript
        /// when it takes none).
        pub const COMMANDS: &[&str] = &[ $( stringify!($name) ),* ];
        /// Every event the backend pushes, by name.
        pub const EVENTS: &[&str] = &[ $( stringify!($event) ),* ];

        /// The TypeScript of the wire: `Commands` (per command its `args`, keyed as
        /// Tauri names them — camelCase — and its `result`) and `Events` (per event its
        /// payload).
        pub fn wire_ts(cfg: &Config) -> String {
            let mut out = String::from("/** Every command the page calls: its arguments and what it returns. */\nexport interface Commands {\n");
            $(
                let docs: &[&str] = &[ $( $doc ),* ];
                if !docs.is_empty() {
                    out.push_str(&format!("  /**{} */\n", docs.join("\n   *")));
                }
                let args: Vec<String> = vec![ $( format!("{}: {}", camel(stringify!($arg)), <$aty as TS>::name(cfg)) ),* ];
                let args = if args.is_empty() { "null".to_string() } else { format!("{{ {} }}", args.join("; ")) };
                out.push_str(&format!(
                    "  {}: {{ args: {}; result: {} }};\n",
                    stringify!($name),
                    args,
                    ts_result(&<$ret as TS>::name(cfg)),
                ));
            )*
            out.push_str("}\n\n/** Every event the backend pushes, with its payload. */\nexport interface Events {\n");
            $(
                let docs: &[&str] = &[ $( $edoc ),* ];
                if !docs.is_empty() {
                    out.push_str(&format!("  /**{} */\n", docs.join("\n   *")));
                }
                out.push_str(&format!("  {}: {};\n", stringify!($event), <$ety as TS>::name(cfg)));
            )*
            out.push_str("}\n");
            out
        }
    };
}

/// `on_event` → `onEvent`: Tauri's names of command arguments in JavaScript.
fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in snake.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn ts_result(name: &str) -> String {
    if name == "null" {
        "void".to_string()
    } else {
        name.to_string()
    }
}

wire! {
    commands {
        /// The active agent and mode, the agents, the project and its trust.
        get_status() -> Snapshot;
        set_mode(mode: ModeTs) -> Snapshot;
        cycle_mode() -> Snapshot;
        select_agent(name: String) -> Snapshot;
        get_chat() -> ChatStatus;
        /// The events of a resumed session, to show its history.
        get_history() -> Vec<LoopEvent>;
        /// Starts a prompt; its events stream on the channel until `done`.
        send_prompt(text: String, on_event: EventChannel) -> Unit;
        stop_prompt() -> bool;
        pending_decisions() -> Vec<PendingDecision>;
        answer_decision(id: DecisionId, answer: DecisionAnswer) -> Unit;
        check_rules(id: DecisionId, rules: Vec<String>) -> RuleCheck;
        /// Opens an http(s) link the person confirmed in their browser.
        open_link(url: String) -> Unit;
        recent_projects() -> Vec<RecentProject>;
        forget_project(path: String) -> Unit;
        /// Opens a folder; with `stop_first`, the running turn is stopped (and ended) first.
        open_project_path(path: String, stop_first: bool) -> Unit;
        /// The native folder picker; true once the folder chosen is open.
        choose_project(stop_first: bool) -> bool;
        /// A new conversation in this folder.
        new_chat(stop_first: bool) -> Unit;
        trust_preview() -> TrustPreview;
        set_trust(trusted: bool) -> TrustPreview;
        dismiss_trust() -> Unit;
        project_rules() -> ProjectRules;
        add_rule(list: RuleListTs, rule: String) -> ProjectRules;
        remove_rule(list: RuleListTs, rule: String) -> ProjectRules;
        /// Why an allow rule would let any code run (a wildcard over an interpreter,
        /// a shell or a privilege wrapper), for a warning before it is added.
        rule_warning(rule: String) -> Option<String>;
        set_settings_list(key: SettingsList, values: Vec<String>) -> ProjectRules;
        test_call(text: String) -> CallCheck;
        drop_session_rule(rule: String) -> bool;
        /// The project's MCP servers: status, tools, what each tool claims.
        mcp_servers() -> Vec<McpServerView>;
        /// Turns a server on or off: one of the person's own gets or loses
        /// `"disabled": true`; a project's is approved or refused. It starts or stops now.
        mcp_set_enabled(name: String, enabled: bool) -> Vec<McpServerView>;
        provider_settings() -> ProviderView;
        save_provider(choice: ProviderChoice) -> ProviderSave;
        key_status(provider: ProviderName) -> KeyStatus;
        set_api_key(provider: ProviderName, key: String) -> KeyStatus;
        delete_api_key(provider: ProviderName) -> KeyStatus;
        test_connection() -> String;
        list_sessions() -> Vec<SessionSummary>;
        read_session(id: String) -> SessionView;
        resume_session(id: String, stop_first: bool) -> Unit;
        start_demo() -> Unit;
        /// The turns of this chat's session that changed files (docs/checkpoints.md).
        checkpoint_turns() -> Vec<TurnCheckpoint>;
        /// What "Undo this turn" (`later_turns` false) or "Restore to here" (true) on
        /// turn `turn` would do: every file with its diff and its conflict.
        undo_plan(turn: u32, later_turns: bool) -> UndoPlan;
        /// Applies that undo; a conflict is restored only when listed in `overwrite`.
        undo_turn(turn: u32, later_turns: bool, overwrite: Vec<String>) -> UndoReport;
    }
    events {
        /// Every mode or agent change, from any surface (this window, the tray).
        status: Snapshot;
        /// Changes of the chat: usage, running, session rules, todos.
        chat: ChatStatus;
        /// Every ask, question and plan approval, and their resolution.
        decision: ChannelEvent;
        /// Another folder, session, model setup or conversation is open now.
        project: ProjectOpened;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_arguments_camel_cased() {
        let mut names = COMMANDS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
        let ts = wire_ts(&Config::new());
        assert!(
            ts.contains("send_prompt: { args: { text: string; onEvent: unknown }; result: void };"),
            "{ts}"
        );
        assert!(
            ts.contains("set_mode: { args: { mode: Mode }; result: Snapshot };"),
            "{ts}"
        );
        assert!(ts.contains("project: ProjectOpened;"), "{ts}");
    }
}
