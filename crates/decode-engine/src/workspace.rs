//! What the window's screens around the chat read and change (docs/window.md,
//! "Projects, trust and settings"): the trust dialog's preview of what a folder would
//! grant itself, the rules the gate uses with their sources, the provider part of the
//! app's config and its key, "test a call", "test connection" and the saved sessions.
//!
//! Everything here is plain engine code (no window library): the window's commands
//! are thin calls into it, and the same functions are tested without a window.

use std::path::Path;
use std::time::Duration;

use decode_policy::{Call, Rule, Tool};
use decode_protocol::{
    AgentGrant, CallCheck, DirectoryGrant, HookGrant, KeyStatus, McpGrant, Message, ProjectRules,
    ProviderChoice, ProviderView, RuleEntry, RuleList, RuleSource, SessionSummary, TrustPreview,
};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::config::{self, Config, KeyError, SecretStore};
use crate::fsutil;
use crate::projects::ProjectStore;
use crate::providers::{self, ModelEvent, ModelRequest, ProviderKind};
use crate::session::SessionStore;
use crate::settings::Settings;
use crate::state::ActiveState;
use decode_core::Catalog;

fn entries(
    list: RuleList,
    rules: &[String],
    source: RuleSource,
    agent: Option<(&str, Option<String>)>,
) -> Vec<RuleEntry> {
    rules
        .iter()
        .map(|rule| RuleEntry {
            list,
            rule: rule.clone(),
            source,
            agent: agent.as_ref().map(|(name, _)| name.to_string()),
            agent_file: agent.as_ref().and_then(|(_, file)| file.clone()),
            always_allowed: false,
            ignored: Rule::parse(rule)
                .err()
                .map(|e| format!("does not parse: {e}")),
        })
        .collect()
}

/// The rules the gate uses in `active`'s project, each with its source: the
/// project's settings file (editable; read-only with the parse error when the file is
/// malformed) and the active agent's frontmatter. Rules "always allow" saved (as
/// recorded in `store`) are marked; allow rules an untrusted project grants itself are
/// marked as ignored.
pub fn project_rules(active: &ActiveState, store: Option<&ProjectStore>) -> ProjectRules {
    let root = active.project_root();
    let (settings, warnings) = Settings::load(root);
    let trusted = active.trusted();
    let agent = active.agent();
    let always = store.map(|s| s.always_allowed(root)).unwrap_or_default();
    let p = &settings.permissions;
    let mut rules = Vec::new();
    rules.extend(entries(
        RuleList::Allow,
        &p.allow,
        RuleSource::Project,
        None,
    ));
    rules.extend(entries(RuleList::Ask, &p.ask, RuleSource::Project, None));
    rules.extend(entries(RuleList::Deny, &p.deny, RuleSource::Project, None));
    // The other levels (docs/permissions.md, "Settings levels").
    let levels = active.levels();
    for (source, s) in [
        (RuleSource::Managed, &levels.managed),
        (RuleSource::User, &levels.user),
        (RuleSource::Local, &levels.local),
    ] {
        let p = &s.permissions;
        rules.extend(entries(RuleList::Allow, &p.allow, source, None));
        rules.extend(entries(RuleList::Ask, &p.ask, source, None));
        rules.extend(entries(RuleList::Deny, &p.deny, source, None));
    }
    let managed_only = levels.managed.allow_managed_rules_only;
    for r in &mut rules {
        if r.list != RuleList::Allow {
            continue;
        }
        let project_level = matches!(r.source, RuleSource::Project | RuleSource::Local);
        if project_level {
            r.always_allowed = always.contains(&r.rule);
        }
        if managed_only && r.source != RuleSource::Managed {
            r.ignored.get_or_insert_with(|| {
                "the managed settings allow only their own allow rules".into()
            });
        }
        // A rule the person saved through Decode counts at once.
        if project_level && !trusted && r.ignored.is_none() && !r.always_allowed {
            r.ignored = Some("the project is not trusted: its allow rules are ignored".into());
        }
    }
    let a = &agent.rules;
    let file = agent.source.path().map(|p| p.display().to_string());
    let name = Some((agent.name.as_str(), file));
    let mut agent_rules = Vec::new();
    agent_rules.extend(entries(
        RuleList::Allow,
        &a.allow,
        RuleSource::Agent,
        name.clone(),
    ));
    agent_rules.extend(entries(
        RuleList::Ask,
        &a.ask,
        RuleSource::Agent,
        name.clone(),
    ));
    agent_rules.extend(entries(RuleList::Deny, &a.deny, RuleSource::Agent, name));
    if managed_only {
        for r in agent_rules.iter_mut().filter(|r| r.list == RuleList::Allow) {
            r.ignored.get_or_insert_with(|| {
                "the managed settings allow only their own allow rules".into()
            });
        }
    }
    if !trusted && agent.from_project() {
        for r in agent_rules.iter_mut().filter(|r| r.list == RuleList::Allow) {
            r.ignored.get_or_insert_with(|| {
                "the project is not trusted: its agents' allow rules are ignored".into()
            });
        }
    }
    rules.extend(agent_rules);
    ProjectRules {
        settings_file: settings.path.display().to_string(),
        problem: warnings.first().map(|w| w.to_string()),
        trusted,
        agent: agent.name.clone(),
        rules,
        additional_directories: settings.additional_directories.clone(),
        protected_branches: settings.protected_branches.clone(),
    }
}

