//! The commands of the screens around the chat: the trust dialog, settings (the
//! project's rules, test a call, session rules, provider and key). One-line adapters
//! over `decode_engine::workspace`, `settings` and `trust`; a change of the model
//! setup reconnects the workbench.

use decode_core::projects::ProjectStore;
use decode_core::trust::TrustStore;
use decode_engine::chat::ChatSetup;
use decode_engine::config::{ApiKey, KeyringStore, SecretStore};
use decode_engine::providers::ProviderKind;
use decode_engine::workspace;
use decode_protocol::{
    CallCheck, ErrorKind, IpcError, KeyStatus, ProjectRules, ProviderChoice, ProviderName,
    ProviderSave, ProviderView, RuleList, SettingsList, TrustPreview,
};
use tauri::State;

use crate::state::AppState;

fn err(kind: ErrorKind, e: impl std::fmt::Display) -> IpcError {
    IpcError::new(kind, e)
}

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

// ---------------------------------------------------------------------------------
// Trust

#[tauri::command]
pub(crate) fn trust_preview(state: State<'_, AppState>) -> TrustPreview {
    let project = state.project();
    workspace::trust_preview(
        &project.active,
        &ProjectStore::open(&state.bench.dirs().data),
    )
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
    let mut store = TrustStore::open(&state.bench.dirs().data);
    if trusted {
        store.trust(&root).map_err(|e| err(ErrorKind::Project, e))?;
    } else {
        store
            .revoke(&root)
            .map_err(|e| err(ErrorKind::Project, e))?;
    }
    let projects = ProjectStore::open(&state.bench.dirs().data);
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
    ProjectStore::open(&state.bench.dirs().data)
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
    workspace::project_rules(
        &project.active,
        Some(&ProjectStore::open(&state.bench.dirs().data)),
    )
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
        if let Err(e) = ProjectStore::open(&state.bench.dirs().data)
            .record_always_allowed(&root, &[rule.to_string()])
        {
            tracing::warn!("{e}");
        }
    }
    Ok(reload(&state))
}

/// Why an allow rule would let any code run, if it would (a rule that does not parse
/// gets no warning here: adding it says what is wrong).
#[tauri::command]
pub(crate) fn rule_warning(rule: String) -> Option<String> {
    let rule = decode_policy::Rule::parse(rule.trim()).ok()?;
    decode_engine::rule_check::runner_wildcard(&rule)
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
        if let Err(e) =
            ProjectStore::open(&state.bench.dirs().data).forget_always_allowed(&root, &rule)
        {
            tracing::warn!("{e}");
        }
    }
    Ok(reload(&state))
}

