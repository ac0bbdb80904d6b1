/**
 * Text from the project, the model or the network, made safe to show where a person
 * decides something: characters that are invisible or reorder what is displayed
 * (controls, bidirectional overrides and isolates, zero-width characters, tag
 * characters, unusual spaces) are shown as visible escapes such as `\u{202e}`, so
 * `bash(rm -rf ~)` cannot be made to look like something else. Line breaks and tabs
 * are kept. The table is the gate's own (generated into `gen/hidden.ts`), and the
 * escapes are those the terminal and the native dialogs print.
 */
import { HIDDEN_CLASS } from './gen/hidden';

const HIDDEN_ALL = new RegExp(HIDDEN_CLASS, 'gu');
const HIDDEN_ONE = new RegExp(HIDDEN_CLASS, 'u');

function escaped(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  if (c === '\r') return '\\r';
  if (code < 0x80) return `\\x${code.toString(16).padStart(2, '0')}`;
  return `\\u{${code.toString(16)}}`;
}

/** `text` with every hidden character shown as an escape. */
export function shown(text: string): string {
  return text.replace(HIDDEN_ALL, escaped);
}

/** Whether `text` holds a hidden character (a dialog showing it says so at its top). */
export function hasHidden(text: string): boolean {
  return HIDDEN_ONE.test(text);
}

/** A piece of a sentence from the backend: plain words, or a `code` span. */
export type Piece = { code: boolean; text: string };

/**
 * A sentence written for both the model and the person (the gate's reasons), split at
 * its backticks so the window shows the code spans as code and never the backticks
 * themselves. An unpaired backtick stays as it is. Each piece is shown with
 * {@link shown}, as plain text: nothing here is markup.
 */
export function pieces(text: string): Piece[] {
  const parts = text.split('`');
  if (parts.length < 3) return [{ code: false, text }];
  const out: Piece[] = [];
  // An even count of parts means one backtick is unpaired: the last one stays in the text.
  const paired = parts.length % 2 === 1 ? parts.length : parts.length - 1;
  for (let i = 0; i < paired; i++) {
    if (parts[i] !== '') out.push({ code: i % 2 === 1, text: parts[i] });
  }
  if (paired < parts.length) out.push({ code: false, text: '`' + parts[parts.length - 1] });
  return out;
}
