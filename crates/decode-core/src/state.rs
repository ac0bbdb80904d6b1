//! The one active state — agent, mode and compiled gate — shared by the gate, the
//! agent loop, the window, the tray and the command line (docs/permissions.md; docs/agents.md; docs/window.md).
//!
//! [`ActiveState`] is `Send + Sync`; every surface holds an `Arc<ActiveState>` and
//! either reads it ([`ActiveState::snapshot`], [`ActiveState::decide`]) or changes it
//! ([`ActiveState::select_agent`], [`ActiveState::set_mode`],
//! [`ActiveState::cycle_mode`]). Observers registered with
//! [`ActiveState::subscribe`] are told of every actual change exactly once, in the
//! order the changes happened.
//!
//! A state opened from disk ([`ActiveState::open`]) decides with the files on disk
//! *now*: before each decision it stats every file it was built from — the project's
//! settings file, those of the folders around it, the agent files, the trust store
//! and the record of the rules the person saved ([`crate::freshness`]) — and reloads
//! them when one changed: a deny rule the person adds in their editor applies to the
//! very next call. A settings file that cannot be read as settings (malformed, too
//! large, not a regular file) is treated as empty, as at start-up, and reported
//! ([`ActiveState::settings_problems`]).

use std::collections::VecDeque;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use decode_policy::{Call, Decision, EnclosingRules, Gate, Mode, PolicyInput, PolicyWarning, Tool};
use decode_protocol::ErrorKind;
pub use decode_protocol::{AgentSummary, Snapshot};

use crate::agents::{Agent, AgentError, Catalog, DEFAULT_AGENT};
use crate::freshness::Watch;
use crate::levels::Levels;
use crate::settings::{EnclosingSettings, Settings, SettingsWarning};
use crate::trust::{TrustError, TrustStore};

/// Why the state could not be opened or changed. Each message is one line naming
/// the valid choices where there are some.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// No agent of that name.
    #[error("unknown agent `{name}` (available agents: {})", valid.join(", "))]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The agents of the catalog.
        valid: Vec<String>,
    },
    /// No mode of that name.
    #[error("unknown mode `{name}` (available modes: default, edit, plan, auto, bypass)")]
    UnknownMode {
        /// The name asked for.
        name: String,
    },
    /// The mode is turned off by the managed settings.
    #[error("{reason}")]
    ModeDisabled {
        /// The mode asked for.
        mode: Mode,
        /// Which file turned it off.
        reason: String,
    },
    /// The project folder cannot be used.
    #[error("cannot open the project folder {}: {message}", path.display())]
    Project {
        /// The folder as given.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

impl StateError {
    /// A stable kind for IPC (`{kind, message}`).
    pub fn kind(&self) -> &'static str {
        match self {
            StateError::UnknownAgent { .. } => "unknown_agent",
            StateError::UnknownMode { .. } | StateError::ModeDisabled { .. } => "unknown_mode",
            StateError::Project { .. } => "project",
        }
    }

    /// The kind as the surfaces know it.
    pub fn error_kind(&self) -> ErrorKind {
        match self {
            StateError::UnknownAgent { .. } => ErrorKind::UnknownAgent,
            StateError::UnknownMode { .. } | StateError::ModeDisabled { .. } => {
                ErrorKind::UnknownMode
            }
            StateError::Project { .. } => ErrorKind::Project,
        }
    }
}

/// Parses a mode name (`default`, `edit`, `plan`, `auto`, `bypass`, any case) into a
/// [`Mode`], with the friendly error of [`StateError::UnknownMode`].
pub fn parse_mode(name: &str) -> Result<Mode, StateError> {
    name.parse::<Mode>().map_err(|_| StateError::UnknownMode {
        name: name.to_string(),
    })
}

/// A non-fatal problem found while opening the state; shown on stderr or in the UI.
#[derive(Debug, Clone)]
pub enum Diagnostic {
    /// The settings file is malformed or unreadable (it was treated as empty).
    Settings(SettingsWarning),
    /// The trust store is malformed or unreadable (nothing is trusted).
    Trust(TrustError),
    /// An agent file is invalid (it was skipped).
    Agent(AgentError),
    /// A rule was skipped by the gate.
    Policy(PolicyWarning),
}

impl Diagnostic {
    /// A stable kind for IPC (`{kind, message}`).
    pub fn kind(&self) -> &'static str {
        match self {
            Diagnostic::Settings(_) => "settings",
            Diagnostic::Trust(_) => "trust",
            Diagnostic::Agent(_) => "agent",
            Diagnostic::Policy(_) => "policy",
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diagnostic::Settings(w) => w.fmt(f),
            Diagnostic::Trust(e) => e.fmt(f),
            Diagnostic::Agent(e) => e.fmt(f),
            Diagnostic::Policy(w) => w.fmt(f),
        }
    }
}

/// Identifies an observer for [`ActiveState::unsubscribe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriptionId(u64);

/// An observer of state changes.
pub type Observer = Box<dyn Fn(&Snapshot) + Send + Sync>;

type SharedObserver = Arc<dyn Fn(&Snapshot) + Send + Sync>;

struct Inner {
    catalog: Catalog,
    agent: Agent,
    mode: Mode,
    settings: Settings,
    /// The settings of the folders around the project (their deny and ask rules
    /// apply here too).
    enclosing: Vec<EnclosingSettings>,
    /// The managed, user and local settings.
    levels: Levels,
    /// The local file's allow rules that the person saved through Decode.
    saved_local: Vec<String>,
    /// The project's allow rules that the person saved through Decode (they count
    /// even while the project is untrusted).
    saved_allow: Vec<String>,
    /// The settings files (the project's and the folders' around it) that are
    /// malformed, unreadable or held back: their rules are unknown.
    settings_problems: Vec<SettingsWarning>,
    /// The MCP tools the person marked read-only in their own settings (gate
    /// patterns; see [`crate::mcp`]).
    mcp_read_only: Vec<String>,
    trusted: bool,
    gate: Arc<Gate>,
}

