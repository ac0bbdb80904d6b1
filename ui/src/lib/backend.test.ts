import { beforeEach, describe, expect, it, vi } from 'vitest';

const tauri = vi.hoisted(() => ({
  invoke: vi.fn(),
  isTauri: vi.fn(() => true),
  listen: vi.fn(),
  Channel: class {
    onmessage: (m: unknown) => void = () => {};
  },
}));

vi.mock('@tauri-apps/api/core', () => ({ invoke: tauri.invoke, isTauri: tauri.isTauri, Channel: tauri.Channel }));
vi.mock('@tauri-apps/api/event', () => ({ listen: tauri.listen }));

import {
  BackendError,
  answerDecision,
  checkRules,
  cycleMode,
  getStatus,
  onDecision,
  onStatus,
  selectAgent,
  sendPrompt,
  setMode,
  stopPrompt,
  toBackendError,
} from './backend';
import type { Snapshot as Status } from './gen/protocol';

const STATUS: Status = {
  trusted: true,
  mode: 'default',
  agent: 'build',
  agents: [{ name: 'build', description: 'Builds.' }],
  project: '/work/proj',
};

describe('backend wrappers', () => {
  beforeEach(() => {
    tauri.invoke.mockReset();
    tauri.listen.mockReset();
    tauri.isTauri.mockReturnValue(true);
  });

  it('call the Tauri commands with the agreed names and arguments', async () => {
    tauri.invoke.mockResolvedValue(STATUS);
    await expect(getStatus()).resolves.toEqual(STATUS);
    await setMode('plan');
    await cycleMode();
    await selectAgent('code-reviewer');
    expect(tauri.invoke.mock.calls).toEqual([
      ['get_status', undefined],
      ['set_mode', { mode: 'plan' }],
      ['cycle_mode', undefined],
      ['select_agent', { name: 'code-reviewer' }],
    ]);
  });

  it('wraps {kind, message} rejections in a BackendError', async () => {
    tauri.invoke.mockRejectedValue({ kind: 'unknown_agent', message: 'No agent named "ghost".' });
    const error = await selectAgent('ghost').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendError);
    expect(error).toMatchObject({ kind: 'unknown_agent', message: 'No agent named "ghost".' });
  });

  it('wraps plain string rejections and unknown shapes readably', () => {
    expect(toBackendError('boom', 'Command x')).toMatchObject({ kind: 'other', message: 'boom' });
    expect(toBackendError(42, 'Command x')).toMatchObject({
      kind: 'other',
      message: 'Command x failed for an unknown reason.',
    });
  });

  it('refuses clearly when not running inside the app', async () => {
    tauri.isTauri.mockReturnValue(false);
    await expect(getStatus()).rejects.toMatchObject({ kind: 'not_connected' });
    await expect(onStatus(() => {})).rejects.toMatchObject({ kind: 'not_connected' });
    expect(tauri.invoke).not.toHaveBeenCalled();
  });

  it('listens to the status event and hands over the payload', async () => {
    const unlisten = vi.fn();
    tauri.listen.mockResolvedValue(unlisten);
    const cb = vi.fn();
    const stop = await onStatus(cb);
    expect(tauri.listen).toHaveBeenCalledWith('status', expect.any(Function));
    const handler = tauri.listen.mock.calls[0][1] as (e: { payload: Status }) => void;
    handler({ payload: STATUS });
    expect(cb).toHaveBeenCalledWith(STATUS);
    stop();
    expect(unlisten).toHaveBeenCalled();
  });

  it('streams a prompt over a Channel and wraps the chat commands', async () => {
    tauri.invoke.mockResolvedValue(undefined);
    const events: unknown[] = [];
    await sendPrompt('hello', (e) => events.push(e));
    const [command, args] = tauri.invoke.mock.calls[0] as [string, { text: string; onEvent: InstanceType<typeof tauri.Channel> }];
    expect(command).toBe('send_prompt');
    expect(args.text).toBe('hello');
    args.onEvent.onmessage([
      { at_ms: 1, event: { type: 'text_delta', text: 'hi' } },
      { at_ms: 2, event: { type: 'text_delta', text: '!' } },
    ]);
    expect(events).toEqual([
      { at_ms: 1, event: { type: 'text_delta', text: 'hi' } },
      { at_ms: 2, event: { type: 'text_delta', text: '!' } },
    ]);

    await stopPrompt();
    await answerDecision(4, { kind: 'deny', feedback: 'no' });
    await checkRules(4, ['bash(ls)']);
    expect(tauri.invoke.mock.calls.slice(1)).toEqual([
      ['stop_prompt', undefined],
      ['answer_decision', { id: 4, answer: { kind: 'deny', feedback: 'no' } }],
      ['check_rules', { id: 4, rules: ['bash(ls)'] }],
    ]);
  });

  it('listens to decisions', async () => {
    tauri.listen.mockResolvedValue(() => {});
    const cb = vi.fn();
    await onDecision(cb);
    expect(tauri.listen).toHaveBeenCalledWith('decision', expect.any(Function));
  });
});
