/**
 * The chat log as state: loop events from the backend become chat items (the person's
 * messages, the agent's streamed text, tool cards, notices and errors), and the
 * window's own lines (switch confirmations, /help, command errors) join them.
 *
 * Events of a running prompt arrive one by one (a token each at 1,000 tokens/s); they
 * are queued and applied once per animation frame, so the DOM changes at most once a
 * frame however fast they come. The time from the backend handing an event over to
 * its paint is recorded (see `perf`).
 */
import type { ChatItem, NewChatItem, ToolItem } from './chat';
import { tick } from 'svelte';
import { IMAGE_TYPES, MAX_CARD_IMAGES, withId } from './chat';
import { nextFrame } from './frames';
import type { LoopEvent, Outcome, StreamEvent } from './gen/protocol';

/** How much streamed tool output a card keeps (the tail). */
export const MAX_TOOL_OUTPUT = 64 * 1024;

/**
 * Latencies from a text delta leaving the backend to its paint, in ms (the last 2,000).
 * Exposed to the bench as `window.__decodePerf` (see main.ts).
 */
export const perf = {
  tokenToPaint: [] as number[],
  /** Script time of each batch: applying it and updating the DOM (no layout or paint). */
  flushWork: [] as number[],
  record(ms: number) {
    this.tokenToPaint.push(ms);
    if (this.tokenToPaint.length > 2000) this.tokenToPaint.splice(0, this.tokenToPaint.length - 2000);
  },
};