/// What the trust dialog shows for `active`'s project: what trusting it would let the
/// folder grant itself (the allow rules of its shared and local settings files,
/// `additionalDirectories`, its own agents' modes and allow rules, the hooks of its
/// shared and local files) and what applies either way (their deny and ask rules).
pub fn trust_preview(active: &ActiveState, store: &ProjectStore) -> TrustPreview {
    let root = active.project_root();
    let (settings, warnings) = Settings::load(root);
    let hooks = project_hooks(root, &settings);
    let catalog = Catalog::load(root);
    let agents = catalog
        .agents()
        .iter()
        .filter(|a| a.from_project())
        .map(|a| AgentGrant {
            name: a.name.clone(),
            file: a
                .source
                .path()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            mode: a.mode.name().to_string(),
            allow: a.rules.allow.clone(),
        })
        .collect();
    let home = active.home();
    let additional_directories = settings
        .additional_directories
        .iter()
        .filter(|d| !d.trim().is_empty())
        .map(|d| directory_grant(root, home, d))
        .collect();
    let mut p = settings.permissions;
    // The local file's rules are the folder's too (a repository can ship one): its
    // allow rules are granted by trusting, its deny and ask rules apply either way.
    let (local, local_warnings) =
        Settings::load_file(&decode_core::settings::local_settings_path(root));
    let add = |to: &mut Vec<String>, from: &[String]| {
        for r in from {
            if !to.contains(r) {
                to.push(r.clone());
            }
        }
    };
    // Those the person saved through Decode count already: trusting grants nothing new.
    let saved = active.saved_local_rules();
    let granted: Vec<String> = local
        .permissions
        .allow
        .iter()
        .filter(|r| !saved.contains(r))
        .cloned()
        .collect();
    add(&mut p.allow, &granted);
    add(&mut p.ask, &local.permissions.ask);
    add(&mut p.deny, &local.permissions.deny);
    let problem = warnings
        .first()
        .or(local_warnings.first())
        .map(|w| w.to_string());
    let mcp_servers = mcp_grants(active);
    TrustPreview {
        project: root.display().to_string(),
        trusted: active.trusted(),
        asked_before: store.trust_asked(root),
        allow_rules: p.allow,
        additional_directories,
        agents,
        mcp_servers,
        hooks,
        deny_rules: p.deny,
        ask_rules: p.ask,
        links: permission_links(root),
        problem,
    }
}