#[derive(Default)]
struct Delivery {
    queue: VecDeque<Snapshot>,
    delivering: bool,
}

/// The active agent, mode and gate of one project window (see the module docs).
pub struct ActiveState {
    project_root: PathBuf,
    /// The project root as it was given, when it differs from the canonical one
    /// (reached through a link): the folders above it count as around it too.
    project_given: Option<PathBuf>,
    home: PathBuf,
    /// Decode's data folder, when the state was opened from one (records which
    /// rules "always allow" saved).
    data_dir: Option<PathBuf>,
    inner: RwLock<Inner>,
    /// The stamps of the files the state was read from (`None`: built in memory,
    /// nothing on disk to follow).
    watch: Option<Mutex<Watch>>,
    observers: Mutex<Vec<(u64, SharedObserver)>>,
    next_subscription: AtomicU64,
    delivery: Mutex<Delivery>,
    /// A subagent's state: the state of the agent that started it, whose mode now
    /// the subagent's is never looser than (docs/agents.md, "Subagents").
    parent: Option<Arc<ActiveState>>,
}

impl fmt::Debug for ActiveState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.read();
        f.debug_struct("ActiveState")
            .field("project_root", &self.project_root)
            .field("agent", &inner.agent.name)
            .field("mode", &inner.mode)
            .field("trusted", &inner.trusted)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ActiveState {
    /// Builds the state for `project_root` (used as given: pass an absolute,
    /// canonical path) from a loaded catalog and settings, the trust flag and the
    /// home folder. The `build` agent (or the catalog's first one) is active, in its
    /// effective default mode. Returns the gate's warnings too.
    pub fn new(
        project_root: &Path,
        catalog: Catalog,
        settings: Settings,
        trusted: bool,
        home: &Path,
    ) -> (ActiveState, Vec<PolicyWarning>) {
        let agent = catalog
            .get(DEFAULT_AGENT)
            .or_else(|| catalog.agents().first())
            .cloned()
            .unwrap_or_else(fallback_agent);
        let levels = Levels::empty(project_root, home);
        let mode = allowed_or_default(&levels, agent.effective_default_mode(trusted));
        let (gate, warnings) = compile_gate(
            project_root,
            home,
            GateParts {
                settings: &settings,
                enclosing: &[],
                saved_allow: &[],
                levels: &levels,
                saved_local: &[],
                mcp_read_only: &[],
                trusted,
                agent: &agent,
            },
        );
        let inner = Inner {
            catalog,
            agent,
            mode,
            settings,
            enclosing: Vec::new(),
            levels,
            saved_local: Vec::new(),
            saved_allow: Vec::new(),
            settings_problems: Vec::new(),
            mcp_read_only: Vec::new(),
            trusted,
            gate,
        };
        let state = ActiveState {
            project_root: project_root.to_path_buf(),
            project_given: None,
            home: home.to_path_buf(),
            data_dir: None,
            inner: RwLock::new(inner),
            watch: None,
            observers: Mutex::new(Vec::new()),
            next_subscription: AtomicU64::new(1),
            delivery: Mutex::new(Delivery::default()),
            parent: None,
        };
        (state, warnings)
    }

    /// Opens a project: canonicalises the root, loads its settings, the trust store
    /// in `data_dir` and the agents catalog, then selects `agent` (default `build`)
    /// and `mode` (default: the agent's effective default mode). Problems that do not
    /// stop the start (malformed settings, a bad agent file, a malformed trust store,
    /// a skipped rule) come back as diagnostics; an unknown agent is an error.
    pub fn open(
        project_root: &Path,
        home: &Path,
        data_dir: &Path,
        agent: Option<&str>,
        mode: Option<Mode>,
    ) -> Result<(ActiveState, Vec<Diagnostic>), StateError> {
        let root = project_root
            .canonicalize()
            .map_err(|e| StateError::Project {
                path: project_root.to_path_buf(),
                message: e.to_string(),
            })?;
        if !root.is_dir() {
            return Err(StateError::Project {
                path: project_root.to_path_buf(),
                message: "it is not a folder".into(),
            });
        }
        // Whatever a Decode that was killed left running outside the sandbox goes now.
        crate::running_groups::reap_orphans();
        let given = decode_policy::paths::lexical(
            &std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            project_root,
        );
        let project_given = (given != root).then_some(given);
        let sources = Sources {
            root: &root,
            given: project_given.as_deref(),
            home,
            data_dir,
        };
        // Stamped before anything is read: a change made while reading shows next time.
        let watch = Watch::take(sources.watched_paths());
        let OnDisk {
            settings,
            enclosing,
            levels,
            saved_local,
            saved_allow,
            settings_problems,
            mcp_read_only,
            trusted,
            catalog,
            mut diagnostics,
        } = sources.read();

        let name = agent.unwrap_or(DEFAULT_AGENT);
        let chosen = catalog
            .get(name)
            .cloned()
            .ok_or_else(|| unknown_agent(name, &catalog))?;
        if let Some(reason) = mode.and_then(|m| levels.mode_refusal(m)) {
            return Err(StateError::ModeDisabled {
                mode: mode.unwrap_or_default(),
                reason,
            });
        }
        let start_mode = mode
            .unwrap_or_else(|| allowed_or_default(&levels, chosen.effective_default_mode(trusted)));
        let (gate, warnings) = compile_gate(
            &root,
            home,
            GateParts {
                settings: &settings,
                enclosing: &enclosing,
                saved_allow: &saved_allow,
                levels: &levels,
                saved_local: &saved_local,
                mcp_read_only: &mcp_read_only,
                trusted,
                agent: &chosen,
            },
        );
        let inner = Inner {
            catalog,
            agent: chosen,
            mode: start_mode,
            settings,
            enclosing,
            levels,
            saved_local,
            saved_allow,
            settings_problems,
            mcp_read_only,
            trusted,
            gate,
        };
        diagnostics.extend(warnings.into_iter().map(Diagnostic::Policy));

        tracing::info!(
            project = %root.display(),
            agent = %inner.agent.name,
            mode = %start_mode,
            trusted,
            "project opened"
        );
        let state = ActiveState {
            project_given,
            project_root: root,
            home: home.to_path_buf(),
            data_dir: Some(data_dir.to_path_buf()),
            inner: RwLock::new(inner),
            watch: Some(Mutex::new(watch)),
            observers: Mutex::new(Vec::new()),
            next_subscription: AtomicU64::new(1),
            delivery: Mutex::new(Delivery::default()),
            parent: None,
        };
        Ok((state, diagnostics))
    }

    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Decode's data folder, when the state was opened from one.
    pub fn data_dir(&self) -> Option<&Path> {
        self.data_dir.as_deref()
    }

    /// The project root.
    pub fn project_root(&self) -> &Path {
        &self.project_root
    }

    /// The home folder the gate expands `~` with.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// What the surfaces show now.
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot_of(&self.read())
    }

    fn snapshot_of(&self, inner: &Inner) -> Snapshot {
        Snapshot {
            agent: inner.agent.name.clone(),
            mode: self.clamped(inner.mode),
            agents: inner
                .catalog
                .agents()
                .iter()
                .map(|a| AgentSummary {
                    name: a.name.clone(),
                    description: a.description.clone(),
                })
                .collect(),
            project: self.project_root.display().to_string(),
            trusted: inner.trusted,
            disabled_modes: inner.levels.disabled_modes(),
        }
    }

    /// The active mode (a subagent's: never looser than its parent's now).
    pub fn mode(&self) -> Mode {
        self.clamped(self.read().mode)
    }

    /// `mode`, or the parent's mode now when that is stricter (a subagent's state).
    fn clamped(&self, mode: Mode) -> Mode {
        match &self.parent {
            Some(p) => mode.no_looser_than(p.mode()),
            None => mode,
        }
    }

    /// The active agent (a copy).
    pub fn agent(&self) -> Agent {
        self.read().agent.clone()
    }

    /// The catalog (a copy).
    pub fn catalog(&self) -> Catalog {
        self.read().catalog.clone()
    }

    /// The loaded settings (a copy).
    pub fn settings(&self) -> Settings {
        self.read().settings.clone()
    }

    /// Whether the project is trusted.
    pub fn trusted(&self) -> bool {
        self.read().trusted
    }

    /// The settings of the folders around the project whose deny and ask rules
    /// apply here too (a copy), nearest first.
    pub fn enclosing_settings(&self) -> Vec<EnclosingSettings> {
        self.read().enclosing.clone()
    }

    /// The managed, user and local settings (a copy).
    pub fn levels(&self) -> Levels {
        self.read().levels.clone()
    }

    /// Replaces the managed, user and local settings and recompiles the gate (a mode
    /// they turn off falls back to default). For a state built in memory; one opened
    /// from disk reads them again when a file changes.
    pub fn set_levels(&self, levels: Levels) {
        {
            let mut inner = self.write();
            inner.saved_local =
                saved_allow_rules(self.data_dir(), &self.project_root, &levels.local);
            inner.levels = levels;
            clamp_mode(&mut inner);
            self.recompile(&mut inner);
            let snapshot = self.snapshot_of(&inner);
            self.enqueue(snapshot);
        }
        self.deliver();
    }

    /// Why `mode` may not be chosen in this project, if it may not (managed
    /// `disableBypassMode` / `disableAutoMode`).
    pub fn mode_refusal(&self, mode: Mode) -> Option<String> {
        self.refresh();
        self.read().levels.mode_refusal(mode)
    }

    /// Every rule that applies in this project, with its level and file and whether
    /// it counts now (docs/permissions.md, "Settings levels"): managed, user,
    /// project, local, the folders around the project (deny and ask only) and the
    /// active agent.
    pub fn leveled_rules(&self) -> Vec<crate::levels::LeveledRule> {
        use crate::levels::LeveledRule;
        self.refresh();
        let inner = self.read();
        let amo = inner.levels.managed.allow_managed_rules_only;
        let mut out = Vec::new();
        let mut push = |lists: &decode_policy::RuleLists,
                        level: &str,
                        file: String,
                        allow_counts: &dyn Fn(&str) -> Option<String>| {
            for (list, rules) in [
                ("deny", &lists.deny),
                ("ask", &lists.ask),
                ("allow", &lists.allow),
            ] {
                for rule in rules {
                    let ignored = if list == "allow" {
                        allow_counts(rule)
                    } else {
                        None
                    };
                    out.push(LeveledRule {
                        list,
                        rule: rule.clone(),
                        level: level.to_string(),
                        file: file.clone(),
                        counts: ignored.is_none(),
                        ignored,
                    });
                }
            }
        };
        let managed_only = || "the managed settings allow only their own allow rules".to_string();
        let untrusted = "the project is not trusted (and the rule was not saved through Decode)";
        let levels = &inner.levels;
        push(
            &levels.managed.permissions,
            "managed",
            levels
                .display_path(decode_policy::Level::Managed)
                .display()
                .to_string(),
            &|_| None,
        );
        push(
            &levels.user.permissions,
            "user",
            levels
                .display_path(decode_policy::Level::User)
                .display()
                .to_string(),
            &|_| amo.then(managed_only),
        );
        let trusted = inner.trusted;
        let project_counts = |saved: &[String], rule: &str| -> Option<String> {
            if amo {
                Some(managed_only())
            } else if !trusted && !saved.iter().any(|r| r == rule) {
                Some(untrusted.to_string())
            } else {
                None
            }
        };
        push(
            &inner.settings.permissions,
            "project",
            ".decode/settings.json".into(),
            &|r| project_counts(&inner.saved_allow, r),
        );
        push(
            &levels.local.permissions,
            "local",
            ".decode/settings.local.json".into(),
            &|r| project_counts(&inner.saved_local, r),
        );
        for e in &inner.enclosing {
            push(
                &e.settings.permissions,
                "enclosing",
                e.settings.path.display().to_string(),
                &|_| Some("allow rules of a folder around the project never count here".into()),
            );
        }
        let agent = &inner.agent;
        let agent_ok = trusted || !agent.from_project();
        push(
            &agent.rules,
            "agent",
            format!("agent {}", agent.name),
            &|_| {
                if amo {
                    Some(managed_only())
                } else if !agent_ok {
                    Some("a project agent's allow rules need the project's trust".into())
                } else {
                    None
                }
            },
        );
        out
    }

    /// The project's allow rules that count although the project is untrusted:
    /// those the person saved through Decode.
    pub fn saved_allow_rules(&self) -> Vec<String> {
        self.read().saved_allow.clone()
    }

    /// The local file's allow rules that the person saved through Decode (they count
    /// even while the project is untrusted).
    pub fn saved_local_rules(&self) -> Vec<String> {
        self.read().saved_local.clone()
    }

    /// The settings files whose rules are unknown right now — the project's or a
    /// folder's around it that is malformed, unreadable (a FIFO, a device, too
    /// large) or held back — each with its file, line and column when known.
    pub fn settings_problems(&self) -> Vec<SettingsWarning> {
        self.read().settings_problems.clone()
    }

    /// What the gate is compiled from now: the project's settings and trust, the
    /// active agent, the folders around the project and the rules the person saved.
    /// For surfaces that compile a gate of their own on top (the session's answers).
    pub fn policy_input(&self) -> PolicyInput {
        policy_input(&self.project_root, &self.home, GateParts::of(&self.read()))
    }

    /// The compiled gate for the active agent, settings and trust (the files on disk
    /// now: see [`ActiveState::refresh`]).
    pub fn gate(&self) -> Arc<Gate> {
        self.refresh();
        Arc::clone(&self.read().gate)
    }

    /// Judges `call` with the current gate in the current mode, both read at once,
    /// after following any change of the files on disk.
    pub fn decide(&self, call: &Call) -> Decision {
        self.refresh();
        let inner = self.read();
        inner.gate.decide(call, self.clamped(inner.mode))
    }

    /// Like [`ActiveState::decide`], with the bash session's working directory: relative
    /// paths in a command resolve against it, and a directory outside the project counts
    /// as outside for the path scope.
    pub fn decide_in(&self, call: &Call, cwd: &Path) -> Decision {
        self.refresh();
        let inner = self.read();
        inner
            .gate
            .decide_in(call, self.clamped(inner.mode), Some(cwd))
    }

    /// Follows the files on disk: when one the state was built from changed since it
    /// was read (or could have: see [`crate::freshness`]), reads them all again and
    /// recompiles the gate, keeping the active agent and mode (as
    /// [`ActiveState::reload_catalog`] and [`ActiveState::set_trusted`] do). Returns
    /// whether anything was read again. A state built in memory ([`ActiveState::new`])
    /// has nothing to follow.
    pub fn refresh(&self) -> bool {
        let (Some(watch), Some(data_dir)) = (&self.watch, &self.data_dir) else {
            return false;
        };
        let mut watch = lock(watch);
        let Some(changed) = watch.changed().map(Path::to_path_buf) else {
            return false;
        };
        let sources = Sources {
            root: &self.project_root,
            given: self.project_given.as_deref(),
            home: &self.home,
            data_dir,
        };
        let next = Watch::take(sources.watched_paths());
        let disk = sources.read();
        for d in &disk.diagnostics {
            tracing::warn!(diagnostic = %d, "after a change on disk");
        }
        {
            let mut inner = self.write();
            let before = self.snapshot_of(&inner);
            inner.settings = disk.settings;
            inner.enclosing = disk.enclosing;
            inner.levels = disk.levels;
            inner.saved_local = disk.saved_local;
            inner.saved_allow = disk.saved_allow;
            clamp_mode(&mut inner);
            inner.settings_problems = disk.settings_problems;
            inner.mcp_read_only = disk.mcp_read_only;
            self.apply_trust(&mut inner, disk.trusted);
            self.apply_catalog(&mut inner, disk.catalog);
            self.recompile(&mut inner);
            let after = self.snapshot_of(&inner);
            if after != before {
                self.enqueue(after);
            }
        }
        *watch = next;
        drop(watch);
        tracing::debug!(changed = %changed.display(), "rules reloaded from disk");
        self.deliver();
        true
    }

    /// Exactly the active agent's tools: the only ones offered to the model.
    pub fn offered_tools(&self) -> Vec<Tool> {
        self.read().agent.tools.clone()
    }

    /// The active agent's full system prompt (with `AGENTS.md`/`CLAUDE.md`, read now).
    /// The instructions are read only where a `read` of them would be allowed
    /// without asking in the current mode (see [`crate::agents::project_instructions`]).
    pub fn system_prompt(&self) -> String {
        let (agent, gate, mode) = {
            let inner = self.read();
            (
                inner.agent.clone(),
                Arc::clone(&inner.gate),
                self.clamped(inner.mode),
            )
        };
        agent.system_prompt(crate::agents::project_instructions(&gate, mode).as_ref())
    }

    /// The instruction files that exist but are not added to the prompt, one
    /// line each saying why (a link out of the project, a deny rule, a FIFO…).
    pub fn instruction_problems(&self) -> Vec<String> {
        let (gate, mode) = {
            let inner = self.read();
            (Arc::clone(&inner.gate), self.clamped(inner.mode))
        };
        crate::agents::read_instructions(&gate, mode).1
    }

    /// The state a subagent runs in (docs/agents.md, "Subagents"): the catalog agent
    /// `name` without `task` (a subagent cannot start subagents), its own rules
    /// beside the project's, in its own default mode but never looser than this
    /// state's mode — now, and at every later decision. It lives for one task and
    /// does not follow the files on disk. An unknown agent, or one whose
    /// description is empty, is an error naming the agents that can be started.
    pub fn for_subagent(self: &Arc<Self>, name: &str) -> Result<ActiveState, String> {
        self.refresh();
        let inner = self.read();
        let found = inner
            .catalog
            .get(name)
            .filter(|a| !a.description.trim().is_empty());
        let Some(found) = found else {
            let names: Vec<&str> = inner
                .catalog
                .agents()
                .iter()
                .filter(|a| !a.description.trim().is_empty())
                .map(|a| a.name.as_str())
                .collect();
            return Err(format!(
                "there is no agent `{name}` that can be started as a subagent (one with a description); the agents are: {}",
                names.join(", ")
            ));
        };
        let mut agent = found.clone();
        agent.tools.retain(|t| *t != Tool::Task);
        let ceiling = self.clamped(inner.mode);
        let mode = allowed_or_default(&inner.levels, agent.effective_default_mode(inner.trusted))
            .no_looser_than(ceiling);
        let (gate, warnings) = compile_gate(
            &self.project_root,
            &self.home,
            GateParts {
                agent: &agent,
                ..GateParts::of(&inner)
            },
        );
        for w in &warnings {
            tracing::debug!(warning = ?w, agent = %agent.name, "subagent gate");
        }
        let child = Inner {
            catalog: inner.catalog.clone(),
            agent,
            mode,
            settings: inner.settings.clone(),
            enclosing: inner.enclosing.clone(),
            levels: inner.levels.clone(),
            saved_local: inner.saved_local.clone(),
            saved_allow: inner.saved_allow.clone(),
            settings_problems: inner.settings_problems.clone(),
            mcp_read_only: inner.mcp_read_only.clone(),
            trusted: inner.trusted,
            gate,
        };
        tracing::info!(agent = %name, mode = %mode, parent_mode = %ceiling, "subagent state");
        Ok(ActiveState {
            project_root: self.project_root.clone(),
            project_given: self.project_given.clone(),
            home: self.home.clone(),
            data_dir: self.data_dir.clone(),
            inner: RwLock::new(child),
            watch: None,
            observers: Mutex::new(Vec::new()),
            next_subscription: AtomicU64::new(1),
            delivery: Mutex::new(Delivery::default()),
            parent: Some(Arc::clone(self)),
        })
    }

    /// Makes `name` the active agent: resets the mode to its effective default mode
    /// and recompiles the gate with its rules. Unknown names are an error listing the
    /// valid ones.
    pub fn select_agent(&self, name: &str) -> Result<Snapshot, StateError> {
        let snapshot = {
            let mut inner = self.write();
            let agent = inner
                .catalog
                .get(name)
                .cloned()
                .ok_or_else(|| unknown_agent(name, &inner.catalog))?;
            let before = (inner.agent.name.clone(), inner.mode);
            inner.mode =
                allowed_or_default(&inner.levels, agent.effective_default_mode(inner.trusted));
            inner.agent = agent;
            self.recompile(&mut inner);
            let snapshot = self.snapshot_of(&inner);
            if before != (inner.agent.name.clone(), inner.mode) {
                tracing::info!(agent = %inner.agent.name, mode = %inner.mode, "agent selected");
                self.enqueue(snapshot.clone());
            }
            snapshot
        };
        self.deliver();
        Ok(snapshot)
    }

    /// Sets the mode; setting the mode it already has changes nothing, and so does
    /// a mode the managed settings turned off (see [`ActiveState::try_set_mode`]).
    pub fn set_mode(&self, mode: Mode) -> Snapshot {
        self.try_set_mode(mode).unwrap_or_else(|_| self.snapshot())
    }

    /// Sets the mode, or says why not: a mode the managed settings turned off is
    /// refused (the mode stays).
    pub fn try_set_mode(&self, mode: Mode) -> Result<Snapshot, StateError> {
        self.refresh();
        if let Some(reason) = self.read().levels.mode_refusal(mode) {
            tracing::info!(mode = %mode, %reason, "mode refused");
            return Err(StateError::ModeDisabled { mode, reason });
        }
        Ok(self.change_mode(|current, levels| {
            if levels.mode_refusal(mode).is_some() {
                current
            } else {
                mode
            }
        }))
    }

    /// Moves to the next mode: default → edit → plan → auto → bypass → default,
    /// skipping the modes the managed settings turned off.
    pub fn cycle_mode(&self) -> Snapshot {
        self.refresh();
        self.change_mode(|current, levels| {
            let mut next = current.next();
            while next != current && levels.mode_refusal(next).is_some() {
                next = next.next();
            }
            next
        })
    }

    fn change_mode(&self, f: impl FnOnce(Mode, &Levels) -> Mode) -> Snapshot {
        let snapshot = {
            let mut inner = self.write();
            let mode = self.clamped(f(inner.mode, &inner.levels));
            if mode == inner.mode {
                return self.snapshot_of(&inner);
            }
            inner.mode = mode;
            tracing::info!(mode = %mode, "mode changed");
            let snapshot = self.snapshot_of(&inner);
            self.enqueue(snapshot.clone());
            snapshot
        };
        self.deliver();
        snapshot
    }

    /// Re-reads `.decode/settings.json` and recompiles the gate (after an always-allow
    /// or an edit of the file). Returns the file's warnings and the gate's.
    pub fn reload_settings(&self) -> Vec<Diagnostic> {
        let (settings, mut problems) = Settings::load(&self.project_root);
        let (enclosing, warnings) = crate::settings::load_enclosing(
            &self.project_root,
            self.project_given.as_deref(),
            &self.home,
        );
        problems.extend(warnings);
        let (levels, warnings) = Levels::load(&self.project_root, &self.home);
        problems.extend(warnings);
        let saved_allow = saved_allow_rules(self.data_dir(), &self.project_root, &settings);
        let saved_local = saved_allow_rules(self.data_dir(), &self.project_root, &levels.local);
        let (mcp_read_only, mcp_problems) = match self.data_dir {
            Some(_) => crate::mcp::load_read_only_marks(&crate::mcp::user_config_dir(&self.home)),
            None => (self.read().mcp_read_only.clone(), Vec::new()),
        };
        let mut diagnostics: Vec<Diagnostic> = problems
            .iter()
            .chain(&mcp_problems)
            .cloned()
            .map(Diagnostic::Settings)
            .collect();
        let mut inner = self.write();
        inner.mcp_read_only = mcp_read_only;
        inner.settings = settings;
        inner.enclosing = enclosing;
        inner.levels = levels;
        inner.saved_local = saved_local;
        inner.saved_allow = saved_allow;
        clamp_mode(&mut inner);
        inner.settings_problems = problems;
        diagnostics.extend(
            self.recompile(&mut inner)
                .into_iter()
                .map(Diagnostic::Policy),
        );
        tracing::debug!("settings reloaded");
        diagnostics
    }

    /// Changes the trust flag (after the trust dialog or `decode trust`) and
    /// recompiles the gate. The mode is left as it is, except that revoking trust
    /// brings a project agent in another mode than default or plan back to default.
    pub fn set_trusted(&self, trusted: bool) -> Vec<Diagnostic> {
        let diagnostics = {
            let mut inner = self.write();
            if inner.trusted == trusted {
                return Vec::new();
            }
            self.apply_trust(&mut inner, trusted);
            let diagnostics = self
                .recompile(&mut inner)
                .into_iter()
                .map(Diagnostic::Policy)
                .collect();
            let snapshot = self.snapshot_of(&inner);
            self.enqueue(snapshot);
            diagnostics
        };
        self.deliver();
        diagnostics
    }

    /// Reloads the agents catalog from disk. The active agent takes its new
    /// definition (the mode is kept); if it is gone, `build` becomes active in its
    /// default mode. Observers are told when the agent list or the active agent or
    /// mode changed. Returns the catalog's errors and the gate's warnings.
    pub fn reload_catalog(&self) -> Vec<Diagnostic> {
        let catalog = Catalog::load(&self.project_root);
        let mut diagnostics: Vec<Diagnostic> = catalog
            .errors()
            .iter()
            .cloned()
            .map(Diagnostic::Agent)
            .collect();
        {
            let mut inner = self.write();
            let before = self.snapshot_of(&inner);
            self.apply_catalog(&mut inner, catalog);
            diagnostics.extend(
                self.recompile(&mut inner)
                    .into_iter()
                    .map(Diagnostic::Policy),
            );
            let after = self.snapshot_of(&inner);
            if after != before {
                self.enqueue(after);
            }
        }
        self.deliver();
        diagnostics
    }

    /// Registers an observer, called once per actual change with the new snapshot.
    ///
    /// Observers run on the thread that made the change (or on one that is already
    /// delivering), in change order. They may read the state and may even change it:
    /// such a change is delivered after the current round of callbacks.
    pub fn subscribe(&self, observer: Observer) -> SubscriptionId {
        let id = self.next_subscription.fetch_add(1, Ordering::Relaxed);
        lock(&self.observers).push((id, Arc::from(observer)));
        SubscriptionId(id)
    }

    /// Removes an observer; returns whether it was registered.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        let mut observers = lock(&self.observers);
        let before = observers.len();
        observers.retain(|(i, _)| *i != id.0);
        observers.len() != before
    }

    /// Sets the trust flag; revoking trust brings a project agent in another mode than
    /// default or plan back to default. The gate is not recompiled here.
    fn apply_trust(&self, inner: &mut Inner, trusted: bool) {
        if inner.trusted == trusted {
            return;
        }
        inner.trusted = trusted;
        tracing::info!(trusted, "project trust changed");
        // An untrusted project's own agent runs only in default or plan mode,
        // whatever it was in while the project was trusted.
        if !trusted
            && inner.agent.from_project()
            && !matches!(inner.mode, Mode::Default | Mode::Plan)
        {
            tracing::info!(mode = %inner.mode, "trust revoked: the project agent falls back to default mode");
            inner.mode = Mode::Default;
        }
    }

    /// Takes a newly loaded catalog: the active agent takes its new definition (the
    /// mode is kept); if it is gone, `build` becomes active in its default mode. The
    /// gate is not recompiled here.
    fn apply_catalog(&self, inner: &mut Inner, catalog: Catalog) {
        let current = inner.agent.name.clone();
        match catalog.get(&current).cloned() {
            Some(agent) => inner.agent = agent,
            None => {
                let agent = catalog
                    .get(DEFAULT_AGENT)
                    .or_else(|| catalog.agents().first())
                    .cloned()
                    .unwrap_or_else(fallback_agent);
                inner.mode =
                    allowed_or_default(&inner.levels, agent.effective_default_mode(inner.trusted));
                inner.agent = agent;
            }
        }
        inner.catalog = catalog;
    }

    fn recompile(&self, inner: &mut Inner) -> Vec<PolicyWarning> {
        let (gate, warnings) = compile_gate(&self.project_root, &self.home, GateParts::of(inner));
        for w in &warnings {
            tracing::warn!(warning = %w, "rule skipped");
        }
        inner.gate = gate;
        warnings
    }

    /// Queues a snapshot for delivery; called with the write lock held so the queue
    /// order is the change order.
    fn enqueue(&self, snapshot: Snapshot) {
        lock(&self.delivery).queue.push_back(snapshot);
    }

    /// Delivers queued snapshots unless another call is already doing so (that one
    /// will deliver ours too, in order).
    fn deliver(&self) {
        {
            let mut d = lock(&self.delivery);
            if d.delivering {
                return;
            }
            d.delivering = true;
        }
        loop {
            let next = {
                let mut d = lock(&self.delivery);
                match d.queue.pop_front() {
                    Some(s) => s,
                    None => {
                        d.delivering = false;
                        return;
                    }
                }
            };
            let observers: Vec<_> = lock(&self.observers)
                .iter()
                .map(|(_, o)| Arc::clone(o))
                .collect();
            for observer in observers {
                let call = std::panic::AssertUnwindSafe(|| observer(&next));
                if std::panic::catch_unwind(call).is_err() {
                    tracing::error!("a state observer panicked");
                }
            }
        }
    }
}

