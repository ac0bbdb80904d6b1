import { describe, expect, it } from 'vitest';
import type { LoopEvent } from './gen/protocol';
import { MAX_TOOL_OUTPUT, Transcript, perf, toolStatus } from './transcript.svelte';

function run(events: LoopEvent[]): Transcript {
  const t = new Transcript(() => {});
  for (const event of events) t.push({ at_ms: Date.now(), event });
  t.flush();
  return t;
}

describe('Transcript', () => {
  it('streams deltas into one assistant message, settled by the whole turn', () => {
    const t = run([
      { type: 'user_prompt', text: 'hi' },
      { type: 'turn_start', turn: 1, agent: 'build', mode: 'default', model: 'openai/m' },
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
    ]);
    expect(t.items.map((i) => i.kind)).toEqual(['message', 'message']);
    const last = t.items[1];
    expect(last).toMatchObject({ role: 'assistant', text: 'Hello', streaming: true });
    t.apply({ type: 'assistant_message', text: 'Hello.', tool_calls: [] });
    expect(t.items[1]).toMatchObject({ text: 'Hello.', streaming: false });
  });

  it('labels each assistant message with the agent of its turn, whatever the agent is later', () => {
    const t = run([
      { type: 'user_prompt', text: 'plan it' },
      { type: 'turn_start', turn: 1, agent: 'plan', mode: 'plan', model: 'openai/m' },
      { type: 'text_delta', text: 'A plan.' },
      { type: 'assistant_message', text: 'A plan.', tool_calls: [] },
      { type: 'user_prompt', text: 'do it' },
      { type: 'turn_start', turn: 2, agent: 'build', mode: 'edit', model: 'openai/m' },
      { type: 'assistant_message', text: 'Done.', tool_calls: [] },
    ]);
    const answers = t.items.filter((i) => i.kind === 'message' && i.role === 'assistant');
    expect(answers.map((i) => (i.kind === 'message' ? i.agent : null))).toEqual(['plan', 'build']);
  });

  it('applies queued events once per frame and records the token-to-paint latency', () => {
    let frame: (() => void) | null = null;
    const t = new Transcript((cb) => (frame = cb));
    t.push({ at_ms: Date.now(), event: { type: 'text_delta', text: 'a' } });
    t.push({ at_ms: Date.now(), event: { type: 'text_delta', text: 'b' } });
    expect(t.items).toHaveLength(0);
    expect(frame).not.toBeNull();
    perf.tokenToPaint.length = 0;
    (frame as unknown as () => void)();
    expect(t.items[0]).toMatchObject({ text: 'ab' });
    return new Promise<void>((resolve, reject) =>
      setTimeout(() => {
        try {
          expect(perf.tokenToPaint.length).toBeGreaterThanOrEqual(1);
          expect(perf.tokenToPaint[perf.tokenToPaint.length - 1]).toBeGreaterThanOrEqual(0);
          resolve();
        } catch (e) {
          reject(e);
        }
      }, 40),
    );
  });

  it('turns a tool call into one card that runs, streams and finishes', () => {
    const t = run([
      { type: 'tool_call_started', id: 'c', name: 'bash', input: { command: 'ls' } },
      { type: 'tool_progress', id: 'c', stream: 'stdout', text: 'a\n' },
      { type: 'tool_progress', id: 'c', stream: 'stderr', text: 'b\n' },
    ]);
    expect(t.items[0]).toMatchObject({ kind: 'tool', status: 'running', output: 'a\nb\n' });
    t.apply({
      type: 'tool_result',
      id: 'c',
      name: 'bash',
      content: 'ran',
      is_error: false,
      ran: true,
      edited_command: 'ls -a',
      note: 'allowed by a rule you allowed for this session',
      sandboxed: true,
    });
    expect(t.items[0]).toMatchObject({
      status: 'done',
      edited: 'ls -a',
      note: 'allowed by a rule you allowed for this session',
      sandboxed: true,
    });
  });

  it("shows an MCP tool's raster images on its card, never an SVG or anything but base64", () => {
    const t = run([{ type: 'tool_call_started', id: 'c', name: 'mcp__shots__take', input: {} }]);
    t.apply({ type: 'tool_result', id: 'c', name: 'mcp__shots__take', content: '[an image was shown]', is_error: false, ran: true });
    t.apply({ type: 'tool_image', id: 'c', mime_type: 'image/png', data: 'iVBORw0KGgo=' });
    t.apply({ type: 'tool_image', id: 'c', mime_type: 'image/svg+xml', data: 'PHN2Zz4=' });
    t.apply({ type: 'tool_image', id: 'c', mime_type: 'image/png', data: '"><script>alert(1)</script>' });
    t.apply({ type: 'tool_image', id: 'nope', mime_type: 'image/png', data: 'AAAA' });
    for (let i = 0; i < 10; i++) t.apply({ type: 'tool_image', id: 'c', mime_type: 'image/webp', data: 'AAAA' });
    const card = t.items[0];
    expect(card.kind).toBe('tool');
    const images = card.kind === 'tool' ? (card.images ?? []) : [];
    expect(images[0]).toEqual({ mimeType: 'image/png', data: 'iVBORw0KGgo=' });
    expect(images).toHaveLength(8);
    expect(images.every((i) => i.mimeType !== 'image/svg+xml' && !i.data.includes('<'))).toBe(true);
    expect(t.items).toHaveLength(1);
  });

  it('keeps only the tail of a huge tool output', () => {
    const t = run([{ type: 'tool_call_started', id: 'c', name: 'bash', input: {} }]);
    t.apply({ type: 'tool_progress', id: 'c', stream: 'stdout', text: 'x'.repeat(MAX_TOOL_OUTPUT) });
    t.apply({ type: 'tool_progress', id: 'c', stream: 'stdout', text: 'END' });
    const card = t.items[0];
    expect(card.kind === 'tool' && card.output.length).toBe(MAX_TOOL_OUTPUT);
    expect(card.kind === 'tool' && card.output.endsWith('END')).toBe(true);
  });

  it('a stopped run ends its running cards and says so; errors are one line', () => {
    const t = run([
      { type: 'tool_call_started', id: 'c', name: 'bash', input: { command: 'sleep 30' } },
      { type: 'error', kind: 'connect', message: 'could not reach http://localhost:11434/v1: is the server running?' },
      { type: 'done', outcome: 'cancelled', turns: 1 },
    ]);
    expect(t.items.map((i) => i.kind)).toEqual(['tool', 'error', 'notice']);
    expect(t.items[0]).toMatchObject({ status: 'stopped' });
    expect(t.items[2]).toMatchObject({ text: 'Stopped.' });
  });

  it('names the status of a finished call', () => {
    const base = { type: 'tool_result', id: 'c', name: 'bash', content: '', is_error: false, ran: true } as const;
    expect(toolStatus(base)).toBe('done');
    expect(toolStatus({ ...base, is_error: true })).toBe('error');
    expect(toolStatus({ ...base, ran: false, is_error: true, verdict: 'deny' })).toBe('denied');
    expect(toolStatus({ ...base, ran: false, is_error: true, answer: { kind: 'deny', feedback: null } })).toBe('denied');
    expect(toolStatus({ ...base, ran: false, is_error: true })).toBe('error');
  });

  it('loads a long history at once', () => {
    const t = new Transcript(() => {});
    const events: LoopEvent[] = [];
    for (let i = 0; i < 1000; i++) {
      events.push({ type: 'user_prompt', text: `q${i}` }, { type: 'assistant_message', text: `a${i}`, tool_calls: [] });
    }
    t.load(events);
    expect(t.items).toHaveLength(2000);
    expect(t.items[1999]).toMatchObject({ role: 'assistant', text: 'a999' });
  });
});
