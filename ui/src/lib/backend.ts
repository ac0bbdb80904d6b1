/**
 * The one door between the web UI and the Rust backend.
 *
 * Only this module imports `@tauri-apps/*` (enforced by ESLint). It holds nothing but
 * typed wrappers over the Tauri commands and events; every type crossing the boundary
 * is generated from Rust into `./gen/` (never spelled here by hand). Tests replace this
 * whole module with `vi.mock`.
 *
 * Commands (src-tauri/src/gui.rs):
 *   get_status | set_mode {mode} | cycle_mode | select_agent {name}  -> Snapshot
 *   get_chat -> ChatStatus, get_history -> LoopEvent[]
 *   send_prompt {text, onEvent: Channel<StreamEvent[]>} (events in small batches), stop_prompt -> boolean
 *   pending_decisions -> PendingDecision[], answer_decision {id, answer},
 *   check_rules {id, rules} -> RuleCheck
 * Projects, trust, settings, sessions (src-tauri/src/screens.rs):
 *   recent_projects, forget_project {path}, open_project_path {path}, choose_project -> boolean
 *   trust_preview, set_trust {trusted}, dismiss_trust
 *   project_rules, add_rule / remove_rule {list, rule}, set_settings_list {key, values} -> ProjectRules
 *   test_call {text} -> CallCheck, drop_session_rule {rule}
 *   provider_settings, save_provider {choice} -> ProviderView; key_status, set_api_key, delete_api_key
 *   test_connection -> string; list_sessions, read_session {id}, resume_session {id}; start_demo
 *   open_link {url} (the person's browser, after they saw the full URL)
 * Events: `status` (Snapshot), `chat` (ChatStatus), `decision` (ChannelEvent).
 * Errors arrive as IpcError `{kind, message}` and are rethrown as BackendError.
 */
import { Channel, invoke, isTauri } from '@tauri-apps/api/core';
import { listen } from '@tauri-apps/api/event';
import type {
  CallCheck,
  ChannelEvent,
  ChatStatus,
  DecisionAnswer,
  ErrorKind,
  KeyStatus,
  LoopEvent,
  Mode,
  PendingDecision,
  ProjectRules,
  ProviderChoice,
  ProviderSave,
  ProviderView,
  RecentProject,
  RuleCheck,
  RuleList,
  SessionSummary,
  SessionView,
  Snapshot,
  StreamEvent,
  TrustPreview,
} from './gen/protocol';

/** An error reported by the backend (or by the IPC layer), with a readable message. */
export class BackendError extends Error {
  /** Machine-readable category (the backend's ErrorKind, or `not_connected`/`other`). */
  readonly kind: ErrorKind;

