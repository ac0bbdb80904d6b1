//! The commands of the screens around the chat: projects, the trust dialog,
//! settings (provider, key, rules, test a call, session rules), sessions and the
//! offline demo. Thin adapters over `decode_engine::workspace`, `projects`,
//! `settings`, `trust`, `session` and `demo`.

use std::path::{Path, PathBuf};

use decode_core::projects::ProjectStore;
use decode_core::trust::TrustStore;
use decode_engine::chat::ChatSetup;
use decode_engine::config::{ApiKey, KeyringStore, Overrides, SecretStore};
use decode_engine::providers::ProviderKind;
use decode_engine::session::SessionStore;
use decode_engine::workspace;
use decode_protocol::{
    CallCheck, ErrorKind, IpcError, KeyStatus, ProjectRules, ProviderChoice, ProviderSave,
    ProviderView, RecentProject, RuleList, SessionSummary, SessionView, TrustPreview,
};
use tauri::{AppHandle, Manager, State};

use crate::gui::{chat_setup, open_project, switch_project, AppState, Reload};

fn err(kind: ErrorKind, e: impl std::fmt::Display) -> IpcError {
    IpcError::new(kind, e)
}

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

// ---------------------------------------------------------------------------------
// Projects

#[tauri::command]
pub(crate) fn recent_projects(state: State<'_, AppState>) -> Vec<RecentProject> {
    ProjectStore::open(&state.dirs.data).recent()
}

#[tauri::command]
pub(crate) fn forget_project(state: State<'_, AppState>, path: String) -> Result<(), IpcError> {
    ProjectStore::open(&state.dirs.data)
        .forget(Path::new(&path))
        .map(|_| ())
        .map_err(|e| err(ErrorKind::Project, e))
}

/// Opens a folder in this window (from the recent list or a typed path).
#[tauri::command]
pub(crate) fn open_project_path(app: AppHandle, path: String) -> Result<(), IpcError> {
    let path = PathBuf::from(path.trim());
    if !path.is_dir() {
        return Err(err(
            ErrorKind::Project,
            format!(
                "{} is not a folder (it may have been moved or deleted)",
                path.display()
            ),
        ));
    }
    open_project(&app, &path, Reload::Caller).map_err(|e| err(ErrorKind::Project, e))
}

/// Shows the native folder picker and opens the folder chosen; false when the
/// person cancelled.
#[tauri::command]
pub(crate) async fn choose_project(app: AppHandle) -> Result<bool, IpcError> {
    let (exe, start) = {
        let state = app.state::<AppState>();
        let root = state.project().active.project_root().to_path_buf();
        let start = root.parent().map(Path::to_path_buf).unwrap_or(root);
        let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("decode-window"));
        (exe, start)
    };
    if state_running(&app) {
        return Err(err(
            ErrorKind::Busy,
            "a turn is running in this project: stop it first, then open another folder",
        ));
    }
    let chosen = crate::native::pick_folder(&exe, &start)
        .await
        .map_err(|e| {
            err(
                ErrorKind::Other,
                format!("the folder picker could not be shown: {}", e.0),
            )
        })?;
    match chosen {
        Some(dir) => {
            open_project(&app, &dir, Reload::Caller).map_err(|e| err(ErrorKind::Project, e))?;
            Ok(true)
        }
        None => Ok(false),
    }
}

fn state_running(app: &AppHandle) -> bool {
    app.state::<AppState>().project().chat.running()
}

// ---------------------------------------------------------------------------------
// Trust

#[tauri::command]
pub(crate) fn trust_preview(state: State<'_, AppState>) -> TrustPreview {
    let project = state.project();
    workspace::trust_preview(&project.active, &ProjectStore::open(&state.dirs.data))
}

