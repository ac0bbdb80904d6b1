type KeyLike = Pick<KeyboardEvent, 'key' | 'code' | 'shiftKey' | 'ctrlKey' | 'altKey' | 'metaKey'>;

/**
 * Shift+Tab, as every engine reports it. WebKitGTK (the Linux webview) turns
 * Shift+Tab into GDK's ISO_Left_Tab and reports `key: "Unidentified"` with
 * `code: "Tab"`, so `key` alone is not enough.
 */
export function isShiftTab(event: KeyLike): boolean {
  if (!event.shiftKey || event.ctrlKey || event.altKey || event.metaKey) return false;
  return event.key === 'Tab' || (event.code === 'Tab' && (event.key === 'Unidentified' || event.key === ''));
}