/// The most files of one agents folder whose stamps are followed (a file added or
/// removed beyond them changes the folder's own stamp).
const MAX_WATCHED_AGENT_FILES: usize = 256;

/// Where a project's state is read from.
struct Sources<'a> {
    root: &'a Path,
    /// The root as it was reached, when that differs (see `load_enclosing`).
    given: Option<&'a Path>,
    home: &'a Path,
    data_dir: &'a Path,
}

/// What the files of a project say now.
struct OnDisk {
    settings: Settings,
    enclosing: Vec<EnclosingSettings>,
    levels: Levels,
    saved_local: Vec<String>,
    saved_allow: Vec<String>,
    settings_problems: Vec<SettingsWarning>,
    mcp_read_only: Vec<String>,
    trusted: bool,
    catalog: Catalog,
    diagnostics: Vec<Diagnostic>,
}

impl Sources<'_> {
    /// Every file and folder the state is read from: the project's settings file, the
    /// place of one in every folder around the project (a file created there counts),
    /// the agents folders and their `*.md` files, the trust store and the record of
    /// the rules the person saved.
    fn watched_paths(&self) -> Vec<PathBuf> {
        let mut paths = vec![crate::settings::settings_path(self.root)];
        paths.extend(Levels::paths(self.root, self.home));
        let starts = std::iter::once(self.root).chain(self.given);
        for start in starts {
            for dir in start.ancestors().skip(1) {
                paths.push(crate::settings::settings_path(dir));
            }
        }
        for dir in [
            self.root.join(".claude").join("agents"),
            self.root.join(".decode").join("agents"),
        ] {
            if let Ok(entries) = std::fs::read_dir(&dir) {
                paths.extend(
                    entries
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.extension().is_some_and(|x| x == "md"))
                        .take(MAX_WATCHED_AGENT_FILES),
                );
            }
            paths.push(dir);
        }
        paths.push(TrustStore::open(self.data_dir).path().to_path_buf());
        // The person's own settings: their MCP read-only marks.
        paths.push(crate::mcp::user_settings_path(
            &crate::mcp::user_config_dir(self.home),
        ));
        paths.push(
            crate::projects::ProjectStore::open(self.data_dir)
                .path()
                .to_path_buf(),
        );
        paths.sort();
        paths.dedup();
        paths
    }

    fn read(&self) -> OnDisk {
        let mut diagnostics = Vec::new();
        let (settings, mut settings_problems) = Settings::load(self.root);
        let (enclosing, warnings) =
            crate::settings::load_enclosing(self.root, self.given, self.home);
        settings_problems.extend(warnings);
        let (levels, warnings) = Levels::load(self.root, self.home);
        settings_problems.extend(warnings);
        diagnostics.extend(settings_problems.iter().cloned().map(Diagnostic::Settings));
        let saved_allow = saved_allow_rules(Some(self.data_dir), self.root, &settings);
        let saved_local = saved_allow_rules(Some(self.data_dir), self.root, &levels.local);
        let (mcp_read_only, mcp_problems) =
            crate::mcp::load_read_only_marks(&crate::mcp::user_config_dir(self.home));
        diagnostics.extend(mcp_problems.into_iter().map(Diagnostic::Settings));
        let store = TrustStore::open(self.data_dir);
        if let Some(problem) = store.problem() {
            diagnostics.push(Diagnostic::Trust(problem.clone()));
        }
        let trusted = store.is_trusted(self.root);
        let catalog = Catalog::load(self.root);
        diagnostics.extend(catalog.errors().iter().cloned().map(Diagnostic::Agent));
        OnDisk {
            settings,
            enclosing,
            levels,
            saved_local,
            saved_allow,
            settings_problems,
            mcp_read_only,
            trusted,
            catalog,
            diagnostics,
        }
    }
}

