// The decision dialogs show the answers the request offers — as the backend derived
// them once (`offered` on the channel's event) — and no other: a button, a key, and
// the sentence saying why keeping a rule is withheld all follow `offered`, never the
// dialog's own reading of the request.
import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import type { Decision, DecisionAnswer, DecisionRequest, Offered } from '../lib/gen/protocol';
import ApprovalDialog from './ApprovalDialog.svelte';
import NetworkDialog from './NetworkDialog.svelte';
import PlanDialog from './PlanDialog.svelte';
import SandboxDialog from './SandboxDialog.svelte';

const pastGuard = () => new Promise((r) => setTimeout(r, 420));

function decision(overrides: Partial<Decision> = {}): Decision {
  return {
    verdict: 'ask',
    reason: 'default mode asks before running shell commands',
    trace: [],
    fragments: [{ text: 'npm test', verdict: 'ask' }],
    capped: false,
    origin: null,
    always_allow_rules: ['bash(npm test)'],
    ...overrides,
  };
}

type Permission = Extract<DecisionRequest, { kind: 'permission' }>;
type Network = Extract<DecisionRequest, { kind: 'network' }>;
type RunOutside = Extract<DecisionRequest, { kind: 'run_outside' }>;

function permission(over: Partial<Permission> = {}): Permission {
  return {
    kind: 'permission',
    tool: 'bash',
    subject: 'npm test',
    input: { command: 'npm test' },
    decision: decision(),
    cwd: '/p',
    ...over,
  };
}

function network(over: Partial<Decision> = {}): Network {
  return {
    kind: 'network',
    host: 'example.org',
    port: 443,
    command: 'curl https://example.org',
    cwd: '/p',
    decision: decision({ always_allow_rules: ['net(domain:example.org)'], ...over }),
  };
}

const runOutside: RunOutside = {
  kind: 'run_outside',
  command: 'touch ~/x',
  cwd: '/p',
  bound: { kind: 'write', message: 'a write outside the project', may_run_outside: true },
  output: '',
};

function answers() {
  const sent: DecisionAnswer[] = [];
  const onAnswer = vi.fn(async (a: DecisionAnswer) => {
    sent.push(a);
  });
  return { sent, onAnswer };
}

async function key(k: string) {
  await fireEvent.keyDown(screen.getByTestId('approval-dialog'), { key: k });
}

describe('ApprovalDialog follows what the request offers', () => {
  const all: Offered = { answers: ['allow_once', 'allow_for_session', 'always_allow', 'edit_command', 'deny'] };

  it('offers keeping a rule where the request offers it', async () => {
    const { onAnswer } = answers();
    render(ApprovalDialog, { request: permission(), offered: all, queue: null, onAnswer, checkRules: async () => ({ ok: true, problems: [] }) });
    expect(screen.getByTestId('approve-session')).toBeEnabled();
    expect(screen.getByTestId('approve-always')).toBeEnabled();
    expect(screen.getByTestId('approval-rule')).toHaveValue('bash(npm test)');
    expect(screen.queryByTestId('approval-capped')).toBeNull();
  });

  it('a capped call: only "Allow once", and says why, whatever the decision it carries', async () => {
    const { sent, onAnswer } = answers();
    const capped: Offered = { answers: ['allow_once', 'edit_command', 'deny'], withheld: 'capped_call' };
    render(ApprovalDialog, { request: permission(), offered: capped, queue: null, onAnswer, checkRules: async () => ({ ok: true, problems: [] }) });
    expect(screen.getByTestId('approval-capped')).toHaveTextContent('Only “Allow once” is offered');
    expect(screen.queryByTestId('approve-session')).toBeNull();
    expect(screen.queryByTestId('approve-always')).toBeNull();
    expect(screen.queryByTestId('approval-rule')).toBeNull();
    await pastGuard();
    await key('a');
    await key('s');
    expect(sent).toEqual([]);
    await pastGuard();
    await key('y');
    await waitFor(() => expect(sent).toEqual([{ kind: 'allow_once' }]));
  });

  it('no rule to keep: neither button nor the rule, and nothing said about a cap', () => {
    const noRule: Offered = { answers: ['allow_once', 'edit_command', 'deny'], withheld: 'no_rule' };
    const { onAnswer } = answers();
    render(ApprovalDialog, {
      request: permission({ decision: decision({ always_allow_rules: [] }) }),
      offered: noRule,
      queue: null,
      onAnswer,
      checkRules: async () => ({ ok: true, problems: [] }),
    });
    expect(screen.queryByTestId('approve-session')).toBeNull();
    expect(screen.queryByTestId('approve-always')).toBeNull();
    expect(screen.queryByTestId('approval-rule')).toBeNull();
    expect(screen.queryByTestId('approval-capped')).toBeNull();
    expect(screen.getByTestId('approve-once')).toBeEnabled();
  });

  it('a command the request does not offer to edit cannot be edited', () => {
    const { onAnswer } = answers();
    render(ApprovalDialog, {
      request: permission(),
      offered: { answers: ['allow_once', 'allow_for_session', 'always_allow', 'deny'] },
      queue: null,
      onAnswer,
      checkRules: async () => ({ ok: true, problems: [] }),
    });
    expect(screen.getByTestId('approval-command')).toHaveAttribute('readonly');
  });

  it('an edited command the gate judged again offers keeping a rule, like any other', () => {
    const { onAnswer } = answers();
    render(ApprovalDialog, {
      request: permission({ edited: true }),
      offered: all,
      queue: null,
      onAnswer,
      checkRules: async () => ({ ok: true, problems: [] }),
    });
    expect(screen.getByText(/You edited this command/)).toBeInTheDocument();
    expect(screen.getByTestId('approve-always')).toBeEnabled();
  });
});

