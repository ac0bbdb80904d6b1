import type { HelpSection } from './commands';
import type { Decision, DecisionAnswer, JsonValue, Verdict } from './gen/protocol';
import type { Transcript } from './transcript.svelte';

export type Role = 'user' | 'assistant';

/** How a tool card stands. */
export type ToolStatus = 'running' | 'done' | 'denied' | 'error' | 'stopped';

/** A tool call as the chat shows it: a card. */
export type ToolItem = {
  id: number;
  kind: 'tool';
  callId: string;
  name: string;
  input: JsonValue;
  /** What the call is about, in one line (the backend's title: command, path, URL…). */
  title?: string;
  /** The gate's verdict when the call started (absent for unknown tools / bad JSON). */
  decision?: Decision;
  status: ToolStatus;
  /** Streamed stdout/stderr (bash), newest last. */
  output: string;
  /** What the model read back. */
  content?: string;
  verdict?: Verdict;
  answer?: DecisionAnswer;
  note?: string;
  diff?: string;
  /** The command as the person edited it before it ran. */
  edited?: string;
  /** Bash: whether it ran in the sandbox (false: approved by the person, or no sandbox here). */
  sandboxed?: boolean;
  /** Bash: the exit code, when the command ran to its end. */
  exitCode?: number;
  /** How long the tool ran. */
  durationMs?: number;
  /** Images the tool returned (an MCP tool): raster types only, shown as images. */
  images?: ToolImage[];
  /** A `task` call: the subagent it started, with its own steps (docs/agents.md). */
  subagent?: SubagentRun;
};

/** A subagent's run as its `task` card shows it: its name and its own chat log (its
 * prompt, text, tool cards), filled live from the `subagent` events of the call. */
export type SubagentRun = { agent: string; steps: Transcript };

/** An image of a tool result: a raster MIME type and its base64 data (docs/mcp.md). */
export type ToolImage = { mimeType: string; data: string };

/** The image types a card shows (never SVG: it can hold script). */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** The most images one card keeps. */
export const MAX_CARD_IMAGES = 8;

/** One entry of the chat log. Only `message` entries are chat messages proper. */
export type ChatItem =
  /** `agent`: the agent that wrote an assistant message (when the window knew it). */
  | { id: number; kind: 'message'; role: Role; text: string; streaming?: boolean; agent?: string }
  | ToolItem
  /** One-line confirmation of a mode or agent switch. */
  | { id: number; kind: 'confirm'; text: string }
  /** One-line error: unknown command, backend failure, provider failure… */
  | { id: number; kind: 'error'; text: string }
  /** Something to know: retries, shortened context, a stopped run, the setup hint
   * (`setup`: it goes once the model is set up). */
  | { id: number; kind: 'notice'; text: string; setup?: boolean }
  | { id: number; kind: 'help'; sections: HelpSection[] };

/** A chat item before it gets its id. */
export type NewChatItem = ChatItem extends infer T ? (T extends ChatItem ? Omit<T, 'id'> : never) : never;

let nextId = 1;

export function withId(item: NewChatItem): ChatItem {
  return { ...item, id: nextId++ } as ChatItem;
}

/** A readable one-line message for anything thrown or rejected. */
export function errorText(error: unknown): string {
  if (error instanceof Error && error.message.trim() !== '') return error.message;
  if (typeof error === 'string' && error.trim() !== '') return error;
  return 'Something went wrong (no details were given).';
}

/** A duration for a card's line: "0.4 s", "12 s", "2 min 5 s". */
export function durationText(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}
