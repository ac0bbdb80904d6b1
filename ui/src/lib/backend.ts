/**
 * The one door between the web UI and the Rust backend.
 *
 * Only this module imports `@tauri-apps/*` (enforced by ESLint). Every command and
 * event is declared once in Rust (decode-protocol `wire.rs`) and generated into
 * `./gen/wire.ts`: `call` and `on` take a command's or an event's name and are typed
 * by that map, so an argument or a payload the backend does not have is a type error
 * here. The wrappers below only give the commands the page's names and doc comments.
 * Tests replace this whole module with `vi.mock`.
 *
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
  McpServerView,
  Mode,
  PendingDecision,
  ProjectOpened,
  ProjectRules,
  ProviderChoice,
  ProviderName,
  ProviderSave,
  ProviderView,
  RecentProject,
  RuleCheck,
  RuleList,
  SessionSummary,
  SessionView,
  SettingsList,
  Snapshot,
  StreamEvent,
  TrustPreview,
  TurnCheckpoint,
  UndoPlan,
  UndoReport,
} from './gen/protocol';
import type { Commands, Events } from './gen/wire';

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

async function call<K extends keyof Commands>(
  command: K,
  ...args: Commands[K]['args'] extends null ? [] : [Commands[K]['args']]
): Promise<Commands[K]['result']> {
  if (!isTauri()) throw notConnected(`Command ${command}`);
  try {
    return await invoke<Commands[K]['result']>(command, args[0] ?? undefined);
  } catch (error) {
    throw toBackendError(error, `Command ${command}`);
  }
}

async function on<K extends keyof Events>(event: K, what: string, cb: (payload: Events[K]) => void): Promise<() => void> {
  if (!isTauri()) throw notConnected(what);
  try {
    return await listen<Events[K]>(event, (e) => cb(e.payload));
  } catch (error) {
    throw toBackendError(error, what);
  }
}

export function getStatus(): Promise<Snapshot> {
  return call('get_status');
}

export function setMode(mode: Mode): Promise<Snapshot> {
  return call('set_mode', { mode });
}

export function cycleMode(): Promise<Snapshot> {
  return call('cycle_mode');
}

export function selectAgent(name: string): Promise<Snapshot> {
  return call('select_agent', { name });
}

/** Every mode or agent change, from any surface (this window, the tray). */
export function onStatus(cb: (status: Snapshot) => void): Promise<() => void> {
  return on('status', 'Status updates', cb);
}

/** Another folder, session, model setup or conversation is open in this window: the page starts over on it. */
export function onProject(cb: (opened: ProjectOpened) => void): Promise<() => void> {
  return on('project', 'Project changes', cb);
}

export function getChat(): Promise<ChatStatus> {
  return call('get_chat');
}

/** Changes of the chat session: usage, running, session rules, todos. */
export function onChat(cb: (chat: ChatStatus) => void): Promise<() => void> {
  return on('chat', 'Chat updates', cb);
}

/** The events of a resumed session, to show its history. */
export function getHistory(): Promise<LoopEvent[]> {
  return call('get_history');
}

/** Sends a prompt; resolves once it started. Its events arrive on `onEvent` until `done`. */
export function sendPrompt(text: string, onEvent: (event: StreamEvent) => void): Promise<void> {
  if (!isTauri()) return Promise.reject(notConnected('Sending a message'));
  const channel = new Channel<StreamEvent[]>();
  channel.onmessage = (batch) => {
    for (const event of batch) onEvent(event);
  };
  return call('send_prompt', { text, onEvent: channel });
}

/** Stops the running prompt (and kills a running tool). Resolves to whether one ran. */
export function stopPrompt(): Promise<boolean> {
  return call('stop_prompt');
}

export function pendingDecisions(): Promise<PendingDecision[]> {
  return call('pending_decisions');
}

export function answerDecision(id: number, answer: DecisionAnswer): Promise<void> {
  return call('answer_decision', { id, answer });
}

/** Asks the gate whether `rules` may be saved by "always allow" for pending ask `id`. */
export function checkRules(id: number, rules: string[]): Promise<RuleCheck> {
  return call('check_rules', { id, rules });
}

/** Every ask, question and plan approval of the decision channel, and their resolution. */
export function onDecision(cb: (event: ChannelEvent) => void): Promise<() => void> {
  return on('decision', 'Approvals', cb);
}

/**
 * Opens an http(s) link in the person's own browser. Only called after the person
 * clicked the link and confirmed its full URL; the webview itself never navigates.
 */
export function openLink(url: string): Promise<void> {
  return call('open_link', { url });
}

// ---- Projects ----

export function recentProjects(): Promise<RecentProject[]> {
  return call('recent_projects');
}