/** Wall-clock milliseconds with sub-ms precision, comparable with the backend's `at_ms`. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}

type Schedule = (cb: () => void) => void;

export class Transcript {
  items = $state<ChatItem[]>([]);
  /** Output tokens of the prompt running now: counted by finished turns, estimated while one streams. */
  liveTokens = $state(0);
  /** Input tokens of the finished model turns of this log (a subagent's card shows them). */
  inputTokens = $state(0);
  /** How the run of this log ended (a subagent's card shows it); null while it runs. */
  outcome = $state<Outcome | null>(null);
  #liveChars = 0;
  #liveDone = 0;

  #queue: StreamEvent[] = [];
  #scheduled = false;
  #schedule: Schedule;
  /** The assistant message being streamed, if any. */
  #streaming: (ChatItem & { kind: 'message' }) | null = null;
  // An index into `items` (whose entries are the reactive ones), not state itself.
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  #tools = new Map<string, ToolItem>();
  /** The agent of the model turn running now (from its start): its name goes on each
   * assistant message of that turn, so a later switch does not relabel it. */
  agent: string | null = null;
  /** Called after a batch was applied (the log scrolls). */
  onApplied: (() => void) | null = null;

  constructor(schedule: Schedule = nextFrame) {
    this.#schedule = schedule;
  }

  add(item: NewChatItem): ChatItem {
    const full = withId(item);
    this.items.push(full);
    // Return the reactive proxy, so later changes through it are seen.
    return this.items[this.items.length - 1];
  }

  /** Queues an event of a running prompt; applied at the next frame. */
  push(event: StreamEvent) {
    this.#queue.push(event);
    if (!this.#scheduled) {
      this.#scheduled = true;
      this.#schedule(() => this.flush());
    }
  }

  /** Applies every queued event now. */
  flush() {
    const started = performance.now();
    this.#scheduled = false;
    const batch = this.#queue;
    this.#queue = [];
    let lastDeltaAt: number | null = null;
    for (const e of batch) {
      this.apply(e.event);
      if (e.event.type === 'text_delta') lastDeltaAt = e.at_ms;
    }
    this.onApplied?.();
    void tick().then(() => {
      perf.flushWork.push(performance.now() - started);
      if (perf.flushWork.length > 2000) perf.flushWork.shift();
    });
    if (lastDeltaAt !== null) {
      const at = lastDeltaAt;
      // Flushes run in an animation frame: a task queued now runs once that frame
      // is painted, which is when the token became visible.
      setTimeout(() => perf.record(wallClockMs() - at), 0);
    }
  }

  /** Takes away the setup hint (the model is set up now: the hint would be stale). */
  dropSetupHints() {
    if (this.items.some((i) => i.kind === 'notice' && i.setup)) {
      this.items = this.items.filter((i) => !(i.kind === 'notice' && i.setup));
    }
  }

  #author(): { agent?: string } {
    return this.agent === null ? {} : { agent: this.agent };
  }

  /** Forgets everything shown (the window is on another conversation now). */
  reset() {
    this.agent = null;
    this.items = [];
    this.#queue = [];
    this.#streaming = null;
    this.#tools.clear();
  }

  /** Applies a whole history at once (a resumed session). */
  load(events: LoopEvent[]) {
    for (const e of events) this.apply(e);
    this.#streaming = null;
    for (const card of this.#tools.values()) {
      // A call that never got its result was interrupted when the session stopped.
      if (card.status === 'running') card.status = 'stopped';
      card.subagent?.steps.load([]);
    }
  }

  #startStreaming(): ChatItem & { kind: 'message' } {
    const item = this.add({ kind: 'message', role: 'assistant', text: '', streaming: true, ...this.#author() }) as ChatItem & {
      kind: 'message';
    };
    this.#streaming = item;
    return item;
  }

  #tool(callId: string): ToolItem | undefined {
    return this.#tools.get(callId);
  }

  apply(event: LoopEvent) {
    switch (event.type) {
      case 'user_prompt':
        this.outcome = null;
        this.#liveChars = 0;
        this.#liveDone = 0;
        this.liveTokens = 0;
        this.#streaming = null;
        this.add({ kind: 'message', role: 'user', text: event.text });
        return;
      case 'turn_start':
        this.#streaming = null;
        this.agent = event.agent;
        return;
      case 'text_delta': {
        const current = this.#streaming ?? this.#startStreaming();
        current.text += event.text;
        // About four characters a token, until the turn's usage says.
        this.#liveChars += event.text.length;
        this.liveTokens = this.#liveDone + Math.round(this.#liveChars / 4);
        return;
      }
      case 'assistant_message': {
        const current = this.#streaming;
        if (current !== null) {
          current.text = event.text;
          current.streaming = false;
        } else if (event.text.trim() !== '') {
          this.add({ kind: 'message', role: 'assistant', text: event.text, ...this.#author() });
        }
        this.#streaming = null;
        return;
      }
      case 'tool_call_started': {
        this.#streaming = null;
        const card = this.add({
          kind: 'tool',
          callId: event.id,
          name: event.name,
          input: event.input,
          title: event.title,
          decision: event.decision,
          status: 'running',
          output: '',
        }) as ToolItem;
        this.#tools.set(event.id, card);
        return;
      }
      case 'tool_progress': {
        const card = this.#tool(event.id);
        if (!card) return;
        let out = card.output + event.text;
        if (out.length > MAX_TOOL_OUTPUT) out = out.slice(out.length - MAX_TOOL_OUTPUT);
        card.output = out;
        return;
      }
      case 'tool_result': {
        let card = this.#tool(event.id);
        if (!card) {
          card = this.add({
            kind: 'tool',
            callId: event.id,
            name: event.name,
            input: null,
            status: 'running',
            output: '',
          }) as ToolItem;
          this.#tools.set(event.id, card);
        }
        card.content = event.content;
        card.verdict = event.verdict;
        card.answer = event.answer;
        card.note = event.note;
        card.diff = event.diff;
        card.edited = event.edited_command;
        card.sandboxed = event.sandboxed;
        card.exitCode = event.exit_code;
        card.durationMs = event.duration_ms;
        card.status = toolStatus(event);
        return;
      }
      case 'tool_image': {
        // An MCP tool's image, for its card: a raster type and base64 data only (the
        // engine checks too; an SVG or anything else is never shown).
        const card = this.#tool(event.id);
        if (!card || !IMAGE_TYPES.includes(event.mime_type) || !/^[A-Za-z0-9+/]*={0,2}$/.test(event.data)) return;
        const images = card.images ?? [];
        if (images.length >= MAX_CARD_IMAGES) return;
        card.images = [...images, { mimeType: event.mime_type, data: event.data }];
        return;
      }
      case 'notice':
        this.add({ kind: 'notice', text: event.text });
        return;
      case 'error':
        this.#streaming = null;
        this.add({ kind: 'error', text: event.message });
        return;
      case 'turn_end':
        if (event.usage) {
          this.inputTokens += event.usage.input_tokens;
          this.#liveDone += event.usage.output_tokens;
          this.#liveChars = 0;
          this.liveTokens = this.#liveDone;
        }
        return;
      case 'done':
        this.outcome = event.outcome;
        if (this.#streaming) this.#streaming.streaming = false;
        this.#streaming = null;
        for (const card of this.#tools.values()) {
          if (card.status === 'running') card.status = event.outcome === 'cancelled' ? 'stopped' : 'error';
        }
        if (event.outcome === 'cancelled') this.add({ kind: 'notice', text: 'Stopped.' });
        if (event.outcome === 'max_turns') {
          // The loop already said so in a notice.
        }
        return;
      case 'subagent': {
        // A step of the subagent a `task` call started: into that call's card, applied
        // at once (this batch is already the frame's).
        const card = this.#tool(event.parent_id);
        if (!card) return;
        if (!card.subagent) card.subagent = { agent: event.agent, steps: new Transcript() };
        card.subagent.steps.apply(event.event);
        // The working line counts the subagents' finished turns too.
        if (event.event.type === 'turn_end' && event.event.usage) {
          this.#liveDone += event.event.usage.output_tokens;
          this.liveTokens = this.#liveDone + Math.round(this.#liveChars / 4);
        }
        return;
      }
    }
  }
}

/** The card status of a finished call. */
export function toolStatus(event: Extract<LoopEvent, { type: 'tool_result' }>): ToolItem['status'] {
  if (event.stopped) return 'stopped';
  if (event.ran) return event.is_error ? 'error' : 'done';
  const denied =
    event.verdict === 'deny' || event.answer?.kind === 'deny' || event.answer?.kind === 'unavailable';
  return denied ? 'denied' : 'error';
}
