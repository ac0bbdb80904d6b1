import { describe, expect, it } from 'vitest';
import type { LoopEvent } from './gen/protocol';
import type { ToolItem } from './chat';
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

  it('nests each subagent\'s steps under the task call that started it, live and on resume', () => {
    const sub = (parent_id: string, agent: string, event: LoopEvent): LoopEvent => ({ type: 'subagent', parent_id, agent, event });
    const events: LoopEvent[] = [
      { type: 'user_prompt', text: 'look around' },
      { type: 'turn_start', turn: 1, agent: 'build', mode: 'default', model: 'openai/m' },
      { type: 'tool_call_started', id: 't1', name: 'task', input: { agent: 'explore', description: 'find the parser', prompt: 'p1' } },
      { type: 'tool_call_started', id: 't2', name: 'task', input: { agent: 'explore', description: 'find the tests', prompt: 'p2' } },
      sub('t1', 'explore', { type: 'user_prompt', text: 'p1' }),
      sub('t2', 'explore', { type: 'user_prompt', text: 'p2' }),
      sub('t1', 'explore', { type: 'tool_call_started', id: 'r1', name: 'read', input: { path: 'src/a.rs' } }),
      sub('t1', 'explore', { type: 'tool_result', id: 'r1', name: 'read', content: 'fn a() {}', is_error: false, ran: true }),
      sub('t2', 'explore', { type: 'text_delta', text: 'Look' }),
      sub('t1', 'explore', { type: 'turn_end', turn: 1, usage: { input_tokens: 100, output_tokens: 20 } }),
    ];
    const t = run(events);
    // The subagents' steps never become chat entries of their own.
    expect(t.items.map((i) => i.kind)).toEqual(['message', 'tool', 'tool']);
    const [, one, two] = t.items as ToolItem[];
    expect(one.subagent?.agent).toBe('explore');
    expect(one.subagent?.steps.items.map((i) => i.kind)).toEqual(['message', 'tool']);
    expect(one.subagent?.steps.items[1]).toMatchObject({ name: 'read', status: 'done', content: 'fn a() {}' });
    expect(one.subagent?.steps.inputTokens).toBe(100);
    expect(one.subagent?.steps.liveTokens).toBe(20);
    // The working line of the whole turn counts them.
    expect(t.liveTokens).toBe(20);
    expect(two.subagent?.steps.items[1]).toMatchObject({ role: 'assistant', text: 'Look', streaming: true });
    expect(one.subagent?.steps.outcome).toBeNull();
    t.apply(sub('t2', 'explore', { type: 'done', outcome: 'cancelled', turns: 1 }));
    expect(two.subagent?.steps.outcome).toBe('cancelled');
    // Steps of a call the log does not know are dropped.
    t.apply(sub('nope', 'explore', { type: 'notice', text: 'x' }));
    expect(t.items).toHaveLength(3);
    // A resumed session: the same nesting, and a subagent's unfinished call is stopped.
    const resumed = new Transcript(() => {});
    resumed.load([...events, sub('t2', 'explore', { type: 'tool_call_started', id: 'r2', name: 'glob', input: { pattern: '*' } })]);
    const again = resumed.items[2] as ToolItem;
    expect(again.subagent?.steps.items.map((i) => i.kind)).toEqual(['message', 'message', 'tool']);
    expect(again.subagent?.steps.items[2]).toMatchObject({ name: 'glob', status: 'stopped' });
  });
});