/// Replaces `additionalDirectories` or `protectedBranches`.
#[tauri::command]
pub(crate) fn set_settings_list(
    state: State<'_, AppState>,
    key: SettingsList,
    values: Vec<String>,
) -> Result<ProjectRules, IpcError> {
    let root = state.project().active.project_root().to_path_buf();
    decode_core::settings::set_string_list(&root, key.key(), &values)
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
pub(crate) fn mcp_servers(state: State<'_, AppState>) -> Vec<decode_protocol::McpServerView> {
    state.project().chat.mcp().views()
}

/// Turns an MCP server on or off (docs/mcp.md) and returns the list as it is now.
#[tauri::command]
pub(crate) async fn mcp_set_enabled(
    state: State<'_, AppState>,
    name: String,
    enabled: bool,
) -> Result<Vec<decode_protocol::McpServerView>, IpcError> {
    let hub = std::sync::Arc::clone(state.project().chat.mcp());
    hub.set_enabled(&name, enabled)
        .await
        .map_err(|e| err(ErrorKind::InvalidInput, e))?;
    Ok(hub.views())
}

#[tauri::command]
pub(crate) fn drop_session_rule(state: State<'_, AppState>, rule: String) -> bool {
    state.project().chat.drop_session_rule(&rule)
}

// ---------------------------------------------------------------------------------
// Provider and key

#[tauri::command]
pub(crate) fn provider_settings(state: State<'_, AppState>) -> ProviderView {
    workspace::provider_view(
        &state.bench.dirs().config,
        &KeyringStore,
        &env,
        state.bench.overridden(),
    )
}

/// Gives the chat a new setup from the config (after the provider or key changed);
/// the current session and what was allowed for it are kept.
fn reconnect(state: &AppState) -> Result<(), IpcError> {
    if state.project().chat.running() {
        return Err(err(
            ErrorKind::Busy,
            "saved; it applies once the running turn ends and Decode reconnects (stop the turn, then save again)",
        ));
    }
    Ok(state.bench.reconnect()?)
}

#[tauri::command]
pub(crate) fn save_provider(
    state: State<'_, AppState>,
    choice: ProviderChoice,
) -> Result<ProviderSave, IpcError> {
    let has_key = |kind: ProviderKind| {
        let status = workspace::key_status(kind, &KeyringStore, &env);
        status.stored || status.env_set
    };
    match workspace::save_provider(&state.bench.dirs().config, &choice, &has_key) {
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
    reconnect(&state)?;
    Ok(ProviderSave::Saved {
        view: workspace::provider_view(
            &state.bench.dirs().config,
            &KeyringStore,
            &env,
            state.bench.overridden(),
        ),
    })
}

/// A provider that takes a key (the script provider takes none).
fn keyed(provider: ProviderName) -> Result<ProviderKind, IpcError> {
    let kind = ProviderKind::from(provider);
    if kind == ProviderKind::Script {
        return Err(err(
            ErrorKind::InvalidInput,
            "the script provider takes no key",
        ));
    }
    Ok(kind)
}

#[tauri::command]
pub(crate) fn key_status(provider: ProviderName) -> Result<KeyStatus, IpcError> {
    Ok(workspace::key_status(keyed(provider)?, &KeyringStore, &env))
}

/// Stores a key in the OS keyring (never in a file). The key is not sent back.
#[tauri::command]
pub(crate) fn set_api_key(
    state: State<'_, AppState>,
    provider: ProviderName,
    key: String,
) -> Result<KeyStatus, IpcError> {
    let kind = keyed(provider)?;
    let key = ApiKey::parse(&key).map_err(|e| err(ErrorKind::InvalidInput, e))?;
    KeyringStore
        .set(kind, &key)
        .map_err(|e| err(ErrorKind::Config, workspace::key_problem(&e)))?;
    tracing::info!(provider = kind.name(), "API key stored in the keyring");
    if let Err(e) = workspace::bind_key_host(&state.bench.dirs().config, kind) {
        tracing::warn!("could not record the key's host: {e}");
    }
    if let Err(e) = reconnect(&state) {
        tracing::warn!("{}", e.message);
    }
    Ok(workspace::key_status(kind, &KeyringStore, &env))
}

#[tauri::command]
pub(crate) fn delete_api_key(
    state: State<'_, AppState>,
    provider: ProviderName,
) -> Result<KeyStatus, IpcError> {
    let kind = keyed(provider)?;
    KeyringStore
        .delete(kind)
        .map_err(|e| err(ErrorKind::Config, workspace::key_problem(&e)))?;
    tracing::info!(provider = kind.name(), "API key removed from the keyring");
    if let Err(e) = reconnect(&state) {
        tracing::warn!("{}", e.message);
    }
    Ok(workspace::key_status(kind, &KeyringStore, &env))
}

/// One tiny request to the configured model; the one-line outcome.
#[tauri::command]
pub(crate) async fn test_connection(state: State<'_, AppState>) -> Result<String, IpcError> {
    let client = match state.bench.chat_setup() {
        ChatSetup::Ready { client, .. } => client,
        ChatSetup::Missing { problem, .. } => return Err(err(ErrorKind::NoProvider, problem)),
    };
    workspace::test_connection(client)
        .await
        .map_err(|e| err(ErrorKind::Connect, e))
}
