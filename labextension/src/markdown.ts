/**
 * Model text as sanitized markdown through JupyterLab's rendermime, never as
 * raw HTML: the one path for model text in the sidebar and in a cell's answer
 * (`answer.ts`). The sanitizer's output goes through `guardHtml` before it is
 * set as the host's HTML, so a remote image is a placeholder that loads on a
 * click, and no fetching attribute or unsafe link reaches the page.
 * A streaming answer paints new text at once (as plain text, on the
 * next frame) and is formatted as markdown at most ~10 times a second; text
 * before the last paragraph break is rendered once and frozen, so each render
 * costs one paragraph, not the whole answer.
 */
import { IRenderMime, renderMarkdown } from '@jupyterlab/rendermime';

import { activateRemoteImages, guardedSanitizer, isUnsafeLink } from './htmlguard';

/** What rendered code blocks can do. */
export type CodeActions = {
  copy: (code: string) => void;
  insertBelow: (code: string) => void;
};

/** What rendering needs: a notebook's rendermime, or a renderer's options, have it. */
export type MarkdownTools = Pick<
  IRenderMime.IRendererOptions,
  'sanitizer' | 'resolver' | 'linkHandler' | 'latexTypesetter' | 'markdownParser'
>;

export type RenderContext = {
  /** The notebook's rendermime (its resolver opens workspace links in JupyterLab). */
  rendermime: () => MarkdownTools;
  /** Buttons on code blocks (the sidebar); none in a cell. */
  actions?: CodeActions;
  /** Typeset math (a cell's answer, once attached). */
  typeset?: boolean;
};

/** The minimum time between two markdown renders of one streaming answer. */
export const FORMAT_INTERVAL_MS = 100;
/** Frozen text is rendered in pieces of about this many characters, yielding between them. */
const PIECE_CHARS = 4000;

/**
 * Render markdown into `host` without trusting it: the sanitizer runs, no
 * script runs, remote images wait for a click, unsafe links are made inert,
 * code blocks get their buttons.
 */
export async function renderUntrusted(
  host: HTMLElement,
  source: string,
  context: RenderContext
): Promise<void> {
  const tools = context.rendermime();
  await renderMarkdown({
    host,
    source,
    trusted: false,
    sanitizer: guardedSanitizer(tools.sanitizer),
    resolver: tools.resolver,
    linkHandler: tools.linkHandler,
    latexTypesetter: tools.latexTypesetter,
    markdownParser: tools.markdownParser ?? null,
    shouldTypeset: context.typeset ?? false
  });
  makeLinksInert(host);
  activateRemoteImages(host);
  if (context.actions !== undefined) {
    addCodeButtons(host, context.actions);
  }
}

/** Belt and braces after the sanitizer and the guard: no script URLs survive in links. */
export function makeLinksInert(host: HTMLElement): void {
  host.querySelectorAll('[href], [xlink\\:href]').forEach(node => {
    for (const name of ['href', 'xlink:href']) {
      const value = node.getAttribute(name);
      if (value !== null && isUnsafeLink(value)) {
        node.removeAttribute(name);
      }
    }
  });
}

function addCodeButtons(host: HTMLElement, actions: CodeActions): void {
  host.querySelectorAll('pre').forEach(pre => {
    const code = pre.textContent ?? '';
    const bar = document.createElement('div');
    bar.className = 'loom-CodeBar';
    bar.append(
      button('Copy', 'copy-code', () => actions.copy(code)),
      button('Insert as cell below', 'insert-cell', () => actions.insertBelow(code))
    );
    pre.before(bar);
  });
}

function button(label: string, role: string, onClick: () => void): HTMLButtonElement {
  const node = document.createElement('button');
  node.type = 'button';
  node.className = 'loom-CodeBar-button';
  node.textContent = label;
  node.dataset.loom = role;
  node.addEventListener('click', onClick);
  return node;
}

/**
 * The index after the last paragraph break that is safe to freeze: a blank
 * line outside a code fence, followed by a line that does not continue an
 * indented block. Returns 0 when there is none.
 */