/// The person's answer to the trust dialog (or the switch in settings): trust the
/// folder, or leave (or make) it untrusted. The gate reloads at once.
#[tauri::command]
pub(crate) fn set_trust(
    state: State<'_, AppState>,
    trusted: bool,
) -> Result<TrustPreview, IpcError> {
    let project = state.project();
    let root = project.active.project_root().to_path_buf();
    let mut store = TrustStore::open(&state.dirs.data);
    if trusted {
        store.trust(&root).map_err(|e| err(ErrorKind::Project, e))?;
    } else {
        store
            .revoke(&root)
            .map_err(|e| err(ErrorKind::Project, e))?;
    }
    let projects = ProjectStore::open(&state.dirs.data);
    if let Err(e) = projects.mark_trust_asked(&root) {
        tracing::warn!("{e}");
    }
    for d in project.active.set_trusted(trusted) {
        tracing::warn!("{d}");
    }
    Ok(workspace::trust_preview(&project.active, &projects))
}

/// "Not now": the folder stays untrusted and the dialog is not shown again for it.
#[tauri::command]
pub(crate) fn dismiss_trust(state: State<'_, AppState>) -> Result<(), IpcError> {
    let root = state.project().active.project_root().to_path_buf();
    ProjectStore::open(&state.dirs.data)
        .mark_trust_asked(&root)
        .map_err(|e| err(ErrorKind::Project, e))
}

// ---------------------------------------------------------------------------------
// Rules

#[tauri::command]
pub(crate) fn project_rules(state: State<'_, AppState>) -> ProjectRules {
    // Read again, so the screen shows what the gate uses from now on (the file may
    // have been changed outside Decode).
    reload(&state)
}

fn reload(state: &AppState) -> ProjectRules {
    let project = state.project();
    for d in project.active.reload_settings() {
        tracing::warn!("{d}");
    }
    workspace::project_rules(&project.active, Some(&ProjectStore::open(&state.dirs.data)))
}

#[tauri::command]
pub(crate) fn add_rule(
    state: State<'_, AppState>,
    list: RuleList,
    rule: String,
) -> Result<ProjectRules, IpcError> {
    let root = state.project().active.project_root().to_path_buf();
    let rule = rule.trim();
    if rule.is_empty() {
        return Err(err(
            ErrorKind::InvalidInput,
            "type a rule, e.g. bash(npm test)",
        ));
    }
    decode_core::settings::add_rule(&root, list.name(), rule)
        .map_err(|e| err(ErrorKind::InvalidInput, e))?;
    if list == RuleList::Allow {
        // A rule the person saved through Decode: it counts at once, even in an
        // untrusted project.
        if let Err(e) =
            ProjectStore::open(&state.dirs.data).record_always_allowed(&root, &[rule.to_string()])
        {
            tracing::warn!("{e}");
        }
    }
    Ok(reload(&state))
}

#[tauri::command]
pub(crate) fn remove_rule(
    state: State<'_, AppState>,
    list: RuleList,
    rule: String,
) -> Result<ProjectRules, IpcError> {
    let root = state.project().active.project_root().to_path_buf();
    decode_core::settings::remove_rule(&root, list.name(), &rule)
        .map_err(|e| err(ErrorKind::InvalidInput, e))?;
    if list == RuleList::Allow {
        if let Err(e) = ProjectStore::open(&state.dirs.data).forget_always_allowed(&root, &rule) {
            tracing::warn!("{e}");
        }
    }
    Ok(reload(&state))
}

/// Replaces `additionalDirectories` or `protectedBranches`.
#[tauri::command]
pub(crate) fn set_settings_list(
    state: State<'_, AppState>,
    key: String,
    values: Vec<String>,
) -> Result<ProjectRules, IpcError> {
    let root = state.project().active.project_root().to_path_buf();
    decode_core::settings::set_string_list(&root, &key, &values)
        .map_err(|e| err(ErrorKind::InvalidInput, e))?;
    Ok(reload(&state))
}

#[tauri::command]
pub(crate) fn test_call(state: State<'_, AppState>, text: String) -> Result<CallCheck, IpcError> {
    let project = state.project();
    let active = &project.active;
    workspace::test_call(active, &text, |d, tool, subject| {
        decode_cli::commands::check::human(d, tool.name(), subject, active)
    })
    .map_err(|e| err(ErrorKind::InvalidInput, e))
}

