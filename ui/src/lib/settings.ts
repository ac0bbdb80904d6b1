/**
 * Helpers of the settings screen: the providers offered, and the checks made before
 * anything is sent (the backend checks again: a rule must parse with the gate's own
 * parser before it is saved).
 */

import type { ProviderName } from './gen/protocol';

/** The providers a person can choose (the script provider is for tests and the demo). */
export const PROVIDERS = ['anthropic', 'gemini', 'openai'] as const satisfies readonly ProviderName[];

/** The provider a select's value names, if it names one. */
export function providerNamed(value: string): ProviderName | null {
  return (PROVIDERS as readonly string[]).includes(value) || value === 'script' ? (value as ProviderName) : null;
}

export function providerLabel(name: string): string {
  switch (name) {
    case 'anthropic':
      return 'Anthropic';
    case 'gemini':
      return 'Gemini';
    case 'openai':
      return 'OpenAI-compatible (OpenAI, Ollama, llama.cpp, LM Studio, vLLM, OpenRouter)';
    case 'script':
      return 'Script (replays a file)';
    default:
      return name;
  }
}

/** Why a context size cannot be saved, or null (empty means "estimate it"). */
export function contextTokensError(text: string): string | null {
  const t = text.trim();
  if (t === '') return null;
  if (!/^\d+$/.test(t)) return 'The context size is a whole number of tokens, e.g. 128000.';
  const n = Number(t);
  if (n < 1024) return 'The context size must be at least 1024 tokens.';
  if (!Number.isSafeInteger(n)) return 'The context size is too large.';
  return null;
}

/** Why `text` is obviously not a rule, or null (the gate's parser has the last word). */
export function ruleError(text: string): string | null {
  const t = text.trim();
  if (t === '') return 'Type a rule first, e.g. bash(npm test).';
  const m = /^([A-Za-z_]+)(\((.*)\))?$/s.exec(t);
  if (!m) return `"${t}" is not a rule: write Tool or Tool(pattern), e.g. bash(npm test).`;
  if (m[2] !== undefined && m[3].trim() === '') return `"${t}" has an empty pattern: write ${m[1]} for every call.`;
  return null;
}

/** The non-empty lines of a text field. */
export function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** A size for people: 812 B, 4.2 KB, 1.3 MB. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** A time for people, in the local zone: 2026-12-01 14:05. */
export function formatTime(ms: number): string {
  const d = new Date(ms);
  const p = (x: number) => String(x).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}
