import { describe, expect, it } from 'vitest';
import { ruleInWords, rulesInWords } from './rules';

describe('rules in words', () => {
  it('reads the shapes a person keeps', () => {
    expect(ruleInWords('bash(npm run *)')).toBe('commands starting with “npm run”');
    expect(ruleInWords('bash(echo always-e2e)')).toBe('the command “echo always-e2e”');
    expect(ruleInWords('edit(src/**)')).toBe('changes to “src/**”');
    expect(ruleInWords('web_fetch(domain:docs.rs)')).toBe('connections to “docs.rs”');
    expect(ruleInWords('read')).toBe('every read call');
  });

  it('keeps quotes and odd text as they are', () => {
    expect(ruleInWords('bash(python3 -c "import sys; print(1)")')).toBe('the command “python3 -c "import sys; print(1)"”');
    expect(ruleInWords('not a rule (')).toBe('not a rule (');
  });

  it('joins several', () => {
    expect(rulesInWords(['bash(seq *)', 'bash(echo *)'])).toBe('commands starting with “seq” and commands starting with “echo”');
    expect(rulesInWords([])).toBe('');
  });
});
