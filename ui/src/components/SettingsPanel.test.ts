import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import type { KeyStatus, ProjectRules, ProviderView } from '../lib/gen/protocol';
import { contextTokensError, lines, ruleError } from '../lib/settings';
import SettingsPanel from './SettingsPanel.svelte';
import type * as Backend from '../lib/backend';

vi.mock('../lib/backend', async () => {
  const actual = await vi.importActual<typeof Backend>('../lib/backend');
  return {
    BackendError: actual.BackendError,
    providerSettings: vi.fn(),
    saveProvider: vi.fn(),
    keyStatus: vi.fn(),
    setApiKey: vi.fn(),
    deleteApiKey: vi.fn(),
    testConnection: vi.fn(),
    projectRules: vi.fn(),
    mcpServers: vi.fn(),
    mcpSetEnabled: vi.fn(),
    ruleWarning: vi.fn(),
    addRule: vi.fn(),
    removeRule: vi.fn(),
    setSettingsList: vi.fn(),
    setTrust: vi.fn(),
    testCall: vi.fn(),
    dropSessionRule: vi.fn(),
  };
});

import * as backend from '../lib/backend';

const SECRET = 'sk-ant-api03-very-secret';

function key(stored: boolean, problem: string | null = null): KeyStatus {
  return { provider: 'anthropic', stored, env_var: 'ANTHROPIC_API_KEY', env_set: false, problem };
}

function provider(over: Partial<ProviderView> = {}): ProviderView {
  return {
    config_file: '/home/ada/.config/decode/config.json',
    provider: 'anthropic',
    model: null,
    base_url: null,
    context_tokens: null,
    problem: null,
    overridden: false,
    key: key(false),
    ...over,
  };
}

function rules(over: Partial<ProjectRules> = {}): ProjectRules {
  return {
    settings_file: '/p/.decode/settings.json',
    problem: null,
    trusted: true,
    agent: 'code-reviewer',
    rules: [
      { list: 'allow', rule: 'bash(npm test)', source: 'project', agent: null, agent_file: null, always_allowed: true, ignored: null },
      { list: 'deny', rule: 'read(.env)', source: 'project', agent: null, agent_file: null, always_allowed: false, ignored: null },
      {
        list: 'allow',
        rule: 'bash(git *)',
        source: 'agent',
        agent: 'code-reviewer',
        agent_file: null,
        always_allowed: false,
        ignored: null,
      },
    ],
    additional_directories: [],
    protected_branches: ['release'],
    ...over,
  };
}

beforeEach(() => {
  vi.resetAllMocks();
  vi.mocked(backend.providerSettings).mockResolvedValue(provider());
  vi.mocked(backend.projectRules).mockResolvedValue(rules());
  vi.mocked(backend.saveProvider).mockImplementation(async (c) => ({
    kind: 'saved',
    view: provider({ provider: c.provider, model: c.model, base_url: c.base_url, context_tokens: c.context_tokens }),
  }));
  vi.mocked(backend.setApiKey).mockResolvedValue(key(true));
  vi.mocked(backend.deleteApiKey).mockResolvedValue(key(false));
  vi.mocked(backend.keyStatus).mockResolvedValue(key(false));
  vi.mocked(backend.mcpServers).mockResolvedValue([]);
  vi.mocked(backend.ruleWarning).mockResolvedValue(null);
});

async function open() {
  const user = userEvent.setup();
  render(SettingsPanel, { props: { chat: null, onClose: () => {} } });
  await screen.findByTestId('settings-key-status');
  await screen.findAllByTestId('settings-rule');
  // Past the dialog's key guard.
  await new Promise((r) => setTimeout(r, 420));
  return user;
}

describe('the settings checks', () => {
  it('refuses what is obviously not a rule, a size or a list entry', () => {
    expect(ruleError('')).toMatch(/Type a rule/);
    expect(ruleError('bash(')).toMatch(/not a rule/);
    expect(ruleError('bash()')).toMatch(/empty pattern/);
    expect(ruleError('bash(npm test)')).toBeNull();
    expect(ruleError('read')).toBeNull();
    expect(contextTokensError('')).toBeNull();
    expect(contextTokensError('12k')).toMatch(/whole number/);
    expect(contextTokensError('100')).toMatch(/at least/);
    expect(contextTokensError('128000')).toBeNull();
    expect(lines(' a \n\n b\n')).toEqual(['a', 'b']);
  });
});

