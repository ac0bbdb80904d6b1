import { describe, expect, it } from 'vitest';
import { render } from '@testing-library/svelte';
import type { ChatStatus } from '../lib/gen/protocol';
import StatusBar from './StatusBar.svelte';

function chat(extra: Partial<ChatStatus>): ChatStatus {
  return {
    session_id: null,
    provider: 'openai',
    model: 'm',
    setup_problem: null,
    sandbox_problem: null,
    usage: { input_tokens: 0, output_tokens: 0 },
    running: false,
    session_rules: [],
    todos: [],
    ...extra,
  } as ChatStatus;
}

describe('StatusBar', () => {
  it('says which bound of the sandbox this machine lacks, for as long as it lasts', async () => {
    const { queryByTestId, getByTestId, rerender } = render(StatusBar, { status: null, chat: chat({}), offline: false });
    expect(queryByTestId('status-sandbox')).toBeNull();
    await rerender({
      status: null,
      chat: chat({ sandbox_problem: 'Sandbox without its own network: …', sandbox_gap: 'network' }),
      offline: false,
    });
    expect(getByTestId('status-sandbox')).toHaveTextContent('host network');
    expect(getByTestId('status-sandbox')).toHaveAttribute('title', 'Sandbox without its own network: …');
    await rerender({ status: null, chat: chat({ sandbox_problem: 'No sandbox: no bubblewrap', sandbox_gap: 'sandbox' }), offline: false });
    expect(getByTestId('status-sandbox')).toHaveTextContent('no sandbox');
  });
});
