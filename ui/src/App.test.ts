import { beforeEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import type { Mode, Status } from './lib/backend';
import { MODEL_NOT_CONFIGURED } from './lib/conversation';
import App from './App.svelte';

vi.mock('./lib/backend', () => ({
  getStatus: vi.fn(),
  setMode: vi.fn(),
  cycleMode: vi.fn(),
  selectAgent: vi.fn(),
  onStatus: vi.fn(),
}));

import * as backend from './lib/backend';

const AGENTS = [
  { name: 'build', description: 'All tools; the default agent.' },
  { name: 'plan', description: 'Reads and plans; never edits.' },
  { name: 'explore', description: 'Reads and searches.' },
];

const ORDER: Mode[] = ['default', 'edit', 'plan', 'auto', 'bypass'];

function status(overrides: Partial<Status> = {}): Status {
  return { mode: 'default', agent: 'build', agents: AGENTS, project: '/home/ada/projects/engine', ...overrides };
}

/** The fake backend's state and the listener the app registered. */
let current: Status;
let emit: (s: Status) => void;

beforeEach(() => {
  vi.resetAllMocks();
  current = status();
  emit = () => {
    throw new Error('onStatus was never subscribed');
  };
  vi.mocked(backend.getStatus).mockImplementation(async () => current);
  vi.mocked(backend.setMode).mockImplementation(async (mode) => (current = { ...current, mode }));
  vi.mocked(backend.cycleMode).mockImplementation(async () => {
    const mode = ORDER[(ORDER.indexOf(current.mode) + 1) % ORDER.length];
    return (current = { ...current, mode });
  });
  vi.mocked(backend.selectAgent).mockImplementation(async (name) => {
    const mode: Mode = name === 'plan' ? 'plan' : 'default';
    return (current = { ...current, agent: name, mode });
  });
  vi.mocked(backend.onStatus).mockImplementation(async (cb) => {
    emit = cb;
    return () => {};
  });
});

async function renderApp() {
  const user = userEvent.setup();
  const result = render(App);
  await waitFor(() => expect(screen.getByTestId('status-mode')).toHaveTextContent(/^default$/));
  return { user, ...result };
}

const input = () => screen.getByTestId('chat-input') as HTMLTextAreaElement;

describe('status bar', () => {
  it('shows the mode and agent from getStatus', async () => {
    current = status({ mode: 'default', agent: 'build' });
    await renderApp();
    expect(backend.getStatus).toHaveBeenCalledTimes(1);
    expect(screen.getByTestId('status-mode').textContent).toBe('default');
    expect(screen.getByTestId('status-agent').textContent).toBe('build');
    expect(screen.getByTestId('project-path')).toHaveTextContent('/home/ada/projects/engine');
    expect(screen.getByTestId('mode-select')).toHaveValue('default');
    expect(screen.getByTestId('agent-select')).toHaveValue('build');
  });

  it('follows status events from other surfaces and confirms the switch', async () => {
    await renderApp();
    emit(status({ mode: 'auto' }));
    await waitFor(() => expect(screen.getByTestId('status-mode').textContent).toBe('auto'));
    expect(screen.getByTestId('mode-select')).toHaveValue('auto');
    expect(screen.getByTestId('confirm-line')).toHaveTextContent(/^Mode: auto — runs anything without asking/);

    emit(status({ mode: 'plan', agent: 'plan' }));
    await waitFor(() => expect(screen.getByTestId('status-agent').textContent).toBe('plan'));
    expect(screen.getByTestId('status-mode').textContent).toBe('plan');
    const lines = screen.getAllByTestId('confirm-line');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toHaveTextContent('Agent: plan (mode plan)');
  });

  it('shows a clear error when the backend cannot be reached', async () => {
    vi.mocked(backend.getStatus).mockRejectedValue(new Error('the page is not running inside the Decode app'));
    render(App);
    expect(await screen.findByTestId('error-line')).toHaveTextContent(
      'Could not load the status: the page is not running inside the Decode app',
    );
    expect(screen.getByTestId('status-mode').textContent).toBe('…');
    expect(screen.getByTestId('mode-select')).toBeDisabled();
  });
});

describe('slash commands', () => {
  it('/mode edit switches through setMode and confirms in one line', async () => {
    const { user } = await renderApp();
    await user.type(input(), '/mode edit{Enter}');
    expect(backend.setMode).toHaveBeenCalledExactlyOnceWith('edit');
    const line = await screen.findByTestId('confirm-line');
    expect(line.textContent).toBe('Mode: edit — reads and edits run without asking; commands ask.');
    expect(screen.getByTestId('status-mode').textContent).toBe('edit');
    expect(input().value).toBe('');
    expect(screen.queryAllByTestId('message')).toHaveLength(0);
  });

  it('/mode nope shows an error naming the valid modes and switches nothing', async () => {
    const { user } = await renderApp();
    await user.type(input(), '/mode nope{Enter}');
    const error = await screen.findByTestId('error-line');
    expect(error).toHaveTextContent('Unknown mode "nope". Valid modes: default, edit, plan, auto, bypass.');
    expect(backend.setMode).not.toHaveBeenCalled();
    expect(screen.queryByTestId('confirm-line')).toBeNull();
    expect(screen.getByTestId('status-mode').textContent).toBe('default');
  });

  it('/agent plan selects the agent and confirms with its mode', async () => {
    const { user } = await renderApp();
    await user.type(input(), '/agent plan{Enter}');
    expect(backend.selectAgent).toHaveBeenCalledExactlyOnceWith('plan');
    expect(await screen.findByTestId('confirm-line')).toHaveTextContent('Agent: plan (mode plan)');
    expect(screen.getByTestId('status-agent').textContent).toBe('plan');
    expect(screen.getByTestId('status-mode').textContent).toBe('plan');
  });

  it('/agent with an unknown name lists the available agents', async () => {
    const { user } = await renderApp();
    await user.type(input(), '/agent ghost{Enter}');
    expect(await screen.findByTestId('error-line')).toHaveTextContent(
      'Unknown agent "ghost". Available agents: build, plan, explore.',
    );
    expect(backend.selectAgent).not.toHaveBeenCalled();
  });

  it('/help lists commands, modes and agents', async () => {
    const { user } = await renderApp();
    await user.type(input(), '/help{Enter}');
    const help = await screen.findByTestId('help');
    for (const text of ['/mode NAME', '/agent NAME', '/help', 'Shift+Tab', 'default (current)', 'bypass', 'build (current)', 'explore', 'Reads and searches.']) {
      expect(within(help).getByText(text)).toBeInTheDocument();
    }
  });

  it('unknown commands give a one-line error', async () => {
    const { user } = await renderApp();
    await user.type(input(), '/frobnicate{Enter}');
    expect(await screen.findByTestId('error-line')).toHaveTextContent(/Unknown command \/frobnicate\. Commands: /);
  });

  it('a backend refusal is shown as an error line', async () => {
    vi.mocked(backend.setMode).mockRejectedValue(new Error('Bypass mode is disabled by settings.'));
    const { user } = await renderApp();
    await user.type(input(), '/mode bypass{Enter}');
    expect(await screen.findByTestId('error-line')).toHaveTextContent('Bypass mode is disabled by settings.');
    expect(screen.queryByTestId('confirm-line')).toBeNull();
    expect(screen.getByTestId('status-mode').textContent).toBe('default');
  });
});

describe('keyboard', () => {
  it('Shift+Tab cycles the mode through the backend', async () => {
    const { user } = await renderApp();
    await user.keyboard('{Shift>}{Tab}{/Shift}');
    expect(backend.cycleMode).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(screen.getByTestId('status-mode').textContent).toBe('edit'));
    expect(screen.getByTestId('confirm-line')).toHaveTextContent('Mode: edit');

    await user.keyboard('{Shift>}{Tab}{/Shift}');
    await waitFor(() => expect(screen.getByTestId('status-mode').textContent).toBe('plan'));
    expect(backend.cycleMode).toHaveBeenCalledTimes(2);
  });

  it('Shift+Tab as WebKitGTK reports it (key Unidentified, code Tab) also cycles', async () => {
    await renderApp();
    const event = new KeyboardEvent('keydown', { key: 'Unidentified', code: 'Tab', shiftKey: true, cancelable: true });
    await fireEvent(window, event);
    expect(event.defaultPrevented).toBe(true);
    await waitFor(() => expect(screen.getByTestId('status-mode').textContent).toBe('edit'));
    expect(backend.cycleMode).toHaveBeenCalledTimes(1);
  });

  it('plain Tab does not cycle', async () => {
    const { user } = await renderApp();
    await user.keyboard('{Tab}');
    expect(backend.cycleMode).not.toHaveBeenCalled();
  });

  it('a status event racing our own switch does not double the confirmation', async () => {
    vi.mocked(backend.cycleMode).mockImplementation(async () => {
      current = { ...current, mode: 'edit' };
      emit(current); // the backend emits before the command returns
      return current;
    });
    const { user } = await renderApp();
    await user.keyboard('{Shift>}{Tab}{/Shift}');
    await waitFor(() => expect(screen.getByTestId('status-mode').textContent).toBe('edit'));
    expect(screen.getAllByTestId('confirm-line')).toHaveLength(1);
  });
});

