import type { NewChatItem } from './chat';

/** Where a reply goes: the chat log. */
export type ReplySink = {
  add(item: NewChatItem): void;
};

/** The notice shown while this build has no model connection. */
export const MODEL_NOT_CONFIGURED =
  'The model connection is not configured in this build yet, so this message was not sent to an agent. ' +
  'Mode and agent switching, /help and the status bar already work.';

/**
 * Answer one prompt from the person.
 *
 * This is the single place to replace when the agent loop lands: it will call
 * the backend (`sendPrompt`) and stream assistant and tool messages into `sink`.
 * Until then it says, honestly, that there is no model connection.
 */
export async function replyToPrompt(_prompt: string, sink: ReplySink): Promise<void> {
  sink.add({ kind: 'message', role: 'assistant', notice: true, text: MODEL_NOT_CONFIGURED });
}
