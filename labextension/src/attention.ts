/**
 * A card waits for the person and the Loom panel is not on screen (issue 40): Notebook 7
 * has no always-visible side tab bar to carry the Lab tab's badge, so the notebook's own
 * toolbar shows a small Loom button with a dot (`data-loom="attention"`, the same caption
 * as the tab's badge) that opens the panel, and the browser tab's title starts with a
 * mark while any card waits. In JupyterLab both come on top of the tab's badge.
 *
 * Only fixed text goes into the page here: nothing the model wrote becomes markup.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { ISignal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

/** The tab's caption, and what it (and the toolbar button) says while a card waits. */
export const CAPTION = 'Loom';
export const CAPTION_WAITING = 'Loom — waiting for your answer';

/** What the browser tab's title starts with while a card waits. */
export const TITLE_MARK = '● ';

/** The toolbar item's name in each notebook's toolbar. */
export const TOOLBAR_ITEM = 'loom-attention';

/** `title` with the waiting mark in front (waiting) or without it (not waiting). */
export function markedTitle(title: string, waiting: boolean): string {
  const bare = title.startsWith(TITLE_MARK) ? title.slice(TITLE_MARK.length) : title;
  return waiting ? TITLE_MARK + bare : bare;
}

/** Whether a notebook's toolbar shows the button: its chat waits and the panel is away. */
export function showsButton(waiting: boolean, panelShown: boolean): boolean {
  return waiting && !panelShown;
}

/** An icon that draws itself into a container (a LabIcon does). */
export interface IIcon {
  element(options: { container: HTMLElement }): HTMLElement;
}

/** What the indicator reads from the Loom sidebar. */
export interface IAttentionSource {
  /** A card waits in some chat (the tab's badge). */
  readonly attention: boolean;
  /** Whether a card waits in this notebook's chat. */
  waitsIn(panel: NotebookPanel): boolean;
  /** The set of notebooks whose chat waits changed. */
  readonly attentionChanged: ISignal<unknown, void>;
  /** The panel came on screen (true) or went off it (false). */
  readonly shownChanged: ISignal<unknown, boolean>;
  readonly isVisible: boolean;
  readonly isDisposed: boolean;
}

/** What the indicator needs from a notebook panel's toolbar. */
export interface IToolbarLike {
  addItem(name: string, widget: Widget): boolean;
}

/** The notebooks, as the indicator follows them (an INotebookTracker). */
export interface INotebooks {
  readonly widgetAdded: ISignal<unknown, NotebookPanel>;
  forEach(fn: (panel: NotebookPanel) => void): void;
}

/**
 * The toolbar button: a Loom icon with a dot and a short word, the full sentence as its
 * tooltip and accessible name; a click opens the Loom panel. Hidden while nothing waits.
 */
export class WaitingButton extends Widget {
  constructor(open: () => void, icon?: IIcon) {
    super({ node: document.createElement('div') });
    this.addClass('loom-WaitingItem');
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'loom-WaitingButton';
    button.dataset.loom = 'attention';
    button.title = CAPTION_WAITING;
    button.setAttribute('aria-label', CAPTION_WAITING);
    const mark = document.createElement('span');
    mark.className = 'loom-WaitingButton-icon';
    mark.setAttribute('aria-hidden', 'true');
    if (icon !== undefined) {
      icon.element({ container: mark });
    }
    const dot = document.createElement('span');
    dot.className = 'loom-WaitingButton-dot';
    dot.setAttribute('aria-hidden', 'true');
    const word = document.createElement('span');
    word.className = 'loom-WaitingButton-label';
    word.textContent = 'Loom is waiting';
    button.append(mark, dot, word);
    button.addEventListener('click', () => open());
    this.node.append(button);
    this.hide();
  }
}

export type IndicatorOptions = {
  sidebar: IAttentionSource;
  notebooks: INotebooks;
  /** Open (activate) the Loom panel. */
  open: () => void;
  icon?: IIcon;
};

/**
 * Keeps each notebook's toolbar button and the page title in step with the sidebar:
 * the button shows while that notebook's chat waits and the panel is not on screen,
 * the title mark while any chat waits (someone on another browser tab sees it too).
 */
export class AttentionIndicator {
  constructor(options: IndicatorOptions) {
    this._options = options;
    options.notebooks.widgetAdded.connect((_, panel) => this._add(panel), this);
    options.notebooks.forEach(panel => this._add(panel));
    options.sidebar.attentionChanged.connect(() => this.update(), this);
    options.sidebar.shownChanged.connect(() => this.update(), this);
    // The app sets the title again (a rename, another current widget): mark it again.
    this._titleWatch = new MutationObserver(() => this._markTitle());
    this._titleWatch.observe(document.head, {
      subtree: true,
      childList: true,
      characterData: true
    });
    this.update();
  }

  /** The button of a notebook (undefined once the notebook closed). */
  buttonOf(panel: NotebookPanel): WaitingButton | undefined {
    return this._buttons.get(panel);
  }

  /** Show or hide each button and the title's mark from the sidebar's state now. */
  update(): void {
    const { sidebar } = this._options;
    const shown = !sidebar.isDisposed && sidebar.isVisible;
    for (const [panel, button] of this._buttons) {
      button.setHidden(!showsButton(sidebar.waitsIn(panel), shown));
    }
    this._markTitle();
  }

  dispose(): void {
    this._titleWatch.disconnect();
    this._buttons.forEach(button => button.dispose());
    this._buttons.clear();
    document.title = markedTitle(document.title, false);
  }

  private _markTitle(): void {
    const { sidebar } = this._options;
    const title = markedTitle(document.title, !sidebar.isDisposed && sidebar.attention);
    if (title !== document.title) {
      document.title = title; // a change the watch sees again, then leaves as it is
    }
  }

  private _add(panel: NotebookPanel): void {
    if (this._buttons.has(panel) || panel.isDisposed) {
      return;
    }
    const button = new WaitingButton(this._options.open, this._options.icon);
    this._buttons.set(panel, button);
    (panel.toolbar as IToolbarLike).addItem(TOOLBAR_ITEM, button);
    panel.disposed.connect(() => {
      this._buttons.delete(panel);
    });
    this.update();
  }

  private readonly _options: IndicatorOptions;
  private readonly _buttons = new Map<NotebookPanel, WaitingButton>();
  private readonly _titleWatch: MutationObserver;
}