#[tauri::command]
pub(crate) fn drop_session_rule(state: State<'_, AppState>, rule: String) -> bool {
    state.project().chat.drop_session_rule(&rule)
}

// ---------------------------------------------------------------------------------
// Provider and key

fn overridden(state: &AppState) -> bool {
    let p = &state.provider;
    p.provider.is_some() || p.model.is_some() || p.base_url.is_some() || p.script.is_some()
}

#[tauri::command]
pub(crate) fn provider_settings(state: State<'_, AppState>) -> ProviderView {
    workspace::provider_view(&state.dirs.config, &KeyringStore, &env, overridden(&state))
}

/// Gives the chat a new setup from the config (after the provider or key changed);
/// the current session and what was allowed for it are kept.
fn reconnect(app: &AppHandle) -> Result<(), IpcError> {
    let state = app.state::<AppState>();
    let project = state.project();
    if project.chat.running() {
        return Err(err(
            ErrorKind::Busy,
            "saved; it applies once the running turn ends and Decode reconnects (stop the turn, then save again)",
        ));
    }
    let setup = chat_setup(&state.provider, state.max_turns, &state.dirs);
    let root = project.active.project_root().to_path_buf();
    let session = project.chat.session_id();
    drop(project);
    switch_project(app, &root, setup, session.as_deref(), Reload::Chat)
        .map_err(|e| err(ErrorKind::Session, e))
}

#[tauri::command]
pub(crate) fn save_provider(
    app: AppHandle,
    choice: ProviderChoice,
) -> Result<ProviderSave, IpcError> {
    let state = app.state::<AppState>();
    let has_key = |kind: ProviderKind| {
        let status = workspace::key_status(kind, &KeyringStore, &env);
        status.stored || status.env_set
    };
    match workspace::save_provider(&state.dirs.config, &choice, &has_key) {
        Ok(()) => {}
        Err(workspace::SaveProviderError::KeyHost {
            provider,
            host,
            bound,
        }) => {
            return Ok(ProviderSave::ConfirmKeyHost {
                provider,
                host,
                bound,
            })
        }
        Err(e) => return Err(err(ErrorKind::Config, e)),
    }
    reconnect(&app)?;
    Ok(ProviderSave::Saved {
        view: workspace::provider_view(&state.dirs.config, &KeyringStore, &env, overridden(&state)),
    })
}

fn kind_of(provider: &str) -> Result<ProviderKind, IpcError> {
    let kind = provider
        .parse::<ProviderKind>()
        .map_err(|e| err(ErrorKind::InvalidInput, e))?;
    if kind == ProviderKind::Script {
        return Err(err(
            ErrorKind::InvalidInput,
            "the script provider takes no key",
        ));
    }
    Ok(kind)
}

#[tauri::command]
pub(crate) fn key_status(provider: String) -> Result<KeyStatus, IpcError> {
    Ok(workspace::key_status(
        kind_of(&provider)?,
        &KeyringStore,
        &env,
    ))
}

/// Stores a key in the OS keyring (never in a file). The key is not sent back.
#[tauri::command]
pub(crate) fn set_api_key(
    app: AppHandle,
    provider: String,
    key: String,
) -> Result<KeyStatus, IpcError> {
    let kind = kind_of(&provider)?;
    let key = ApiKey::parse(&key).map_err(|e| err(ErrorKind::InvalidInput, e))?;
    KeyringStore
        .set(kind, &key)
        .map_err(|e| err(ErrorKind::Config, workspace::key_problem(&e)))?;
    tracing::info!(provider = kind.name(), "API key stored in the keyring");
    let state = app.state::<AppState>();
    if let Err(e) = workspace::bind_key_host(&state.dirs.config, kind) {
        tracing::warn!("could not record the key's host: {e}");
    }
    if let Err(e) = reconnect(&app) {
        tracing::warn!("{}", e.message);
    }
    Ok(workspace::key_status(kind, &KeyringStore, &env))
}

