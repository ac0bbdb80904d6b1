import type { AgentSummary, Mode } from './gen/protocol';
import { MODES, describeMode, parseMode } from './modes';

/** What the composer should do with a line of input. */
export type Parsed =
  | { kind: 'empty' }
  | { kind: 'prompt'; text: string }
  | { kind: 'mode'; mode: Mode }
  | { kind: 'agent'; name: string }
  | { kind: 'help' }
  | { kind: 'new' }
  | { kind: 'undo' }
  | { kind: 'error'; message: string };

export type CommandSpec = { usage: string; summary: string };

export const COMMANDS: readonly CommandSpec[] = [
  { usage: '/mode NAME', summary: 'switch the permission mode' },
  { usage: '/agent NAME', summary: 'switch the active agent (and its default mode)' },
  { usage: '/new', summary: 'start a new conversation (the model sees nothing of this one; it stays in the sessions list)' },
  { usage: '/undo', summary: 'undo the files the last turn changed (shows them and their diffs first)' },
  { usage: '/help', summary: 'list commands, modes and agents' },
];

const MODE_LIST = MODES.join(', ');
const COMMAND_TOKEN = /^\/[A-Za-z][\w-]*$/;

/**
 * Parse one composer submission.
 *
 * A line is a slash command when its first word is `/word` (letters, digits,
 * `-`, `_`). Anything else, including text that merely starts with a path such
 * as `/usr/bin/env is missing`, is a prompt for the agent.
 *
 * `agents`, when given and non-empty, is used to reject unknown agent names
 * before asking the backend.
 */
export function parseInput(input: string, agents: readonly string[] = []): Parsed {
  const text = input.trim();
  if (text === '') return { kind: 'empty' };

  const [head, ...args] = text.split(/\s+/);
  if (!COMMAND_TOKEN.test(head)) return { kind: 'prompt', text };

  const command = head.slice(1).toLowerCase();
  switch (command) {
    case 'mode': {
      if (args.length === 0) return { kind: 'error', message: `Usage: /mode NAME — one of ${MODE_LIST}.` };
      if (args.length > 1) return { kind: 'error', message: `/mode takes one name — one of ${MODE_LIST}.` };
      const mode = parseMode(args[0]);
      if (mode === null) {
        return { kind: 'error', message: `Unknown mode "${args[0]}". Valid modes: ${MODE_LIST}.` };
      }
      return { kind: 'mode', mode };
    }
    case 'agent': {
      const known = agents.length > 0 ? ` — one of ${agents.join(', ')}` : '';
      if (args.length === 0) return { kind: 'error', message: `Usage: /agent NAME${known}.` };
      if (args.length > 1) return { kind: 'error', message: `/agent takes one name${known}.` };
      const typed = args[0];
      if (agents.length === 0) return { kind: 'agent', name: typed };
      const name = agents.find((a) => a === typed) ?? agents.find((a) => a.toLowerCase() === typed.toLowerCase());
      if (name === undefined) {
        return { kind: 'error', message: `Unknown agent "${typed}". Available agents: ${agents.join(', ')}.` };
      }
      return { kind: 'agent', name };
    }
    case 'help':
      if (args.length > 0) return { kind: 'error', message: '/help takes no arguments.' };
      return { kind: 'help' };
    case 'new':
      if (args.length > 0) return { kind: 'error', message: '/new takes no arguments.' };
      return { kind: 'new' };
    case 'undo':
      if (args.length > 0) return { kind: 'error', message: '/undo takes no arguments.' };
      return { kind: 'undo' };
    default:
      return {
        kind: 'error',
        message: `Unknown command ${head}. Commands: ${COMMANDS.map((c) => c.usage).join(', ')}.`,
      };
  }
}

export type HelpSection = { title: string; entries: { term: string; text: string }[] };

/** The content of `/help`: commands, keys, modes and agents. */
export function helpSections(agents: readonly AgentSummary[], active?: { mode: Mode; agent: string }): HelpSection[] {
  return [
    {
      title: 'Commands',
      entries: [
        ...COMMANDS.map((c) => ({ term: c.usage, text: c.summary })),
        { term: 'Shift+Tab', text: `cycle the mode (${MODES.join(' → ')} → ${MODES[0]})` },
        { term: 'Enter / Shift+Enter', text: 'send / new line' },
        { term: 'Up / Down', text: 'recall earlier messages' },
        { term: 'y / s / a / n', text: 'in an approval: allow once / for this session / always / deny' },
      ],
    },
    {
      title: 'Modes',
      entries: MODES.map((mode) => ({
        term: active?.mode === mode ? `${mode} (current)` : mode,
        text: describeMode(mode),
      })),
    },
    {
      title: 'Agents',
      entries:
        agents.length === 0
          ? [{ term: '—', text: 'no agents reported by the backend' }]
          : agents.map((a) => ({
              term: active?.agent === a.name ? `${a.name} (current)` : a.name,
              text: a.description,
            })),
    },
  ];
}
