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
        ]),
    ))
    .expect("failed to run tauri-build");
}
