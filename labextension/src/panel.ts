/**
 * The Loom right-sidebar panel: a header with the active notebook's name and
 * that notebook's chat. Each open notebook keeps its own chat (and comm), so
 * switching notebooks switches the conversation and a background stream goes on.
 * Only the current chat is in the page, so each data-loom selector matches once.
 */
import { PathExt } from '@jupyterlab/coreutils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISignal, Signal } from '@lumino/signaling';
import type { Message } from '@lumino/messaging';
import { Panel, Widget } from '@lumino/widgets';

import { CAPTION, CAPTION_WAITING } from './attention';
import { ChatOptions, ChatView } from './chat';
import { loomIcon } from './icon';
import { ScreenWatch } from './onscreen';

/** The id of the sidebar widget (also its tab's `data-id` in the right sidebar). */
export const SIDEBAR_ID = 'loom-sidebar';

/** The tab's caption, and what it says while a card waits for the person. */
export { CAPTION, CAPTION_WAITING } from './attention';

/** A card in a chat that waits for the person: a pending approval, or an open trust
 * card that asks (not one shown only to read). */
const WAITING =
  '[data-loom="approval"][data-decision="pending"],' +
  '[data-loom="trust"]:not([hidden])[data-status="untrusted"],' +
  '[data-loom="trust"]:not([hidden])[data-status="changed"]';

/** Whether a chat's node holds a card that waits for the person. */
export function waitsForAnswer(node: Element): boolean {
  return node.querySelector(WAITING) !== null;
}

class Header extends Widget {
  constructor() {
    super();
    this.addClass('loom-Header');
    const icon = document.createElement('span');
    icon.className = 'loom-Header-icon';
    loomIcon.element({ container: icon });
    const label = document.createElement('span');
    label.className = 'loom-Header-label';
    label.dataset.testid = 'loom-Header-label';
    label.textContent = 'Loom';
    this._name.className = 'loom-Header-notebook';
    this._name.dataset.testid = 'loom-Header-notebook';
    this._name.dataset.loom = 'notebook';
    this.node.append(icon, label, this._name);
  }

  showPath(path: string | null): void {
    this._name.textContent = path === null ? 'No notebook open' : PathExt.basename(path);
    this._name.title = path ?? '';
    this._name.classList.toggle('loom-mod-empty', path === null);
  }

  private readonly _name = document.createElement('span');
}

export type SidebarOptions = Omit<ChatOptions, 'notebook'> & {
  tracker: INotebookTracker;
  /** The main area's current widget changed (JupyterLab's shell; null in Notebook 7). */
  shellChanged?: ISignal<unknown, unknown> | null;
};

export class LoomSidebar extends Panel {
  constructor(options: SidebarOptions) {
    super();
    this.id = SIDEBAR_ID;
    this.addClass('loom-Sidebar');
    this.node.dataset.loom = 'sidebar';
    this.title.icon = loomIcon;
    this.title.caption = CAPTION;
    this._options = options;
    this.addWidget(this._header);
    this.addWidget(this._empty);
    this._empty.addClass('loom-Empty');
    this._empty.node.textContent = 'Open a notebook to chat with Loom about it.';
    options.tracker.widgetAdded.connect((_, panel) => this._chatFor(panel), this);
    options.tracker.currentChanged.connect((_, panel) => this._follow(panel), this);
    options.tracker.forEach(panel => this._chatFor(panel));
    this._follow(options.tracker.currentWidget);
    this._screen = new ScreenWatch(
      options.tracker,
      () => this._chats.values(),
      options.shellChanged ?? null
    );
    this._screen.look(options.tracker.currentWidget);
  }

  dispose(): void {
    this._screen?.dispose();
    this._watch.disconnect();
    super.dispose();
  }

  /** The panel came on screen (true) or went off it (false). */
  get shownChanged(): ISignal<this, boolean> {
    return this._shownChanged;
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._shownChanged.emit(true);
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._shownChanged.emit(false);
  }

