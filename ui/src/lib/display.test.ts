import { describe, expect, it } from 'vitest';
import { pieces, shown } from './display';

describe('pieces', () => {
  it('splits a reason at its backticks into words and code', () => {
    expect(pieces('`bash(python3 *)` is a wildcard over `python3`, which runs it')).toEqual([
      { code: true, text: 'bash(python3 *)' },
      { code: false, text: ' is a wildcard over ' },
      { code: true, text: 'python3' },
      { code: false, text: ', which runs it' },
    ]);
  });

  it('keeps text without a pair of backticks whole, and an unpaired one as it is', () => {
    expect(pieces('no code here')).toEqual([{ code: false, text: 'no code here' }]);
    expect(pieces('one ` tick')).toEqual([{ code: false, text: 'one ` tick' }]);
    expect(pieces('`a` and ` b')).toEqual([
      { code: true, text: 'a' },
      { code: false, text: ' and ' },
      { code: false, text: '` b' },
    ]);
  });

  it('leaves hidden characters to shown()', () => {
    const [p] = pieces('`rm\u202e -rf`').filter((x) => x.code);
    expect(shown(p.text)).toBe('rm\\u{202e} -rf');
  });
});
