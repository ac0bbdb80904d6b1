/**
 * Markdown for the model's text and plans: `marked` (GitHub-flavoured) → DOMPurify
 * (the model's text is untrusted: no scripts, no event handlers, no forms, no
 * iframes) → highlight.js for fenced code blocks.
 *
 * Three things keep a streaming answer cheap (see docs/window.md, "Rendering"):
 * - the HTML is parsed once, inside a `<template>` (an inert document: nothing loads,
 *   no handler runs), sanitised there in place, and its nodes are moved into the page;
 *   it is never a string the page parses a second time;
 * - a streaming message is rendered block by block (blocks end at blank lines outside
 *   code fences): each frame re-renders only the last, growing block, and when the
 *   stream ends the blocks stay if the whole text renders to the same HTML;
 * - code is highlighted once it is near the view, after it is shown, a few blocks per
 *   frame.
 */
import { Marked } from 'marked';
import DOMPurify from 'dompurify';
import { afterPaint } from './frames';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import toml from 'highlight.js/lib/languages/ini';

const LANGUAGES = {
  bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml, toml,
};
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['rs'], { languageName: 'rust' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['html', 'svelte', 'vue'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The language of a fenced block, if highlight.js knows it. */
function knownLanguage(lang: string | undefined | null): string | null {
  const language = (lang ?? '').trim().split(/\s+/)[0].toLowerCase();
  return language !== '' && hljs.getLanguage(language) !== undefined ? language : null;
}

const marked = new Marked({ gfm: true, breaks: false });
marked.use({
  renderer: {
    code({ text, lang }) {
      const language = knownLanguage(lang);
      const cls = language ? ` class="hljs language-${escapeHtml(language)}"` : ' class="hljs"';
      return `<pre><code${cls}>${escapeHtml(text)}</code></pre>\n`;
    },
  },
});

/** marked's HTML for a Markdown text, code blocks not yet highlighted. Not yet safe. */
export function markdownHtml(text: string): string {
  return marked.parse(text, { async: false });
}

// Set once (DOMPurify re-reads a per-call configuration on every call, which costs more
// than sanitising a paragraph); this module is DOMPurify's only user.
let configured = false;

/**
 * The elements Markdown produces, and nothing else: no forms or controls, no media, no
 * dialogs, no SVG or MathML. Model text cannot take Decode's look either: no `class`
 * (but the highlighting classes, below), `id`, `style`, `role`, `aria-*` or `data-*`
 * attribute survives, so no app style, test id or accessible role applies to it.
 */
const ALLOWED_TAGS = [
  'a', 'abbr', 'b', 'blockquote', 'br', 'code', 'dd', 'del', 'details', 'div', 'dl', 'dt', 'em', 'h1', 'h2',
  'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'kbd', 'li', 'mark', 'ol', 'p', 'pre', 's', 'samp', 'small', 'span',
  'strong', 'sub', 'summary', 'sup', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'u', 'ul', 'var',
];
const ALLOWED_ATTR = ['href', 'title', 'align', 'start', 'colspan', 'rowspan', 'open'];

/** While highlight.js's own output is sanitised, its `hljs-*` token classes are kept. */
let highlighting = false;

/**
 * Whether a `class` attribute is one Decode puts there itself: `hljs language-X` on a
 * code block (the renderer above), and `hljs-*` token classes inside highlighted code.
 */
export function keptClass(tag: string, value: string): boolean {
  const tokens = value.split(/\s+/).filter((t) => t !== '');
  if (tokens.length === 0) return false;
  if (tag === 'code') return tokens.every((t) => t === 'hljs' || /^language-[a-z0-9_+#-]+$/.test(t));
  if (highlighting && tag === 'span') return tokens.every((t) => /^hljs-[a-z0-9_-]+$/.test(t) || /^[a-z_]+_$/.test(t));
  return false;
}

function configure() {
  DOMPurify.addHook('uponSanitizeAttribute', (node, data) => {
    if (data.attrName !== 'class') return;
    if (keptClass(node.nodeName.toLowerCase(), data.attrValue)) data.forceKeepAttr = true;
    else data.keepAttr = false;
  });
  // Links never navigate the app's own webview away: a click shows the full URL and
  // asks before the person's browser opens it (Markdown.svelte).
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      const href = node.getAttribute('href') ?? '';
      node.setAttribute('title', href);
      node.setAttribute('rel', 'noopener noreferrer');
    }
  });
  DOMPurify.setConfig({
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    IN_PLACE: true,
  });
  configured = true;
}

/**
 * The nodes of an untrusted HTML text, sanitised: parsed inside a `<template>`, whose
 * content is inert, cleaned there by DOMPurify, and only then handed out to be put in
 * the page.
 */
export function safeNodes(html: string): Node[] {
  if (!configured) configure();
  const template = document.createElement('template');
  template.innerHTML = html;
  const content = template.content;
  // The root is an element of the template's own (inert) document.
  const root = content.ownerDocument.createElement('div');
  root.append(...Array.from(content.childNodes));
  DOMPurify.sanitize(root);
  return Array.from(root.childNodes);
}

/** Texts longer than this are shown as plain text, not rendered as Markdown. */
export const MARKDOWN_MAX = 100 * 1024;

/** Code blocks larger than this stay plain: highlighting them would hold a frame. */
export const MAX_HIGHLIGHT = 64 * 1024;
/** How long the highlighter may work between two frames. */
const BUDGET_MS = 6;

const highlighted = new WeakSet<Element>();
const pending: HTMLElement[] = [];
let draining = false;

/** Highlights one code block now (if its language is known and it is not too large). */
function highlightNow(code: HTMLElement) {
  if (highlighted.has(code)) return;
  highlighted.add(code);
  const language = knownLanguage(/\blanguage-(\S+)/.exec(code.className)?.[1]);
  const text = code.textContent ?? '';
  if (!language || text.length > MAX_HIGHLIGHT) return;
  const html = hljs.highlight(text, { language, ignoreIllegals: true }).value;
  highlighting = true;
  try {
    code.replaceChildren(...safeNodes(html));
  } finally {
    highlighting = false;
  }
}

function drain() {
  const started = performance.now();
  while (pending.length > 0 && performance.now() - started < BUDGET_MS) {
    const code = pending.shift() as HTMLElement;
    // A block replaced before its turn came is skipped.
    if (code.isConnected) highlightNow(code);
  }
  if (pending.length > 0) afterPaint(drain);
  else draining = false;
}

function queue(code: HTMLElement) {
  pending.push(code);
  if (!draining) {
    draining = true;
    afterPaint(drain);
  }
}

/** Observed blocks whose first report (in view or not) has not come yet. */
const unreported = new Set<Element>();

/**
 * Code is highlighted when it comes near the view: a long answer's blocks above the
 * fold, or a long session's, cost nothing until someone scrolls to them.
 */
const watcher =
  typeof IntersectionObserver === 'function'
    ? new IntersectionObserver(
        (entries) => {
          for (const entry of entries) {
            unreported.delete(entry.target);
            if (!entry.target.isConnected) watcher?.unobserve(entry.target);
            else if (entry.isIntersecting) {
              watcher?.unobserve(entry.target);
              queue(entry.target as HTMLElement);
            }
          }
        },
        { rootMargin: '300px 0px' },
      )
    : null;

/** Highlights the code blocks under `root` once they are near the view, after a paint. */
export function highlightLater(root: ParentNode) {
  for (const code of Array.from(root.querySelectorAll<HTMLElement>('pre > code'))) {
    if (highlighted.has(code)) continue;
    if (watcher) {
      unreported.add(code);
      watcher.observe(code);
    } else queue(code);
  }
}

/** Whether highlighting work is queued or waiting for its first report (tests wait). */
export function highlightPending(): boolean {
  return draining || unreported.size > 0;
}

type Rendered = { html: string; nodes: Node[] };
type Block = Rendered & { source: string };

function render(text: string): Rendered {
  const html = markdownHtml(text);
  return { html, nodes: safeNodes(html) };
}

/** Texts rendered ahead of time, oldest first; a view that shows one takes it. */
const prepared = new Map<string, Rendered>();
/** How many prepared texts are kept (the oldest go first). */
export const PREPARED_MAX = 200;

/**
 * Renders a Markdown text now, for a `MarkdownView` that will show it later (a long
 * session's earlier entries, rendered while the person reads, cost nothing when they
 * scroll to them). Returns false if it was already prepared.
 */
export function prepare(text: string): boolean {
  if (prepared.has(text)) return false;
  prepared.set(text, render(text));
  if (prepared.size > PREPARED_MAX) prepared.delete(prepared.keys().next().value as string);
  return true;
}

/** Whether a text is prepared and not yet shown. */
export function isPrepared(text: string): boolean {
  return prepared.has(text);
}

function takePrepared(text: string): Rendered | undefined {
  const done = prepared.get(text);
  if (done) prepared.delete(text);
  return done;
}

type Span = { start: number; text: string };

/**
 * A Markdown text rendered into an element and kept up to date as the text changes.
 * While `streaming`, the text is rendered block by block and only changed blocks are
 * re-rendered; otherwise the whole text is rendered at once (keeping the streamed
 * blocks when they already show exactly that) and its code is highlighted.
 */
export class MarkdownView {
  #root: HTMLElement;
  #blocks: Block[] = [];
  #spans: Span[] = [];
  #text: string | null = null;
  #streaming = false;

  constructor(root: HTMLElement) {
    this.#root = root;
  }

  render(text: string, streaming: boolean) {
    if (text === this.#text && streaming === this.#streaming) return;
    const previous = this.#text;
    this.#text = text;
    this.#streaming = streaming;
    if (text.length > MARKDOWN_MAX) {
      // Markdown's parser can take seconds on a pathological text this long (deeply
      // nested lists): it is shown as plain text instead.
      this.#renderPlain(text);
      return;
    }
    if (streaming) {
      this.#spans = previous !== null && text.startsWith(previous) ? extendSpans(this.#spans, text) : blockSpans(text);
      this.#renderBlocks(this.#spans.map((s) => s.text));
    } else {
      this.#spans = [];
      this.#renderWhole(text);
    }
  }

  #renderPlain(text: string) {
    const pre = document.createElement('pre');
    pre.className = 'plain-long';
    pre.textContent = text;
    this.#root.replaceChildren(pre);
    this.#blocks = [{ source: text, html: '', nodes: [pre] }];
    this.#spans = [];
  }

  #renderBlocks(parts: string[]) {
    const old = this.#blocks;
    let k = 0;
    while (k < parts.length && k < old.length && old[k].source === parts[k]) k++;
    const next = old.slice(0, k);
    for (let i = k; i < parts.length; i++) {
      const html = markdownHtml(parts[i]);
      const before = old[i];
      if (before && before.html === html) {
        next.push({ source: parts[i], html, nodes: before.nodes });
        continue;
      }
      const fresh = safeNodes(html);
      let nodes: Node[];
      if (before) {
        // The block grew: change the page's nodes only where they differ (a growing
        // code block gets a longer text, not a new <pre>: replacing one costs a frame).
        nodes = morph(this.#root, before.nodes, fresh, firstNode(old, i + 1));
      } else {
        const anchor = firstNode(old, i);
        for (const n of fresh) this.#root.insertBefore(n, anchor);
        nodes = fresh;
      }
      next.push({ source: parts[i], html, nodes });
    }
    for (const gone of old.slice(parts.length)) for (const n of gone.nodes) n.parentNode?.removeChild(n);
    this.#blocks = next;
  }

  #renderWhole(text: string) {
    // A message that never streamed (history, a plan) has no blocks to keep.
    const parts = this.#blocks.length > 0 ? splitBlocks(text) : null;
    if (parts !== null && blocksStandAlone(parts)) {
      // Block by block, the text renders as it does whole: the blocks already shown
      // stay, and the ones that changed since the last frame are redone.
      this.#renderBlocks(parts);
      const blocks = this.#blocks;
      this.#blocks = [{ source: text, html: blocks.map((b) => b.html).join(''), nodes: blocks.flatMap((b) => b.nodes) }];
    } else {
      const { html, nodes } = takePrepared(text) ?? render(text);
      this.#root.replaceChildren(...nodes);
      this.#blocks = [{ source: text, html, nodes }];
    }
    highlightLater(this.#root);
  }
}

/** Whether a node in the page can be kept for a fresh one: same kind, same attributes. */
function sameShape(have: Node, want: Node): boolean {
  if (have.nodeType !== want.nodeType || have.nodeName !== want.nodeName) return false;
  if (!(have instanceof Element) || !(want instanceof Element)) return true;
  if (have.attributes.length !== want.attributes.length) return false;
  for (const a of Array.from(want.attributes)) {
    if (have.getAttribute(a.name) !== a.value) return false;
  }
  return true;
}

/**
 * Makes the nodes `have` (children of `parent`, in a row, followed by `anchor`) read as
 * the fresh, sanitised nodes `want`: kept nodes get the fresh text, the rest are
 * replaced by the fresh nodes themselves. Returns the nodes now in the page.
 */
function morph(parent: Node, have: Node[], want: Node[], anchor: Node | null): Node[] {
  const out: Node[] = [];
  for (let i = 0; i < want.length; i++) {
    const h = have[i];
    const w = want[i];
    if (h !== undefined && sameShape(h, w)) {
      if (h instanceof Element) morph(h, Array.from(h.childNodes), Array.from(w.childNodes), null);
      else if (h.nodeValue !== w.nodeValue) h.nodeValue = w.nodeValue;
      out.push(h);
      continue;
    }
    parent.insertBefore(w, h ?? anchor);
    if (h !== undefined) parent.removeChild(h);
    out.push(w);
  }
  for (const extra of have.slice(want.length)) parent.removeChild(extra);
  return out;
}

/** The first node in the page of block `i` or a later one (where block `i` goes). */
function firstNode(blocks: Block[], i: number): Node | null {
  for (let j = i; j < blocks.length; j++) {
    const n = blocks[j].nodes.find((node) => node.parentNode !== null);
    if (n) return n;
  }
  return null;
}

/**
 * Splits a Markdown text into top-level blocks at blank lines outside code fences (a
 * streaming message re-renders only its last, growing block each frame).
 */
export function splitBlocks(text: string): string[] {
  return blockSpans(text).map((s) => s.text);
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const LIST_ITEM = /^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)/;
const LIST_LINE = new RegExp(LIST_ITEM.source, 'm');
const REFERENCE = /^ {0,3}\[[^\]]+\]:/m;