describe('settings screen', () => {
  it('stores the key and never shows it again, only "set"', async () => {
    const user = await open();
    expect(screen.getByTestId('settings-key-status')).toHaveTextContent('not set');
    const field = screen.getByTestId('settings-key-input') as HTMLInputElement;
    expect(field.type).toBe('password');
    await user.type(field, SECRET);
    await user.click(screen.getByTestId('settings-key-save'));
    expect(backend.setApiKey).toHaveBeenCalledWith('anthropic', SECRET);
    await waitFor(() => expect(screen.getByTestId('settings-key-status')).toHaveTextContent(/^set$/));
    expect(screen.queryByTestId('settings-key-input')).toBeNull();
    expect(document.body.innerHTML).not.toContain(SECRET);
    // Replace shows an empty field; Remove deletes.
    await user.click(screen.getByTestId('settings-key-replace'));
    expect((screen.getByTestId('settings-key-input') as HTMLInputElement).value).toBe('');
    await user.click(screen.getByTestId('settings-key-save'));
    expect(backend.setApiKey).toHaveBeenCalledTimes(1);
  });

  it('says in one sentence when there is no keyring', async () => {
    vi.mocked(backend.providerSettings).mockResolvedValue(
      provider({ key: key(false, 'There is no usable Secret Service here: set ANTHROPIC_API_KEY instead.') }),
    );
    await open();
    expect(screen.getByTestId('settings-key-problem')).toHaveTextContent('ANTHROPIC_API_KEY');
  });

  it('lists each rule with its source and adds only rules that look valid', async () => {
    vi.mocked(backend.addRule).mockImplementation(async (list, rule) =>
      rules({
        rules: [
          ...rules().rules,
          { list, rule, source: 'project', agent: null, agent_file: null, always_allowed: false, ignored: null },
        ],
      }),
    );
    const user = await open();
    const shown = screen.getAllByTestId('settings-rule');
    expect(shown.map((r) => [r.dataset.source, r.dataset.list, r.dataset.rule])).toEqual([
      ['project', 'allow', 'bash(npm test)'],
      ['project', 'deny', 'read(.env)'],
      ['agent', 'allow', 'bash(git *)'],
    ]);
    expect(within(shown[0]).getByTestId('settings-rule-always')).toBeInTheDocument();
    // Agent rules are edited in the agent's file, not here.
    expect(within(shown[2]).queryByTestId('settings-rule-remove')).toBeNull();

    await user.type(screen.getByTestId('settings-rule-input'), 'bash(');
    await user.click(screen.getByTestId('settings-rule-add'));
    expect(backend.addRule).not.toHaveBeenCalled();
    expect(screen.getByTestId('settings-rule-error')).toHaveTextContent('not a rule');

    await user.clear(screen.getByTestId('settings-rule-input'));
    await user.selectOptions(screen.getByTestId('settings-rule-list'), 'ask');
    await user.type(screen.getByTestId('settings-rule-input'), 'bash(git push *){Enter}');
    expect(backend.addRule).toHaveBeenCalledWith('ask', 'bash(git push *)');
    await waitFor(() => expect(screen.getAllByTestId('settings-rule')).toHaveLength(4));
  });

  it('warns before an allow rule that lets any code run, and adds it only when confirmed', async () => {
    vi.mocked(backend.addRule).mockResolvedValue(rules());
    vi.mocked(backend.ruleWarning).mockImplementation(async (rule) =>
      rule.startsWith('bash(python')
        ? '`bash(python *)` is a wildcard over `python`, which runs whatever it is given: allow exact commands instead'
        : null,
    );
    const user = await open();
    await user.type(screen.getByTestId('settings-rule-input'), 'bash(python *)');
    await user.click(screen.getByTestId('settings-rule-add'));
    const warning = await screen.findByTestId('settings-rule-warning');
    expect(warning).toHaveTextContent('run any code without asking');
    // The reason's code spans are code, never raw backticks.
    expect(warning).toHaveTextContent('wildcard over python, which runs');
    expect(warning).not.toHaveTextContent('`');
    expect([...warning.querySelectorAll('code')].map((c) => c.textContent)).toEqual(['bash(python *)', 'python']);
    expect(backend.addRule).not.toHaveBeenCalled();
    // Cancel keeps the rule out; Add it anyway saves it.
    await user.click(screen.getByTestId('settings-rule-cancel'));
    expect(screen.queryByTestId('settings-rule-warning')).toBeNull();
    await user.click(screen.getByTestId('settings-rule-add'));
    await user.click(await screen.findByTestId('settings-rule-confirm'));
    expect(backend.addRule).toHaveBeenCalledWith('allow', 'bash(python *)');
    // A deny rule never warns; an ordinary allow rule is added at once.
    vi.mocked(backend.ruleWarning).mockClear();
    await user.selectOptions(screen.getByTestId('settings-rule-list'), 'deny');
    await user.type(screen.getByTestId('settings-rule-input'), 'bash(python *)');
    await user.click(screen.getByTestId('settings-rule-add'));
    expect(backend.ruleWarning).not.toHaveBeenCalled();
    expect(backend.addRule).toHaveBeenLastCalledWith('deny', 'bash(python *)');
  });

  it('shows the gate refusing a rule, with its reason', async () => {
    vi.mocked(backend.addRule).mockRejectedValue(
      new backend.BackendError('invalid_input', '`bash(a` is not a valid rule (unclosed parenthesis)'),
    );
    const user = await open();
    await user.type(screen.getByTestId('settings-rule-input'), 'web_fetch(domain:)');
    await user.click(screen.getByTestId('settings-rule-add'));
    await waitFor(() => expect(screen.getByTestId('settings-rule-error')).toHaveTextContent('not a valid rule'));
  });

  it('revokes an always-allowed rule', async () => {
    vi.mocked(backend.removeRule).mockResolvedValue(rules({ rules: rules().rules.slice(1) }));
    const user = await open();
    const first = screen.getAllByTestId('settings-rule')[0];
    const revoke = within(first).getByTestId('settings-rule-remove');
    expect(revoke).toHaveTextContent('revoke');
    await user.click(revoke);
    expect(backend.removeRule).toHaveBeenCalledWith('allow', 'bash(npm test)');
    await waitFor(() => expect(screen.getAllByTestId('settings-rule')).toHaveLength(2));
  });

  it('shows a malformed settings file read-only with its parse error', async () => {
    vi.mocked(backend.projectRules).mockResolvedValue(
      rules({ problem: '/p/.decode/settings.json:3:7: expected value', rules: [] }),
    );
    const user = userEvent.setup();
    render(SettingsPanel, { props: { chat: null, onClose: () => {} } });
    expect(await screen.findByTestId('settings-rules-problem')).toHaveTextContent(':3:7: expected value');
    expect(screen.queryByTestId('settings-rule-input')).toBeNull();
    expect(screen.queryByTestId('settings-rule-add')).toBeNull();
    void user;
  });

  it('saves the provider as it changes and refuses a bad context size', async () => {
    const user = await open();
    await user.selectOptions(screen.getByTestId('settings-provider'), 'openai');
    await waitFor(() =>
      expect(backend.saveProvider).toHaveBeenCalledWith(expect.objectContaining({ provider: 'openai' })),
    );
    await user.type(screen.getByTestId('settings-base-url'), 'http://localhost:11434/v1');
    await user.tab();
    await waitFor(() =>
      expect(backend.saveProvider).toHaveBeenLastCalledWith(
        expect.objectContaining({ base_url: 'http://localhost:11434/v1' }),
      ),
    );
    const calls = vi.mocked(backend.saveProvider).mock.calls.length;
    await user.type(screen.getByTestId('settings-context'), '12k');
    await user.tab();
    expect(await screen.findByTestId('settings-provider-error')).toHaveTextContent('whole number');
    expect(vi.mocked(backend.saveProvider).mock.calls.length).toBe(calls);
  });

  it('asks before a changed base URL sends the stored key to another host', async () => {
    vi.mocked(backend.providerSettings).mockResolvedValue(provider({ provider: 'openai' }));
    vi.mocked(backend.saveProvider).mockImplementation(async (c) =>
      c.confirm_key_host === 'evil.example'
        ? { kind: 'saved', view: provider({ provider: 'openai', base_url: c.base_url }) }
        : { kind: 'confirm_key_host', provider: 'openai', host: 'evil.example', bound: 'api.openai.com' },
    );
    const user = await open();
    await user.type(screen.getByTestId('settings-base-url'), 'https://evil.example/v1');
    await user.tab();
    const held = await screen.findByTestId('settings-key-host');
    expect(held).toHaveTextContent('would be sent to evil.example, not to api.openai.com');
    expect(backend.saveProvider).toHaveBeenCalledTimes(1);
    expect(vi.mocked(backend.saveProvider).mock.calls[0][0].confirm_key_host).toBeUndefined();

    // "Keep the old URL": nothing saved, the field shows the saved URL again.
    await user.click(screen.getByTestId('settings-key-host-cancel'));
    expect(screen.queryByTestId('settings-key-host')).toBeNull();
    expect((screen.getByTestId('settings-base-url') as HTMLInputElement).value).toBe('');

    await user.type(screen.getByTestId('settings-base-url'), 'https://evil.example/v1');
    await user.tab();
    await user.click(await screen.findByTestId('settings-key-host-confirm'));
    await waitFor(() =>
      expect(backend.saveProvider).toHaveBeenLastCalledWith(
        expect.objectContaining({ base_url: 'https://evil.example/v1', confirm_key_host: 'evil.example' }),
      ),
    );
    await waitFor(() => expect(screen.queryByTestId('settings-key-host')).toBeNull());
  });

  it('tests a call and shows what decode check prints', async () => {
    vi.mocked(backend.testCall).mockResolvedValue({
      decision: {
        verdict: 'ask',
        reason: 'git push has external effects: asks every time',
        trace: [],
        fragments: [],
        capped: true,
        origin: null,
        always_allow_rules: [],
      },
      text: 'ask: git push has external effects: asks every time\n  capped: only "allow once" is offered',
    });
    const user = await open();
    await user.type(screen.getByTestId('settings-test-call'), 'bash git push origin main{Enter}');
    expect(backend.testCall).toHaveBeenCalledWith('bash git push origin main');
    const result = await screen.findByTestId('settings-test-result');
    expect(result.dataset.verdict).toBe('ask');
    expect(result).toHaveTextContent('external effects');
  });

  it('lists the rules allowed for this session and drops one', async () => {
    vi.mocked(backend.dropSessionRule).mockResolvedValue(true);
    const user = userEvent.setup();
    render(SettingsPanel, {
      props: {
        chat: {
          session_id: 's',
          provider: 'openai',
          model: 'm',
          setup_problem: null,
          sandbox_problem: null,
          usage: { input_tokens: 0, output_tokens: 0 },
          running: false,
          session_rules: ['bash(npm test)', 'read(docs/**)'],
          todos: [],
        },
        onClose: () => {},
      },
    });
    const rows = await screen.findAllByTestId('settings-session-rule');
    expect(rows.map((r) => r.textContent)).toEqual([
      expect.stringContaining('bash(npm test)'),
      expect.stringContaining('read(docs/**)'),
    ]);
    await new Promise((r) => setTimeout(r, 420));
    await user.click(within(rows[1]).getByTestId('settings-session-rule-drop'));
    expect(backend.dropSessionRule).toHaveBeenCalledWith('read(docs/**)');
  });
});

