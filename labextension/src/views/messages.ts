/** The conversation: user and assistant messages, tool cards, approvals and notices, in order. */
import { Decision } from '../protocol';
import { AssistantEntry, Change, ChatStore, Entry, ThinkingEntry, notebookTurns } from '../store';
import { RenderContext, StreamingMarkdown, renderUntrusted } from '../markdown';
import { ApprovalCard } from './approval';
import { button, h } from './dom';
import { markMentions, withMentions } from './provenance';
import { ToolCard } from './toolcard';

/** One entry's view: its node and how to show a newer state of the entry. */
type EntryView = { node: HTMLElement; update: (entry: Entry) => void; dispose?: () => void };

export type MessageActions = {
  decide: (requestId: string, decision: Decision) => void;
  loadMore: () => void;
  /** Undo the notebook changes of the person's turn `turn`. */
  revert: (turn: number) => void;
};

class AssistantView implements EntryView {
  readonly node: HTMLElement;

  constructor(entry: AssistantEntry, context: RenderContext) {
    this.node = h('div', {
      className: 'loom-Message loom-mod-assistant',
      loom: 'message',
      data: { role: 'assistant', turn: String(entry.turn) }
    });
    const body = h('div', { className: 'loom-Message-body loom-Markdown' });
    this.node.append(body);
    this._body = body;
    this._markdown = new StreamingMarkdown(body, context);
    this._markdown.append(entry.text);
    this.update(entry);
  }

  append(delta: string): void {
    this._markdown.append(delta);
  }

  update(entry: Entry): void {
    if (entry.kind !== 'assistant') {
      return;
    }
    if (entry.streaming) {
      this.node.dataset.streaming = 'true';
    } else {
      this._finish();
    }
  }

  /**
   * The answer is complete: render the rest, then (once) say so with
   * `data-streaming="false"` — no raw tail is left by then — and mark its
   * variable mentions.
   */
  private _finish(): void {
    if (this._finished) {
      return;
    }
    this._finished = true;
    this._markdown.finish();
    void this._markdown.settled.then(() => {
      this.node.dataset.streaming = 'false';
      markMentions(this._body);
    });
  }

  dispose(): void {
    this._markdown.dispose();
  }

  private readonly _markdown: StreamingMarkdown;
  private readonly _body: HTMLElement;
  private _finished = false;
}

export const REDACTED_NOTE = '(part of the thinking is encrypted by the API and not shown)';

/**
 * A turn's thinking (DESIGN §9 `[data-loom="thinking"]`): a collapsed <details>
 * whose summary says "thinking…" while it streams and "thinking" when done.
 * The text is plain text (a text node), never HTML or markdown.
 */
export class ThinkingView implements EntryView {
  readonly node: HTMLDetailsElement;

  constructor(entry: ThinkingEntry) {
    this.node = h('details', { className: 'loom-Thinking', loom: 'thinking' });
    this.node.open = false;
    this._body.append(this._text);
    this.node.append(this._summary, this._body, this._note);
    this._text.data = entry.text;
    this.update(entry);
  }

  append(delta: string): void {
    this._text.appendData(delta);
    this._body.hidden = false;
  }

  update(entry: Entry): void {
    if (entry.kind !== 'thinking') {
      return;
    }
    if (this._text.data !== entry.text) {
      this._text.data = entry.text;
    }
    const state = entry.streaming ? 'streaming' : 'done';
    this.node.dataset.state = state;
    this.node.dataset.redacted = String(entry.redacted);
    this._summary.textContent = entry.streaming ? 'thinking…' : 'thinking';
    this._summary.title = entry.redacted
      ? 'The model thought; part of it is encrypted and not shown'
      : 'Show the model’s thinking';
    this._body.hidden = entry.text === '';
    this._note.hidden = !entry.redacted;
  }

  private readonly _summary = h('summary', { className: 'loom-Thinking-summary' });
  private readonly _body = h('div', { className: 'loom-Thinking-body', loom: 'thinking-text' });
  private readonly _text = document.createTextNode('');
  private readonly _note = h('div', { className: 'loom-Thinking-redacted', text: REDACTED_NOTE });
}

function textView(entry: Entry, context: RenderContext): EntryView {
  const role = entry.kind === 'user' ? 'user' : 'notice';
  const command = entry.kind === 'notice' ? entry.command : undefined;
  const node = h('div', {
    className: `loom-Message loom-mod-${command === undefined ? role : 'command'}`,
    loom: entry.kind === 'user' ? 'message' : command === undefined ? 'notice' : 'command-result',
    data:
      entry.kind === 'user'
        ? { role, turn: String(entry.turn ?? '') }
        : command === undefined
          ? {}
          : { command }
  });
  const update = (next: Entry): void => {
    if (next.kind === 'user') {
      const revert = node.querySelector('[data-loom="revert-turn"]');
      node.replaceChildren(
        h('div', { className: 'loom-Message-body' }, ...withMentions(next.text))
      );
      if (revert !== null) {
        node.append(revert);
      }
    } else if (next.kind === 'notice') {
      node.dataset.level = next.level;
      node.replaceChildren(h('div', { className: 'loom-Message-body' }));
      void renderUntrusted(node.firstElementChild as HTMLElement, next.message, context);
    }
  };
  update(entry);
  return { node, update };
}

