import { describe, expect, it } from 'vitest';
import { isShiftTab } from './keys';

const key = (over: Partial<KeyboardEvent>) => ({
  key: 'Tab',
  code: 'Tab',
  shiftKey: true,
  ctrlKey: false,
  altKey: false,
  metaKey: false,
  ...over,
});

describe('isShiftTab', () => {
  it('accepts Shift+Tab as browsers report it', () => {
    expect(isShiftTab(key({}))).toBe(true);
  });

  it('accepts Shift+Tab as WebKitGTK reports it (ISO_Left_Tab)', () => {
    expect(isShiftTab(key({ key: 'Unidentified' }))).toBe(true);
  });

  it('rejects plain Tab, modified Tab and other keys', () => {
    expect(isShiftTab(key({ shiftKey: false }))).toBe(false);
    expect(isShiftTab(key({ ctrlKey: true }))).toBe(false);
    expect(isShiftTab(key({ altKey: true }))).toBe(false);
    expect(isShiftTab(key({ metaKey: true }))).toBe(false);
    expect(isShiftTab(key({ key: 'A', code: 'KeyA' }))).toBe(false);
    expect(isShiftTab(key({ key: 'Unidentified', code: 'KeyA' }))).toBe(false);
  });
});