/// The project's MCP servers with the person's answer for each (docs/mcp.md).
fn mcp_grants(active: &ActiveState) -> Vec<McpGrant> {
    use crate::mcp::approvals::{Approval, Approvals};
    use crate::mcp::config::{self, Scope};
    let root = active.project_root();
    let config_dir = decode_core::mcp::user_config_dir(active.home());
    let approvals = active.data_dir().map(Approvals::open);
    config::load(&config_dir, root)
        .servers
        .into_iter()
        .filter(|s| matches!(s.scope, Scope::Project { .. }))
        .map(|s| {
            let approval = match approvals.as_ref().map(|a| a.status(root, &s)) {
                Some(Approval::Approved) => "approved",
                Some(Approval::Refused) => "refused",
                Some(Approval::Unanswered { changed: true }) => "changed",
                _ => "unanswered",
            };
            McpGrant {
                name: s.name.clone(),
                file: s.scope.file().display().to_string(),
                command_line: s.command_line(),
                approval: approval.into(),
            }
        })
        .collect()
}

/// The hooks a project's shared settings file (`settings`, already read) and its
/// local file would run once the project is trusted, in the order they run.
pub fn project_hooks(root: &Path, settings: &Settings) -> Vec<HookGrant> {
    let (local, _) = Settings::load_file(&decode_core::settings::local_settings_path(root));
    let mut out = Vec::new();
    for (file, s) in [
        (".decode/settings.json", settings),
        (".decode/settings.local.json", &local),
    ] {
        for (event, list) in [
            ("preToolUse", &s.pre_tool_hooks),
            ("postToolUse", &s.post_tool_hooks),
        ] {
            out.extend(list.iter().map(|h| HookGrant {
                event: event.to_string(),
                matcher: h.matcher.clone(),
                command: h.command.clone(),
                file: file.to_string(),
            }));
        }
    }
    out
}

/// An `additionalDirectories` entry as the gate would use it, with what deserves a
/// second look.
fn directory_grant(root: &Path, home: &Path, written: &str) -> DirectoryGrant {
    let resolved = decode_policy::paths::extra_dir(root, home, written);
    let home_canon = home.canonicalize().unwrap_or_else(|_| home.to_path_buf());
    let lexical = decode_policy::paths::lexical(
        root,
        &decode_policy::paths::expand_home(written.trim(), home),
    );
    let warning = if resolved == Path::new("/") {
        Some("the whole file system".to_string())
    } else if home.starts_with(&resolved) || home_canon.starts_with(&resolved) {
        Some("your whole home folder".to_string())
    } else if lexical != resolved {
        Some(format!("through a link, to {}", resolved.display()))
    } else {
        None
    };
    DirectoryGrant {
        written: written.to_string(),
        resolved: resolved.display().to_string(),
        warning,
    }
}

/// The permission and agent files (and their folders) of the project that are links:
/// they are read from where they point. `name → target`, names relative to the root.
fn permission_links(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut look = |rel: &Path| {
        let path = root.join(rel);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            out.push(format!(
                "{} → {}",
                rel.display(),
                decode_policy::paths::resolve(&path).display()
            ));
        }
    };
    for rel in [
        ".decode",
        ".decode/settings.json",
        ".decode/agents",
        ".claude",
        ".claude/agents",
    ] {
        look(Path::new(rel));
    }
    for dir in [".decode/agents", ".claude/agents"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut names: Vec<_> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
            .map(|e| Path::new(dir).join(e.file_name()))
            .take(256)
            .collect();
        names.sort();
        for n in names {
            look(&n);
        }
    }
    out
}