describe('composer', () => {
  it('Enter sends a user message, followed by the not-configured notice', async () => {
    const { user } = await renderApp();
    await user.type(input(), 'Explain the build script{Enter}');
    const messages = await screen.findAllByTestId('message');
    expect(messages).toHaveLength(2);
    expect(messages[0]).toHaveAttribute('data-role', 'user');
    expect(messages[0]).toHaveTextContent('Explain the build script');
    expect(messages[1]).toHaveAttribute('data-role', 'assistant');
    expect(messages[1]).toHaveClass('notice');
    expect(messages[1]).toHaveTextContent(MODEL_NOT_CONFIGURED);
    expect(input().value).toBe('');
  });

  it('Shift+Enter adds a newline instead of sending; the send button sends', async () => {
    const { user } = await renderApp();
    await user.type(input(), 'first line{Shift>}{Enter}{/Shift}second line');
    expect(screen.queryAllByTestId('message')).toHaveLength(0);
    expect(input().value).toBe('first line\nsecond line');
    await user.click(screen.getByTestId('send'));
    const [message] = await screen.findAllByTestId('message');
    expect(message).toHaveAttribute('data-role', 'user');
    expect(message.textContent).toContain('first line\nsecond line');
  });

  it('does not send blank input', async () => {
    const { user } = await renderApp();
    expect(screen.getByTestId('send')).toBeDisabled();
    await user.type(input(), '   {Enter}');
    expect(screen.queryAllByTestId('message')).toHaveLength(0);
  });
});