fn unknown_agent(name: &str, catalog: &Catalog) -> StateError {
    StateError::UnknownAgent {
        name: name.to_string(),
        valid: catalog.names().into_iter().map(str::to_owned).collect(),
    }
}

/// Used only if the catalog is empty (the built-ins failed to load): every tool, no
/// rules, default mode.
fn fallback_agent() -> Agent {
    Agent {
        name: DEFAULT_AGENT.to_string(),
        description: "General-purpose coding agent.".to_string(),
        tools: Tool::ALL.to_vec(),
        mcp_tools: Vec::new(),
        mode: Mode::Default,
        rules: Default::default(),
        model: None,
        prompt: String::new(),
        source: crate::agents::AgentSource::Builtin,
        overrides: None,
    }
}

/// What a gate is compiled from (the parts of [`Inner`] it needs).
struct GateParts<'a> {
    settings: &'a Settings,
    enclosing: &'a [EnclosingSettings],
    saved_allow: &'a [String],
    levels: &'a Levels,
    saved_local: &'a [String],
    mcp_read_only: &'a [String],
    trusted: bool,
    agent: &'a Agent,
}

impl<'a> GateParts<'a> {
    fn of(inner: &'a Inner) -> GateParts<'a> {
        GateParts {
            settings: &inner.settings,
            enclosing: &inner.enclosing,
            saved_allow: &inner.saved_allow,
            levels: &inner.levels,
            saved_local: &inner.saved_local,
            mcp_read_only: &inner.mcp_read_only,
            trusted: inner.trusted,
            agent: &inner.agent,
        }
    }
}

fn policy_input(project_root: &Path, home: &Path, inner: GateParts<'_>) -> PolicyInput {
    let settings = inner.settings;
    PolicyInput {
        project_root: project_root.to_path_buf(),
        home: home.to_path_buf(),
        project_rules: settings.permissions.clone(),
        additional_directories: settings.additional_directories.clone(),
        protected_branches: settings.protected_branches.clone(),
        external_caps: settings.caps_external.clone(),
        trusted: inner.trusted,
        agent: inner.agent.policy(),
        app_dirs: PolicyInput::app_dirs_for(home),
        enclosing: inner
            .enclosing
            .iter()
            .map(|e| EnclosingRules {
                root: e.root.clone(),
                rules: e.settings.permissions.clone(),
                external_caps: e.settings.caps_external.clone(),
            })
            .collect(),
        saved_allow: inner.saved_allow.to_vec(),
        levels: inner.levels.policy(inner.saved_local),
        allow_managed_rules_only: inner.levels.managed.allow_managed_rules_only,
        mcp_read_only: inner.mcp_read_only.to_vec(),
        read_only_commands: read_only_commands(settings, inner.levels),
    }
}

/// `readOnlyCommands`: on unless a settings level (managed, user, project,
/// local) sets it to `false`.
fn read_only_commands(project: &Settings, levels: &Levels) -> bool {
    [project, &levels.managed, &levels.user, &levels.local]
        .iter()
        .all(|s| s.read_only_commands != Some(false))
}

/// `mode`, or default when the managed settings turned it off.
fn allowed_or_default(levels: &Levels, mode: Mode) -> Mode {
    if levels.mode_refusal(mode).is_some() {
        tracing::info!(mode = %mode, "mode turned off by the managed settings: default instead");
        Mode::Default
    } else {
        mode
    }
}

/// Leaves a mode the managed settings now turn off for default.
fn clamp_mode(inner: &mut Inner) {
    inner.mode = allowed_or_default(&inner.levels, inner.mode);
}

fn compile_gate(
    project_root: &Path,
    home: &Path,
    inner: GateParts<'_>,
) -> (Arc<Gate>, Vec<PolicyWarning>) {
    let (gate, warnings) = Gate::new(policy_input(project_root, home, inner));
    (Arc::new(gate), warnings)
}

/// The allow rules of the project's settings file that the person saved through
/// Decode (recorded in the data folder's projects store): the rules of the file
/// that are also in the record.
fn saved_allow_rules(data_dir: Option<&Path>, root: &Path, settings: &Settings) -> Vec<String> {
    let Some(data) = data_dir else {
        return Vec::new();
    };
    if settings.permissions.allow.is_empty() {
        return Vec::new();
    }
    let recorded = crate::projects::ProjectStore::open(data).always_allowed(root);
    settings
        .permissions
        .allow
        .iter()
        .filter(|r| recorded.contains(r))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn state() -> (tempfile::TempDir, ActiveState) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (s, _) = ActiveState::new(
            &root,
            Catalog::builtin(),
            Settings::empty(&root),
            true,
            &root,
        );
        (dir, s)
    }

