fn main() {
    // Every app command needs an explicit grant in capabilities/: the webview can call
    // nothing the UI does not use.
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(
        tauri_build::AppManifest::new().commands(&[
            "get_status",
            "set_mode",
            "cycle_mode",
            "select_agent",
            "get_chat",
            "get_history",
            "send_prompt",
            "stop_prompt",
            "pending_decisions",
            "answer_decision",
            "check_rules",
            "recent_projects",
            "forget_project",
            "open_project_path",
            "choose_project",
            "trust_preview",
            "set_trust",
            "dismiss_trust",
            "project_rules",
            "add_rule",
            "remove_rule",
            "set_settings_list",
            "test_call",
            "drop_session_rule",
            "provider_settings",
            "save_provider",
            "key_status",
            "set_api_key",
            "delete_api_key",
            "test_connection",
            "list_sessions",
            "read_session",
            "resume_session",
            "start_demo",
            "open_link",
        ]),
    ))
    .expect("failed to run tauri-build");
}