describe('top bar', () => {
  it('choosing in the mode dropdown calls setMode and confirms', async () => {
    const { user } = await renderApp();
    await user.selectOptions(screen.getByTestId('mode-select'), 'plan');
    expect(backend.setMode).toHaveBeenCalledExactlyOnceWith('plan');
    expect(await screen.findByTestId('confirm-line')).toHaveTextContent(
      'Mode: plan — read-only: edits and commands are denied until you approve the plan.',
    );
    expect(screen.getByTestId('status-mode').textContent).toBe('plan');
  });

  it('mode options explain what each mode lets through before the click', async () => {
    await renderApp();
    const options = within(screen.getByTestId('mode-select')).getAllByRole('option') as HTMLOptionElement[];
    expect(options.map((o) => o.value)).toEqual(ORDER);
    const edit = options.find((o) => o.value === 'edit');
    expect(edit?.title).toBe('Reads and edits run without asking; commands ask.');
    expect(edit?.textContent).toContain('commands ask');
  });

  it('a refused mode change puts the dropdown back', async () => {
    vi.mocked(backend.setMode).mockRejectedValue(new Error('nope'));
    const { user } = await renderApp();
    const select = screen.getByTestId('mode-select');
    await user.selectOptions(select, 'bypass');
    expect(await screen.findByTestId('error-line')).toHaveTextContent('nope');
    await waitFor(() => expect(select).toHaveValue('default'));
  });

  it('choosing in the agent dropdown calls selectAgent', async () => {
    const { user } = await renderApp();
    await user.selectOptions(screen.getByTestId('agent-select'), 'explore');
    expect(backend.selectAgent).toHaveBeenCalledExactlyOnceWith('explore');
    expect(await screen.findByTestId('confirm-line')).toHaveTextContent('Agent: explore (mode default)');
    expect(screen.getByTestId('status-agent').textContent).toBe('explore');
  });
});