describe('MCP servers in the settings', () => {
  it('lists each server with its status, why it waits, and its tools with their claims and marks', async () => {
    vi.mocked(backend.mcpServers).mockResolvedValue([
      {
        name: 'docs',
        scope: 'user',
        file: '/home/ada/.config/decode/mcp.json',
        command_line: 'uvx docs-mcp',
        status: 'ready',
        restarts: 1,
        sandboxed: true,
        tools: [
          { name: 'mcp__docs__search', read_only_hint: true, marked_read_only: false, offered: true },
          { name: 'mcp__docs__get', marked_read_only: true, offered: false },
        ],
      },
      {
        name: 'proj',
        scope: 'project',
        file: '/p/.mcp.json',
        command_line: 'node <img src=x onerror=alert(1)>',
        status: 'needs_approval',
        detail: 'a project server starts only after you approve its command line',
        restarts: 0,
        tools: [],
      },
    ]);
    await open();
    const items = await screen.findAllByTestId('mcp-server');
    expect(items.map((i) => i.getAttribute('data-status'))).toEqual(['ready', 'needs_approval']);
    expect(within(items[0]).getByTestId('mcp-server-status')).toHaveTextContent('running');
    const tools = within(items[0]).getAllByTestId('mcp-tool');
    expect(tools[0]).toHaveTextContent('says it only reads (not trusted)');
    expect(tools[1]).toHaveTextContent('read-only (your mark)');
    expect(tools[1]).toHaveTextContent('not offered by this agent');
    expect(within(items[1]).getByTestId('mcp-server-detail')).toHaveTextContent('approve its command line');
    expect(items[1]).toHaveTextContent('node <img src=x onerror=alert(1)>');
    expect(items[1].querySelector('img')).toBeNull();
  });

  it('approves a project server, turns one of yours off, and shows the list the backend returns', async () => {
    const user = userEvent.setup();
    const base = { file: '/f', restarts: 0, tools: [] };
    vi.mocked(backend.mcpServers).mockResolvedValue([
      { ...base, name: 'mine', scope: 'user', command_line: 'uvx mine', status: 'ready' },
      { ...base, name: 'proj', scope: 'project', command_line: 'node srv.js', status: 'needs_approval' },
    ]);
    vi.mocked(backend.mcpSetEnabled).mockResolvedValueOnce([
      { ...base, name: 'mine', scope: 'user', command_line: 'uvx mine', status: 'ready' },
      { ...base, name: 'proj', scope: 'project', command_line: 'node srv.js', status: 'ready' },
    ]);
    await open();
    const items = await screen.findAllByTestId('mcp-server');
    // What the person approves is on screen next to the button.
    expect(within(items[1]).getByTestId('mcp-server-command')).toHaveTextContent('node srv.js');
    expect(within(items[0]).queryByTestId('mcp-approve')).toBeNull();
    await user.click(within(items[1]).getByTestId('mcp-approve'));
    expect(backend.mcpSetEnabled).toHaveBeenCalledWith('proj', true);
    await waitFor(() => expect(screen.getAllByTestId('mcp-server')[1].getAttribute('data-status')).toBe('ready'));

    vi.mocked(backend.mcpSetEnabled).mockResolvedValueOnce([
      { ...base, name: 'mine', scope: 'user', command_line: 'uvx mine', status: 'disabled' },
      { ...base, name: 'proj', scope: 'project', command_line: 'node srv.js', status: 'ready' },
    ]);
    await user.click(within(screen.getAllByTestId('mcp-server')[0]).getByTestId('mcp-turn-off'));
    expect(backend.mcpSetEnabled).toHaveBeenLastCalledWith('mine', false);
    await waitFor(() =>
      expect(within(screen.getAllByTestId('mcp-server')[0]).getByTestId('mcp-turn-on')).toBeInTheDocument(),
    );

    vi.mocked(backend.mcpSetEnabled).mockRejectedValueOnce(new Error('the file is a link'));
    await user.click(within(screen.getAllByTestId('mcp-server')[0]).getByTestId('mcp-turn-on'));
    await waitFor(() => expect(screen.getByTestId('mcp-switch-error')).toHaveTextContent('the file is a link'));
  });

  it('offers no switch on for a project server its own file turned off, nor for an untrusted one', async () => {
    const base = { file: '/p/.mcp.json', restarts: 0, tools: [], scope: 'project' };
    vi.mocked(backend.mcpServers).mockResolvedValue([
      { ...base, name: 'off', command_line: 'a', status: 'disabled' },
      { ...base, name: 'untrusted', command_line: 'b', status: 'untrusted' },
    ]);
    await open();
    const items = await screen.findAllByTestId('mcp-server');
    for (const item of items) {
      expect(within(item).queryByRole('button')).toBeNull();
    }
  });

  it('says when there are none', async () => {
    await open();
    await waitFor(() => expect(screen.getByTestId('settings-mcp')).toHaveTextContent('None'));
  });
});