  /** A card waits for the person in one of the notebooks' chats (the tab shows a badge). */
  get attention(): boolean {
    return this._attention;
  }

  /** Whether a card waits for the person in this notebook's chat. */
  waitsIn(panel: NotebookPanel): boolean {
    return this._waiting.has(panel);
  }

  /** The notebooks whose chat waits for the person changed (see `waitsIn`). */
  get attentionChanged(): ISignal<this, void> {
    return this._attentionChanged;
  }

  /**
   * The tab's badge: while an approval or trust card waits in any notebook's chat
   * (also one not on screen), the tab carries `loom-mod-attention` and
   * `data-loom="attention"`, and its caption says so.
   */
  private _checkAttention(): void {
    const panels = [...this._chats].filter(([, chat]) => waitsForAnswer(chat.node));
    const changed =
      panels.length !== this._waiting.size || panels.some(([panel]) => !this._waiting.has(panel));
    this._waiting = new Set(panels.map(([panel]) => panel));
    const waiting = panels.length > 0;
    if (waiting !== this._attention) {
      this._attention = waiting;
      this.title.className = waiting ? 'loom-mod-attention' : '';
      this.title.caption = waiting ? CAPTION_WAITING : CAPTION;
      // The shell keeps its own keys in the dataset (the tab's data-id): change only ours.
      const dataset: Record<string, string> = { ...this.title.dataset };
      delete dataset.loom;
      this.title.dataset = waiting ? { ...dataset, loom: 'attention' } : dataset;
      this.node.dataset.attention = waiting ? 'true' : 'false';
    }
    if (changed) {
      this._attentionChanged.emit(); // the toolbar buttons and the page title follow
    }
  }

  /** The notebook the sidebar currently follows, if any. */
  get notebook(): NotebookPanel | null {
    return this._current?.notebook ?? null;
  }

  private _chatFor(panel: NotebookPanel): ChatView {
    let chat = this._chats.get(panel);
    if (chat === undefined) {
      chat = new ChatView({ ...this._options, notebook: panel });
      this._chats.set(panel, chat);
      this._watch.observe(chat.node, {
        subtree: true,
        childList: true,
        attributes: true,
        attributeFilter: ['data-decision', 'data-status', 'hidden']
      });
      panel.disposed.connect(() => this._closed(panel));
      panel.context.pathChanged.connect(() => this._showHeader());
      this._screen?.look(this._options.tracker.currentWidget);
    }
    return chat;
  }

  private _follow(panel: NotebookPanel | null): void {
    const next = panel === null || panel.isDisposed ? null : this._chatFor(panel);
    if (next !== this._current) {
      if (this._current !== null && !this._current.isDisposed) {
        this._current.parent = null; // out of the page, still streaming
      }
      this._current = next;
      if (next !== null) {
        this.addWidget(next);
      }
    }
    this._empty.setHidden(next !== null);
    this._showHeader();
  }

  /**
   * The tracker does not always announce `null` when its last notebook closes
   * (its focus tracker still holds the closing widget), so watch for it here.
   */
  private _closed(panel: NotebookPanel): void {
    const chat = this._chats.get(panel);
    this._chats.delete(panel);
    if (chat === this._current) {
      this._current = null;
      this._follow(this._options.tracker.currentWidget);
    }
    chat?.dispose();
    this._checkAttention();
  }

  private _showHeader(): void {
    this._header.showPath(this._current?.notebook.context.path ?? null);
  }

  private readonly _options: SidebarOptions;
  private readonly _header = new Header();
  private readonly _empty = new Widget();
  private readonly _chats = new Map<NotebookPanel, ChatView>();
  private _current: ChatView | null = null;
  private readonly _screen: ScreenWatch | undefined;
  private _attention = false;
  private _waiting = new Set<NotebookPanel>();
  private readonly _attentionChanged = new Signal<this, void>(this);
  private readonly _shownChanged = new Signal<this, boolean>(this);
  private readonly _watch = new MutationObserver(() => this._checkAttention());
}
