/**
 * @jest-environment jsdom
 */
/**
 * The one markdown path for model text (`renderUntrusted`, the sidebar's and a
 * cell answer's): JupyterLab's own renderMarkdown and Sanitizer and the marked
 * parser, in jsdom. Model HTML is sanitized, a remote image becomes a
 * placeholder naming its host that loads only on a click (its `<img>` is never
 * set as HTML, not even for a moment), relative and `data:image` images stay,
 * and `javascript:`/`data:` links, fetching styles and JupyterLab command
 * links do nothing (DESIGN §12; security review F3, F5).
 */
import { Sanitizer } from '@jupyterlab/apputils/lib/sanitizer';
import { marked } from 'marked';

import { ANSWER_MIME, AnswerRenderer, answerMarkdown } from '../src/answer';
import { guardHtml, imageSource } from '../src/htmlguard';
import { RenderContext, renderUntrusted } from '../src/markdown';

jest.mock('@jupyterlab/rendermime', () =>
  jest.requireActual('@jupyterlab/rendermime/lib/renderers.js')
);
jest.mock('@lumino/dragdrop', () => {
  const events = globalThis as unknown as { DragEvent?: unknown };
  events.DragEvent ??= class DragEvent extends MouseEvent {}; // jsdom has none
  return jest.requireActual('@lumino/dragdrop');
});
jest.mock('@jupyterlab/translation', () => ({
  nullTranslator: { load: () => ({ __: (text: string) => text }) }
}));

const tools = {
  sanitizer: new Sanitizer(),
  resolver: null,
  linkHandler: null,
  latexTypesetter: null,
  markdownParser: { render: async (source: string) => marked.parse(source) as string }
};
const context: RenderContext = { rendermime: () => tools };

/** Every HTML text set on a live element (a `<template>` is inert: it never fetches). */
const setHtml: string[] = [];
const innerHTML = Object.getOwnPropertyDescriptor(Element.prototype, 'innerHTML')!;
Object.defineProperty(Element.prototype, 'innerHTML', {
  ...innerHTML,
  set(this: Element, value: string) {
    if (!(this instanceof HTMLTemplateElement)) {
      setHtml.push(value);
    }
    innerHTML.set!.call(this, value);
  }
});

async function render(source: string): Promise<HTMLElement> {
  const host = document.createElement('div');
  document.body.append(host);
  await renderUntrusted(host, source, context);
  return host;
}

