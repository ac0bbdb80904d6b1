fn main() {
    // Every app command needs an explicit grant in capabilities/: the webview can call
    // nothing the UI does not use.
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(
        tauri_build::AppManifest::new().commands(&[
            "get_status",
            "set_mode",
            "cycle_mode",
            "select_agent",
        ]),
    ))
    .expect("failed to run tauri-build");
}
