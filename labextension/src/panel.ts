import { PathExt } from '@jupyterlab/coreutils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISignal, Signal } from '@lumino/signaling';
import { Panel, Widget } from '@lumino/widgets';

import { loomIcon } from './icon';

/** The id of the sidebar widget (also its tab's `data-id` in the right sidebar). */
export const SIDEBAR_ID = 'loom-sidebar';

/** Magics shown to people whose kernel has not loaded the extension yet. */
const LOAD_COMMAND = '%load_ext loom_jupyter';
const COWORK_EXAMPLE = '%cowork plot sales by month';

/** Create an element with a class name, a test id and optional text. */
function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  node.dataset.testid = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/**
 * The top of the sidebar: the Loom title, the current notebook's name and how
 * to load the extension in that notebook's kernel.
 */
class NotebookHeader extends Widget {
  constructor() {
    super();
    this.addClass('loom-Header');
    const title = element('div', 'loom-Header-title');
    const icon = element('span', 'loom-Header-icon');
    loomIcon.element({ container: icon });
    title.append(icon, element('span', 'loom-Header-label', 'Loom'));
    this._name = element('div', 'loom-Header-notebook');
    this._hint = NotebookHeader._renderHint();
    this.node.append(title, this._name, this._hint);
    this.showPath(null);
  }

  /** Show a notebook's path, or say that no notebook is active. */
  showPath(path: string | null): void {
    this._name.textContent = path === null ? 'No notebook open' : PathExt.basename(path);
    this._name.title = path ?? '';
    this._name.classList.toggle('loom-mod-empty', path === null);
    this._hint.hidden = path === null;
  }

  private static _renderHint(): HTMLElement {
    const hint = element('div', 'loom-Hint');
    const code = (text: string): HTMLElement => element('code', 'loom-Hint-code', text);
    hint.append(
      element('p', 'loom-Hint-text', 'Load Loom in a cell of this notebook:'),
      code(LOAD_COMMAND),
      element('p', 'loom-Hint-text', 'then ask for help with:'),
      code(COWORK_EXAMPLE)
    );
    return hint;
  }

  private readonly _name: HTMLElement;
  private readonly _hint: HTMLElement;
}

/**
 * The Loom right-sidebar panel. It follows the active notebook (including
 * renames) and announces changes through `notebookChanged`, so later sections
 * (the chat) can be added with `addWidget` and react to the same notebook.
 */
export class LoomSidebar extends Panel {
  constructor(tracker: INotebookTracker) {
    super();
    this.id = SIDEBAR_ID;
    this.addClass('loom-Sidebar');
    this.title.icon = loomIcon;
    this.title.caption = 'Loom';
    this._header = new NotebookHeader();
    this.addWidget(this._header);
    tracker.currentChanged.connect((_, panel) => this._follow(panel), this);
    this._follow(tracker.currentWidget);
  }

  /** The notebook the sidebar currently follows, if any. */
  get notebook(): NotebookPanel | null {
    return this._notebook;
  }

  /** The followed notebook's server path, or null when none is active. */
  get notebookPath(): string | null {
    return this._notebook?.context.path ?? null;
  }

  /** Emits the new path when the followed notebook changes or is renamed. */
  get notebookChanged(): ISignal<this, string | null> {
    return this._notebookChanged;
  }

  private _follow(panel: NotebookPanel | null): void {
    if (panel === this._notebook) {
      return;
    }
    this._notebook?.context.pathChanged.disconnect(this._announce, this);
    this._notebook?.disposed.disconnect(this._onClosed, this);
    this._notebook = panel;
    panel?.context.pathChanged.connect(this._announce, this);
    panel?.disposed.connect(this._onClosed, this);
    this._announce();
  }

  /**
   * The tracker does not always announce `null` when its last notebook closes
   * (its focus tracker still holds the closing widget), so watch for it here.
   */
  private _onClosed(): void {
    this._follow(null);
  }

  private _announce(): void {
    const path = this.notebookPath;
    this._header.showPath(path);
    this._notebookChanged.emit(path);
  }

  private readonly _header: NotebookHeader;
  private _notebook: NotebookPanel | null = null;
  private readonly _notebookChanged = new Signal<this, string | null>(this);
}