/** Undo a turn's notebook changes (the kernel answers with a notice). */
function revertButton(turn: number, revert: (turn: number) => void): HTMLElement {
  const node = button(
    'Revert notebook changes',
    {
      loom: 'revert-turn',
      className: 'loom-Button loom-RevertTurn',
      data: { turn: String(turn) },
      title: 'Undo the changes this turn made to the notebook'
    },
    () => revert(turn)
  );
  return node;
}

function entryView(entry: Entry, context: RenderContext, actions: MessageActions): EntryView {
  switch (entry.kind) {
    case 'assistant':
      return new AssistantView(entry, context);
    case 'thinking':
      return new ThinkingView(entry);
    case 'tool': {
      const card = new ToolCard(entry);
      return { node: card.node, update: e => e.kind === 'tool' && card.update(e) };
    }
    case 'approval': {
      const card = new ApprovalCard(entry, actions.decide);
      return { node: card.node, update: e => e.kind === 'approval' && card.update(e) };
    }
    case 'user':
    case 'notice':
      return textView(entry, context);
  }
}

export class MessageList {
  readonly node = h('div', { className: 'loom-Messages', loom: 'messages' });

  constructor(store: ChatStore, context: RenderContext, actions: MessageActions) {
    this._store = store;
    this._context = context;
    this._actions = actions;
    this._more = button('Load earlier messages', { loom: 'load-more' }, actions.loadMore);
    this._more.classList.add('loom-LoadMore');
    this.node.append(this._more, this._list);
    store.changed.connect((_, change) => this._apply(change));
    // Read layout on scroll only, not on every streamed delta.
    this.node.addEventListener('scroll', () => (this._stick = this._atBottom()));
    this._reset();
  }

  /** Scroll to a turn's first message and mark it; false when it is not loaded. */
  reveal(turn: number): boolean {
    const node = this._nearest(turn);
    if (node === null) {
      return false;
    }
    node.scrollIntoView({ block: 'center' });
    this._list.querySelector('.loom-mod-target')?.classList.remove('loom-mod-target');
    node.classList.add('loom-mod-target');
    return true;
  }

  private _apply(change: Change): void {
    switch (change.kind) {
      case 'reset':
        this._reset();
        break;
      case 'added':
        this._list.append(this._view(change.entry).node);
        break;
      case 'prepended':
        this._list.prepend(...change.entries.map(entry => this._view(entry).node));
        this._showMore();
        this._showReverts();
        return;
      case 'updated':
        this._views.get(change.entry.key)?.update(change.entry);
        break;
      case 'text':
        (this._views.get(change.entry.key) as AssistantView | undefined)?.append(change.delta);
        break;
      case 'thinking':
        (this._views.get(change.entry.key) as ThinkingView | undefined)?.append(change.delta);
        break;
      default:
        return;
    }
    if (change.kind !== 'text' && change.kind !== 'thinking') {
      this._showReverts();
    }
    if (this._stick) {
      this._scrollToEnd();
    }
  }

  private _reset(): void {
    this._views.forEach(view => view.dispose?.());
    this._views.clear();
    this._list.replaceChildren(...this._store.entries.map(entry => this._view(entry).node));
    this._showMore();
    this._showReverts();
    this._scrollToEnd();
  }

  /** A revert button on each user message whose turn changed the notebook. */
  private _showReverts(): void {
    const turns = notebookTurns(this._store.entries);
    this._list
      .querySelectorAll<HTMLElement>('[data-loom="message"][data-role="user"]')
      .forEach(node => {
        const turn = Number(node.dataset.turn);
        const has = node.querySelector('[data-loom="revert-turn"]');
        if (turns.has(turn) && has === null && node.dataset.turn !== '') {
          node.append(revertButton(turn, this._actions.revert));
        } else if (!turns.has(turn)) {
          has?.remove();
        }
      });
  }

  private _view(entry: Entry): EntryView {
    const view = entryView(entry, this._context, this._actions);
    this._views.set(entry.key, view);
    return view;
  }

  private _showMore(): void {
    this._more.hidden = this._store.moreBefore === null;
    this._more.disabled = false;
  }

  private _atBottom(): boolean {
    const scroller = this.node;
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
  }

  /**
   * The last message at or before an archive turn: live messages carry their
   * user turn, so an answer's own row number lands on that turn's answer.
   */
  private _nearest(turn: number): Element | null {
    let found: Element | null = null;
    this._list.querySelectorAll('[data-turn]').forEach(node => {
      const at = Number((node as HTMLElement).dataset.turn);
      if (Number.isFinite(at) && at <= turn) {
        found = node;
      }
    });
    return found;
  }

  /** Back in the page (its notebook became current): show the newest messages. */
  restored(): void {
    if (this._stick) {
      this._scrollToEnd();
    }
  }

  /** Coalesced to one scroll per frame: a stream may add text many times a frame. */
  private _scrollToEnd(): void {
    if (this._scrollFrame === 0) {
      this._scrollFrame = requestAnimationFrame(() => {
        this._scrollFrame = 0;
        this.node.scrollTop = this.node.scrollHeight;
      });
    }
  }

  private readonly _store: ChatStore;
  private readonly _context: RenderContext;
  private readonly _actions: MessageActions;
  private readonly _more: HTMLButtonElement;
  private readonly _list = h('div', { className: 'loom-Messages-list' });
  private readonly _views = new Map<string, EntryView>();
  private _scrollFrame = 0;
  private _stick = true;
}
