import { describe, expect, it, vi } from 'vitest';
import {
  MAX_HIGHLIGHT,
  MARKDOWN_MAX,
  MarkdownView,
  PREPARED_MAX,
  blocksStandAlone,
  highlightPending,
  isPrepared,
  markdownHtml,
  prepare,
  splitBlocks,
} from './markdown';

/** Resolves once the highlighter has nothing left to do. */
async function highlighted() {
  for (let i = 0; i < 200 && highlightPending(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(highlightPending()).toBe(false);
}

function view() {
  const root = document.createElement('div');
  document.body.append(root);
  return { root, md: new MarkdownView(root) };
}

const ANSWER =
  '## Step 1\n\nWe **change** `parse()` so that it returns early:\n\n- first\n- second\n\n```rust\nfn parse(x: &str) -> u32 {\n    0\n}\n```\n\nDone.\n';

describe('MarkdownView', () => {
  it('renders GitHub Markdown with highlighted code, and drops anything active', async () => {
    const { root, md } = view();
    md.render(
      '# T\n\n- a\n\n```js\nconst x = 1;\n```\n\n<script>alert(1)</script><a href="javascript:alert(1)" onclick="x()">l</a>',
      false,
    );
    await highlighted();
    const html = root.innerHTML;
    expect(html).toContain('<h1>T</h1>');
    expect(root.querySelector('pre code .hljs-keyword')?.textContent).toBe('const');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('onclick');
    expect(html).not.toContain('javascript:');
  });

  it('streams block by block, keeps the blocks when the stream ends, then highlights', async () => {
    const { root, md } = view();
    let text = '';
    // The last pieces arrive with the final text, in the same frame.
    for (const piece of ANSWER.slice(0, -12).match(/[\s\S]{1,7}/g) ?? []) {
      text += piece;
      md.render(text, true);
    }
    expect(root.querySelector('h2')?.textContent).toBe('Step 1');
    expect(root.querySelector('strong')?.textContent).toBe('change');
    expect(root.querySelector('.hljs-keyword')).toBeNull();
    const heading = root.querySelector('h2');
    const list = root.querySelector('ul');
    md.render(ANSWER, false);
    // The whole text renders to what the blocks show: the nodes stay.
    expect(root.querySelector('h2')).toBe(heading);
    expect(root.querySelector('ul')).toBe(list);
    expect(root.textContent?.trimEnd().endsWith('Done.')).toBe(true);
    await highlighted();
    expect(root.querySelector('pre code .hljs-keyword')?.textContent).toBe('fn');
    expect(root.querySelector('pre code')?.textContent).toBe('fn parse(x: &str) -> u32 {\n    0\n}');
  });

  it('grows a block in place: a code block keeps its element, a paragraph its text node', () => {
    const { root, md } = view();
    md.render('```rust\nfn a() {}\n', true);
    const pre = root.querySelector('pre');
    md.render('```rust\nfn a() {}\nfn b() {}\n', true);
    expect(root.querySelector('pre')).toBe(pre);
    expect(pre?.textContent).toBe('fn a() {}\nfn b() {}');
    md.render('We **cha', true);
    const p = root.querySelector('p');
    expect(p?.textContent).toBe('We **cha');
    md.render('We **change** it', true);
    expect(root.querySelector('p')).toBe(p);
    expect(p?.innerHTML).toBe('We <strong>change</strong> it');
  });

  it('growing a text renders the same as rendering it at once', () => {
    const { root: grown, md } = view();
    const text = `${ANSWER}\n~~~\nx\n\n\ny\n~~~\n\n1. a\n2. b\n\n   more\n\n> quote\n>\n> on`;
    for (let i = 0; i <= text.length; i++) md.render(text.slice(0, i), true);
    const { root: once, md: fresh } = view();
    fresh.render(text, true);
    expect(grown.innerHTML).toBe(once.innerHTML);
  });

  it('replaces the blocks when the whole text reads differently (a loose list)', () => {
    const { root, md } = view();
    const text = '- one\n\n- two\n\n[ref]: https://example.com';
    md.render(text, true);
    expect(root.querySelectorAll('ul')).toHaveLength(2);
    md.render(text, false);
    expect(root.querySelectorAll('ul')).toHaveLength(1);
    expect(root.querySelectorAll('li')).toHaveLength(2);
  });

  it('sanitises what the model writes, in streaming and at the end', () => {
    const hostile =
      'hi <img src=x onerror="alert(1)"></div><iframe src="https://example.com"></iframe>' +
      '<a href="javascript:alert(2)" onmouseover="x()">l</a><form><input></form><svg><script>alert(3)</script></svg>';
    for (const streaming of [true, false]) {
      const { root, md } = view();
      md.render(hostile, streaming);
      const html = root.innerHTML;
      expect(root.textContent).toContain('hi');
      for (const bad of ['<img', 'onerror', '<iframe', 'javascript:', 'onmouseover', '<form', '<input', '<script']) {
        expect(html).not.toContain(bad);
      }
      expect(root.querySelector('a')?.getAttribute('rel')).toBe('noopener noreferrer');
    }
  });

  it("model text cannot take Decode's look: no app classes, ids, styles, roles, aria or data attributes", async () => {
    const fake =
      '<div class="backdrop" id="approval" style="position:fixed;inset:0;z-index:99" role="dialog" aria-modal="true" ' +
      'data-testid="approval-dialog"><h2 class="dialog">Allow bash?</h2>' +
      '<button data-testid="approve-once" class="btn primary">Allow once</button>' +
      '<span data-testid="approval-reason" aria-label="x" name="x">reason</span></div>' +
      '<dialog open>fake</dialog><select><option>x</option></select><label>l</label><video src=x></video>' +
      '<p class="hljs-keyword">not code</p><span class="hljs-keyword">not highlight output</span>' +
      '<code class="hljs language-rust">fn a() {}</code><code class="hljs approve-once">x</code>\n\n' +
      '```js\nconst x = 1;\n```\n';
    for (const streaming of [true, false]) {
      const { root, md } = view();
      md.render(fake, streaming);
      await highlighted();
      for (const el of Array.from(root.querySelectorAll('*'))) {
        for (const attr of Array.from(el.attributes)) {
          expect(['id', 'style', 'role', 'name'].includes(attr.name), `${el.tagName} ${attr.name}`).toBe(false);
          expect(attr.name.startsWith('aria-') || attr.name.startsWith('data-'), `${el.tagName} ${attr.name}`).toBe(false);
          if (attr.name === 'class') {
            expect(el.tagName === 'CODE' || (el.tagName === 'SPAN' && el.closest('pre')), `${el.tagName} ${attr.value}`).toBeTruthy();
            expect(attr.value).toMatch(/^(hljs|language-[a-z]+|hljs-[a-z_-]+|[a-z_]+_)( |$)/);
          }
        }
      }
      expect(root.querySelector('[data-testid]')).toBeNull();
      for (const tag of ['button', 'dialog', 'select', 'option', 'label', 'video']) expect(root.querySelector(tag)).toBeNull();
      expect(root.querySelector('.backdrop, .dialog, .btn, .approve-once')).toBeNull();
      // What Decode adds itself stays: the code blocks' classes and the highlighting.
      expect(root.querySelector('code.hljs.language-rust')).not.toBeNull();
      expect(root.querySelector('pre code.hljs.language-js')).not.toBeNull();
      if (!streaming) expect(root.querySelector('pre code.hljs.language-js .hljs-keyword')?.textContent).toBe('const');
      expect(root.textContent).toContain('Allow bash?');
    }
  });

  it('shows a text too long for Markdown as plain text, at once', () => {
    const nested = Array.from({ length: 30_000 }, (_, i) => `${'  '.repeat(i % 40)}- **x** <b>y</b>`).join('\n');
    expect(nested.length).toBeGreaterThan(MARKDOWN_MAX);
    for (const streaming of [true, false]) {
      const { root, md } = view();
      md.render(nested, streaming);
      expect(root.children.length).toBe(1);
      expect(root.firstElementChild?.tagName).toBe('PRE');
      expect(root.querySelector('b, strong, li')).toBeNull();
      expect(root.textContent).toBe(nested);
    }
  });

  it('leaves a code block too large to highlight plain', async () => {
    const { root, md } = view();
    const big = 'let x = 1;\n'.repeat(Math.ceil(MAX_HIGHLIGHT / 11) + 1);
    md.render('```js\n' + big + '```\n\n```js\nconst y = 2;\n```', false);
    await highlighted();
    const [first, second] = Array.from(root.querySelectorAll('pre code'));
    expect(first.querySelector('span')).toBeNull();
    expect(second.querySelector('.hljs-keyword')?.textContent).toBe('const');
  });
});

describe('prepare', () => {
  it('renders a text ahead; the view that shows it takes those nodes, sanitised and highlighted', async () => {
    const text = 'Prepared **once**.\n\n```js\nconst y = 2;\n```\n\n<img src=x onerror="alert(1)">';
    expect(prepare(text)).toBe(true);
    expect(prepare(text)).toBe(false);
    expect(isPrepared(text)).toBe(true);
    const { root, md } = view();
    md.render(text, false);
    // Taken: a second view of the same text renders its own.
    expect(isPrepared(text)).toBe(false);
    await highlighted();
    expect(root.querySelector('strong')?.textContent).toBe('once');
    expect(root.querySelector('pre code .hljs-keyword')?.textContent).toBe('const');
    expect(root.innerHTML).not.toContain('onerror');
    expect(root.querySelector('img')).toBeNull();
    const plain = view();
    plain.md.render(text, false);
    await highlighted();
    expect(plain.root.innerHTML).toBe(root.innerHTML);
  });

  it('keeps the newest prepared texts only', () => {
    const texts = Array.from({ length: PREPARED_MAX + 1 }, (_, i) => `kept ${i}`);
    for (const t of texts) prepare(t);
    expect(isPrepared(texts[0])).toBe(false);
    expect(isPrepared(texts[1])).toBe(true);
    expect(isPrepared(texts[PREPARED_MAX])).toBe(true);
  });
});

describe('splitBlocks', () => {
  it('splits at blank lines outside code fences only', () => {
    expect(splitBlocks('a\nb\n\nc\n\n\n```\nx\n\ny\n```\n\nd')).toEqual(['a\nb', 'c', '```\nx\n\ny\n```', 'd']);
    expect(splitBlocks('```rust\nfn a() {}\n\n')).toEqual(['```rust\nfn a() {}\n\n']);
  });
});

describe('blocksStandAlone', () => {
  // Lines that can reach across a blank line, and lines that cannot.
  const LINES = [
    'para text', 'text *em* and `code`', '- item', '* star item', '+ plus item', '1. item', '2) item',
    '  indented continuation', '    indented code', '\ttabbed', '```', '```js', '~~~', '````', '``` x`y',
    '> quote', '>', '# head', '---', '===', '<div>', '</div>', '<!-- c -->', '[ref]: https://x.test',
    'see [ref] here', '| a | b |', '|---|---|', '', '', '', '',
  ];

  it('is never wrong when it says yes (checked against marked on random texts)', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    let alone = 0;
    for (let n = 0; n < 3000; n++) {
      const lines = Array.from({ length: 2 + Math.floor(random() * 12) }, () => LINES[Math.floor(random() * LINES.length)]);
      const text = lines.join('\n');
      const parts = splitBlocks(text);
      if (!blocksStandAlone(parts)) continue;
      alone++;
      // The same HTML (the last block lacks the text's final line break: an HTML block
      // at the very end keeps it in its own raw text, a difference of white space only).
      expect(parts.map(markdownHtml).join('').trimEnd(), JSON.stringify(text)).toBe(markdownHtml(text).trimEnd());
    }
    // The check is worth having: most texts of this mix pass it.
    expect(alone).toBeGreaterThan(600);
  });

  it('says no to what reaches across a blank line', () => {
    expect(blocksStandAlone(splitBlocks('- a\n\n- b'))).toBe(false);
    expect(blocksStandAlone(splitBlocks('1. a\n\n   more'))).toBe(false);
    expect(blocksStandAlone(splitBlocks('see [x]\n\n[x]: https://x.test'))).toBe(false);
    expect(blocksStandAlone(splitBlocks('<pre>\na\n\nb</pre>'))).toBe(false);
    expect(blocksStandAlone(splitBlocks('## A\n\ntext\n\n- a\n- b\n\n```\nx\n\ny\n```'))).toBe(true);
  });
});

describe('highlighting near the view', () => {
  it('highlights a code block once it comes near the view, and not before', async () => {
    // A stand-in for the browser's IntersectionObserver: the test says what is in view.
    const io: { report?: (entries: Partial<IntersectionObserverEntry>[]) => void } = {};
    const watched = new Set<Element>();
    class FakeObserver {
      constructor(cb: (entries: Partial<IntersectionObserverEntry>[]) => void) {
        io.report = cb;
      }
      observe(el: Element) {
        watched.add(el);
      }
      unobserve(el: Element) {
        watched.delete(el);
      }
    }
    vi.stubGlobal('IntersectionObserver', FakeObserver);
    vi.resetModules();
    try {
      const fresh = await import('./markdown');
      const root = document.createElement('div');
      document.body.append(root);
      new fresh.MarkdownView(root).render('```js\nconst a = 1;\n```\n\n```js\nconst b = 2;\n```', false);
      const [near, far] = Array.from(root.querySelectorAll('pre code'));
      expect(watched).toEqual(new Set([near, far]));
      expect(fresh.highlightPending()).toBe(true);
      io.report?.([
        { target: near, isIntersecting: true },
        { target: far, isIntersecting: false },
      ]);
      for (let i = 0; i < 100 && fresh.highlightPending(); i++) await new Promise((r) => setTimeout(r, 5));
      expect(fresh.highlightPending()).toBe(false);
      expect(near.querySelector('.hljs-keyword')?.textContent).toBe('const');
      expect(far.querySelector('.hljs-keyword')).toBeNull();
      expect(watched).toEqual(new Set([far]));
      io.report?.([{ target: far, isIntersecting: true }]);
      for (let i = 0; i < 100 && !far.querySelector('.hljs-keyword'); i++) await new Promise((r) => setTimeout(r, 5));
      expect(far.querySelector('.hljs-keyword')?.textContent).toBe('const');
    } finally {
      vi.unstubAllGlobals();
      vi.resetModules();
    }
  });
});