/// "Test a call": `text` is a tool name, a space and the subject (`bash git push
/// origin main`); the answer is the gate's decision for the current agent and mode,
/// and the text `decode check` prints for it.
pub fn test_call(
    active: &ActiveState,
    text: &str,
    describe: impl Fn(&decode_policy::Decision, Tool, &str) -> String,
) -> Result<CallCheck, String> {
    let text = text.trim_start();
    let (name, subject) = match text.split_once(char::is_whitespace) {
        Some((n, s)) => (n, s.trim_start()),
        None => (text, ""),
    };
    if name.is_empty() {
        return Err("type a tool and its subject, e.g. `bash git push origin main`".into());
    }
    let tool = Tool::from_name(name).ok_or_else(|| {
        format!(
            "`{name}` is not a tool; the tools are {}",
            Tool::ALL
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    let decision = active.decide(&Call::new(tool, subject));
    let text = describe(&decision, tool, subject);
    Ok(CallCheck { decision, text })
}

/// The provider part of the config in `config_dir`, and the chosen provider's key
/// status (the key itself never leaves the store).
pub fn provider_view(
    config_dir: &Path,
    store: &dyn SecretStore,
    env: &dyn Fn(&str) -> Option<String>,
    overridden: bool,
) -> ProviderView {
    let path = Config::path_in(config_dir);
    let (config, problem) = match Config::load(config_dir) {
        Ok((c, _)) => (c, None),
        Err(e) => (Config::default(), Some(e.to_string())),
    };
    ProviderView {
        config_file: path.display().to_string(),
        provider: config.provider.map(Into::into),
        model: config.model.clone(),
        base_url: config.base_url.clone(),
        context_tokens: config.context_tokens.map(|t| t as u64),
        problem,
        overridden,
        key: config
            .provider
            .filter(|k| *k != ProviderKind::Script)
            .map(|k| key_status(k, store, env)),
    }
}

/// Whether a key for `kind` is stored, whether its environment variable is set, and
/// why the keyring cannot be used when it cannot.
pub fn key_status(
    kind: ProviderKind,
    store: &dyn SecretStore,
    env: &dyn Fn(&str) -> Option<String>,
) -> KeyStatus {
    let var = kind.env_var().unwrap_or(config::DECODE_API_KEY);
    let env_set = env(var).is_some_and(|v| !v.trim().is_empty())
        || env(config::DECODE_API_KEY).is_some_and(|v| !v.trim().is_empty());
    let (stored, problem) = match store.get(kind) {
        Ok(k) => (k.is_some(), None),
        Err(e) => (false, Some(key_problem(&e))),
    };
    KeyStatus {
        provider: kind.name().to_string(),
        stored,
        env_var: Some(var.to_string()),
        env_set,
        problem,
    }
}

/// One sentence for a keyring failure, naming the environment variables.
pub fn key_problem(e: &KeyError) -> String {
    match e {
        KeyError::Unavailable { var, .. } => format!(
            "There is no usable Secret Service (system keyring) here, so Decode cannot store the key: set {var} (or DECODE_API_KEY) in the environment that starts Decode instead."
        ),
        KeyError::Failed { .. } => {
            let mut s = e.to_string();
            s.push('.');
            s[..1].to_uppercase() + &s[1..]
        }
    }
}

/// Why the provider settings were not saved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SaveProviderError {
    /// A value that cannot be used, or a file that cannot be read or written.
    #[error("{0}")]
    Invalid(String),
    /// The stored key would be sent to a host it was not set up for: the person must
    /// confirm that host first (`ProviderChoice::confirm_key_host`).
    #[error(
        "Your {provider} API key would be sent to {host}, not to {bound} where it was set \
         up. Confirm that {host} may receive your key, or change the URL back."
    )]
    KeyHost {
        provider: String,
        host: String,
        bound: String,
    },
}

impl From<String> for SaveProviderError {
    fn from(s: String) -> SaveProviderError {
        SaveProviderError::Invalid(s)
    }
}

