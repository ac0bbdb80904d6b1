import type { Mode } from './gen/protocol';
import { MODES, MODE_DESCRIPTIONS } from './gen/modes';

export { MODES };

/** A very short summary per mode, for the dropdown next to the mode name. */
const SHORT: Record<Mode, string> = {
  default: 'edits and commands ask',
  edit: 'edits allowed, commands ask',
  plan: 'read-only until plan approved',
  auto: 'runs freely; caps still ask',
  bypass: 'all but rules and critical removal',
};

export function isMode(value: string): value is Mode {
  return (MODES as readonly string[]).includes(value);
}

/** Parse a user-typed mode name (case-insensitive, surrounding blanks ignored). */
export function parseMode(value: string): Mode | null {
  const lowered = value.trim().toLowerCase();
  return isMode(lowered) ? lowered : null;
}

export function shortDescription(mode: Mode): string {
  return SHORT[mode];
}

/** What the mode lets through and what still asks (the gate's own words). */
export function describeMode(mode: Mode): string {
  const text = MODE_DESCRIPTIONS[mode];
  return text.charAt(0).toUpperCase() + text.slice(1) + '.';
}

/** The next mode in the Shift+Tab cycle (the backend owns the real switch). */
export function nextMode(mode: Mode): Mode {
  return MODES[(MODES.indexOf(mode) + 1) % MODES.length];
}

/** The one-line confirmation shown in the chat after a mode switch. */
export function modeConfirmation(mode: Mode): string {
  return `Mode: ${mode} — ${MODE_DESCRIPTIONS[mode]}`;
}

/** The one-line confirmation shown in the chat after an agent switch. */
export function agentConfirmation(agent: string, mode: Mode): string {
  return `Agent: ${agent} (mode ${mode})`;
}