/**
 * Whether Markdown blocks (as split by `splitBlocks`) render on their own exactly as
 * they do together. Only what can reach across a blank line makes them differ: a list
 * that goes on after one (a second item, an indented paragraph), indented code,
 * an HTML block, a link reference defined elsewhere. In doubt, no.
 */
export function blocksStandAlone(parts: string[]): boolean {
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (REFERENCE.test(part) || /^ {0,3}</.test(part) || /^[ \t]/.test(part)) return false;
    if (i > 0 && LIST_ITEM.test(part) && LIST_LINE.test(parts[i - 1])) return false;
  }
  return true;
}

/** The blocks of `text` with where each starts. */
function blockSpans(text: string, offset = 0): Span[] {
  const spans: Span[] = [];
  let current: string[] = [];
  let start = 0;
  let fence: string | null = null;
  let at = 0;
  for (const line of text.split('\n')) {
    const lineStart = at;
    at += line.length + 1;
    if (fence === null) {
      const open = FENCE_OPEN.exec(line)?.[1];
      if (open && !(open[0] === '`' && line.slice(line.indexOf(open) + open.length).includes('`'))) fence = open;
    } else {
      const close = FENCE_CLOSE.exec(line)?.[1];
      if (close && close[0] === fence[0] && close.length >= fence.length) fence = null;
    }
    if (fence === null && line.trim() === '' && current.length > 0) {
      spans.push({ start: start + offset, text: current.join('\n') });
      current = [];
      continue;
    }
    if (line.trim() === '' && current.length === 0) continue;
    if (current.length === 0) start = lineStart;
    current.push(line);
  }
  if (current.length > 0) spans.push({ start: start + offset, text: current.join('\n') });
  return spans;
}

/**
 * The blocks of `text`, which extends the text `spans` were made from: only the last
 * block and what follows it are split again (a block starts outside any code fence).
 */
function extendSpans(spans: Span[], text: string): Span[] {
  const last = spans[spans.length - 1];
  if (!last) return blockSpans(text);
  return spans.slice(0, -1).concat(blockSpans(text.slice(last.start), last.start));
}