/** Whether an `<img>` with a remote source was ever set as HTML. */
function remoteImgEverSet(): boolean {
  return setHtml.some(html => /<img[^>]*\ssrc\s*=\s*["']?\s*(https?:|\/\/|\\\\)/i.test(html));
}

beforeEach(() => {
  setHtml.length = 0;
  document.body.replaceChildren();
});

describe('remote images', () => {
  it('become a placeholder naming the host and the alt text, never an <img>', async () => {
    const host = await render(
      'Chart: ![sales chart](http://127.0.0.1:8765/exfil.png?d=secret) done.'
    );
    const box = host.querySelector<HTMLElement>('[data-loom="remote-image"]');
    expect(box).not.toBeNull();
    expect(box!.dataset.host).toBe('127.0.0.1:8765');
    expect(box!.textContent).toContain('127.0.0.1:8765');
    expect(box!.textContent).toContain('sales chart');
    expect(box!.title).toContain('http://127.0.0.1:8765/exfil.png?d=secret');
    expect(host.querySelectorAll('img')).toHaveLength(0);
    expect(host.textContent).toContain('done.');
    expect(setHtml.length).toBeGreaterThan(0);
    expect(remoteImgEverSet()).toBe(false);
  });

  it('load when the person clicks, without a referrer', async () => {
    const host = await render('![chart](https://images.example.org/c.png)');
    const button = host.querySelector<HTMLButtonElement>('[data-loom="load-remote-image"]');
    expect(button!.textContent).toContain('images.example.org');
    button!.click();
    expect(host.querySelector('[data-loom="remote-image"]')).toBeNull();
    const img = host.querySelector('img')!;
    expect(img.getAttribute('src')).toBe('https://images.example.org/c.png');
    expect(img.alt).toBe('chart');
    expect(img.referrerPolicy).toBe('no-referrer');
    expect(img.dataset.loom).toBe('remote-image-loaded');
  });

  it('covers raw HTML, protocol-relative, backslash, root and obfuscated sources', async () => {
    const sources = [
      '<img src="https://a.example/1.png">',
      '<img src="//b.example/2.png">',
      '<img src="\\\\c.example/3.png">',
      '<img src="HTTP://D.EXAMPLE/4.png">',
      '<img src="  ht&#9;tps://e.example/5.png">',
      '<img src="/files/6.png">',
      '<p><img src="https://f.example/7.png" alt="x"></p>'
    ];
    const host = await render(sources.join('\n\n'));
    const hosts = Array.from(host.querySelectorAll<HTMLElement>('[data-loom="remote-image"]')).map(
      box => box.dataset.host
    );
    expect(hosts).toEqual([
      'a.example',
      'b.example',
      'c.example',
      'd.example',
      'e.example',
      'localhost',
      'f.example'
    ]);
    expect(host.querySelectorAll('img')).toHaveLength(0);
    expect(remoteImgEverSet()).toBe(false);
  });

  it('a linked image loads on a click and does not follow the link', async () => {
    const host = await render('[![logo](https://a.example/l.png)](https://a.example/home)');
    const link = host.querySelector('a')!;
    let followed = false;
    link.addEventListener('click', () => (followed = true));
    host.querySelector<HTMLButtonElement>('[data-loom="load-remote-image"]')!.click();
    expect(followed).toBe(false);
    expect(host.querySelector('a img')!.getAttribute('src')).toBe('https://a.example/l.png');
  });

  it('keep relative (notebook folder) and data:image sources', async () => {
    const pixel = 'data:image/png;base64,iVBORw0KGgo=';
    const host = await render(`![local](figures/chart.png) ![inline](${pixel})`);
    const srcs = Array.from(host.querySelectorAll('img')).map(img => img.getAttribute('src'));
    expect(srcs).toEqual(['figures/chart.png', pixel]);
    expect(host.querySelector('[data-loom="remote-image"]')).toBeNull();
  });

  it('drop other schemes, showing the alt text', async () => {
    const host = await render(
      '<img src="javascript:alert(1)" alt="a"><img src="data:text/html,x" alt="b">' +
        '<img src="file:///etc/passwd" alt="c">'
    );
    expect(host.querySelectorAll('img')).toHaveLength(0);
    expect(host.textContent).toContain('[a]');
    expect(host.textContent).toContain('[c]');
  });
});

describe('model HTML', () => {
  it('is sanitized: no script, no handler, the text stays', async () => {
    const host = await render(
      'Status: <img src=x onerror="window.__loomXSS=1"><script>window.__loomXSS=2</script> ok'
    );
    expect(host.querySelector('script')).toBeNull();
    expect(host.innerHTML).not.toContain('onerror');
    expect(host.textContent).toContain('Status:');
    expect(host.textContent).toContain('ok');
    expect((window as unknown as { __loomXSS?: number }).__loomXSS).toBeUndefined();
  });

  it('neutralises javascript: and data: links, also obfuscated', async () => {
    const host = await render(
      '[a](javascript:alert(1)) <a href="java&#9;script:alert(2)">b</a> ' +
        '<a href="data:text/html,<script>x</script>">c</a> [d](https://example.org/ok)'
    );
    const hrefs = Array.from(host.querySelectorAll('a')).map(a => a.getAttribute('href'));
    expect(hrefs.filter(href => href !== null)).toEqual(['https://example.org/ok']);
    expect(host.textContent).toContain('b');
  });

  it('loses fetching styles, media sources, command links and fake Loom markers', async () => {
    const host = await render(
      [
        '<span style="background-image: url(https://s.example/x.png)">styled</span>',
        '<span style="color: red">red</span>',
        '<video src="https://v.example/v.mp4" poster="https://v.example/p.png"></video>',
        '<input type="image" src="https://i.example/i.png">',
        '<button data-commandlinker-command="terminal:create-new">go</button>',
        '<span data-loom="remote-image" data-loom-src="https://z.example/z.png">fake</span>'
      ].join('\n\n')
    );
    const html = host.innerHTML;
    expect(html).not.toMatch(/s\.example|v\.example|i\.example|z\.example/);
    expect(html).not.toContain('commandlinker');
    expect(host.querySelector('[data-loom]')).toBeNull();
    expect(host.textContent).toContain('styled');
  });

  it('keeps code blocks, tables and links', async () => {
    const host = await render(
      '```python\nanswer = 6 * 7\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n' +
        'See [the docs](https://example.org/docs).'
    );
    expect(host.querySelector('pre code')!.textContent).toContain('answer = 6 * 7');
    expect(host.querySelectorAll('table td')).toHaveLength(2);
    expect(host.querySelector('a')!.getAttribute('href')).toBe('https://example.org/docs');
  });
});

describe('guardHtml and imageSource', () => {
  it('classify sources as the browser reads them', () => {
    expect(imageSource('chart.png').kind).toBe('local');
    expect(imageSource('../up/chart.png').kind).toBe('local');
    expect(imageSource('data:image/gif;base64,R0lG').kind).toBe('inline');
    expect(imageSource('data:image/svg+xml,<svg/>').kind).toBe('blocked');
    expect(imageSource('ftp://x.example/a.png').kind).toBe('blocked');
    expect(imageSource('\u0001//x.example/a.png')).toEqual({
      kind: 'remote',
      url: 'http://x.example/a.png',
      host: 'x.example'
    });
    expect(imageSource('/\\y.example/a.png')).toMatchObject({ kind: 'remote', host: 'y.example' });
  });

  it('rewrites HTML text without a live element', () => {
    const out = guardHtml('<p>a <img src="https://x.example/a.png" alt="A"></p>');
    expect(out).not.toContain('<img');
    expect(out).toContain('data-loom="remote-image"');
    expect(setHtml).toEqual([]);
  });
});

describe('a cell answer (application/vnd.loom.markdown+json)', () => {
  it('renders the markdown through the same path', async () => {
    const renderer = new AnswerRenderer({ mimeType: ANSWER_MIME, ...tools });
    const markdown =
      'The **answer** <img src=x onerror="window.__loomXSS=1"> ![c](https://c.example/c.png)';
    await renderer.renderModel({
      data: { [ANSWER_MIME]: { markdown } },
      metadata: {},
      trusted: true,
      setData: () => undefined
    });
    const node = renderer.node;
    expect(node.querySelector('strong')!.textContent).toBe('answer');
    expect(node.innerHTML).not.toContain('onerror');
    expect(node.querySelector('[data-loom="remote-image"]')!.getAttribute('data-host')).toBe(
      'c.example'
    );
    expect(remoteImgEverSet()).toBe(false);
  });

  it('reads only a markdown string from the data', () => {
    expect(answerMarkdown({ markdown: 'x' })).toBe('x');
    expect(answerMarkdown('x')).toBe('');
    expect(answerMarkdown({ markdown: 1 })).toBe('');
    expect(answerMarkdown(null)).toBe('');
  });
});
