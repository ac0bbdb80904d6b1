import type { Mode } from './backend';

/** Shift+Tab order: default → edit → plan → auto → bypass → default. */
export const MODES = ['default', 'edit', 'plan', 'auto', 'bypass'] as const satisfies readonly Mode[];

export type ModeInfo = {
  mode: Mode;
  /** Very short summary, fits in the dropdown next to the mode name. */
  short: string;
  /** One sentence: what runs without asking, what still asks, what is denied. */
  description: string;
};

const INFO: Record<Mode, ModeInfo> = {
  default: {
    mode: 'default',
    short: 'edits and commands ask',
    description: 'reads run without asking; edits and commands ask.',
  },
  edit: {
    mode: 'edit',
    short: 'edits allowed, commands ask',
    description: 'reads and edits run without asking; commands ask.',
  },
  plan: {
    mode: 'plan',
    short: 'read-only until plan approved',
    description: 'read-only: edits and commands are denied until you approve the plan.',
  },
  auto: {
    mode: 'auto',
    short: 'runs freely; caps still ask',
    description:
      'runs anything without asking; deny rules still deny, and ask rules, opaque commands and the caps ' +
      '(critical removals, permission files, protected-branch merges, container removal, push/deploy/sudo) still ask.',
  },
  bypass: {
    mode: 'bypass',
    short: 'all but rules and critical removal',
    description: 'runs everything; deny rules still deny, and ask rules and critical removals still ask.',
  },
};

export function isMode(value: string): value is Mode {
  return (MODES as readonly string[]).includes(value);
}

/** Parse a user-typed mode name (case-insensitive, surrounding blanks ignored). */
export function parseMode(value: string): Mode | null {
  const lowered = value.trim().toLowerCase();
  return isMode(lowered) ? lowered : null;
}

export function modeInfo(mode: Mode): ModeInfo {
  return INFO[mode];
}

/** Sentence-case description, for tooltips and help. */
export function describeMode(mode: Mode): string {
  const text = INFO[mode].description;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The next mode in the Shift+Tab cycle (the backend owns the real switch). */
export function nextMode(mode: Mode): Mode {
  return MODES[(MODES.indexOf(mode) + 1) % MODES.length];
}

/** The one-line confirmation shown in the chat after a mode switch. */
export function modeConfirmation(mode: Mode): string {
  return `Mode: ${mode} — ${INFO[mode].description}`;
}

/** The one-line confirmation shown in the chat after an agent switch. */
export function agentConfirmation(agent: string, mode: Mode): string {
  return `Agent: ${agent} (mode ${mode})`;
}