export function stableBoundary(text: string): number {
  let inFence = false;
  let boundary = 0;
  let start = 0;
  let previousBlank = false;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    if (end === -1) {
      break; // the last line is still being written
    }
    const line = text.slice(start, end);
    if (/^\s{0,3}(```|~~~)/.test(line)) {
      inFence = !inFence;
    }
    const blank = line.trim() === '';
    if (!inFence && previousBlank && !blank && !/^\s/.test(line)) {
      boundary = start;
    }
    previousBlank = blank && !inFence;
    start = end + 1;
  }
  return boundary;
}

/** Split frozen text into pieces of about PIECE_CHARS at paragraph breaks. */
function pieces(text: string): string[] {
  const result: string[] = [];
  let rest = text;
  while (rest.length > PIECE_CHARS) {
    const cut = stableBoundary(rest.slice(0, PIECE_CHARS));
    const at = cut > 0 ? cut : stableBoundary(rest) || rest.length;
    result.push(rest.slice(0, at));
    rest = rest.slice(at);
  }
  if (rest !== '') {
    result.push(rest);
  }
  return result;
}

function nextTask(): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, 0));
}

/** One answer's text, rendered as it streams. */
export class StreamingMarkdown {
  constructor(host: HTMLElement, context: RenderContext) {
    this._context = context;
    this._tail.className = 'loom-Markdown-tail';
    this._raw.className = 'loom-Markdown-raw';
    this._tail.append(this._tailRendered, this._raw);
    this._raw.append(this._rawText);
    host.append(this._tail);
  }

  /** The full text so far. */
  get text(): string {
    return this._text;
  }

  /** Resolves when everything appended so far is rendered as markdown. */
  get settled(): Promise<void> {
    return this._settled;
  }

  /** Add streamed text: painted on the next frame, formatted soon after. */
  append(delta: string): void {
    this._text += delta;
    this._pending += delta;
    if (this._frame === 0) {
      this._frame = requestAnimationFrame(() => this._paint());
    }
    this._scheduleFormat();
  }

  /** Render everything now (the answer is complete, or came from history). */
  finish(): void {
    this._final = true;
    this._clearTimer();
    this._kick();
  }

  dispose(): void {
    this._disposed = true;
    cancelAnimationFrame(this._frame);
    this._clearTimer();
  }

  private _paint(): void {
    this._frame = 0;
    this._rawText.appendData(this._pending);
    this._pending = '';
  }

  private _scheduleFormat(): void {
    if (this._timer !== 0 || this._rendering) {
      return;
    }
    const wait = Math.max(0, this._lastFormat + FORMAT_INTERVAL_MS - performance.now());
    this._timer = window.setTimeout(() => {
      this._timer = 0;
      this._kick();
    }, wait);
  }

  private _clearTimer(): void {
    window.clearTimeout(this._timer);
    this._timer = 0;
  }

  private _kick(): void {
    if (!this._rendering) {
      this._settled = this._format();
    }
  }

  /** Freeze completed paragraphs, re-render the tail, repeat while text keeps coming. */
  private async _format(): Promise<void> {
    this._rendering = true;
    try {
      while (!this._disposed && this._formatted < this._text.length) {
        this._lastFormat = performance.now();
        await this._formatOnce();
        if (!this._final) {
          break;
        }
      }
    } finally {
      this._rendering = false;
    }
    if (this._formatted < this._text.length && !this._disposed) {
      this._scheduleFormat();
    }
  }

  private async _formatOnce(): Promise<void> {
    const snapshot = this._text;
    const boundary = this._final
      ? snapshot.length
      : this._frozen + stableBoundary(snapshot.slice(this._frozen));
    for (const piece of pieces(snapshot.slice(this._frozen, boundary))) {
      const chunk = document.createElement('div');
      chunk.className = 'loom-Markdown-chunk';
      await renderUntrusted(chunk, piece, this._context);
      this._tail.before(chunk);
      this._frozen += piece.length;
      await nextTask();
    }
    await this._renderTail(snapshot.slice(boundary));
    this._formatted = snapshot.length;
    this._rawText.data = this._text.slice(snapshot.length);
    this._pending = '';
  }

  private async _renderTail(source: string): Promise<void> {
    const fresh = document.createElement('div');
    fresh.className = 'loom-Markdown-chunk';
    if (source.trim() !== '') {
      await renderUntrusted(fresh, source, this._context);
    }
    this._tailRendered.replaceWith(fresh);
    this._tailRendered = fresh;
  }

  private readonly _context: RenderContext;
  private readonly _tail = document.createElement('div');
  private _tailRendered = document.createElement('div');
  private readonly _raw = document.createElement('span');
  private readonly _rawText = document.createTextNode('');
  private _text = '';
  private _pending = '';
  private _frozen = 0;
  private _formatted = 0;
  private _frame = 0;
  private _timer = 0;
  private _lastFormat = -Infinity;
  private _rendering = false;
  private _final = false;
  private _disposed = false;
  private _settled: Promise<void> = Promise.resolve();
}
