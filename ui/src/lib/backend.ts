/**
 * The one door between the web UI and the Rust backend.
 *
 * Only this module imports `@tauri-apps/*` (enforced by ESLint). Components call
 * the typed wrappers below; tests replace this whole module with `vi.mock`.
 *
 * Tauri command contract (the Rust side must match these names and shapes):
 *   get_status                      -> Status
 *   set_mode      { mode: Mode }    -> Status
 *   cycle_mode                      -> Status
 *   select_agent  { name: string }  -> Status
 *   event `status` (payload: Status), emitted on every change from any surface.
 * Errors are serialised as `{ kind: string, message: string }`.
 */
import { invoke, isTauri } from '@tauri-apps/api/core';
import { listen } from '@tauri-apps/api/event';

export type Mode = 'default' | 'edit' | 'plan' | 'auto' | 'bypass';

export type AgentInfo = {
  name: string;
  description: string;
};

export type Status = {
  mode: Mode;
  /** Name of the active agent. */
  agent: string;
  /** The whole catalog, in display order. */
  agents: AgentInfo[];
  /** Absolute path of the open project folder. */
  project: string;
};

/** An error reported by the backend (or by the IPC layer), with a readable message. */
export class BackendError extends Error {
  /** Machine-readable category from the backend, e.g. `unknown_agent`. */
  readonly kind: string;

  constructor(kind: string, message: string, options?: { cause?: unknown }) {
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
    const kind = typeof error.kind === 'string' && error.kind !== '' ? error.kind : 'error';
    return new BackendError(kind, error.message, { cause: error });
  }
  if (typeof error === 'string' && error.trim() !== '') {
    return new BackendError('error', error, { cause: error });
  }
  return new BackendError('unknown', `${what} failed for an unknown reason.`, { cause: error });
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

export function getStatus(): Promise<Status> {
  return call<Status>('get_status');
}

export function setMode(mode: Mode): Promise<Status> {
  return call<Status>('set_mode', { mode });
}

export function cycleMode(): Promise<Status> {
  return call<Status>('cycle_mode');
}

export function selectAgent(name: string): Promise<Status> {
  return call<Status>('select_agent', { name });
}

/**
 * Subscribe to the backend's `status` event (emitted after every mode or agent
 * change, whichever surface made it: this window, the tray, the CLI flags).
 * Resolves to the unsubscribe function.
 */
export async function onStatus(cb: (status: Status) => void): Promise<() => void> {
  if (!isTauri()) throw notConnected('Status updates');
  try {
    return await listen<Status>('status', (event) => cb(event.payload));
  } catch (error) {
    throw toBackendError(error, 'Status updates');
  }
}