#[tauri::command]
pub(crate) fn delete_api_key(app: AppHandle, provider: String) -> Result<KeyStatus, IpcError> {
    let kind = kind_of(&provider)?;
    KeyringStore
        .delete(kind)
        .map_err(|e| err(ErrorKind::Config, workspace::key_problem(&e)))?;
    tracing::info!(provider = kind.name(), "API key removed from the keyring");
    if let Err(e) = reconnect(&app) {
        tracing::warn!("{}", e.message);
    }
    Ok(workspace::key_status(kind, &KeyringStore, &env))
}

/// One tiny request to the configured model; the one-line outcome.
#[tauri::command]
pub(crate) async fn test_connection(app: AppHandle) -> Result<String, IpcError> {
    let client = {
        let state = app.state::<AppState>();
        let overrides = Overrides {
            provider: state
                .provider
                .provider
                .as_deref()
                .and_then(|p| p.parse().ok()),
            model: state.provider.model.clone(),
            base_url: state.provider.base_url.clone(),
            script: state.provider.script.clone(),
            max_turns: state.max_turns,
        };
        match ChatSetup::resolve(&state.dirs.config, &overrides, &env, &KeyringStore) {
            ChatSetup::Ready { client, .. } => client,
            ChatSetup::Missing { problem } => return Err(err(ErrorKind::NoProvider, problem)),
        }
    };
    workspace::test_connection(client)
        .await
        .map_err(|e| err(ErrorKind::Connect, e))
}

// ---------------------------------------------------------------------------------
// Sessions

#[tauri::command]
pub(crate) fn list_sessions(state: State<'_, AppState>) -> Vec<SessionSummary> {
    let project = state.project();
    let current = project.chat.session_id();
    workspace::sessions_of(
        &SessionStore::new(&state.dirs.data),
        project.active.project_root(),
        current.as_deref(),
    )
}

/// A saved session's events, read as far as they are readable (without locking or
/// changing it).
#[tauri::command]
pub(crate) fn read_session(
    state: State<'_, AppState>,
    id: String,
) -> Result<SessionView, IpcError> {
    SessionStore::new(&state.dirs.data)
        .read(&id)
        .map(|(_, events, warnings)| SessionView {
            id,
            events,
            warnings,
        })
        .map_err(|e| err(ErrorKind::Session, e))
}

/// Continues a saved session in this window, as `decode run --resume` does.
#[tauri::command]
pub(crate) fn resume_session(app: AppHandle, id: String) -> Result<(), IpcError> {
    let state = app.state::<AppState>();
    let (header, _, _) = SessionStore::new(&state.dirs.data)
        .read(&id)
        .map_err(|e| err(ErrorKind::Session, e))?;
    let setup = chat_setup(&state.provider, state.max_turns, &state.dirs);
    switch_project(&app, &header.project, setup, Some(&id), Reload::Caller)
        .map_err(|e| err(ErrorKind::Session, e))
}

// ---------------------------------------------------------------------------------
// The offline demo

/// Opens a fresh copy of the sample project with the script provider (no key, no
/// network). The demo folder is Decode's own, so it is trusted.
#[tauri::command]
pub(crate) fn start_demo(app: AppHandle) -> Result<(), IpcError> {
    let state = app.state::<AppState>();
    let base = decode_engine::demo::base_dir(&state.dirs.home, |k| std::env::var_os(k));
    let (project, script) =
        decode_engine::demo::create(&base).map_err(|e| err(ErrorKind::Project, e))?;
    TrustStore::open(&state.dirs.data)
        .trust(&project)
        .map_err(|e| err(ErrorKind::Project, e))?;
    if let Err(e) = ProjectStore::open(&state.dirs.data).mark_trust_asked(&project) {
        tracing::warn!("{e}");
    }
    let overrides = Overrides {
        provider: Some(ProviderKind::Script),
        script: Some(script),
        max_turns: state.max_turns,
        ..Overrides::default()
    };
    let setup = ChatSetup::resolve(&state.dirs.config, &overrides, &env, &KeyringStore);
    switch_project(&app, &project, setup, None, Reload::Caller)
        .map_err(|e| err(ErrorKind::Project, e))
}