export function forgetProject(path: string): Promise<void> {
  return call('forget_project', { path });
}

/** Opens a folder in this window (the `project` event follows); `stopFirst` stops and ends the running turn first. */
export function openProjectPath(path: string, stopFirst = false): Promise<void> {
  return call('open_project_path', { path, stopFirst });
}

/** The native folder picker; resolves true once the folder chosen is open, false when the person cancelled. */
export function chooseProject(stopFirst = false): Promise<boolean> {
  return call('choose_project', { stopFirst });
}

/** A new conversation in this folder (the old one stays in the sessions list). */
export function newChat(stopFirst = false): Promise<void> {
  return call('new_chat', { stopFirst });
}

// ---- Trust ----

export function trustPreview(): Promise<TrustPreview> {
  return call('trust_preview');
}

export function setTrust(trusted: boolean): Promise<TrustPreview> {
  return call('set_trust', { trusted });
}

/** "Not now": the folder stays untrusted; the dialog is not shown again for it. */
export function dismissTrust(): Promise<void> {
  return call('dismiss_trust');
}

// ---- Rules ----

export function projectRules(): Promise<ProjectRules> {
  return call('project_rules');
}

export function addRule(list: RuleList, rule: string): Promise<ProjectRules> {
  return call('add_rule', { list, rule });
}

export function removeRule(list: RuleList, rule: string): Promise<ProjectRules> {
  return call('remove_rule', { list, rule });
}

/** Why an allow rule would let any code run, if it would (shown before it is added). */
export function ruleWarning(rule: string): Promise<string | null> {
  return call('rule_warning', { rule });
}

export function setSettingsList(key: SettingsList, values: string[]): Promise<ProjectRules> {
  return call('set_settings_list', { key, values });
}

/** The gate's verdict for "tool subject" in the current agent and mode. */
export function testCall(text: string): Promise<CallCheck> {
  return call('test_call', { text });
}

export function dropSessionRule(rule: string): Promise<boolean> {
  return call('drop_session_rule', { rule });
}

/** The project's MCP servers (docs/mcp.md): status, tools, what each tool claims. */
export function mcpServers(): Promise<McpServerView[]> {
  return call('mcp_servers');
}

/** Turns a server on or off: yours gets or loses `"disabled": true`; a project's is approved or refused. */
export function mcpSetEnabled(name: string, enabled: boolean): Promise<McpServerView[]> {
  return call('mcp_set_enabled', { name, enabled });
}

// ---- Provider and key ----

export function providerSettings(): Promise<ProviderView> {
  return call('provider_settings');
}

/** Saves the provider fields; a base URL that would send a stored key to another host
 * is not saved until the person confirms that host (`confirm_key_host`). */
export function saveProvider(choice: ProviderChoice): Promise<ProviderSave> {
  return call('save_provider', { choice });
}

export function keyStatus(provider: ProviderName): Promise<KeyStatus> {
  return call('key_status', { provider });
}

/** Stores the key in the OS keyring; the key is never sent back. */
export function setApiKey(provider: ProviderName, key: string): Promise<KeyStatus> {
  return call('set_api_key', { provider, key });
}

export function deleteApiKey(provider: ProviderName): Promise<KeyStatus> {
  return call('delete_api_key', { provider });
}

/** One tiny request to the configured model; resolves to the one-line outcome. */
export function testConnection(): Promise<string> {
  return call('test_connection');
}

// ---- Sessions ----

export function listSessions(): Promise<SessionSummary[]> {
  return call('list_sessions');
}

export function readSession(id: string): Promise<SessionView> {
  return call('read_session', { id });
}

/** Continues a saved session in this window (the `project` event follows); `stopFirst` stops the running turn first. */
export function resumeSession(id: string, stopFirst = false): Promise<void> {
  return call('resume_session', { id, stopFirst });
}

/** Opens the offline demo on a scratch project (the `project` event follows). */
export function startDemo(): Promise<void> {
  return call('start_demo');
}

// ---- Checkpoints (docs/checkpoints.md) ----

/** The turns of this chat's session that changed files, newest first. */
export function checkpointTurns(): Promise<TurnCheckpoint[]> {
  return call('checkpoint_turns');
}

/** What undoing turn `turn` (and, with `laterTurns`, every later one) would do; changes nothing. */
export function undoPlan(turn: number, laterTurns: boolean): Promise<UndoPlan> {
  return call('undo_plan', { turn, laterTurns });
}

/** Undoes it; a conflict is restored only when its path is in `overwrite`. */
export function undoTurn(turn: number, laterTurns: boolean, overwrite: string[]): Promise<UndoReport> {
  return call('undo_turn', { turn, laterTurns, overwrite });
}
