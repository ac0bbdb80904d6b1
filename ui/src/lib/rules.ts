/**
 * Rules in words, for the person deciding whether to keep one: `bash(npm run *)` reads
 * "commands starting with npm run", `edit(src/**)` reads "edits of src/**". The exact
 * rule stays one click away (the dialog's editable field).
 */

function quoted(text: string): string {
  return `“${text}”`;
}

/** One rule in words; the rule itself when it has a shape this does not know. */
export function ruleInWords(rule: string): string {
  const m = /^([A-Za-z_][\w-]*)(?:\((.*)\))?$/s.exec(rule.trim());
  if (!m) return rule;
  const [, tool, arg] = m;
  if (arg === undefined || arg === '' || arg === '*') return `every ${tool} call`;
  switch (tool) {
    case 'bash': {
      if (arg.endsWith(' *')) return `commands starting with ${quoted(arg.slice(0, -2))}`;
      if (arg.endsWith(':*')) return `commands starting with ${quoted(arg.slice(0, -2))}`;
      return `the command ${quoted(arg)}`;
    }
    case 'edit':
    case 'write':
      return `changes to ${quoted(arg)}`;
    case 'read':
      return `reading ${quoted(arg)}`;
    case 'glob':
    case 'grep':
      return `searching ${quoted(arg)}`;
    case 'web_fetch':
    case 'net':
      return arg.startsWith('domain:') ? `connections to ${quoted(arg.slice(7))}` : `fetching ${quoted(arg)}`;
    default:
      return `${tool} calls matching ${quoted(arg)}`;
  }
}

/** Several rules as one phrase: "a, b and c". */
export function rulesInWords(rules: string[]): string {
  const words = rules.map(ruleInWords);
  if (words.length <= 1) return words[0] ?? '';
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}