describe('NetworkDialog follows what the request offers', () => {
  it('for this session and always, where offered', async () => {
    const { sent, onAnswer } = answers();
    render(NetworkDialog, {
      request: network(),
      offered: { answers: ['allow_once', 'allow_for_session', 'always_allow', 'deny'] },
      queue: null,
      onAnswer,
    });
    expect(screen.getByTestId('approval-rule')).toHaveTextContent('net(domain:example.org)');
    await pastGuard();
    await key('s');
    await waitFor(() => expect(sent).toEqual([{ kind: 'allow_for_session', rules: ['net(domain:example.org)'] }]));
  });

  it('a capped connection: only once, and says why', async () => {
    const { sent, onAnswer } = answers();
    render(NetworkDialog, {
      request: network(),
      offered: { answers: ['allow_once', 'deny'], withheld: 'capped_connection' },
      queue: null,
      onAnswer,
    });
    expect(screen.getByTestId('approval-capped')).toHaveTextContent('Only “Allow once” is offered for this host.');
    expect(screen.queryByTestId('approve-session')).toBeNull();
    expect(screen.queryByTestId('approve-always')).toBeNull();
    expect(screen.queryByTestId('approval-rule')).toBeNull();
    await pastGuard();
    await key('a');
    expect(sent).toEqual([]);
  });
});

describe('SandboxDialog follows what the request offers', () => {
  it('runs outside once, or not', async () => {
    const { sent, onAnswer } = answers();
    render(SandboxDialog, { request: runOutside, offered: { answers: ['allow_once', 'deny'] }, queue: null, onAnswer });
    expect(screen.getByTestId('approve-once')).toBeInTheDocument();
    expect(screen.queryByTestId('approve-always')).toBeNull();
    await pastGuard();
    await key('y');
    await waitFor(() => expect(sent).toEqual([{ kind: 'allow_once' }]));
  });

  it('shows no way to run outside when the request does not offer it', async () => {
    const { sent, onAnswer } = answers();
    render(SandboxDialog, { request: runOutside, offered: { answers: ['deny'] }, queue: null, onAnswer });
    expect(screen.queryByTestId('approve-once')).toBeNull();
    await pastGuard();
    await key('y');
    expect(sent).toEqual([]);
  });
});

describe('PlanDialog', () => {
  it('offers the modes it is given, the default first', () => {
    const { onAnswer } = answers();
    render(PlanDialog, { plan: 'p', modes: ['default', 'edit'], queue: null, onAnswer });
    const modes = Array.from(screen.getByTestId('plan-approve-mode').querySelectorAll('option')).map((o) => o.value);
    expect(modes).toEqual(['default', 'edit']);
    expect(screen.getByTestId('plan-approve-mode')).toHaveValue('default');
  });
});
