/**
 * The queue of decisions waiting for the person, as the decision channel reports it:
 * the current request (shown in a dialog) and those queued behind it ("1 of 3").
 * Each carries what it offers (derived once by the backend: the dialogs show those
 * answers and no other) and is answered once; a request resolved elsewhere (another surface, a stopped
 * run) leaves the queue and its dialog closes.
 */
import type { ChannelEvent, PendingDecision } from './gen/protocol';

export class DecisionQueue {
  items = $state<PendingDecision[]>([]);

  /** The request to answer now. */
  get current(): PendingDecision | null {
    return this.items[0] ?? null;
  }

  /** Replaces the queue (at start-up, from `pendingDecisions`). */
  reset(pending: PendingDecision[]) {
    this.items = [...pending];
  }

  apply(event: ChannelEvent) {
    switch (event.kind) {
      case 'pending': {
        // The channel's current one goes first; it may already be known as queued.
        const rest = this.items.filter((p) => p.id !== event.id);
        this.items = [{ id: event.id, request: event.request, offered: event.offered, agent: event.agent }, ...rest];
        return;
      }
      case 'queued':
        if (!this.items.some((p) => p.id === event.id))
          this.items.push({ id: event.id, request: event.request, offered: event.offered, agent: event.agent });
        return;
      case 'resolved':
        this.items = this.items.filter((p) => p.id !== event.id);
        return;
    }
  }

  /** Removes a request the window answered (before the channel confirms it). */
  answered(id: number) {
    this.items = this.items.filter((p) => p.id !== id);
  }
}