    #[test]
    fn a_subagent_state_has_its_own_agent_without_task_and_never_a_looser_mode() {
        let (_d, s) = state();
        let parent = Arc::new(s);
        assert!(parent.offered_tools().contains(&Tool::Task));
        let child = parent.for_subagent("build").unwrap();
        assert_eq!(child.agent().name, "build");
        assert!(!child.offered_tools().contains(&Tool::Task));
        // Not offered, so the gate refuses it too.
        assert_eq!(
            child.decide(&Call::new(Tool::Task, "")).verdict,
            decode_policy::Verdict::Deny
        );
        assert_eq!(child.mode(), Mode::Default);
        // Its own mode stays within the parent's, now and later.
        parent.set_mode(Mode::Plan);
        assert_eq!(child.mode(), Mode::Plan);
        assert_eq!(child.snapshot().mode, Mode::Plan);
        child.set_mode(Mode::Bypass);
        assert_eq!(child.mode(), Mode::Plan);
        assert_eq!(
            child.decide(&Call::new(Tool::Write, "a.txt")).verdict,
            decode_policy::Verdict::Deny
        );
        // The parent's own mode is untouched by the subagent's.
        assert_eq!(parent.mode(), Mode::Plan);
        let err = parent.for_subagent("nope").unwrap_err();
        assert!(
            err.contains("no agent `nope`") && err.contains("explore"),
            "{err}"
        );
    }