  constructor(kind: ErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BackendError';
    this.kind = kind;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Turn whatever `invoke`/`listen` rejected with into a BackendError. */
export function toBackendError(error: unknown, what: string): BackendError {
  if (error instanceof BackendError) return error;
  if (isRecord(error) && typeof error.message === 'string' && error.message.trim() !== '') {
    const kind = typeof error.kind === 'string' && error.kind !== '' ? (error.kind as ErrorKind) : 'other';
    return new BackendError(kind, error.message, { cause: error });
  }
  if (typeof error === 'string' && error.trim() !== '') {
    return new BackendError('other', error, { cause: error });
  }
  return new BackendError('other', `${what} failed for an unknown reason.`, { cause: error });
}

function notConnected(what: string): BackendError {
  return new BackendError(
    'not_connected',
    `${what} is unavailable: the page is not running inside the Decode app, so there is no backend.`,
  );
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  if (!isTauri()) throw notConnected(`Command ${command}`);
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    throw toBackendError(error, `Command ${command}`);
  }
}

async function on<T>(event: string, what: string, cb: (payload: T) => void): Promise<() => void> {
  if (!isTauri()) throw notConnected(what);
  try {
    return await listen<T>(event, (e) => cb(e.payload));
  } catch (error) {
    throw toBackendError(error, what);
  }
}

export function getStatus(): Promise<Snapshot> {
  return call<Snapshot>('get_status');
}

export function setMode(mode: Mode): Promise<Snapshot> {
  return call<Snapshot>('set_mode', { mode });
}

export function cycleMode(): Promise<Snapshot> {
  return call<Snapshot>('cycle_mode');
}

export function selectAgent(name: string): Promise<Snapshot> {
  return call<Snapshot>('select_agent', { name });
}

/** Every mode or agent change, from any surface (this window, the tray). */
export function onStatus(cb: (status: Snapshot) => void): Promise<() => void> {
  return on<Snapshot>('status', 'Status updates', cb);
}

/** Another project folder was opened in this window (a second `decode DIR`). */
export function onProject(cb: (status: Snapshot) => void): Promise<() => void> {
  return on<Snapshot>('project', 'Project changes', cb);
}

export function getChat(): Promise<ChatStatus> {
  return call<ChatStatus>('get_chat');
}

/** Changes of the chat session: usage, running, session rules, todos. */
export function onChat(cb: (chat: ChatStatus) => void): Promise<() => void> {
  return on<ChatStatus>('chat', 'Chat updates', cb);
}

/** The events of a resumed session, to show its history. */
export function getHistory(): Promise<LoopEvent[]> {
  return call<LoopEvent[]>('get_history');
}

/** Sends a prompt; resolves once it started. Its events arrive on `onEvent` until `done`. */
export function sendPrompt(text: string, onEvent: (event: StreamEvent) => void): Promise<void> {
  if (!isTauri()) return Promise.reject(notConnected('Sending a message'));
  const channel = new Channel<StreamEvent[]>();
  channel.onmessage = (batch) => {
    for (const event of batch) onEvent(event);
  };
  return call<void>('send_prompt', { text, onEvent: channel });
}

/** Stops the running prompt (and kills a running tool). Resolves to whether one ran. */
export function stopPrompt(): Promise<boolean> {
  return call<boolean>('stop_prompt');
}

export function pendingDecisions(): Promise<PendingDecision[]> {
  return call<PendingDecision[]>('pending_decisions');
}

export function answerDecision(id: number, answer: DecisionAnswer): Promise<void> {
  return call<void>('answer_decision', { id, answer });
}

/** Asks the gate whether `rules` may be saved by "always allow" for pending ask `id`. */
export function checkRules(id: number, rules: string[]): Promise<RuleCheck> {
  return call<RuleCheck>('check_rules', { id, rules });
}

/** Every ask, question and plan approval of the decision channel, and their resolution. */
export function onDecision(cb: (event: ChannelEvent) => void): Promise<() => void> {
  return on<ChannelEvent>('decision', 'Approvals', cb);
}

/**
 * Opens an http(s) link in the person's own browser. Only called after the person
 * clicked the link and confirmed its full URL; the webview itself never navigates.
 */
export function openLink(url: string): Promise<void> {
  return call<void>('open_link', { url });
}

// ---- Projects ----

export function recentProjects(): Promise<RecentProject[]> {
  return call<RecentProject[]>('recent_projects');
}

export function forgetProject(path: string): Promise<void> {
  return call<void>('forget_project', { path });
}

/** Opens a folder in this window; the page starts over on it once this resolves. */
export function openProjectPath(path: string): Promise<void> {
  return call<void>('open_project_path', { path });
}

/** The native folder picker; resolves true once the folder chosen is open (the page then starts over), false when the person cancelled. */
export function chooseProject(): Promise<boolean> {
  return call<boolean>('choose_project');
}

// ---- Trust ----

export function trustPreview(): Promise<TrustPreview> {
  return call<TrustPreview>('trust_preview');
}

export function setTrust(trusted: boolean): Promise<TrustPreview> {
  return call<TrustPreview>('set_trust', { trusted });
}

/** "Not now": the folder stays untrusted; the dialog is not shown again for it. */
export function dismissTrust(): Promise<void> {
  return call<void>('dismiss_trust');
}

// ---- Rules ----

export function projectRules(): Promise<ProjectRules> {
  return call<ProjectRules>('project_rules');
}

export function addRule(list: RuleList, rule: string): Promise<ProjectRules> {
  return call<ProjectRules>('add_rule', { list, rule });
}

export function removeRule(list: RuleList, rule: string): Promise<ProjectRules> {
  return call<ProjectRules>('remove_rule', { list, rule });
}

export function setSettingsList(
  key: 'additionalDirectories' | 'protectedBranches',
  values: string[],
): Promise<ProjectRules> {
  return call<ProjectRules>('set_settings_list', { key, values });
}

/** The gate's verdict for "tool subject" in the current agent and mode. */
export function testCall(text: string): Promise<CallCheck> {
  return call<CallCheck>('test_call', { text });
}

export function dropSessionRule(rule: string): Promise<boolean> {
  return call<boolean>('drop_session_rule', { rule });
}

// ---- Provider and key ----

export function providerSettings(): Promise<ProviderView> {
  return call<ProviderView>('provider_settings');
}

/** Saves the provider fields; a base URL that would send a stored key to another host
 * is not saved until the person confirms that host (`confirm_key_host`). */
export function saveProvider(choice: ProviderChoice): Promise<ProviderSave> {
  return call<ProviderSave>('save_provider', { choice });
}

export function keyStatus(provider: string): Promise<KeyStatus> {
  return call<KeyStatus>('key_status', { provider });
}

/** Stores the key in the OS keyring; the key is never sent back. */
export function setApiKey(provider: string, key: string): Promise<KeyStatus> {
  return call<KeyStatus>('set_api_key', { provider, key });
}

export function deleteApiKey(provider: string): Promise<KeyStatus> {
  return call<KeyStatus>('delete_api_key', { provider });
}

/** One tiny request to the configured model; resolves to the one-line outcome. */
export function testConnection(): Promise<string> {
  return call<string>('test_connection');
}

// ---- Sessions ----

export function listSessions(): Promise<SessionSummary[]> {
  return call<SessionSummary[]>('list_sessions');
}

export function readSession(id: string): Promise<SessionView> {
  return call<SessionView>('read_session', { id });
}

/** Continues a saved session in this window (the page starts over on it once this resolves). */
export function resumeSession(id: string): Promise<void> {
  return call<void>('resume_session', { id });
}

/** Opens the offline demo on a scratch project (the page starts over on it once this resolves). */
export function startDemo(): Promise<void> {
  return call<void>('start_demo');
}
