import { describe, expect, it } from 'vitest';
import { DecisionQueue } from './decisions.svelte';
import type { Offered } from './gen/protocol';
import { diffStat, parseDiff } from './diff';
import { PromptHistory } from './history';
import { MODES, describeMode, isMode, modeConfirmation, nextMode, parseMode, shortDescription } from './modes';

describe('modes (the list comes from Rust)', () => {
  it('lists the five modes in Shift+Tab order and cycles them', () => {
    expect(MODES).toEqual(['default', 'edit', 'plan', 'auto', 'bypass']);
    expect(MODES.map(nextMode)).toEqual(['edit', 'plan', 'auto', 'bypass', 'default']);
    expect(isMode('Edit')).toBe(false);
    expect(parseMode('  PLAN ')).toBe('plan');
    expect(parseMode('nope')).toBeNull();
  });

  it('says what each mode lets through, in the gate’s words', () => {
    expect(describeMode('default')).toBe('Reads run; file edits and shell commands ask.');
    expect(describeMode('auto')).toMatch(/deny and ask rules, opaque commands, critical removals/);
    expect(modeConfirmation('edit')).toBe('Mode: edit — reads and file edits run; shell commands ask');
    for (const m of MODES) expect(shortDescription(m).length).toBeGreaterThan(0);
  });
});

describe('DecisionQueue', () => {
  const q = (question: string) => ({ kind: 'question' as const, question, options: [] });
  const offered: Offered = { answers: ['answer', 'deny'] };

  it('keeps the current request first and the queued ones after it', () => {
    const d = new DecisionQueue();
    d.apply({ kind: 'pending', id: 1, request: q('one'), offered });
    d.apply({ kind: 'queued', id: 2, request: q('two'), offered });
    d.apply({ kind: 'queued', id: 3, request: q('three'), offered });
    expect(d.items.map((p) => p.id)).toEqual([1, 2, 3]);
    d.apply({ kind: 'resolved', id: 1, by: 'window', answer: { kind: 'answer', text: 'x' } });
    d.apply({ kind: 'pending', id: 2, request: q('two'), offered });
    expect(d.current?.id).toBe(2);
    expect(d.items.map((p) => p.id)).toEqual([2, 3]);
    d.answered(2);
    d.apply({ kind: 'resolved', id: 2, by: 'window', answer: { kind: 'answer', text: 'x' } });
    expect(d.items.map((p) => p.id)).toEqual([3]);
  });

  it('keeps what each request offers, as the event carried it', () => {
    const d = new DecisionQueue();
    const plan: Offered = { answers: ['plan_approved', 'plan_rejected', 'deny'], modes: ['default'] };
    d.apply({ kind: 'pending', id: 1, request: q('one'), offered });
    d.apply({ kind: 'queued', id: 2, request: { kind: 'plan_approval', plan: 'p', modes: ['default'] }, offered: plan });
    expect(d.items.map((p) => p.offered)).toEqual([offered, plan]);
  });

  it('keeps the subagent that asks with its request', () => {
    const d = new DecisionQueue();
    d.apply({ kind: 'pending', id: 1, request: q('one'), offered, agent: 'explore' });
    d.apply({ kind: 'queued', id: 2, request: q('two'), offered });
    expect(d.items.map((p) => p.agent)).toEqual(['explore', undefined]);
  });
});

describe('PromptHistory', () => {
  it('recalls like a shell and restores the draft', () => {
    const h = new PromptHistory();
    expect(h.up('')).toBeNull();
    h.add('one');
    h.add('two');
    h.add('two');
    expect(h.up('')).toBe('two');
    expect(h.up('two')).toBe('one');
    expect(h.up('one')).toBeNull();
    expect(h.down()).toBe('two');
    expect(h.down()).toBe('');
    expect(h.down()).toBeNull();
  });
});

describe('diff', () => {
  it('types the lines of a unified diff', () => {
    const d = '--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n';
    expect(parseDiff(d).map((l) => l.kind)).toEqual(['file', 'file', 'hunk', 'ctx', 'del', 'add']);
    expect(diffStat(d)).toEqual({ added: 1, removed: 1 });
  });
});

describe('text shown where a person decides', () => {
  it('shows invisible and reordering characters as escapes, keeps the rest', async () => {
    const { shown } = await import('./display');
    expect(shown('bash(npm test)')).toBe('bash(npm test)');
    expect(shown('bash(rm -rf ~\u202e)tset mpn')).toBe('bash(rm -rf ~\\u{202e})tset mpn');
    expect(shown('a\u200bb\u2066c\u0007d\u{e0041}')).toBe('a\\u{200b}b\\u{2066}c\\x07d\\u{e0041}');
    expect(shown('line one\nline\ttwo')).toBe('line one\nline\ttwo');
    expect(shown('naïve 日本 ✓')).toBe('naïve 日本 ✓');
  });

  it('escapes exactly as the terminal and native dialogs do (the cases both sides check)', async () => {
    const { shown, hasHidden } = await import('./display');
    const cases = (await import('../test/escape-cases.json')).default as { text: string; shown: string }[];
    expect(cases.length).toBeGreaterThan(10);
    for (const c of cases) {
      expect(shown(c.text)).toBe(c.shown);
      expect(hasHidden(c.text)).toBe(c.text !== c.shown);
    }
  });

  it('flags every character of the generated table and nothing of ordinary text', async () => {
    const { hasHidden } = await import('./display');
    for (const c of ['\u202e', '\u2066', '\u200b', '\u00ad', '\ufeff', '\u{e0001}', '\u{e0100}', '\r', '\u001b', '\u3164']) {
      expect(hasHidden(`a${c}b`)).toBe(true);
    }
    for (const t of ['plain', 'tabs\tand\nlines', 'émoji 🙂 中文', '% %n %s %p']) expect(hasHidden(t)).toBe(false);
  });
});