    #[test]
    fn starts_with_build_in_default() {
        let (_d, s) = state();
        let snap = s.snapshot();
        assert_eq!(snap.agent, "build");
        assert_eq!(snap.mode, Mode::Default);
        assert_eq!(snap.agents.len(), 4);
        assert_eq!(s.offered_tools(), Tool::ALL.to_vec());
    }

    #[test]
    fn snapshot_serialises_as_documented() {
        let (_d, s) = state();
        let v = serde_json::to_value(s.snapshot()).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["agent", "mode", "agents", "project", "trusted"]);
        assert_eq!(v["trusted"], true);
        assert_eq!(v["mode"], "default");
        assert_eq!(v["agents"][3]["name"], "code-reviewer");
        assert!(v["agents"][3]["description"].is_string());
    }

    #[test]
    fn reentrant_change_from_an_observer_is_delivered_after() {
        let (_d, s) = state();
        let s = Arc::new(s);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let weak = Arc::downgrade(&s);
        let seen2 = Arc::clone(&seen);
        s.subscribe(Box::new(move |snap| {
            seen2.lock().unwrap().push(snap.mode);
            if snap.mode == Mode::Edit {
                if let Some(s) = weak.upgrade() {
                    s.set_mode(Mode::Plan);
                }
            }
        }));
        s.set_mode(Mode::Edit);
        assert_eq!(*seen.lock().unwrap(), vec![Mode::Edit, Mode::Plan]);
        assert_eq!(s.mode(), Mode::Plan);
    }

    #[test]
    fn panicking_observer_does_not_stop_delivery() {
        let (_d, s) = state();
        let count = Arc::new(AtomicUsize::new(0));
        s.subscribe(Box::new(|_| panic!("observer bug")));
        let c = Arc::clone(&count);
        s.subscribe(Box::new(move |_| {
            c.fetch_add(1, Ordering::SeqCst);
        }));
        s.cycle_mode();
        s.cycle_mode();
        assert_eq!(count.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn parse_mode_error_lists_modes() {
        assert_eq!(parse_mode("Plan").unwrap(), Mode::Plan);
        let e = parse_mode("warp").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown mode `warp` (available modes: default, edit, plan, auto, bypass)"
        );
    }

    #[test]
    fn state_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<ActiveState>();
    }
}
