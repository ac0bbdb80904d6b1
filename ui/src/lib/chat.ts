import type { HelpSection } from './commands';

export type Role = 'user' | 'assistant' | 'tool';

/** One entry of the chat log. Only `message` entries are chat messages proper. */
export type ChatItem =
  | { id: number; kind: 'message'; role: Role; text: string; notice?: boolean }
  /** One-line confirmation of a mode or agent switch. */
  | { id: number; kind: 'confirm'; text: string }
  /** One-line error: unknown command, backend failure… */
  | { id: number; kind: 'error'; text: string }
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
