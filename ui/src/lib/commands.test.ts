import { describe, expect, it } from 'vitest';
import { helpSections, parseInput } from './commands';

const AGENTS = ['build', 'plan', 'explore', 'code-reviewer'];

describe('parseInput', () => {
  it('treats blank input as empty', () => {
    expect(parseInput('')).toEqual({ kind: 'empty' });
    expect(parseInput('  \n\t ')).toEqual({ kind: 'empty' });
  });

  it('passes ordinary text through as a trimmed prompt, keeping inner newlines', () => {
    expect(parseInput('  fix the bug\nin main.rs  ')).toEqual({ kind: 'prompt', text: 'fix the bug\nin main.rs' });
  });

  it('treats text that starts with a path as a prompt, not a command', () => {
    expect(parseInput('/usr/bin/env is missing')).toEqual({ kind: 'prompt', text: '/usr/bin/env is missing' });
    expect(parseInput('/ is full')).toEqual({ kind: 'prompt', text: '/ is full' });
  });

  it('parses /mode NAME, case-insensitively', () => {
    expect(parseInput('/mode edit')).toEqual({ kind: 'mode', mode: 'edit' });
    expect(parseInput('  /MODE   Bypass ')).toEqual({ kind: 'mode', mode: 'bypass' });
  });

  it('rejects an unknown mode naming the valid ones', () => {
    const parsed = parseInput('/mode nope');
    expect(parsed.kind).toBe('error');
    if (parsed.kind !== 'error') return;
    expect(parsed.message).toContain('"nope"');
    expect(parsed.message).toContain('default, edit, plan, auto, bypass');
  });

  it('asks for exactly one mode name', () => {
    const none = parseInput('/mode');
    const two = parseInput('/mode edit plan');
    expect(none).toMatchObject({ kind: 'error' });
    expect(two).toMatchObject({ kind: 'error' });
    if (none.kind === 'error') expect(none.message).toMatch(/^Usage: \/mode NAME/);
  });

  it('parses /agent NAME against the catalog', () => {
    expect(parseInput('/agent plan', AGENTS)).toEqual({ kind: 'agent', name: 'plan' });
    expect(parseInput('/agent Code-Reviewer', AGENTS)).toEqual({ kind: 'agent', name: 'code-reviewer' });
    const unknown = parseInput('/agent ghost', AGENTS);
    expect(unknown.kind).toBe('error');
    if (unknown.kind === 'error') {
      expect(unknown.message).toContain('"ghost"');
      expect(unknown.message).toContain('build, plan, explore, code-reviewer');
    }
  });

  it('leaves agent validation to the backend when the catalog is unknown', () => {
    expect(parseInput('/agent ghost')).toEqual({ kind: 'agent', name: 'ghost' });
    expect(parseInput('/agent')).toMatchObject({ kind: 'error' });
  });

  it('parses /help and rejects arguments to it', () => {
    expect(parseInput('/help')).toEqual({ kind: 'help' });
    expect(parseInput('/help me')).toMatchObject({ kind: 'error' });
  });

  it('parses /undo and rejects arguments to it', () => {
    expect(parseInput('/undo')).toEqual({ kind: 'undo' });
    expect(parseInput('/UNDO')).toEqual({ kind: 'undo' });
    expect(parseInput('/undo 3')).toMatchObject({ kind: 'error' });
  });

  it('reports unknown commands and lists the known ones', () => {
    const parsed = parseInput('/frobnicate now');
    expect(parsed.kind).toBe('error');
    if (parsed.kind === 'error') {
      expect(parsed.message).toContain('/frobnicate');
      expect(parsed.message).toContain('/mode NAME');
      expect(parsed.message).toContain('/agent NAME');
      expect(parsed.message).toContain('/help');
      expect(parsed.message).not.toContain('\n');
    }
  });
});

describe('helpSections', () => {
  const agents = [
    { name: 'build', description: 'Builds things.' },
    { name: 'plan', description: 'Plans first.' },
  ];

  it('lists commands, modes and agents, marking the current ones', () => {
    const sections = helpSections(agents, { mode: 'edit', agent: 'plan' });
    expect(sections.map((s) => s.title)).toEqual(['Commands', 'Modes', 'Agents']);

    const terms = (title: string) => sections.find((s) => s.title === title)?.entries.map((e) => e.term);
    expect(terms('Commands')).toEqual(expect.arrayContaining(['/mode NAME', '/agent NAME', '/help', 'Shift+Tab']));
    expect(terms('Modes')).toEqual(['default', 'edit (current)', 'plan', 'auto', 'bypass']);
    expect(terms('Agents')).toEqual(['build', 'plan (current)']);
    expect(sections[2].entries[0].text).toBe('Builds things.');
  });

  it('says so when there are no agents', () => {
    const sections = helpSections([]);
    expect(sections[2].entries).toHaveLength(1);
    expect(sections[2].entries[0].text).toMatch(/no agents/);
  });
});
