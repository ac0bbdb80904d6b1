import { describe, expect, it } from 'vitest';
import { render, waitFor } from '@testing-library/svelte';
import type { ChatItem } from '../lib/chat';
import { isPrepared } from '../lib/markdown';
import ChatLog, { AHEAD, PAGE, WARM_AFTER } from './ChatLog.svelte';

/** A long session: prompts and Markdown answers, `n` entries. */
function session(n: number, tag: string): ChatItem[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? { id: i + 1, kind: 'message', role: 'user', text: `question ${tag} ${i}` }
      : { id: i + 1, kind: 'message', role: 'assistant', text: `answer ${tag} ${i}: **bold**\n\n- a\n- b` },
  );
}

describe('ChatLog', () => {
  it('warms text rendering up once, unseen, and then removes it', async () => {
    const { container } = render(ChatLog, { items: [], agent: null });
    const warm = () => document.querySelector('[data-warm]');
    expect(warm()).toBeNull();
    // It streams in, ends, gets its code highlighted, and goes.
    await waitFor(() => expect(warm()?.querySelector('pre code') ?? null).not.toBeNull(), { timeout: WARM_AFTER + 1000 });
    expect(warm()).toHaveAttribute('aria-hidden', 'true');
    expect(warm()?.querySelector('strong')?.textContent).toBe('change');
    expect(warm()?.querySelector('[data-testid]')).toBeNull();
    await waitFor(() => expect(warm()).toBeNull(), { timeout: 3000 });
    expect(container.querySelector('[role="log"]')).toHaveTextContent('What are we working on?');
    // A second log on the same page (the sessions dialog's preview) does not warm up again.
    render(ChatLog, { items: [], agent: null });
    await new Promise((r) => setTimeout(r, WARM_AFTER + 200));
    expect(warm()).toBeNull();
  });

  it('follows new entries until the person scrolls up, even when an entry grows after the move', async () => {
    const entry = (id: number): ChatItem => ({ id, kind: 'message', role: 'user', text: `message ${id}` });
    const items = [entry(1)];
    const { container, rerender } = render(ChatLog, { items, agent: null });
    const log = container.querySelector('[role="log"]') as HTMLElement;
    // The log's geometry, as a browser would report it: 100 px tall, scrolled within.
    let top = 0;
    let height = 1000;
    Object.defineProperty(log, 'scrollTop', { get: () => top, set: (v: number) => (top = Math.min(v, height - 100)) });
    Object.defineProperty(log, 'scrollHeight', { get: () => height });
    Object.defineProperty(log, 'clientHeight', { get: () => 100 });
    const add = async (id: number) => {
      items.push(entry(id));
      await rerender({ items: [...items], agent: null });
    };
    await add(2);
    await waitFor(() => expect(top).toBe(900));
    // The new entry turns out taller than first laid out; the move's scroll event
    // arrives after that. Still following:
    height = 1100;
    log.dispatchEvent(new Event('scroll'));
    await add(3);
    await waitFor(() => expect(top).toBe(1000));
    // The person scrolls up: the view stays where they put it.
    top = 500;
    log.dispatchEvent(new Event('scroll'));
    height = 1200;
    await add(4);
    await new Promise((r) => setTimeout(r, 50));
    expect(top).toBe(500);
    // Back at the end, it follows again.
    top = 1100;
    log.dispatchEvent(new Event('scroll'));
    height = 1300;
    await add(5);
    await waitFor(() => expect(top).toBe(1200));
  });

  it('renders the Markdown of the entries before the first shown ahead, and only those', async () => {
    const items = session(PAGE + AHEAD + 10, 'ahead');
    const text = (i: number) => (items[i] as { text: string }).text;
    const start = items.length - PAGE;
    render(ChatLog, { items, agent: null });
    // The answer just before the first one shown, and the one AHEAD entries back.
    const last = start % 2 === 1 ? start - 2 : start - 1;
    await waitFor(() => expect(isPrepared(text(last))).toBe(true));
    await waitFor(() => expect(isPrepared(text(start - AHEAD + 1))).toBe(true));
    // Prompts are plain text; what is shown was rendered, not prepared; beyond AHEAD, nothing.
    expect(isPrepared(text(start - 2 + (start % 2)))).toBe(false);
    expect(isPrepared(text(items.length - 1))).toBe(false);
    expect(isPrepared(text(start - AHEAD - 1))).toBe(false);
  });

  it("shows a tool card's images as images, never as markup", async () => {
    const items: ChatItem[] = [
      {
        id: 1,
        kind: 'tool',
        callId: 'c',
        name: 'mcp__shots__take',
        input: {},
        status: 'done',
        output: '',
        content: '<img src=x onerror=alert(1)>',
        images: [{ mimeType: 'image/png', data: 'iVBORw0KGgo=' }],
      },
    ];
    const { container } = render(ChatLog, { items, agent: null });
    // The card is one line until opened.
    const head = await waitFor(() => {
      const h = container.querySelector('[data-testid="tool-card"] button.head');
      expect(h).not.toBeNull();
      return h as HTMLButtonElement;
    });
    head.click();
    const img = await waitFor(() => {
      const found = container.querySelector('[data-testid="tool-image"]');
      expect(found).not.toBeNull();
      return found as HTMLImageElement;
    });
    expect(img.getAttribute('src')).toBe('data:image/png;base64,iVBORw0KGgo=');
    expect(container.querySelectorAll('img')).toHaveLength(1);
    expect(container.querySelector('[data-testid="tool-output"]')?.textContent).toContain('<img src=x');
  });

  it("names what ran on an edited command's card, and what the agent proposed inside it", async () => {
    const items: ChatItem[] = [
      {
        id: 1,
        kind: 'tool',
        callId: 'c',
        name: 'bash',
        input: { command: 'rm -rf build' },
        title: 'rm -rf build',
        status: 'done',
        output: '',
        edited: 'rm -rf build/tmp',
      },
    ];
    const { container } = render(ChatLog, { items, agent: null });
    const head = await waitFor(() => {
      const h = container.querySelector('[data-testid="tool-card"] button.head');
      expect(h).not.toBeNull();
      return h as HTMLButtonElement;
    });
    expect(head.querySelector('.subject')?.textContent).toBe('rm -rf build/tmp');
    expect(container.querySelector('[data-testid="edited-by-you"]')).not.toBeNull();
    head.click();
    await waitFor(() => expect(container.querySelector('[data-testid="tool-card"]')).toHaveTextContent('the agent proposed rm -rf build'));
  });
});
