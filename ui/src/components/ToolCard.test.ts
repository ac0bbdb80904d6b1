import { describe, expect, it } from 'vitest';
import { fireEvent, render } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import type { ToolItem } from '../lib/chat';
import type { LoopEvent } from '../lib/gen/protocol';
import { Transcript } from '../lib/transcript.svelte';
import AskUserDialog from './AskUserDialog.svelte';
import ToolCard from './ToolCard.svelte';

/** A log holding one `task` call whose explore subagent read a file and answered. */
function taskLog(): Transcript {
  const log = new Transcript(() => {});
  const sub = (event: LoopEvent): LoopEvent => ({ type: 'subagent', parent_id: 't1', agent: 'explore', event });
  log.apply({
    type: 'tool_call_started',
    id: 't1',
    name: 'task',
    input: { agent: 'explore', description: 'find the parser', prompt: 'Find where the parser lives' },
    title: 'explore: find the parser',
  });
  log.apply(sub({ type: 'user_prompt', text: 'Find where the parser lives' }));
  log.apply(sub({ type: 'tool_call_started', id: 'r1', name: 'read', input: { path: 'src/parser.rs' } }));
  log.apply(sub({ type: 'tool_result', id: 'r1', name: 'read', content: 'fn parse() {}', is_error: false, ran: true }));
  log.apply(sub({ type: 'turn_end', turn: 1, usage: { input_tokens: 1500, output_tokens: 40 } }));
  log.apply(sub({ type: 'assistant_message', text: 'The parser is in **src/parser.rs**.', tool_calls: [] }));
  return log;
}

describe('ToolCard with a subagent', () => {
  it('shows the subagent nested, with its steps while it runs and one line once it ended', async () => {
    const log = taskLog();
    const { container, getByTestId } = render(ToolCard, { card: log.items[0] as ToolItem });
    const sub = getByTestId('subagent-card');
    expect(sub).toHaveAttribute('data-agent', 'explore');
    expect(container.querySelector('[data-testid="tool-card"] .subject')).toHaveTextContent('explore: find the parser');
    expect(getByTestId('subagent-facts')).toHaveTextContent('1 step · 1.5k tokens');
    expect(getByTestId('subagent-state')).toHaveTextContent('working');
    // Its own tool card and its text, inside it.
    const steps = getByTestId('subagent-steps');
    expect(steps.querySelector('[data-testid="tool-card"][data-tool="read"]')).not.toBeNull();
    expect(steps.querySelector('[data-testid="subagent-text"] strong')).toHaveTextContent('src/parser.rs');
    // It ends: one line; the person opens it again.
    log.apply({ type: 'subagent', parent_id: 't1', agent: 'explore', event: { type: 'done', outcome: 'completed', turns: 1 } });
    log.apply({ type: 'tool_result', id: 't1', name: 'task', content: 'The parser is in src/parser.rs.', is_error: false, ran: true });
    flushSync();
    expect(getByTestId('subagent-state')).toHaveTextContent('finished');
    expect(container.querySelector('[data-testid="subagent-steps"]')).toBeNull();
    await fireEvent.click(sub.querySelector('button') as HTMLElement);
    expect(container.querySelector('[data-testid="subagent-steps"]')).not.toBeNull();
  });

  it('names the subagent that asks in the dialog', () => {
    const { getByTestId } = render(AskUserDialog, {
      question: 'Which file?',
      options: [],
      queue: null,
      asker: 'explore',
      onAnswer: async () => {},
    });
    expect(getByTestId('dialog-asker')).toHaveTextContent('subagent explore');
  });
});
