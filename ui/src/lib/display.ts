/**
 * Text from the project, the model or the network, made safe to show where a person
 * decides something: characters that are invisible or reorder what is displayed
 * (controls, bidirectional overrides and isolates, zero-width characters, tag
 * characters) are shown as visible escapes such as `\u{202e}`, so `bash(rm -rf ~)`
 * cannot be made to look like something else. Line breaks and tabs are kept.
 */
// eslint-disable-next-line no-control-regex
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|[\u{e0000}-\u{e007f}]/gu;

export function shown(text: string): string {
  return text.replace(HIDDEN, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);
}
