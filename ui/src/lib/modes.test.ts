import { describe, expect, it } from 'vitest';
import {
  MODES,
  agentConfirmation,
  describeMode,
  isMode,
  modeConfirmation,
  modeInfo,
  nextMode,
  parseMode,
} from './modes';

describe('modes', () => {
  it('lists the five modes in Shift+Tab order', () => {
    expect(MODES).toEqual(['default', 'edit', 'plan', 'auto', 'bypass']);
  });

  it('cycles default → edit → plan → auto → bypass → default', () => {
    const seen = [];
    let mode = nextMode('bypass');
    for (let i = 0; i < 5; i++) {
      seen.push(mode);
      mode = nextMode(mode);
    }
    expect(seen).toEqual(['default', 'edit', 'plan', 'auto', 'bypass']);
    expect(mode).toBe('default');
  });

  it('recognises mode names exactly and parses typed ones leniently', () => {
    expect(isMode('edit')).toBe(true);
    expect(isMode('Edit')).toBe(false);
    expect(isMode('accept-edits')).toBe(false);
    expect(parseMode('  PLAN ')).toBe('plan');
    expect(parseMode('nope')).toBeNull();
    expect(parseMode('')).toBeNull();
  });

  it('says what each mode lets through and what still asks', () => {
    expect(describeMode('default')).toBe('Reads run without asking; edits and commands ask.');
    expect(describeMode('edit')).toBe('Reads and edits run without asking; commands ask.');
    expect(describeMode('plan')).toMatch(/read-only/i);
    expect(describeMode('plan')).toMatch(/denied until you approve the plan/);
    for (const cap of ['deny rules', 'ask rules', 'opaque commands', 'critical removals', 'permission files',
      'protected-branch merges', 'container removal', 'push/deploy/sudo']) {
      expect(describeMode('auto')).toContain(cap);
    }
    expect(describeMode('bypass')).toMatch(/deny rules.*ask rules.*critical removals/);
    expect(describeMode('bypass')).not.toContain('opaque');
    for (const mode of MODES) {
      expect(modeInfo(mode).mode).toBe(mode);
      expect(modeInfo(mode).short.length).toBeGreaterThan(0);
      expect(describeMode(mode)).not.toContain('\n');
    }
  });

  it('formats the one-line switch confirmations', () => {
    expect(modeConfirmation('edit')).toBe('Mode: edit — reads and edits run without asking; commands ask.');
    expect(agentConfirmation('plan', 'plan')).toBe('Agent: plan (mode plan)');
  });
});