/// `host[:port]` of a URL (the port only when it is not the scheme's default).
pub fn url_host(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    let host = url.host_str()?.to_ascii_lowercase();
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// Writes the provider fields to the config file in `config_dir`, keeping every other
/// key (known or not) and the key order; `None` or an empty text removes a field. The
/// write is atomic; a malformed file is an error and is left as it is.
///
/// `has_key(kind)` says whether a key for that provider is stored or in the
/// environment: a base URL that would send it to another host than the one it was
/// last confirmed for is refused ([`SaveProviderError::KeyHost`]) unless the choice
/// confirms that host, which is then recorded.
pub fn save_provider(
    config_dir: &Path,
    choice: &ProviderChoice,
    has_key: &dyn Fn(ProviderKind) -> bool,
) -> Result<(), SaveProviderError> {
    let provider: Option<ProviderKind> = choice.provider.map(Into::into);
    let base_url = choice
        .base_url
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty());
    if let Some(u) = base_url {
        let parsed = reqwest::Url::parse(u).map_err(|e| format!("`{u}` is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("`{u}` is not an http or https URL").into());
        }
    }
    edit_config(config_dir, |old, root| {
        let key_host = confirmed_key_host(old, provider, base_url, choice, has_key)?;
        let mut put = |key: &str, value: Option<Value>| match value {
            Some(v) => {
                root.insert(key.to_string(), v);
            }
            None => {
                root.shift_remove(key);
            }
        };
        put("provider", provider.map(|p| Value::from(p.name())));
        put(
            "model",
            choice
                .model
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(Value::from),
        );
        put("baseUrl", base_url.map(Value::from));
        put("contextTokens", choice.context_tokens.map(Value::from));
        if let Some((kind, host)) = key_host {
            record_key_host(root, kind, host);
        }
        Ok(())
    })?;
    tracing::info!(dir = %config_dir.display(), "provider settings saved");
    Ok(())
}

/// A key was just stored for `kind`: it is set up for the host the settings show for
/// that provider now (the configured base URL when `kind` is the configured provider,
/// else its default host), which is recorded so that a later change of the URL asks.
pub fn bind_key_host(config_dir: &Path, kind: ProviderKind) -> Result<(), String> {
    edit_config(config_dir, |old, root| {
        let url = match (old.provider, old.base_url.as_deref()) {
            (Some(k), Some(u)) if k == kind => u.to_string(),
            _ => kind.default_base_url().to_string(),
        };
        let Some(host) = url_host(&url) else {
            return Ok(());
        };
        let default = url_host(kind.default_base_url());
        let recorded = old.key_hosts.get(kind.name()).cloned().or(default);
        if recorded.as_deref() != Some(host.as_str()) {
            record_key_host(root, kind, host);
        }
        Ok(())
    })
    .map_err(|e| e.to_string())
}

fn record_key_host(root: &mut Map<String, Value>, kind: ProviderKind, host: String) {
    let mut hosts = match root.shift_remove("keyHosts") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    hosts.insert(kind.name().to_string(), Value::from(host));
    root.insert("keyHosts".to_string(), Value::Object(hosts));
}

/// Reads the config file in `config_dir` (it must be one Decode can read, or it is
/// left alone), lets `edit` change its JSON object, and writes it back atomically,
/// under the config lock, keeping every other key and the key order. A config file
/// linked from elsewhere (a dotfiles repository) is written where it lives.
fn edit_config(
    config_dir: &Path,
    edit: impl FnOnce(&Config, &mut Map<String, Value>) -> Result<(), SaveProviderError>,
) -> Result<(), SaveProviderError> {
    let path = Config::path_in(config_dir);
    std::fs::create_dir_all(config_dir)
        .map_err(|e| format!("could not create {}: {e}", config_dir.display()))?;
    // One writer at a time (the window and another Decode may both save).
    let lock_path = fsutil::lock_path_for(&path);
    let _lock = fsutil::FileLock::acquire(&lock_path)
        .map_err(|e| format!("could not lock {}: {e}", lock_path.display()))?;
    let path = match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => decode_policy::paths::resolve(&path),
        _ => path,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("could not read {}: {e}", path.display()).into()),
    };
    let (old, _) = Config::parse(&path, &text).map_err(|e| e.to_string())?;
    let mut root: Map<String, Value> = if text.trim().is_empty() {
        Map::new()
    } else {
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?
    };
    edit(&old, &mut root)?;
    let mut out = serde_json::to_string_pretty(&Value::Object(root)).map_err(|e| e.to_string())?;
    out.push('\n');
    fsutil::atomic_write(&path, out.as_bytes())
        .map_err(|e| format!("could not write {}: {e}", path.display()))?;
    Ok(())
}

/// The host a stored key newly goes to, once the person confirmed it (to record), or
/// the refusal when they have not (see [`save_provider`]).
fn confirmed_key_host(
    old: &Config,
    provider: Option<ProviderKind>,
    base_url: Option<&str>,
    choice: &ProviderChoice,
    has_key: &dyn Fn(ProviderKind) -> bool,
) -> Result<Option<(ProviderKind, String)>, SaveProviderError> {
    let Some(kind) = provider.filter(|k| *k != ProviderKind::Script) else {
        return Ok(None);
    };
    let url = base_url.unwrap_or(kind.default_base_url());
    if providers::is_local_url(url) || !has_key(kind) {
        return Ok(None);
    }
    let Some(host) = url_host(url) else {
        return Ok(None);
    };
    let bound = old
        .key_hosts
        .get(kind.name())
        .cloned()
        .or_else(|| url_host(kind.default_base_url()))
        .unwrap_or_default();
    if host == bound {
        return Ok(None);
    }
    if choice.confirm_key_host.as_deref() == Some(host.as_str()) {
        return Ok(Some((kind, host)));
    }
    Err(SaveProviderError::KeyHost {
        provider: kind.name().to_string(),
        host,
        bound,
    })
}

/// "Test connection": one tiny request to the configured model; the one-line outcome.
pub async fn test_connection(
    client: std::sync::Arc<dyn providers::ModelClient>,
) -> Result<String, String> {
    let info = client.info();
    // One try: a server that fails says so now, not after every retry.
    let client = client.single_try().unwrap_or(client);
    let request = ModelRequest {
        system: "Answer with one word.".into(),
        messages: vec![Message::User {
            text: "Say OK.".into(),
        }],
        tools: Vec::new(),
        max_output_tokens: 16,
    };
    let cancel = CancellationToken::new();
    let mut stream = client.stream(request, cancel.clone());
    let started = std::time::Instant::now();
    let outcome = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(event) = stream.next().await {
            match event {
                ModelEvent::TextDelta { .. } | ModelEvent::Stop(_) => return Ok(()),
                ModelEvent::Error(e) => return Err(e.to_string()),
                _ => {}
            }
        }
        Err("the stream ended without an answer".to_string())
    })
    .await;
    cancel.cancel();
    let label = format!(
        "{} {} at {}",
        info.provider.name(),
        info.model,
        info.base_url
    );
    match outcome {
        Ok(Ok(())) => Ok(format!(
            "Connected: {label} answered in {} ms.",
            started.elapsed().as_millis()
        )),
        // The error names the server already: said once.
        Ok(Err(e)) if e.contains(&info.base_url) => {
            Err(format!("{} {}: {e}", info.provider.name(), info.model))
        }
        Ok(Err(e)) => Err(format!("{label}: {e}")),
        Err(_) => Err(format!("{label}: no answer within 30 s.")),
    }
}

/// The saved sessions of `project`, most recent first.
pub fn sessions_of(
    store: &SessionStore,
    project: &Path,
    current: Option<&str>,
) -> Vec<SessionSummary> {
    store
        .list()
        .into_iter()
        .filter(|s| s.project == project)
        .map(|s| SessionSummary {
            current: current == Some(s.id.as_str()),
            title: if s.first_prompt.is_empty() {
                "(no prompt yet)".into()
            } else {
                s.first_prompt.clone()
            },
            updated: s.updated,
            model: s.model.clone(),
            bytes: s.bytes,
            id: s.id,
        })
        .collect()
}
